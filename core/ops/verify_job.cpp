// SPDX-License-Identifier: MIT
#include "weightstream/verify_job.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace {

// Elements a part decodes at a time: its floats stay in L1/L2 cache while they are checked. A multiple of every
// block size.
constexpr uint64_t kChunkElements = uint64_t(1) << 14;

// Where the f16 scales (and mins) sit in each block. MXFP4's E8M0 and NVFP4's UE4M3 scales have no NaN or
// Inf code in ggml's decode; IQ1_M's f16 scale is assembled from nibbles (see iq1_m_scale).
struct ScaleFields {
    DType type;
    uint32_t count;
    uint32_t offsets[2];
};

constexpr ScaleFields kScaleFields[] = {
    {DType::Q4_0, 1, {offsetof(block_q4_0, d)}},
    {DType::Q4_1, 2, {offsetof(block_q4_1, d), offsetof(block_q4_1, m)}},
    {DType::Q5_0, 1, {offsetof(block_q5_0, d)}},
    {DType::Q5_1, 2, {offsetof(block_q5_1, d), offsetof(block_q5_1, m)}},
    {DType::Q8_0, 1, {offsetof(block_q8_0, d)}},
    {DType::Q8_1, 1, {offsetof(block_q8_1, d)}},
    {DType::Q1_0, 1, {offsetof(block_q1_0, d)}},
    {DType::Q2_0, 1, {offsetof(block_q2_0, d)}},
    {DType::TQ1_0, 1, {offsetof(block_tq1_0, d)}},
    {DType::TQ2_0, 1, {offsetof(block_tq2_0, d)}},
    {DType::Q2_K, 2, {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)}},
    {DType::Q3_K, 1, {offsetof(block_q3_K, d)}},
    {DType::Q4_K, 2, {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)}},
    {DType::Q5_K, 2, {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)}},
    {DType::Q6_K, 1, {offsetof(block_q6_K, d)}},
    {DType::IQ2_XXS, 1, {offsetof(block_iq2_xxs, d)}},
    {DType::IQ2_XS, 1, {offsetof(block_iq2_xs, d)}},
    {DType::IQ2_S, 1, {offsetof(block_iq2_s, d)}},
    {DType::IQ3_XXS, 1, {offsetof(block_iq3_xxs, d)}},
    {DType::IQ3_S, 1, {offsetof(block_iq3_s, d)}},
    {DType::IQ1_S, 1, {offsetof(block_iq1_s, d)}},
    {DType::IQ4_NL, 1, {offsetof(block_iq4_nl, d)}},
    {DType::IQ4_XS, 1, {offsetof(block_iq4_xs, d)}},
};

uint16_t load_u16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | p[1] << 8);
}

// IQ1_M: the f16 super-block scale is the top nibbles of the four u16 scale words (ggml's iq1m_scale_t).
uint16_t iq1_m_scale(const uint8_t* block) {
    const uint8_t* sc = block + offsetof(block_iq1_m, scales);
    return static_cast<uint16_t>((load_u16(sc) >> 12) | ((load_u16(sc + 2) >> 8) & 0x00f0) |
                                 ((load_u16(sc + 4) >> 4) & 0x0f00) | (load_u16(sc + 6) & 0xf000));
}

// The scale fields of type t, or nullptr when it has none to check (IQ1_M is checked apart).
const ScaleFields* scale_fields(DType t) {
    for (const ScaleFields& s : kScaleFields) {
        if (s.type == t) return &s;
    }
    return nullptr;
}

}  // namespace

VerifyJob::VerifyJob(const ModelInfo& model, bool find_zeros) : model_(model), find_zeros_(find_zeros) {
    for (const TensorInfo& t : model.tensors) {
        if (decode_problem(model, t).empty()) total_work_ += t.nbytes;
    }
    tensor_ = SIZE_MAX;  // start_tensor() moves to the first
}

Status VerifyJob::fail(const Status& s, bool unreadable) {
    report_.failed = static_cast<int64_t>(tensor_);
    report_.unreadable = unreadable;
    report_.failure = s;
    return s;
}

bool VerifyJob::start_tensor() {
    for (++tensor_; tensor_ < model_.tensors.size(); ++tensor_) {
        const TensorInfo& t = model_.tensors[tensor_];
        if (!decode_problem(model_, t).empty()) continue;
        const Status s = check_decodable(t.dtype, t.n_elements);
        if (!s.ok()) {
            (void)fail(make_error(s.code, t.info_offset, s.what), false);
            return false;
        }
        if (t.n_elements > 0) {
            window_first_ = 0;
            window_elements_ = 0;
            scale_ = ScaleFinding{tensor_, t.nbytes / dtype_traits(t.dtype).block_bytes, 0, 0, 0};
            nonzero_ = false;
            return true;
        }
        ++report_.decoded;  // nothing to decode
    }
    return true;
}

