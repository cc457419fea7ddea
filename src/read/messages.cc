#include "read/messages.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "read/file_text.h"
#include "read/json_fields.h"

namespace gpuplan {
namespace {

// A text split into literals and placeholders; `spec` is what stands between the braces.
struct Token {
  bool placeholder = false;
  std::string text;  // the literal, or the placeholder's spec ("", "msg", "0", "1", ...)
};

// A value that is a list as JoinOr writes it ("A30, L4, T4 or A10") the Chinese way ("A30、L4、T4 或
// A10"); any other value as it is.
std::string ChineseList(const std::string& v) {
  const std::size_t last_or = v.rfind(" or ");
  if (last_or == std::string::npos || last_or == 0 || v.find(" or ") != last_or) {
    return v;
  }
  std::string out;
  const std::string head = v.substr(0, last_or);
  for (std::size_t at = 0;;) {
    const std::size_t comma = head.find(", ", at);
    out += head.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (comma == std::string::npos) {
      break;
    }
    out += "、";
    at = comma + 2;
  }
  return out + " 或 " + v.substr(last_or + 4);
}

// nullopt (with the reason) for an unclosed '{' or a lone '}'.
std::optional<std::vector<Token>> Tokenize(const std::string& s, std::string* why) {
  std::vector<Token> out;
  auto literal = [&out](char c) {
    if (out.empty() || out.back().placeholder) {
      out.push_back({});
    }
    out.back().text += c;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '{' && i + 1 < s.size() && s[i + 1] == '{') {
      literal('{');
      ++i;
    } else if (c == '}' && i + 1 < s.size() && s[i + 1] == '}') {
      literal('}');
      ++i;
    } else if (c == '{') {
      const std::size_t close = s.find('}', i);
      if (close == std::string::npos) {
        *why = "a '{' without its '}' (write {{ for a brace)";
        return std::nullopt;
      }
      out.push_back({true, s.substr(i + 1, close - i - 1)});
      i = close;
    } else if (c == '}') {
      *why = "a '}' without its '{' (write }} for a brace)";
      return std::nullopt;
    } else {
      literal(c);
    }
  }
  return out;
}

bool IsIndex(const std::string& spec) {
  return !spec.empty() && spec.size() <= 2 && std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The value index of each placeholder of a text to fill ({} in order, or {N}); nullopt with the
// reason for another spec, a mix of the two forms, or an index >= `count`.
std::optional<std::vector<int>> ValueIndices(const std::vector<Token>& tokens, std::size_t count, std::string* why) {
  std::vector<int> out;
  bool in_order = false;
  bool by_index = false;
  for (const Token& t : tokens) {
    if (!t.placeholder) {
      continue;
    }
    if (t.text.empty()) {
      in_order = true;
      out.push_back(static_cast<int>(out.size()));
    } else if (IsIndex(t.text)) {
      by_index = true;
      out.push_back(std::atoi(t.text.c_str()));
    } else {
      *why = "unknown placeholder {" + t.text + "} (use {} or {0}, {1}, ...)";
      return std::nullopt;
    }
    if (static_cast<std::size_t>(out.back()) >= count) {
      *why = "placeholder " + std::to_string(out.size()) + " refers to value " + std::to_string(out.back()) +
             " of " + std::to_string(count);
      return std::nullopt;
    }
  }
  if (in_order && by_index) {
    *why = "mixes {} with {0}, {1}, ...: use one form";
    return std::nullopt;
  }
  return out;
}

}  // namespace

Lang LangOfLocale(const std::string& locale) {
  return locale.size() >= 2 && (locale[0] == 'z' || locale[0] == 'Z') && (locale[1] == 'h' || locale[1] == 'H')
             ? Lang::kZh
             : Lang::kEn;
}

Lang LangFromEnvironment() {
  for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
      return LangOfLocale(v);
    }
  }
  return Lang::kEn;
}

Lang ParseLang(const std::string& text, const std::string& field) {
  if (text == "zh") {
    return Lang::kZh;
  }
  if (text == "en") {
    return Lang::kEn;
  }
  throw InputError("expected zh or en, got '" + text + "'", "", 0, field);
}

std::optional<std::string> FillPlaceholders(const std::string& pattern, const std::vector<std::string>& values) {
  std::string why;
  const auto tokens = Tokenize(pattern, &why);
  if (!tokens) {
    return std::nullopt;
  }
  const auto indices = ValueIndices(*tokens, values.size(), &why);
  if (!indices) {
    return std::nullopt;
  }
  std::string out;
  std::size_t next = 0;
  for (const Token& t : *tokens) {
    out += t.placeholder ? values[static_cast<std::size_t>((*indices)[next++])] : t.text;
  }
  return out;
}

Messages Messages::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

