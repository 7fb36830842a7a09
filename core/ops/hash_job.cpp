// SPDX-License-Identifier: MIT
#include "weightstream/hash_job.h"

#include <algorithm>

#include "weightstream/dequant.h"

namespace ws {
namespace {

// Elements a decode digest decodes at a time: 256 KiB of float32, which stays in L2 cache between the decoder
// writing it and the digest reading it (decoding a whole piece first makes both run at memory speed). A multiple
// of every block size.
constexpr uint64_t kChunkElements = uint64_t(1) << 16;

}  // namespace

struct HashJob::Lane {
    size_t tensor = 0;
    std::vector<std::unique_ptr<Digest>> stored;  // per options_.stored
    std::unique_ptr<Digest> decoded;              // null: no decode digest of its own
    int64_t decoded_from_stored = -1;             // the stored digest that is also the decode's (little-endian F32)
    std::vector<float> floats;                    // a chunk's decode
    std::vector<uint8_t> swapped;                 // a big-endian chunk, swapped
    Status status;                                // the decode's, in this step
};

HashJob::HashJob(const ModelInfo& model, HashJobOptions options, DigestFactory factory)
    : model_(model), options_(std::move(options)), factory_(std::move(factory)) {
    options_.lanes = std::max<uint32_t>(1, std::min(options_.lanes, kMaxHashLanes));
    if (!options_.whole.empty()) options_.lanes = 1;  // the whole-model digests read the tensors in order
    report_.tensors.resize(model.tensors.size());
    for (size_t i : options_.tensors) total_work_ += model.tensors[i].nbytes;
}

HashJob::~HashJob() = default;

uint64_t HashJob::piece_of(const std::pair<size_t, uint64_t>& lane) const {
    const TensorInfo& t = model_.tensors[lane.first];
    const uint64_t block = std::max<uint64_t>(1, dtype_traits(t.dtype).block_bytes);
    return std::min(std::max<uint64_t>(1, options_.piece_bytes / block) * block, t.nbytes - lane.second);
}

std::unique_ptr<HashJob::Lane> HashJob::start(size_t tensor) {
    const TensorInfo& t = model_.tensors[tensor];
    std::unique_ptr<Lane> lane(new Lane);
    lane->tensor = tensor;
    for (uint32_t algo : options_.stored) lane->stored.push_back(factory_(algo));
    TensorDigests& row = report_.tensors[tensor];
    row.decodable = decode_problem(model_, t).empty();
    if (!row.decodable || options_.decoded < 0) return lane;
    if (t.dtype == DType::F32 && !model_.big_endian) {
        const auto same = std::find(options_.stored.begin(), options_.stored.end(), options_.decoded);
        if (same != options_.stored.end()) {
            lane->decoded_from_stored = same - options_.stored.begin();
            return lane;
        }
    }
    lane->status = check_decodable(t.dtype, t.n_elements);
    if (!lane->status.ok()) return lane;
    lane->decoded = factory_(static_cast<uint32_t>(options_.decoded));
    lane->floats.resize(
        static_cast<size_t>(std::min(kChunkElements, t.n_elements) * dequant_floats_per_element(t.dtype)));
    return lane;
}

void HashJob::finish(Lane& lane) {
    TensorDigests& row = report_.tensors[lane.tensor];
    for (std::unique_ptr<Digest>& d : lane.stored) row.stored.push_back(d->finish());
    if (lane.decoded) row.decoded = lane.decoded->finish();
    if (lane.decoded_from_stored >= 0) row.decoded = row.stored[static_cast<size_t>(lane.decoded_from_stored)];
    row.done = true;
}

void HashJob::fill(Cursor* c, std::vector<std::unique_ptr<Lane>>* lanes) {
    while (c->lanes.size() < options_.lanes && c->next < options_.tensors.size() && report_.failed < 0) {
        const size_t tensor = options_.tensors[c->next++];
        if (lanes) {
            std::unique_ptr<Lane> lane = start(tensor);
            if (!lane->status.ok()) {
                const TensorInfo& t = model_.tensors[tensor];
                report_.failed = static_cast<int64_t>(tensor);
                report_.failure = make_error(lane->status.code, t.info_offset, lane->status.what);
                return;
            }
            if (model_.tensors[tensor].nbytes == 0) {
                finish(*lane);
                continue;
            }
            lanes->push_back(std::move(lane));
        } else if (model_.tensors[tensor].nbytes == 0) {
            continue;
        }
        c->lanes.emplace_back(tensor, 0);
    }
}

void HashJob::advance(Cursor* c) const {
    std::vector<std::pair<size_t, uint64_t>> going;
    for (const std::pair<size_t, uint64_t>& lane : c->lanes) {
        const uint64_t done = lane.second + piece_of(lane);
        if (done < model_.tensors[lane.first].nbytes) going.emplace_back(lane.first, done);
    }
    c->lanes.swap(going);
}

bool HashJob::next(JobStep* step) {
    *step = JobStep();
    tasks_.clear();
    fill(&cursor_, &lanes_);
    if (report_.failed >= 0) return false;
    if (lanes_.empty()) {
        for (std::unique_ptr<Digest>& d : options_.whole) report_.whole.push_back(d->finish());
        options_.whole.clear();
        return false;
    }
    // The longest tasks first, so that the parts taken first are: the whole-model digests, the decodes, the
    // stored bytes' digests.
    for (size_t w = 0; w < options_.whole.size(); ++w) tasks_.emplace_back(lanes_.size(), w);
    for (size_t l = 0; l < lanes_.size(); ++l) {
        if (lanes_[l]->decoded) tasks_.emplace_back(l, options_.stored.size());
    }
    for (size_t l = 0; l < lanes_.size(); ++l) {
        for (size_t k = 0; k < options_.stored.size(); ++k) tasks_.emplace_back(l, k);
    }
    for (const std::pair<size_t, uint64_t>& lane : cursor_.lanes) {
        const TensorInfo& t = model_.tensors[lane.first];
        const uint64_t n = piece_of(lane);
        step->inputs.push_back({t.file_index, t.offset + lane.second, n});
        step->work += n;
    }
    step->max_parts = static_cast<uint32_t>(std::max<size_t>(1, tasks_.size()));
    step->tensor = static_cast<int64_t>(cursor_.lanes.front().first);
    // The step after, from the cursor alone (what fill() will start then; a tensor that does not decode ends the
    // job there instead, and this was only a guess).
    Cursor after = cursor_;
    advance(&after);
    fill(&after, nullptr);
    for (const std::pair<size_t, uint64_t>& lane : after.lanes) {
        const TensorInfo& t = model_.tensors[lane.first];
        step->next_inputs.push_back({t.file_index, t.offset + lane.second, piece_of(lane)});
    }
    return true;
}

void HashJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    const size_t n = tasks_.size();
    for (size_t i = n * part / parts; i < n * (part + 1) / parts; ++i) {
        const size_t l = tasks_[i].first, d = tasks_[i].second;
        if (l == lanes_.size()) {
            for (size_t j = 0; j < lanes_.size(); ++j) options_.whole[d]->update(inputs[j].data, inputs[j].size);
            continue;
        }
        Lane& lane = *lanes_[l];
        if (d < lane.stored.size()) {
            lane.stored[d]->update(inputs[l].data, inputs[l].size);
            continue;
        }
        // The decode, a chunk at a time (a big-endian chunk swapped in a copy first).
        const DTypeTraits& traits = dtype_traits(model_.tensors[lane.tensor].dtype);
        const DType type = model_.tensors[lane.tensor].dtype;
        const uint64_t chunk_bytes = kChunkElements / traits.block_elems * traits.block_bytes;
        const uint32_t per_element = dequant_floats_per_element(type);
        for (uint64_t at = 0; at < inputs[l].size && lane.status.ok(); at += chunk_bytes) {
            const uint64_t bytes = std::min(chunk_bytes, inputs[l].size - at);
            const uint64_t elements = bytes / traits.block_bytes * traits.block_elems;
            const uint8_t* from = inputs[l].data + at;
            if (model_.big_endian) {
                lane.swapped.assign(from, from + bytes);
                lane.status = swap_to_little_endian(type, lane.swapped.data(), bytes);
                from = lane.swapped.data();
            }
            if (lane.status.ok()) lane.status = dequantize(type, from, elements, lane.floats.data());
            if (lane.status.ok()) {
                lane.decoded->update(reinterpret_cast<const uint8_t*>(lane.floats.data()),
                                     elements * per_element * sizeof(float));
            }
        }
    }
}

