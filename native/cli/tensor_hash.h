// SPDX-License-Identifier: MIT
// The digests behind `hash` (and `bench --hash`): message digests over tensor bytes and over their float32
// decode, computed on several threads. Every digest is of one serial byte stream (a tensor's stored bytes,
// its decode, or a whole model's tensors one after another), so a digest is one task on one thread; the
// parallelism is across digests. Tasks run longest first; each writes only its own result, so the values
// never depend on the thread count or on which thread ran what.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/progress.h"
#include "io/model.h"
#include "weightstream/status.h"

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

// Runs task(i) for every i < costs.size() on up to `threads` threads, in decreasing order of costs[i]
// (ties in index order), so that the longest digests start first. The calling thread does no task: it
// draws `progress` (when not null) from `*done`, which tasks advance (relaxed atomics) in whatever unit
// progress counts. Returns when every task has returned.
void run_tasks(const std::vector<uint64_t>& costs, unsigned threads, const std::function<void(size_t)>& task,
               Progress* progress, const std::function<uint64_t()>& done);

// `hash`'s per-tensor result: sha256 of the stored bytes and of the little-endian float32 decode.
struct TensorDigests {
    std::string raw;
    std::string f32;         // equals raw for little-endian F32; empty when not decodable
    bool decodable = false;  // decode_problem() was empty
    bool present = false;    // the tensor's bytes lie inside its file (else nothing was hashed)
    Status status;           // the decode's error, when it failed
};

// What hash_tensors() computes: the digests, or only the decode (bench's baseline, digests left empty).
enum class HashWork { kDigests, kDecodeOnly };

// `hash` over a mapped model: per tensor its stored-bytes digest and its decode digest, as independent
// tasks over `threads` threads; a decode runs in small pieces (cache-sized) that are hashed as they come.
// Tensors whose bytes are outside their file get present = false and nothing else. After a failed decode,
// tensors after it in directory order are skipped (only the first failure in directory order is reported,
// the same one a serial run meets first). progress counts input bytes.
std::vector<TensorDigests> hash_tensors(const LoadedModel& model, unsigned threads, HashWork work, Progress* progress);
// The same over the given tensors (in that order) whose bytes are data[i] (nullptr: not present), as fetched
// from a remote model.
std::vector<TensorDigests> hash_tensors(const LoadedModel& model, const std::vector<const TensorInfo*>& tensors,
                                        const std::vector<const uint8_t*>& data, unsigned threads, HashWork work,
                                        Progress* progress);

}  // namespace ws::cli
