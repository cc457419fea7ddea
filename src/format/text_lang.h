// The language of the text renderers (the CLI's tables, verdicts and headings; docs/cli.md
// "Language"): English unless the CLI sets Chinese from --lang or the locale, once, before it
// renders. JSON writers never call it: JSON keys and values stay English.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

#include "read/messages.h"

namespace gpuplan {

void SetTextLanguage(Messages messages, Lang lang);
Lang TextLanguage();
// The catalogue's text of `key` in the text language; `english` in English or when it lacks one.
std::string Say(const std::string& key, const std::string& english);
// Say with placeholders ({} in order, {0} {1} ... by position; read/messages.h) filled from
// `values`, formatted by the caller. A translation that does not fill falls back to `english`.
std::string SayFormat(const std::string& key, const std::string& english, const std::vector<std::string>& values);
// A whole message of the library (an error, a check's evidence or advice, a meter line) in the
// text language by the catalogue's templates (Messages::Translate); unchanged when none matches.
std::string SayMessage(const std::string& english);
// The words of a check status (PASS, WARN, FAIL, SKIP, ERROR: data/messages.json "verdict.*").
std::string SayStatus(const std::string& status);

// Columns `text` takes on a terminal: East Asian wide and fullwidth characters (CJK ideographs,
// kana, hangul, fullwidth punctuation such as '（' and '：') two, others one.
int64_t DisplayWidth(const std::string& text);
// `text` padded with spaces to `columns` display columns, on the right (PadRight) or the left.
std::string PadRight(const std::string& text, int64_t columns);
std::string PadLeft(const std::string& text, int64_t columns);
// The longest start of `text` that takes at most `columns` display columns, cut between characters.
std::string CutToWidth(const std::string& text, int64_t columns);

// ErrorReport::Line in the text language: the leading word ("error:", "environment:", "internal
// error:") from the catalogue, the location (file:line: field 'x':) as it is, the message by
// SayMessage.
std::string ErrorLine(const ErrorReport& r);

}  // namespace gpuplan