Status HashJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    for (const std::unique_ptr<Lane>& lane : lanes_) {
        if (lane->status.ok()) continue;
        const TensorInfo& t = model_.tensors[lane->tensor];
        report_.failed = static_cast<int64_t>(lane->tensor);
        report_.failure = make_error(lane->status.code, t.info_offset, lane->status.what);
        return report_.failure;
    }
    std::vector<std::unique_ptr<Lane>> going;
    std::vector<std::pair<size_t, uint64_t>> cursors;
    for (size_t l = 0; l < lanes_.size(); ++l) {
        std::pair<size_t, uint64_t> c = cursor_.lanes[l];
        c.second += piece_of(c);
        if (c.second < model_.tensors[c.first].nbytes) {
            going.push_back(std::move(lanes_[l]));
            cursors.push_back(c);
        } else {
            finish(*lanes_[l]);
        }
    }
    lanes_.swap(going);
    cursor_.lanes.swap(cursors);
    return ok_status();
}

Status HashJob::unreadable(const ByteRange& range) {
    for (size_t l = 0; l < lanes_.size(); ++l) {
        const TensorInfo& t = model_.tensors[cursor_.lanes[l].first];
        if (t.file_index != range.source || t.offset + cursor_.lanes[l].second != range.offset) continue;
        report_.failed = static_cast<int64_t>(lanes_[l]->tensor);
        break;
    }
    report_.unreadable = true;
    report_.failure = make_error(Error::kTruncated, range.offset, "tensor.data");
    return report_.failure;
}

}  // namespace ws
