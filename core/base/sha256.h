// SPDX-License-Identifier: MIT
// SHA-256 (FIPS 180-4) of a small message, for the few digests the core itself must compute (the converter's
// pre-tokenizer check hash, hf_bpe_vocab.h). Bulk digests (hash, verify) stay with the caller's library
// (hash_job.h): this one is plain and unvectorised, fine for kilobytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ws {

// The digest of data[0 .. size) as 64 lower-case hex digits.
std::string sha256_hex(const uint8_t* data, size_t size);

}  // namespace ws
