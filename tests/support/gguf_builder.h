// SPDX-License-Identifier: MIT
// Test-only GGUF writer, header-only. Two levels:
//   GgufWriter  appends raw fields (integers, strings, values) in a chosen version's widths and byte
//               order and validates nothing, so tests can write broken files on purpose;
//   build_gguf  writes a whole valid file from a description (KVs + tensors with data) and reports where
//               it put every field, so a test can patch one field and know the offset of the defect.
// Independent of core/gguf_writer: the parser is tested against this, not against our own writer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/model_info.h"

namespace ws_test {

class GgufWriter {
public:
    explicit GgufWriter(uint32_t version = 3, bool big_endian = false) : version_(version), big_endian_(big_endian) {}

    uint32_t version() const { return version_; }
    bool big_endian() const { return big_endian_; }
    size_t size() const { return bytes_.size(); }
    const std::vector<uint8_t>& bytes() const { return bytes_; }
    std::vector<uint8_t>& bytes() { return bytes_; }

    // An unsigned integer of `width` bytes in the file's byte order.
    GgufWriter& uint(uint64_t v, unsigned width) {
        for (unsigned i = 0; i < width; ++i) {
            const unsigned shift = big_endian_ ? (width - 1 - i) * 8 : i * 8;
            bytes_.push_back(static_cast<uint8_t>(v >> shift));
        }
        return *this;
    }
    GgufWriter& u8(uint8_t v) { return uint(v, 1); }
    GgufWriter& u16(uint16_t v) { return uint(v, 2); }
    GgufWriter& u32(uint32_t v) { return uint(v, 4); }
    GgufWriter& u64(uint64_t v) { return uint(v, 8); }
    GgufWriter& i32(int32_t v) { return uint(static_cast<uint32_t>(v), 4); }
    GgufWriter& i64(int64_t v) { return uint(static_cast<uint64_t>(v), 8); }
    GgufWriter& f32(float v) {
        uint32_t b;
        std::memcpy(&b, &v, 4);
        return u32(b);
    }

    // String lengths, array counts and the header's counts: u32 in v1, u64 from v2 on.
    GgufWriter& length(uint64_t n) { return uint(n, length_width()); }
    // A tensor dimension: u32 in v1, i64 from v2 on.
    GgufWriter& dim(int64_t n) { return uint(static_cast<uint64_t>(n), length_width()); }
    unsigned length_width() const { return version_ == 1 ? 4 : 8; }

    GgufWriter& raw(const void* p, size_t n) {
        const uint8_t* b = static_cast<const uint8_t*>(p);
        bytes_.insert(bytes_.end(), b, b + n);
        return *this;
    }
    GgufWriter& raw(const std::string& s) { return raw(s.data(), s.size()); }
    GgufWriter& zeros(size_t n) {
        bytes_.resize(bytes_.size() + n, 0);
        return *this;
    }
    GgufWriter& pad_to(uint64_t alignment) {
        while (bytes_.size() % alignment != 0) bytes_.push_back(0);
        return *this;
    }
    GgufWriter& str(const std::string& s) { return length(s.size()).raw(s); }

    // "GGUF" (the same bytes in both byte orders), the version and the two counts.
    GgufWriter& header(uint64_t n_tensors, uint64_t n_kv) {
        return raw("GGUF", 4).u32(version_).length(n_tensors).length(n_kv);
    }

    // A value's payload (no type id). Array items come from Value::raw (little-endian), strings, arrays.
    GgufWriter& value(const ws::Value& v) {
        switch (v.type) {
            case ws::ValueType::kString:
                return str(v.str);
            case ws::ValueType::kArray: {
                u32(static_cast<uint32_t>(v.item_type)).length(v.length);
                const unsigned size = ws::value_type_size(v.item_type);
                if (size != 0) {
                    for (size_t i = 0; i + size <= v.raw.size(); i += size) {
                        uint64_t item = 0;
                        for (unsigned b = 0; b < size; ++b) item |= static_cast<uint64_t>(v.raw[i + b]) << (8 * b);
                        uint(item, size);
                    }
                } else if (v.item_type == ws::ValueType::kString) {
                    for (const std::string& s : v.strings) str(s);
                } else {
                    for (const ws::Value& a : v.arrays) value(a);
                }
                return *this;
            }
            default:
                return uint(v.bits, ws::value_type_size(v.type));
        }
    }
    // key, u32 type, payload.
    GgufWriter& kv(const std::string& key, const ws::Value& v) {
        return str(key).u32(static_cast<uint32_t>(v.type)).value(v);
    }

