// Reading a whole file into memory; the first step of every reader that takes a path.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpuplan {

// Reads a whole file (binary, no newline translation); InputError naming the path when it
// cannot be opened.
std::string ReadFileText(const std::string& path);
// The same, for files that may be absent or unreadable by design (/proc entries of a process
// that has exited, optional system files): nullopt instead of an error.
std::optional<std::string> TryReadFileText(const std::string& path);

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF); nullopt when all of it is. Readers of
// text that gpuplan writes back as JSON check it, since a JSON writer cannot write such bytes.
std::optional<std::size_t> FirstNonUtf8(std::string_view text);

}  // namespace gpuplan
