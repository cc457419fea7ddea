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

}  // namespace gpuplan
