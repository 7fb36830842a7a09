// SPDX-License-Identifier: MIT
// The digests behind `hash` (and `bench --hash`): the libraries' message digests (OpenSSL, xxHash), which the
// core's HashJob (weightstream/hash_job.h) runs over tensor bytes and their float32 decode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/model.h"
#include "weightstream/hash_job.h"

namespace ws::cli {

// The digests of llama.cpp's llama-gguf-hash manifests (their names there), and sha256 for `hash` itself.
enum class HashAlgo { kXxh64, kXxh3, kSha1, kSha256 };
const char* hash_algo_name(HashAlgo a);  // "xxh64", "xxh3", "sha1", "sha256"

// One running digest: OpenSSL EVP for SHA-1/SHA-256 (SHA-NI where the CPU has it; a command checks that
// crypto_library() loads before it makes one, which aborts otherwise), xxHash for XXH64 (seed 0) and XXH3-64. hex()
// ends it: the digest as lowercase hex, for XXH the 64-bit value written most significant byte first (xxHash's
// canonical form, as llama-gguf-hash prints it). digest() ends it as bytes.
class Hasher {
public:
    explicit Hasher(HashAlgo algo);
    ~Hasher();
    Hasher(const Hasher&) = delete;
    Hasher& operator=(const Hasher&) = delete;

    // Any size: large buffers are fed to the library in pieces.
    void update(const void* data, uint64_t size);
    std::vector<uint8_t> digest();
    std::string hex();

private:
    struct State;
    std::unique_ptr<State> state_;
};

std::string to_hex(const uint8_t* bytes, size_t size);

// Hashers as the core's digests (weightstream/hash_job.h): `algo` is a HashAlgo.
DigestFactory hasher_factory();

// `hash`'s job over a model's tensors: per tensor the sha256 of its stored bytes (TensorDigests::stored[0]) and of
// its little-endian float32 decode. A mapped model's tensors are hashed several at a time, largest first, so that
// the threads share the longest digests from the start; a remote model's one at a time in directory order (the
// network bounds it; the driver fetches the next piece meanwhile); a stream's one at a time in offset order, as
// it comes, in pieces small enough to stay in cache.
HashJobOptions fingerprint_options(const LoadedModel& model);

}  // namespace ws::cli