    // Overwrites `width` bytes at `at` with v in the file's byte order.
    void patch(size_t at, uint64_t v, unsigned width) {
        for (unsigned i = 0; i < width; ++i) {
            const unsigned shift = big_endian_ ? (width - 1 - i) * 8 : i * 8;
            bytes_[at + i] = static_cast<uint8_t>(v >> shift);
        }
    }

private:
    uint32_t version_;
    bool big_endian_;
    std::vector<uint8_t> bytes_;
};

// ---- Values ---------------------------------------------------------------------------------------

inline ws::Value scalar_value(ws::ValueType type, uint64_t bits) {
    ws::Value v;
    v.type = type;
    v.bits = bits;
    return v;
}
inline ws::Value val_u8(uint8_t x) {
    return scalar_value(ws::ValueType::kUint8, x);
}
inline ws::Value val_i8(int8_t x) {
    return scalar_value(ws::ValueType::kInt8, static_cast<uint64_t>(int64_t(x)));
}
inline ws::Value val_u16(uint16_t x) {
    return scalar_value(ws::ValueType::kUint16, x);
}
inline ws::Value val_i16(int16_t x) {
    return scalar_value(ws::ValueType::kInt16, static_cast<uint64_t>(int64_t(x)));
}
inline ws::Value val_u32(uint32_t x) {
    return scalar_value(ws::ValueType::kUint32, x);
}
inline ws::Value val_i32(int32_t x) {
    return scalar_value(ws::ValueType::kInt32, static_cast<uint64_t>(int64_t(x)));
}
inline ws::Value val_u64(uint64_t x) {
    return scalar_value(ws::ValueType::kUint64, x);
}
inline ws::Value val_i64(int64_t x) {
    return scalar_value(ws::ValueType::kInt64, static_cast<uint64_t>(x));
}
inline ws::Value val_bool(bool x) {
    return scalar_value(ws::ValueType::kBool, x ? 1 : 0);
}
inline ws::Value val_f32(float x) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return scalar_value(ws::ValueType::kFloat32, b);
}
inline ws::Value val_f64(double x) {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    return scalar_value(ws::ValueType::kFloat64, b);
}
inline ws::Value val_str(const std::string& s) {
    ws::Value v;
    v.type = ws::ValueType::kString;
    v.str = s;
    return v;
}

// An array of scalars of `item` type; T is the C type of one item (its bytes are stored little-endian).
template <typename T>
ws::Value val_array(ws::ValueType item, const std::vector<T>& items) {
    ws::Value v;
    v.type = ws::ValueType::kArray;
    v.item_type = item;
    v.length = items.size();
    for (const T& x : items) {
        uint64_t bits = 0;
        std::memcpy(&bits, &x, sizeof(T));  // little-endian host: the low bytes are the item
        for (size_t b = 0; b < sizeof(T); ++b) v.raw.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    }
    return v;
}
inline ws::Value val_array_str(const std::vector<std::string>& items) {
    ws::Value v;
    v.type = ws::ValueType::kArray;
    v.item_type = ws::ValueType::kString;
    v.length = items.size();
    v.strings = items;
    return v;
}
inline ws::Value val_array_arr(const std::vector<ws::Value>& items) {
    ws::Value v;
    v.type = ws::ValueType::kArray;
    v.item_type = ws::ValueType::kArray;
    v.length = items.size();
    v.arrays = items;
    return v;
}

// ---- Whole files ----------------------------------------------------------------------------------

constexpr uint64_t kAutoOffset = UINT64_MAX;

struct TensorSpec {
    std::string name;
    uint32_t type_id = 0;           // ggml type id
    std::vector<int64_t> ne;        // ggml order, innermost first; n_dims = ne.size()
    std::vector<uint8_t> data;      // empty: a deterministic byte pattern of the type's size (0 bytes if unknown)
    uint64_t offset = kAutoOffset;  // relative to the data section; auto: right after the previous tensor, padded
};

struct GgufSpec {
    uint32_t version = 3;
    bool big_endian = false;
    std::vector<std::pair<std::string, ws::Value>> kvs;
    std::vector<TensorSpec> tensors;
    uint64_t alignment = 0;  // for padding; 0: general.alignment from kvs when it is a u32, else 32
};

// Where build_gguf put each field: absolute file offsets.
struct GgufLayout {
    struct Kv {
        uint64_t entry;  // the key's length field
        uint64_t type;   // the u32 value type
        uint64_t value;  // the payload (an array's item type)
    };
    struct Tensor {
        uint64_t entry;  // the name's length field
        uint64_t n_dims;
        uint64_t ne;
        uint64_t type;
        uint64_t offset;  // the u64 offset field
        uint64_t data;    // absolute start of the data
        uint64_t nbytes;
    };
    std::vector<Kv> kvs;
    std::vector<Tensor> tensors;
    uint64_t n_tensors_field = 8;
    uint64_t n_kv_field = 0;
    uint64_t header_end = 0;   // end of the tensor entries
    uint64_t data_offset = 0;  // start of the data section
    uint64_t alignment = 32;
};

struct BuiltGguf {
    std::vector<uint8_t> bytes;
    GgufLayout layout;
};

