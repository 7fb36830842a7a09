// SPDX-License-Identifier: MIT
#include "cli/tensor_hash.h"

// xxHash compiled in from its header (libxxhash-dev), so no shared library is loaded for it.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdlib>

#include "io/crypto_library.h"
#include "io/stream_input.h"

namespace ws::cli {
namespace {

// The libraries take size_t.
constexpr uint64_t kUpdatePiece = uint64_t(4) << 20;
// A mapped model's tensors hashed at a time: two digests each, enough for a few threads to share.
constexpr uint32_t kFingerprintLanes = 4;

}  // namespace

const char* hash_algo_name(HashAlgo a) {
    switch (a) {
        case HashAlgo::kXxh64:
            return "xxh64";
        case HashAlgo::kXxh3:
            return "xxh3";
        case HashAlgo::kSha1:
            return "sha1";
        case HashAlgo::kSha256:
            return "sha256";
    }
    return "?";
}

struct Hasher::State {
    HashAlgo algo;
    const CryptoLibrary* crypto = nullptr;
    EVP_MD_CTX* evp = nullptr;
    XXH64_state_t* xxh64 = nullptr;
    XXH3_state_t* xxh3 = nullptr;
};

Hasher::Hasher(HashAlgo algo) : state_(new State) {
    state_->algo = algo;
    switch (algo) {
        case HashAlgo::kXxh64:
            state_->xxh64 = XXH64_createState();
            XXH64_reset(state_->xxh64, 0);
            break;
        case HashAlgo::kXxh3:
            state_->xxh3 = XXH3_createState();
            XXH3_64bits_reset(state_->xxh3);
            break;
        case HashAlgo::kSha1:
        case HashAlgo::kSha256:
            state_->crypto = crypto_library(nullptr);
            if (!state_->crypto) std::abort();  // the command was to check crypto_library() first
            state_->evp = state_->crypto->md_ctx_new();
            state_->crypto->digest_init_ex(
                state_->evp, algo == HashAlgo::kSha1 ? state_->crypto->sha1() : state_->crypto->sha256(), nullptr);
            break;
    }
}

Hasher::~Hasher() {
    if (state_->evp) state_->crypto->md_ctx_free(state_->evp);
    if (state_->xxh64) XXH64_freeState(state_->xxh64);
    if (state_->xxh3) XXH3_freeState(state_->xxh3);
}

void Hasher::update(const void* data, uint64_t size) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    for (uint64_t done = 0; done < size;) {
        const size_t n = static_cast<size_t>(std::min(kUpdatePiece, size - done));
        if (state_->evp) state_->crypto->digest_update(state_->evp, p + done, n);
        if (state_->xxh64) XXH64_update(state_->xxh64, p + done, n);
        if (state_->xxh3) XXH3_64bits_update(state_->xxh3, p + done, n);
        done += n;
    }
}

std::vector<uint8_t> Hasher::digest() {
    if (state_->evp) {
        unsigned char bytes[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        state_->crypto->digest_final_ex(state_->evp, bytes, &len);
        return std::vector<uint8_t>(bytes, bytes + len);
    }
    const uint64_t value = state_->xxh64 ? XXH64_digest(state_->xxh64) : XXH3_64bits_digest(state_->xxh3);
    std::vector<uint8_t> bytes(8);
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(value >> (56 - 8 * i));
    return bytes;
}

std::string Hasher::hex() {
    const std::vector<uint8_t> bytes = digest();
    return to_hex(bytes.data(), bytes.size());
}

std::string to_hex(const uint8_t* bytes, size_t size) {
    static const char kHex[] = "0123456789abcdef";
    std::string s;
    s.reserve(size * 2);
    for (size_t i = 0; i < size; ++i) {
        s += kHex[bytes[i] >> 4];
        s += kHex[bytes[i] & 15];
    }
    return s;
}

namespace {

class HasherDigest final : public Digest {
public:
    explicit HasherDigest(HashAlgo algo) : hasher_(algo) {}
    void update(const uint8_t* data, uint64_t size) override { hasher_.update(data, size); }
    std::vector<uint8_t> finish() override { return hasher_.digest(); }

private:
    Hasher hasher_;
};

}  // namespace

DigestFactory hasher_factory() {
    return [](uint32_t algo) { return std::unique_ptr<Digest>(new HasherDigest(static_cast<HashAlgo>(algo))); };
}

HashJobOptions fingerprint_options(const LoadedModel& model) {
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    HashJobOptions options;
    options.stored = {static_cast<uint32_t>(HashAlgo::kSha256)};
    options.decoded = static_cast<int64_t>(HashAlgo::kSha256);
    for (size_t i = 0; i < tensors.size(); ++i) options.tensors.push_back(i);
    const bool stream = model.files.size() == 1 && model.files[0].is_stream();
    const bool remote =
        std::any_of(tensors.begin(), tensors.end(), [&](const TensorInfo& t) { return model.remote(t); });
    if (stream) {
        std::stable_sort(options.tensors.begin(), options.tensors.end(),
                         [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
        options.piece_bytes = kStreamPiece;
    } else if (!remote) {
        std::stable_sort(options.tensors.begin(), options.tensors.end(),
                         [&](size_t a, size_t b) { return tensors[a].nbytes > tensors[b].nbytes; });
        options.lanes = kFingerprintLanes;
    }
    return options;
}

}  // namespace ws::cli
