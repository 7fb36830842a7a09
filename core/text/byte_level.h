// SPDX-License-Identifier: MIT
// GPT-2's byte-level alphabet (bytes_to_unicode; llama.cpp's unicode_byte_to_utf8_map): every byte stands for one
// printable code point, so a BPE vocabulary of strings covers any bytes. The printable Latin-1 bytes stand for
// themselves, the other 68 for U+0100 and up, in byte order. One table for llama.cpp's gpt2 models and Hugging
// Face's ByteLevel pre-tokenizer, normalizer and decoder.
#pragma once

#include <cstdint>

namespace ws {

// The code point byte b stands for.
uint32_t byte_level_char(uint8_t b);
// The byte code point cp stands for, or -1 when cp is not in the alphabet.
int byte_level_byte(uint32_t cp);

}  // namespace ws
