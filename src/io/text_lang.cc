#include "io/text_lang.h"

#include <utility>

namespace gpuplan {
namespace {

struct TextLanguageState {
  Messages messages;
  Lang lang = Lang::kEn;
};

TextLanguageState& State() {
  static TextLanguageState s;
  return s;
}

}  // namespace

void SetTextLanguage(Messages messages, Lang lang) {
  State().messages = std::move(messages);
  State().lang = lang;
}

Lang TextLanguage() { return State().lang; }

std::string Say(const std::string& key, const std::string& english) {
  const TextLanguageState& s = State();
  return s.lang == Lang::kEn ? english : s.messages.Get(key, s.lang, english);
}

int64_t DisplayWidth(const std::string& text) {
  int64_t w = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) == 0x80) {
      continue;  // a continuation byte
    }
    w += c >= 0xE0 ? 2 : 1;
  }
  return w;
}

std::string ErrorLine(const ErrorReport& r) {
  const std::string line = r.Line();
  if (TextLanguage() == Lang::kEn) {
    return line;
  }
  for (const auto& [english, key] : {std::pair<std::string, std::string>{"error: ", "cli.error"},
                                     std::pair<std::string, std::string>{"environment: ", "cli.environment"},
                                     std::pair<std::string, std::string>{"internal error: ", "cli.internal"}}) {
    if (line.rfind(english, 0) == 0) {
      return Say(key, english) + line.substr(english.size());
    }
  }
  return line;
}

}  // namespace gpuplan
