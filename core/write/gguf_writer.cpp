// SPDX-License-Identifier: MIT
#include "weightstream/gguf_writer.h"

#include <string>
#include <unordered_set>

namespace ws {
namespace {

// Deeper nesting is legal GGUF but no real file has it; the cap keeps the recursion bounded.
constexpr uint32_t kMaxArrayDepth = 64;

// Appends little-endian fields to the header being built.
class HeaderSink {
public:
    explicit HeaderSink(std::vector<uint8_t>* out) : out_(out) {}

    uint64_t size() const { return out_->size(); }
    void u8(uint8_t v) { out_->push_back(v); }
    void u32(uint32_t v) { le(v, 4); }
    void u64(uint64_t v) { le(v, 8); }
    void bytes(const void* data, size_t n) {
        const uint8_t* p = static_cast<const uint8_t*>(data);
        out_->insert(out_->end(), p, p + n);
    }
    void str(const std::string& s) {
        u64(s.size());
        bytes(s.data(), s.size());
    }
    void le(uint64_t v, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) out_->push_back(static_cast<uint8_t>(v >> (8 * i)));
    }

private:
    std::vector<uint8_t>* out_;
};

bool valid_value_type(ValueType t) {
    return static_cast<uint32_t>(t) < static_cast<uint32_t>(ValueType::kCount);
}

// Rounds x up to a multiple of the power of two `align`; false on overflow.
bool pad_to(uint64_t x, uint64_t align, uint64_t* out) {
    if (x > UINT64_MAX - (align - 1)) return false;
    *out = (x + align - 1) & ~(align - 1);
    return true;
}

// The items of an array value (its item type and length are written by the caller).
Status write_array_items(HeaderSink& sink, const Value& v, uint32_t depth, uint64_t at) {
    if (!valid_value_type(v.item_type)) return make_error(Error::kBadType, at, "metadata.array_type");
    switch (v.item_type) {
        case ValueType::kString:
            if (v.strings.size() != v.length) return make_error(Error::kBadShape, at, "metadata.array_length");
            for (const std::string& s : v.strings) sink.str(s);
            return ok_status();
        case ValueType::kArray:
            if (v.arrays.size() != v.length) return make_error(Error::kBadShape, at, "metadata.array_length");
            if (depth + 1 > kMaxArrayDepth) return make_error(Error::kTooLarge, at, "metadata.array_depth");
            for (const Value& item : v.arrays) {
                if (item.type != ValueType::kArray)
                    return make_error(Error::kBadType, sink.size(), "metadata.array_item");
                if (!valid_value_type(item.item_type)) {
                    return make_error(Error::kBadType, sink.size(), "metadata.array_type");
                }
                const uint64_t item_at = sink.size();
                sink.u32(static_cast<uint32_t>(item.item_type));
                sink.u64(item.length);
                WS_TRY(write_array_items(sink, item, depth + 1, item_at));
            }
            return ok_status();
        default: {
            const uint64_t size = value_type_size(v.item_type);
            // Compare via division so a huge declared length cannot overflow the product.
            if (v.raw.size() % size != 0 || v.raw.size() / size != v.length) {
                return make_error(Error::kBadShape, at, "metadata.array_length");
            }
            sink.bytes(v.raw.data(), v.raw.size());
            return ok_status();
        }
    }
}

Status write_entry(HeaderSink& sink, const MetadataEntry& e) {
    const uint64_t at = sink.size();
    const Value& v = e.value;
    if (e.key.empty()) return make_error(Error::kBadKey, at, "metadata.key");
    if (!valid_value_type(v.type)) return make_error(Error::kBadType, at, "metadata.type");
    sink.str(e.key);
    sink.u32(static_cast<uint32_t>(v.type));
    switch (v.type) {
        case ValueType::kString:
            sink.str(v.str);
            break;
        case ValueType::kBool:
            sink.u8(v.bits != 0 ? 1 : 0);
            break;
        case ValueType::kArray:
            sink.u32(static_cast<uint32_t>(v.item_type));
            sink.u64(v.length);
            WS_TRY(write_array_items(sink, v, 1, at));
            break;
        default:
            sink.le(v.bits, value_type_size(v.type));
            break;
    }
    return ok_status();
}

// The alignment `general.alignment` asks for: ggml's reader requires a uint32 power of two.
Status entry_alignment(const MetadataEntry& e, uint64_t at, uint32_t* alignment) {
    if (e.value.type != ValueType::kUint32) return make_error(Error::kBadKey, at, "general.alignment");
    const uint64_t a = e.value.bits & 0xffffffffu;
    if (a == 0 || (a & (a - 1)) != 0) return make_error(Error::kBadAlignment, at, "general.alignment");
    *alignment = static_cast<uint32_t>(a);
    return ok_status();
}

// Checks one tensor as ggml's reader would and gives its element count and byte size.
Status check_tensor(const TensorInfo& t, uint64_t at, uint64_t* nbytes) {
    if (t.name.size() > kGgufMaxTensorName) return make_error(Error::kTooLarge, at, "tensor.name");
    if (!t.full_shape.empty() || t.n_dims > 4) return make_error(Error::kBadShape, at, "tensor.n_dims");
    for (uint32_t j = 0; j < 4; ++j) {
        if (t.ne[j] < 0) return make_error(Error::kBadShape, at, "tensor.ne");
        if (j >= t.n_dims && t.ne[j] != 1) return make_error(Error::kBadShape, at, "tensor.n_dims");
    }
    const uint32_t id = static_cast<uint32_t>(t.dtype);
    const DTypeTraits& traits = dtype_traits(t.dtype);
    if (id >= static_cast<uint32_t>(DType::kGgmlCount) || traits.block_elems == 0) {
        return make_error(Error::kBadType, at, "tensor.type");
    }
    if (t.ne[0] % traits.block_elems != 0) return make_error(Error::kBadShape, at, "tensor.ne");

    // ggml's representability rule, checked dim by dim (a zero dim makes the tensor empty and valid).
    uint64_t n = 0;
    if (t.ne[0] != 0 && t.ne[1] != 0 && t.ne[2] != 0 && t.ne[3] != 0) {
        int64_t prod = t.ne[0];
        for (uint32_t j = 1; j < 4; ++j) {
            if (INT64_MAX / t.ne[j] <= prod) return make_error(Error::kOverflow, at, "tensor.ne");
            prod *= t.ne[j];
        }
        n = static_cast<uint64_t>(prod);
    }
    if (!dtype_bytes_for(t.dtype, n, nbytes)) return make_error(Error::kOverflow, at, "tensor.nbytes");
    if (t.nbytes != 0 && t.nbytes != *nbytes) return make_error(Error::kBadShape, at, "tensor.nbytes");
    return ok_status();
}

}  // namespace

