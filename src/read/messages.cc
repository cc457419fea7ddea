#include "read/messages.h"

#include <cstdlib>

#include "core/error.h"
#include "read/file_text.h"
#include "read/json_fields.h"

namespace gpuplan {

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

}  // namespace gpuplan
