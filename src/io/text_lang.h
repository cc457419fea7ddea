// The language of the text renderers (the CLI's tables, verdicts and headings; docs/cli.md
// "Language"): English unless the CLI sets Chinese from --lang or the locale, once, before it
// renders. JSON writers never call it: JSON keys and values stay English.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"

#include "read/messages.h"

namespace gpuplan {

void SetTextLanguage(Messages messages, Lang lang);
Lang TextLanguage();
// The catalogue's text of `key` in the text language; `english` in English or when it lacks one.
std::string Say(const std::string& key, const std::string& english);

// Columns `text` takes on a terminal: a character of three or four UTF-8 bytes (CJK) two, others one.
int64_t DisplayWidth(const std::string& text);

// ErrorReport::Line with its leading word ("error:", "environment:", "internal error:") in the
// text language.
std::string ErrorLine(const ErrorReport& r);

}  // namespace gpuplan
