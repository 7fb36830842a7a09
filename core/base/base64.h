// SPDX-License-Identifier: MIT
// Base64 (RFC 4648 section 4, the standard alphabet), as the Rust base64 crate's STANDARD engine decodes it: what
// tokenizer.json stores binary fields in.
#pragma once

#include <string>
#include <string_view>

namespace ws {

// Decodes `in` into *out. false (with *out unspecified) unless `in` is canonical: a multiple of 4 characters of the
// alphabet, '=' only as the padding of the last group (one or two), and zero bits where the last character holds
// more than the data. No whitespace. Safe on untrusted input; *out grows to 3/4 of `in`.
bool base64_decode(std::string_view in, std::string* out);

}  // namespace ws
