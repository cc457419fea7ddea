// gpuplan's message catalogue (data/messages.json): one entry per message with its text in each
// language. The page of gpuplan serve reads the same file (web/src/i18n.ts); the CLI's text
// output reads it for --lang zh or a Chinese locale. JSON output never changes with the
// language: its keys and values stay English.
//
// Two sections. "messages": a key per message the renderers print ("cli.check.verdict": {"zh":
// ..., "en": ...}). "templates": the library's own English sentences (error messages, check
// evidence and advice, meter lines), gettext-like: the English text is the message id, with
// placeholders for the parts that vary ("unknown GPU '{}'; did you mean {}? ..."), and its
// Chinese. Translate finds the template whose English matches a whole message and renders its
// Chinese with the same parts; a message no template matches stays English.
//
// Placeholders (docs/cli.md "Language"):
//   in "en": {}    any text, copied as it is;
//            {msg} any text that is itself a message of the catalogue, translated in turn;
//   in "zh" and in "messages" texts: {} the next value in order, or {0} {1} ... the value at
//            that position (for Chinese word order; not mixed with {} in one text);
//   {{ and }} are literal braces.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

enum class Lang { kEn, kZh };

// "zh", "zh_CN.UTF-8", "zh-Hans", "zh_TW" -> kZh; "en", "C", "POSIX", "" and the rest -> kEn.
Lang LangOfLocale(const std::string& locale);
// The language of the environment: the first of LC_ALL, LC_MESSAGES, LANG that is set.
Lang LangFromEnvironment();
// "zh" or "en" (a --lang value); InputError naming `field` otherwise.
Lang ParseLang(const std::string& text, const std::string& field = "--lang");

// `pattern` with its placeholders filled from `values`: {} the next value, {0} {1} ... the value
// at that position; {{ and }} are braces. nullopt when the pattern is malformed, mixes {} with
// {N}, or names a value beyond `values`.
std::optional<std::string> FillPlaceholders(const std::string& pattern, const std::vector<std::string>& values);

class Messages {
 public:
  // Reads the catalogue; InputError naming the file, line and key for a malformed one.
  static Messages Load(const std::string& path);
  static Messages Parse(const std::string& json_text, const std::string& file);
  // The message in `lang`; `fallback` when the catalogue lacks the key or the language.
  std::string Get(const std::string& key, Lang lang, const std::string& fallback) const;
  bool Has(const std::string& key) const { return text_.count(key) != 0; }

  // `english` (a whole message of the library) in `lang` by the templates. Of the templates whose
  // English matches the whole of it, the one that explains the most of it with literal text wins,
  // a {msg} part counting the literal text of its own translation (so "4 MiB blocks, {msg}" with
  // its part translated beats a template that takes the whole message into one placeholder);
  // ties go to the first in the file. Earlier placeholders take as little text as they can.
  // `english` unchanged in English or when no template matches. Linear in the number of
  // templates (times the depth of nesting, at most 4).
  std::string Translate(const std::string& english, Lang lang) const;
  std::size_t TemplateCount() const { return templates_.size(); }

 private:
  // A piece of a parsed Chinese text: a literal, or (value >= 0) the value at that position.
  struct Piece {
    std::string literal;
    int value = -1;
  };
  struct Template {
    std::vector<std::string> en_literals;  // L0 {} L1 {} ... Lk
    std::vector<bool> translate;           // per placeholder: {msg}
    bool has_nested = false;               // some placeholder is {msg}
    std::vector<Piece> zh;
    std::size_t literal_chars = 0;
  };
  // A message's best reading: its text in Chinese and the literal characters that explain it.
  struct Translation {
    std::string text;
    std::size_t score = 0;
  };
  Translation TranslateAt(const std::string& english, int depth) const;

  std::map<std::string, std::map<std::string, std::string>> text_;  // key -> language -> text
  std::vector<Template> templates_;  // in file order
};

}  // namespace gpuplan