uint32_t gguf_n_dims(const int64_t ne[4]) {
    for (uint32_t i = 4; i > 1; --i) {
        if (ne[i - 1] != 1) return i;
    }
    return 1;
}

Result<GgufLayout> gguf_layout(const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors) {
    GgufLayout layout;
    HeaderSink sink(&layout.header);
    sink.bytes("GGUF", 4);
    sink.u32(kGgufVersion);
    sink.u64(tensors.size());
    sink.u64(metadata.size());

    std::unordered_set<std::string> seen;
    seen.reserve(metadata.size());
    for (const MetadataEntry& e : metadata) {
        const uint64_t at = sink.size();
        if (!seen.insert(e.key).second) return make_error(Error::kDuplicateName, at, "metadata.key");
        if (e.key == "general.alignment") WS_TRY(entry_alignment(e, at, &layout.alignment));
        WS_TRY(write_entry(sink, e));
    }
    const uint64_t align = layout.alignment;

    seen.clear();
    seen.reserve(tensors.size());
    layout.tensor_offsets.reserve(tensors.size());
    layout.tensor_nbytes.reserve(tensors.size());
    layout.tensor_padding.reserve(tensors.size());
    uint64_t data_size = 0;  // relative offset of the next tensor
    for (const TensorInfo& t : tensors) {
        const uint64_t at = sink.size();
        uint64_t nbytes = 0;
        WS_TRY(check_tensor(t, at, &nbytes));
        if (!seen.insert(t.name).second) return make_error(Error::kDuplicateName, at, "tensor.name");
        uint64_t padded = 0;
        if (!pad_to(nbytes, align, &padded) || padded > UINT64_MAX - data_size) {
            return make_error(Error::kOverflow, at, "tensor.nbytes");
        }

        sink.str(t.name);
        sink.u32(t.n_dims);
        for (uint32_t j = 0; j < t.n_dims; ++j) sink.u64(static_cast<uint64_t>(t.ne[j]));
        sink.u32(static_cast<uint32_t>(t.dtype));
        sink.u64(data_size);

        layout.tensor_offsets.push_back(data_size);
        layout.tensor_nbytes.push_back(nbytes);
        layout.tensor_padding.push_back(padded - nbytes);
        data_size += padded;
    }

    if (!tensors.empty()) {
        uint64_t end = 0;
        if (!pad_to(sink.size(), align, &end)) return make_error(Error::kOverflow, sink.size(), "header");
        layout.header.resize(end, 0);
    }
    layout.data_offset = layout.header.size();
    if (data_size > UINT64_MAX - layout.data_offset) return make_error(Error::kOverflow, 0, "file_size");
    layout.file_size = layout.data_offset + data_size;
    for (uint64_t& offset : layout.tensor_offsets) offset += layout.data_offset;
    return layout;
}

Result<std::vector<uint8_t>> gguf_write(const std::vector<MetadataEntry>& metadata,
                                        const std::vector<TensorInfo>& tensors,
                                        const std::vector<std::vector<uint8_t>>& data) {
    WS_ASSIGN_OR_RETURN(GgufLayout layout, gguf_layout(metadata, tensors));
    if (data.size() != tensors.size()) return make_error(Error::kBadShape, 0, "tensor.data");
    for (size_t i = 0; i < data.size(); ++i) {
        if (data[i].size() != layout.tensor_nbytes[i]) {
            return make_error(Error::kBadShape, layout.tensor_offsets[i], "tensor.data");
        }
    }
    std::vector<uint8_t> file = std::move(layout.header);
    file.reserve(layout.file_size);
    for (size_t i = 0; i < data.size(); ++i) {
        file.insert(file.end(), data[i].begin(), data[i].end());
        file.resize(file.size() + layout.tensor_padding[i], 0);
    }
    return file;
}

}  // namespace ws
