// SPDX-License-Identifier: MIT
// HashJob: message digests of a model's tensors as a job (job.h), what `hash` (per tensor: its stored bytes and
// its float32 decode) and `hash --manifest` (llama-gguf-hash: per tensor and over the whole model) run. The core
// links no digest library: the caller supplies the digests (Digest, made by a DigestFactory).
//
// A digest is one serial stream (a tensor's stored bytes, its decode, or every tensor's bytes one after another),
// so the parallelism is across digests: the job works through the tensors `lanes` at a time, a step being the next
// piece (piece_bytes at most) of every lane's tensor, and each of a step's tasks feeds one digest its lane's
// piece (or, for a whole-model digest, every piece of the step in order); the parts share out the tasks. Every
// digest sees the same bytes in the same order for any number of parts, so the digests do not depend on it.
// A tensor that does not decode (check_decodable()) or whose bytes cannot be read ends the job; the report names
// it. Safe on untrusted bytes.
//
// Sources: the model's files, by TensorInfo::file_index. Memory: per lane its digests and 256 KiB of floats (and,
// for a big-endian file, a chunk of its bytes swapped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "weightstream/job.h"
#include "weightstream/model_info.h"

namespace ws {

// The most bytes of one tensor a step reads, by default (HashJobOptions::piece_bytes).
constexpr uint64_t kHashPieceBytes = uint64_t(16) << 20;
// Tensors hashed at a time, at most.
constexpr uint32_t kMaxHashLanes = 16;

// One running digest, supplied by the caller.
class Digest {
public:
    virtual ~Digest() = default;
    // Appends bytes to the stream (any size).
    virtual void update(const uint8_t* data, uint64_t size) = 0;
    // Ends the stream: the digest's bytes. Called once, last.
    virtual std::vector<uint8_t> finish() = 0;
};

// Makes a new digest of algorithm `algo`, a number of the caller's choosing (HashJobOptions names them).
using DigestFactory = std::function<std::unique_ptr<Digest>(uint32_t algo)>;

struct HashJobOptions {
    // The tensors hashed (indices), in the order they are read: any order for per-tensor digests; the whole-model
    // digests see the tensors in this order; a stream must be read in offset order.
    std::vector<size_t> tensors;
    // Per tensor, a digest of its stored bytes in each of these algorithms.
    std::vector<uint32_t> stored;
    // Per tensor with a decoder (decode_problem() empty), a digest in this algorithm of its decode as
    // little-endian float32, or -1 for none. For little-endian F32 the decode is the stored bytes: their digest in
    // this algorithm is taken when `stored` has it.
    int64_t decoded = -1;
    // Digests of every tensor's stored bytes one after another, in `tensors` order (the caller may have fed them a
    // prefix: a UUID's namespace). With any, the tensors are hashed one at a time (lanes is taken as 1).
    std::vector<std::unique_ptr<Digest>> whole;
    // Tensors hashed at a time, 1 to kMaxHashLanes (each a stream of its own for the threads to share).
    uint32_t lanes = 1;
    // The most bytes of one tensor a step reads (whole blocks of it, at least one block): large for few requests
    // to a URL, small for a stream's bytes to be hashed while they are in cache.
    uint64_t piece_bytes = kHashPieceBytes;
};

struct TensorDigests {
    std::vector<std::vector<uint8_t>> stored;  // per HashJobOptions::stored
    std::vector<uint8_t> decoded;              // empty: no decode digest (asked for none, or no decoder)
    bool decodable = false;                    // decode_problem() is empty
    bool done = false;                         // every digest asked for is final
};

struct HashReport {
    std::vector<TensorDigests> tensors;       // per model tensor (only those hashed are done)
    std::vector<std::vector<uint8_t>> whole;  // per HashJobOptions::whole, once the job is finished
    int64_t failed = -1;                      // the tensor that ended the job, or -1
    bool unreadable = false;                  // ... because its bytes could not be read (else: it does not decode)
    Status failure;                           // its error: kTruncated "tensor.data" at the range's offset, or
                                              // check_decodable()'s at its info_offset
};

class HashJob final : public Job {
public:
    // model must outlive the job; the factory must make every algorithm named in options.
    HashJob(const ModelInfo& model, HashJobOptions options, DigestFactory factory);
    ~HashJob() override;

    const HashReport& report() const { return report_; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    // The job ends: kTruncated "tensor.data" at the range's offset, the report naming the range's tensor.
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

private:
    struct Lane;
    // Which tensors are in progress and how far: what a step reads follows from it alone.
    struct Cursor {
        size_t next = 0;                                 // the next entry of options_.tensors to start
        std::vector<std::pair<size_t, uint64_t>> lanes;  // (tensor, bytes hashed), in the order started
    };
    // Starts tensors until the cursor has its lanes (or none is left); a tensor without bytes is passed over
    // (starting a lane for it, when `lanes` is given, finishes it at once).
    void fill(Cursor* c, std::vector<std::unique_ptr<Lane>>* lanes);
    // The bytes the cursor's lanes read next.
    uint64_t piece_of(const std::pair<size_t, uint64_t>& lane) const;
    // The cursor after a step over all its lanes' pieces.
    void advance(Cursor* c) const;
    // Starts tensor i as a lane: its digests (or only its verdict, when it does not decode).
    std::unique_ptr<Lane> start(size_t tensor);
    void finish(Lane& lane);

    const ModelInfo& model_;
    HashJobOptions options_;
    DigestFactory factory_;
    HashReport report_;
    uint64_t total_work_ = 0;

    Cursor cursor_;
    std::vector<std::unique_ptr<Lane>> lanes_;  // cursor_.lanes' digests, in the same order
    // The current step's tasks: (lane, digest) with digest < stored.size() a stored-bytes digest, == stored.size()
    // the decode's, lane == lanes_.size() a whole-model digest.
    std::vector<std::pair<size_t, size_t>> tasks_;
};

}  // namespace ws
