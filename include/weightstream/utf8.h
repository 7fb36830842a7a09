// SPDX-License-Identifier: MIT
// UTF-8, once for the whole project: strings in model files are untrusted bytes, and every place that shows,
// writes or hands them on (JSON, a safetensors header, JavaScript strings, a terminal) needs the same rules.
// Well-formed means Unicode 15's table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF.
// (Debian's header-only utfcpp was considered: its checked API throws, and the core builds without
// exceptions; nor does it have the ASCII fast path that vocabularies of 100k+ strings want.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ws {

// The code point of the well-formed sequence at p[0 .. n) (n > 0) and its length in *len, or -1 (and
// *len = 1) when p does not start with one.
int32_t utf8_next(const uint8_t* p, size_t n, size_t* len);

// Appends code point cp (below 0x110000) as UTF-8; surrogates too, as their three bytes (the caller decides).
void utf8_append(uint32_t cp, std::string* out);

bool utf8_valid(const std::string& s);
bool utf8_valid(const char* s, size_t n);

// s with every ill-formed sequence replaced by U+FFFD, exactly as json_dump (nlohmann's replace handler)
// prints it, so a string reads the same in text and in JSON.
std::string utf8_replace_invalid(const std::string& s);

// Writes s as UTF-16 at dst (room for s.size() units) if it is well-formed and returns the units written;
// -1 if it is not.
ptrdiff_t utf8_to_utf16(const std::string& s, uint16_t* dst);

}  // namespace ws