// Bytes of a tensor of a known ggml type; 0 for unknown ids.
inline uint64_t spec_nbytes(const TensorSpec& t) {
    if (!t.data.empty()) return t.data.size();
    uint64_t n = 1;
    for (int64_t d : t.ne) n *= static_cast<uint64_t>(d);
    uint64_t bytes = 0;
    return ws::dtype_bytes_for(ws::dtype_from_ggml_id(t.type_id), n, &bytes) ? bytes : 0;
}

inline BuiltGguf build_gguf(const GgufSpec& spec) {
    BuiltGguf out;
    GgufLayout& L = out.layout;
    L.alignment = spec.alignment;
    if (L.alignment == 0) {
        L.alignment = 32;
        for (const auto& kv : spec.kvs) {
            if (kv.first == "general.alignment" && kv.second.type == ws::ValueType::kUint32 && kv.second.bits != 0) {
                L.alignment = kv.second.bits;
            }
        }
    }
    GgufWriter w(spec.version, spec.big_endian);
    w.header(spec.tensors.size(), spec.kvs.size());
    L.n_kv_field = 8 + w.length_width();
    for (const auto& kv : spec.kvs) {
        GgufLayout::Kv k;
        k.entry = w.size();
        w.str(kv.first);
        k.type = w.size();
        w.u32(static_cast<uint32_t>(kv.second.type));
        k.value = w.size();
        w.value(kv.second);
        L.kvs.push_back(k);
    }
    uint64_t next = 0;  // where ggml expects the next tensor: after the previous one, padded
    for (const TensorSpec& t : spec.tensors) {
        GgufLayout::Tensor e;
        e.entry = w.size();
        w.str(t.name);
        e.n_dims = w.size();
        w.u32(static_cast<uint32_t>(t.ne.size()));
        e.ne = w.size();
        for (int64_t d : t.ne) w.dim(d);
        e.type = w.size();
        w.u32(t.type_id);
        e.offset = w.size();
        const uint64_t rel = t.offset == kAutoOffset ? next : t.offset;
        w.u64(rel);
        e.nbytes = spec_nbytes(t);
        e.data = rel;  // made absolute below
        next = (rel + e.nbytes + L.alignment - 1) / L.alignment * L.alignment;
        L.tensors.push_back(e);
    }
    L.header_end = w.size();
    if (!spec.tensors.empty()) w.pad_to(L.alignment);
    L.data_offset = w.size();
    std::vector<uint8_t>& bytes = w.bytes();
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        GgufLayout::Tensor& e = L.tensors[i];
        e.data += L.data_offset;
        const uint64_t end = e.data + e.nbytes;
        if (bytes.size() < end) bytes.resize(end, 0);
        const std::vector<uint8_t>& given = spec.tensors[i].data;
        for (uint64_t b = 0; b < e.nbytes; ++b) {
            bytes[e.data + b] = given.empty() ? static_cast<uint8_t>(b * 31 + i * 7 + 1) : given[b];
        }
    }
    if (!spec.tensors.empty()) w.pad_to(L.alignment);  // ggml pads after the last tensor too
    out.bytes = std::move(bytes);
    return out;
}

// Tensor data of ggml type `type_id` as a big-endian writer stores it, following gguf-py's
// scripts/gguf_convert_endian.py (written here from its text, independently of the core's table): F32, F16,
// BF16 and the integer types and F64 (which gguf-py's writer swaps as numpy arrays) per element; Q4_0 and
// Q8_0 the f16 d at the start of each block (18 / 34 bytes); Q4_K d and dmin (144-byte blocks); Q6_K the f16 d
// at bytes 208..209 (210-byte blocks); MXFP4 and I8 unchanged. False for any other type (gguf-py refuses it).
inline bool to_big_endian_data(uint32_t type_id, std::vector<uint8_t>* bytes) {
    auto reverse_each = [&](size_t block, size_t at, size_t width) {
        for (size_t b = 0; b + block <= bytes->size(); b += block) {
            std::reverse(bytes->begin() + static_cast<std::ptrdiff_t>(b + at),
                         bytes->begin() + static_cast<std::ptrdiff_t>(b + at + width));
        }
    };
    switch (type_id) {
        case 0:   // F32
        case 26:  // I32
            reverse_each(4, 0, 4);
            return true;
        case 1:   // F16
        case 25:  // I16
        case 30:  // BF16
            reverse_each(2, 0, 2);
            return true;
        case 27:  // I64
        case 28:  // F64
            reverse_each(8, 0, 8);
            return true;
        case 24:  // I8
        case 39:  // MXFP4
            return true;
        case 2:  // Q4_0
            reverse_each(18, 0, 2);
            return true;
        case 8:  // Q8_0
            reverse_each(34, 0, 2);
            return true;
        case 12:  // Q4_K
            reverse_each(144, 0, 2);
            reverse_each(144, 2, 2);
            return true;
        case 14:  // Q6_K
            reverse_each(210, 208, 2);
            return true;
        default:
            return false;
    }
}

}  // namespace ws_test
