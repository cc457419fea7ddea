#include "format/text_lang.h"

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

// The next code point of UTF-8 `text` at `i` (advanced past it); a malformed byte is itself.
char32_t NextCodePoint(const std::string& text, std::size_t& i) {
  const auto c = static_cast<unsigned char>(text[i++]);
  int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  char32_t cp = more == 3 ? (c & 0x07u) : more == 2 ? (c & 0x0Fu) : more == 1 ? (c & 0x1Fu) : c;
  for (; more > 0 && i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; --more) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[i++]) & 0x3Fu);
  }
  return cp;
}

// Unicode East Asian Width W and F, the ranges terminals draw two columns wide (those of fmt's
// own width estimate, written out so the tables do not depend on the fmt version).
bool Wide(char32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || c == 0x2329 || c == 0x232A ||
         (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) || (c >= 0xAC00 && c <= 0xD7A3) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE10 && c <= 0xFE19) || (c >= 0xFE30 && c <= 0xFE6F) ||
         (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
         (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x2FFFD) || (c >= 0x30000 && c <= 0x3FFFD);
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

std::string SayFormat(const std::string& key, const std::string& english, const std::vector<std::string>& values) {
  if (auto text = FillPlaceholders(Say(key, english), values)) {
    return *text;
  }
  return FillPlaceholders(english, values).value_or(english);
}

std::string SayMessage(const std::string& english) {
  const TextLanguageState& s = State();
  return s.messages.Translate(english, s.lang);
}

std::string SayStatus(const std::string& status) { return Say("verdict." + status, status); }

int64_t DisplayWidth(const std::string& text) {
  int64_t w = 0;
  for (std::size_t i = 0; i < text.size();) {
    w += Wide(NextCodePoint(text, i)) ? 2 : 1;
  }
  return w;
}

std::string PadRight(const std::string& text, int64_t columns) {
  const int64_t w = DisplayWidth(text);
  return w >= columns ? text : text + std::string(static_cast<std::size_t>(columns - w), ' ');
}

std::string PadLeft(const std::string& text, int64_t columns) {
  const int64_t w = DisplayWidth(text);
  return w >= columns ? text : std::string(static_cast<std::size_t>(columns - w), ' ') + text;
}

std::string CutToWidth(const std::string& text, int64_t columns) {
  int64_t w = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    w += Wide(NextCodePoint(text, i)) ? 2 : 1;
    if (w > columns) {
      return text.substr(0, start);
    }
  }
  return text;
}

std::string ErrorLine(const ErrorReport& r) {
  if (TextLanguage() == Lang::kEn) {
    return r.Line();
  }
  ErrorReport translated = r;
  translated.message = SayMessage(r.message);
  std::string line = translated.Line();
  // The location's "field 'x': " in the text language.
  if (!r.field.empty()) {
    const std::string en = "field '" + r.field + "': ";
    if (const std::size_t at = line.find(en); at != std::string::npos) {
      line.replace(at, en.size(), SayFormat("cli.error.field", "field '{}': ", {r.field}));
    }
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