Messages Messages::Parse(const std::string& json_text, const std::string& file) {
  const nlohmann::json j = ParseJsonText(json_text, file);
  if (!j.is_object() || !j.contains("messages") || !j["messages"].is_object()) {
    throw InputError("expected an object with \"messages\"", file, 0, "messages");
  }
  Messages m;
  for (const auto& [key, langs] : j["messages"].items()) {
    if (!langs.is_object()) {
      throw InputError("expected an object of languages, e.g. {\"zh\": \"...\", \"en\": \"...\"}", file, 0,
                       "messages." + key);
    }
    for (const auto& [lang, text] : langs.items()) {
      if (!text.is_string()) {
        throw InputError("expected a string", file, 0, "messages." + key + "." + lang);
      }
      m.text_[key][lang] = text.get<std::string>();
    }
  }
  if (!j.contains("templates")) {
    return m;
  }
  const nlohmann::json& list = j["templates"];
  if (!list.is_array()) {
    throw InputError("expected an array of {\"en\": \"...\", \"zh\": \"...\"}", file, 0, "templates");
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "templates[" + std::to_string(i) + "]";
    const nlohmann::json& e = list[i];
    if (!e.is_object() || e.size() != 2 || !e.contains("en") || !e.contains("zh") || !e["en"].is_string() ||
        !e["zh"].is_string()) {
      throw InputError("expected {\"en\": \"...\", \"zh\": \"...\"} (two strings)", file, 0, where);
    }
    const std::string en = e["en"].get<std::string>();
    const std::string zh = e["zh"].get<std::string>();
    auto fail = [&](const std::string& lang, const std::string& why) {
      throw InputError(why + " in '" + (lang == "en" ? en : zh) + "'", file, 0, where + "." + lang);
    };
    std::string why;
    const auto en_tokens = Tokenize(en, &why);
    if (!en_tokens) {
      fail("en", why);
    }
    Template t;
    t.en_literals.emplace_back();
    bool after_placeholder = false;
    for (const Token& tok : *en_tokens) {
      if (!tok.placeholder) {
        t.en_literals.back() += tok.text;
        t.literal_chars += tok.text.size();
        after_placeholder = false;
        continue;
      }
      if (tok.text != "" && tok.text != "msg") {
        fail("en", "unknown placeholder {" + tok.text + "} (English texts use {} and {msg})");
      }
      if (after_placeholder) {
        fail("en", "two placeholders side by side cannot be told apart");
      }
      t.translate.push_back(tok.text == "msg");
      t.has_nested = t.has_nested || tok.text == "msg";
      t.en_literals.emplace_back();
      after_placeholder = true;
    }
    if (t.literal_chars == 0) {
      fail("en", "no literal text: it would match every message");
    }
    if (!seen.insert(en).second) {
      fail("en", "a second template with the same English");
    }
    const auto zh_tokens = Tokenize(zh, &why);
    if (!zh_tokens) {
      fail("zh", why);
    }
    const auto indices = ValueIndices(*zh_tokens, t.translate.size(), &why);
    if (!indices) {
      fail("zh", why);
    }
    std::size_t next = 0;
    for (const Token& tok : *zh_tokens) {
      t.zh.push_back(tok.placeholder ? Piece{"", (*indices)[next++]} : Piece{tok.text, -1});
    }
    m.templates_.push_back(std::move(t));
  }
  return m;
}

std::string Messages::Get(const std::string& key, Lang lang, const std::string& fallback) const {
  const auto k = text_.find(key);
  if (k == text_.end()) {
    return fallback;
  }
  const auto t = k->second.find(lang == Lang::kZh ? "zh" : "en");
  return t == k->second.end() ? fallback : t->second;
}

std::string Messages::Translate(const std::string& english, Lang lang) const {
  return lang == Lang::kEn ? english : TranslateAt(english, 0).text;
}

Messages::Translation Messages::TranslateAt(const std::string& s, int depth) const {
  Translation best{s, 0};
  std::vector<std::string> values;
  std::vector<Translation> parts;
  for (const Template& t : templates_) {
    // Even with every {msg} part translated whole (its literal text at most that part's length),
    // this template cannot beat the best so far.
    if (t.literal_chars + (t.has_nested ? s.size() : 0) <= best.score) {
      continue;
    }
    // L0 {} L1 {} ... Lk: L0 a prefix, Lk a suffix, each literal between at its first place after
    // the one before (the earliest such place matches whenever any does).
    const std::string& first = t.en_literals.front();
    const std::string& last = t.en_literals.back();
    const std::size_t k = t.en_literals.size() - 1;
    if (k == 0) {
      if (s != first) {
        continue;
      }
    } else if (s.size() < first.size() + last.size() || s.compare(0, first.size(), first) != 0 ||
               s.compare(s.size() - last.size(), last.size(), last) != 0) {
      continue;
    }
    values.clear();
    const std::size_t end = s.size() - last.size();
    std::size_t pos = first.size();
    bool ok = true;
    for (std::size_t i = 1; i < k && ok; ++i) {
      const std::string& lit = t.en_literals[i];
      const std::size_t at = s.find(lit, pos);
      ok = at != std::string::npos && at + lit.size() <= end;
      if (ok) {
        values.push_back(s.substr(pos, at - pos));
        pos = at + lit.size();
      }
    }
    if (!ok) {
      continue;
    }
    if (k > 0) {
      values.push_back(s.substr(pos, end - pos));
    }
    // The score: the literal text this reading explains, a {msg} part's own translation included.
    std::size_t score = t.literal_chars;
    parts.assign(values.size(), Translation{});
    for (std::size_t i = 0; i < values.size(); ++i) {
      parts[i] = t.translate[i] && depth < 4 ? TranslateAt(values[i], depth + 1) : Translation{ChineseList(values[i]), 0};
      score += parts[i].score;
    }
    if (score <= best.score) {
      continue;  // ties: the first in the file
    }
    best.score = score;
    best.text.clear();
    for (const Piece& p : t.zh) {
      best.text += p.value >= 0 ? parts[static_cast<std::size_t>(p.value)].text : p.literal;
    }
  }
  return best;
}

}  // namespace gpuplan
