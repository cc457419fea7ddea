// gpuplan's message catalogue (data/messages.json): one entry per message with its text in each
// language. The page of gpuplan serve reads the same file (web/src/i18n.ts); the CLI's text
// output reads it for --lang zh or a Chinese locale. JSON output never changes with the
// language: its keys and values stay English.
#pragma once

#include <map>
#include <string>

namespace gpuplan {

enum class Lang { kEn, kZh };

// "zh", "zh_CN.UTF-8", "zh-Hans", "zh_TW" -> kZh; "en", "C", "POSIX", "" and the rest -> kEn.
Lang LangOfLocale(const std::string& locale);
// The language of the environment: the first of LC_ALL, LC_MESSAGES, LANG that is set.
Lang LangFromEnvironment();
// "zh" or "en" (a --lang value); InputError naming `field` otherwise.
Lang ParseLang(const std::string& text, const std::string& field = "--lang");

class Messages {
 public:
  // Reads the catalogue; InputError naming the file, line and key for a malformed one.
  static Messages Load(const std::string& path);
  static Messages Parse(const std::string& json_text, const std::string& file);
  // The message in `lang`; `fallback` when the catalogue lacks the key or the language.
  std::string Get(const std::string& key, Lang lang, const std::string& fallback) const;
  bool Has(const std::string& key) const { return text_.count(key) != 0; }

 private:
  std::map<std::string, std::map<std::string, std::string>> text_;  // key -> language -> text
};

}  // namespace gpuplan
