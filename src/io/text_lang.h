// The language of the text renderers (the CLI's tables, verdicts and headings; docs/cli.md
// "Language"): English unless the CLI sets Chinese from --lang or the locale, once, before it
// renders. JSON writers never call it: JSON keys and values stay English.
#pragma once

#include <string>

#include "read/messages.h"

namespace gpuplan {

void SetTextLanguage(Messages messages, Lang lang);
Lang TextLanguage();
// The catalogue's text of `key` in the text language; `english` in English or when it lacks one.
std::string Say(const std::string& key, const std::string& english);

}  // namespace gpuplan
