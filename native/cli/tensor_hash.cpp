// SPDX-License-Identifier: MIT
#include "cli/tensor_hash.h"

// xxHash compiled in from its header (libxxhash-dev), so no shared library is loaded for it.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "io/crypto_library.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"

namespace ws::cli {
namespace {

// The libraries take size_t; pieces also bound how long a progress count waits.
constexpr uint64_t kUpdatePiece = uint64_t(4) << 20;
// Elements decoded at a time: 256 KiB of float32, which stays in L2 cache between the decoder writing it
// and SHA-256 reading it (decoding a whole 32 MiB piece first made both run at memory speed). A multiple
// of every block size (all are powers of two up to 256).
constexpr uint64_t kDecodePieceElements = uint64_t(1) << 16;

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

void run_tasks(const std::vector<uint64_t>& costs, unsigned threads, const std::function<void(size_t)>& task,
               Progress* progress, const std::function<uint64_t()>& done) {
    std::vector<size_t> order(costs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
    const unsigned n_workers =
        static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(std::max(threads, 1u), order.size())));
    std::atomic<size_t> next{0};
    std::mutex mutex;
    std::condition_variable finished;
    unsigned running = n_workers;
    // Workers are started once per run, not per tensor: a model of a million empty tensors is a million
    // cheap tasks, not a million threads.
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < n_workers; ++w) {
        workers.emplace_back([&] {
            for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) task(order[i]);
            std::lock_guard<std::mutex> lock(mutex);
            --running;
            finished.notify_one();
        });
    }
    uint64_t shown = 0;
    {
        std::unique_lock<std::mutex> lock(mutex);
        while (running > 0) {
            finished.wait_for(lock, std::chrono::milliseconds(100));
            if (!progress) continue;
            const uint64_t now = done();
            progress->add(now - shown);
            shown = now;
        }
    }
    for (std::thread& w : workers) w.join();
    if (progress) progress->add(done() - shown);
}

std::vector<TensorDigests> hash_tensors(const LoadedModel& model, unsigned threads, HashWork work, Progress* progress) {
    std::vector<const TensorInfo*> tensors;
    std::vector<const uint8_t*> data;
    for (const TensorInfo& t : model.info.tensors) {
        tensors.push_back(&t);
        data.push_back(model.tensor_data(t));
    }
    return hash_tensors(model, tensors, data, threads, work, progress);
}

std::vector<TensorDigests> hash_tensors(const LoadedModel& model, const std::vector<const TensorInfo*>& tensors,
                                        const std::vector<const uint8_t*>& data, unsigned threads, HashWork work,
                                        Progress* progress) {
    std::vector<TensorDigests> rows(tensors.size());
    // Two kinds of task per tensor: its stored bytes (index 2 * i) and its decode (2 * i + 1).
    std::vector<uint64_t> costs(tensors.size() * 2, 0);
    std::vector<bool> decode(tensors.size(), false);
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = *tensors[i];
        TensorDigests& row = rows[i];
        row.present = data[i] != nullptr;
        row.decodable = decode_problem(model.info, t).empty();
        // Little-endian F32 decodes to its own bytes: its float digest is the raw one.
        decode[i] = row.decodable && !(t.dtype == DType::F32 && !model.info.big_endian);
        if (!row.present) continue;
        // Costs in bytes hashed (a decode writes its floats and hashes them). Empty tensors still run.
        costs[2 * i] = work == HashWork::kDigests ? t.nbytes + 1 : 0;
        if (decode[i]) costs[2 * i + 1] = t.n_elements * dequant_floats_per_element(t.dtype) * sizeof(float) + 1;
    }
    std::atomic<uint64_t> done{0};
    std::atomic<size_t> first_failed{SIZE_MAX};
    const auto stored = [&](size_t i) {
        const TensorInfo& t = *tensors[i];
        Hasher h(HashAlgo::kSha256);
        for (uint64_t at = 0; at < t.nbytes;) {
            const uint64_t n = std::min(kUpdatePiece, t.nbytes - at);
            h.update(data[i] + at, n);
            at += n;
            if (!decode[i]) done.fetch_add(n, std::memory_order_relaxed);  // else the decode counts them
        }
        rows[i].raw = h.hex();
        if (rows[i].decodable && !decode[i]) rows[i].f32 = rows[i].raw;
    };
    const auto decoded = [&](size_t i) {
        const TensorInfo& t = *tensors[i];
        const bool digest = work == HashWork::kDigests;
        std::unique_ptr<Hasher> h(digest ? new Hasher(HashAlgo::kSha256) : nullptr);
        const DTypeTraits& traits = dtype_traits(t.dtype);
        const uint64_t per_element = dequant_floats_per_element(t.dtype);
        Status s = check_decodable(t.dtype, t.n_elements);
        if (s.ok() && model.info.big_endian) {
            // Swapped piece by piece in a copy by for_each_decoded (32 MiB pieces; big-endian files are rare).
            s = for_each_decoded(
                t.dtype, data[i], t.n_elements, 1,
                [&](const float* floats, uint64_t, uint64_t n) {
                    if (h) h->update(floats, n * per_element * sizeof(float));
                    done.fetch_add(n / traits.block_elems * traits.block_bytes, std::memory_order_relaxed);
                    return true;
                },
                true);
        } else if (s.ok()) {
            const uint64_t piece = std::min(t.n_elements, kDecodePieceElements);
            std::vector<float> floats(static_cast<size_t>(std::max<uint64_t>(piece, 1) * per_element));
            for (uint64_t first = 0; first < t.n_elements && s.ok(); first += piece) {
                const uint64_t n = std::min(piece, t.n_elements - first);
                const uint64_t bytes = n / traits.block_elems * traits.block_bytes;
                s = dequantize(t.dtype, data[i] + first / traits.block_elems * traits.block_bytes, n, floats.data());
                if (s.ok() && h) h->update(floats.data(), n * per_element * sizeof(float));
                done.fetch_add(bytes, std::memory_order_relaxed);
            }
        }
        rows[i].status = s;
        if (!s.ok()) {
            size_t seen = first_failed.load();
            while (i < seen && !first_failed.compare_exchange_weak(seen, i)) {
            }
            return;
        }
        if (h) rows[i].f32 = h->hex();
    };
    run_tasks(
        costs, threads,
        [&](size_t task) {
            const size_t i = task / 2;
            // Nothing to do (no bytes, or a decode-only run's stored-bytes task), or past a failed decode.
            if (costs[task] == 0 || i > first_failed.load(std::memory_order_relaxed)) return;
            if (task % 2 == 0) {
                stored(i);
            } else {
                decoded(i);
            }
        },
        progress, [&] { return done.load(std::memory_order_relaxed); });
    return rows;
}

}  // namespace ws::cli