bool VerifyJob::next(JobStep* step) {
    *step = JobStep();
    if (report_.failed >= 0) return false;
    if (tensor_ >= model_.tensors.size() || window_first_ + window_elements_ >= model_.tensors[tensor_].n_elements) {
        if (!start_tensor()) return false;
    } else {
        window_first_ += window_elements_;
    }
    if (tensor_ >= model_.tensors.size()) return false;
    const TensorInfo& t = model_.tensors[tensor_];
    const DTypeTraits& traits = dtype_traits(t.dtype);
    window_elements_ = std::min(kVerifyWindowElements, t.n_elements - window_first_);
    const uint64_t bytes = window_elements_ / traits.block_elems * traits.block_bytes;
    step->inputs.push_back({t.file_index, t.offset + window_first_ / traits.block_elems * traits.block_bytes, bytes});
    step->max_parts = static_cast<uint32_t>(
        std::max<uint64_t>(1, std::min<uint64_t>(kMaxRowParts, window_elements_ / kChunkElements)));
    step->work = bytes;
    step->tensor = static_cast<int64_t>(tensor_);
    parts_.assign(step->max_parts, PartFindings());
    // The step after: this tensor's next window, or the next tensor's first.
    if (window_first_ + window_elements_ < t.n_elements) {
        const uint64_t first = window_first_ + window_elements_;
        const uint64_t n = std::min(kVerifyWindowElements, t.n_elements - first);
        step->next_inputs.push_back({t.file_index, t.offset + first / traits.block_elems * traits.block_bytes,
                                     n / traits.block_elems * traits.block_bytes});
        return true;
    }
    for (size_t i = tensor_ + 1; i < model_.tensors.size(); ++i) {
        const TensorInfo& u = model_.tensors[i];
        if (u.n_elements == 0 || !decode_problem(model_, u).empty()) continue;
        const DTypeTraits& v = dtype_traits(u.dtype);
        const uint64_t n = std::min(kVerifyWindowElements, u.n_elements);
        step->next_inputs.push_back({u.file_index, u.offset, n / v.block_elems * v.block_bytes});
        break;
    }
    return true;
}

void VerifyJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    const TensorInfo& t = model_.tensors[tensor_];
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t blocks = window_elements_ / traits.block_elems;
    const uint64_t b0 = blocks * part / parts, b1 = blocks * (part + 1) / parts;
    const uint64_t window_offset = t.offset + window_first_ / traits.block_elems * traits.block_bytes;
    PartFindings& found = parts_[part];

    // Block scales, in the stored bytes (a big-endian file's f16 fields read swapped).
    const ScaleFields* fields = scale_fields(t.dtype);
    if (fields || t.dtype == DType::IQ1_M) {
        for (uint64_t b = b0; b < b1; ++b) {
            const uint8_t* block = inputs[0].data + b * traits.block_bytes;
            bool nan = false, inf = false;
            const uint32_t n = fields ? fields->count : 1;
            for (uint32_t i = 0; i < n; ++i) {
                uint16_t h = fields ? load_u16(block + fields->offsets[i]) : iq1_m_scale(block);
                if (model_.big_endian) h = static_cast<uint16_t>(h >> 8 | h << 8);
                if ((h & 0x7c00) != 0x7c00) continue;
                ((h & 0x03ff) ? nan : inf) = true;
            }
            if ((nan || inf) && found.first_offset == UINT64_MAX)
                found.first_offset = window_offset + b * traits.block_bytes;
            found.nan_blocks += nan;
            found.inf_blocks += inf && !nan;
        }
    }

    // The decode, a chunk at a time (a big-endian chunk swapped in a copy first).
    const uint64_t chunk_blocks = kChunkElements / traits.block_elems;
    const uint32_t per_element = dequant_floats_per_element(t.dtype);
    std::vector<float> floats(static_cast<size_t>(std::min(b1 - b0, chunk_blocks) * traits.block_elems * per_element));
    std::vector<uint8_t> swapped;
    for (uint64_t b = b0; b < b1; b += chunk_blocks) {
        const uint64_t n = std::min(chunk_blocks, b1 - b);
        const uint8_t* from = inputs[0].data + b * traits.block_bytes;
        if (model_.big_endian) {
            swapped.assign(from, from + n * traits.block_bytes);
            found.status = swap_to_little_endian(t.dtype, swapped.data(), swapped.size());
            if (!found.status.ok()) return;
            from = swapped.data();
        }
        found.status = dequantize(t.dtype, from, n * traits.block_elems, floats.data());
        if (!found.status.ok()) return;
        const size_t count = static_cast<size_t>(n * traits.block_elems * per_element);
        for (size_t i = 0; find_zeros_ && !found.nonzero && i < count; ++i) found.nonzero = floats[i] != 0.0f;
    }
}

Status VerifyJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    const TensorInfo& t = model_.tensors[tensor_];
    // The parts in block order: the first failure and the first finding are the earliest part's.
    for (const PartFindings& found : parts_) {
        if (!found.status.ok()) return fail(make_error(found.status.code, t.info_offset, found.status.what), false);
        if (found.nan_blocks + found.inf_blocks > 0 && scale_.nan_blocks + scale_.inf_blocks == 0) {
            scale_.first_offset = found.first_offset;
        }
        scale_.nan_blocks += found.nan_blocks;
        scale_.inf_blocks += found.inf_blocks;
        nonzero_ |= found.nonzero;
    }
    if (window_first_ + window_elements_ < t.n_elements) return ok_status();
    ++report_.decoded;
    if (find_zeros_ && !nonzero_) report_.zeros.push_back(tensor_);
    if (scale_.nan_blocks + scale_.inf_blocks > 0) report_.scales.push_back(scale_);
    return ok_status();
}

Status VerifyJob::unreadable(const ByteRange&) {
    const TensorInfo& t = model_.tensors[tensor_];
    return fail(make_error(Error::kTruncated, t.offset, "tensor.data"), true);
}

}  // namespace ws
