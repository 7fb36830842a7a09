// SPDX-License-Identifier: MIT
#include "weightstream/imatrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "weightstream/gguf.h"

namespace ws {
namespace {

constexpr char kSumsSuffix[] = ".in_sum2";
constexpr char kCountsSuffix[] = ".counts";

bool remove_suffix(std::string* s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    if (s->size() < n || s->compare(s->size() - n, n, suffix) != 0) return false;
    s->resize(s->size() - n);
    return true;
}

float load_f32(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
}

int32_t load_i32(const uint8_t* p) {
    const uint32_t u = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                       static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    int32_t v;
    std::memcpy(&v, &u, 4);
    return v;
}

// llama-quantize refuses the whole file when any importance value is NaN or infinite; the offset is the stored
// value's (a GGUF's in_sum2 element).
Status check_finite(const Imatrix& m) {
    for (const ImatrixEntry& e : m.entries) {
        for (size_t k = 0; k < e.values.size(); ++k) {
            if (!std::isfinite(e.values[k]))
                return make_error(Error::kBadShape, e.values_offset + 4 * k, "imatrix.value");
        }
    }
    return ok_status();
}

Result<Imatrix> parse_gguf_imatrix(const uint8_t* data, size_t size) {
    ParseOptions options;
    options.file_size = size;
    GgufParser parser(options);
    const Status s = parser.feed(data, size);
    if (s.code == Error::kNeedMoreData) return make_error(Error::kTruncated, parser.bytes_fed(), "header");
    WS_TRY(s);
    const ModelInfo& info = parser.info();
    if (info.big_endian) return make_error(Error::kUnsupported, 4, "header.version");
    if (info.tensors.empty()) return make_error(Error::kBadShape, 8, "imatrix.n_tensors");

    Imatrix out;
    const MetadataEntry* datasets = info.find("imatrix.datasets");
    const MetadataEntry* chunk_count = info.find("imatrix.chunk_count");
    const MetadataEntry* chunk_size = info.find("imatrix.chunk_size");
    if (!datasets || !chunk_count || !chunk_size) return make_error(Error::kBadKey, 0, "imatrix.metadata");
    // ggml's typed getters abort on another type; these are the types llama-imatrix writes.
    if (datasets->value.type != ValueType::kArray || datasets->value.item_type != ValueType::kString) {
        return make_error(Error::kBadKey, datasets->offset, "imatrix.datasets");
    }
    if (chunk_count->value.type != ValueType::kUint32) {
        return make_error(Error::kBadKey, chunk_count->offset, "imatrix.chunk_count");
    }
    if (chunk_size->value.type != ValueType::kUint32) {
        return make_error(Error::kBadKey, chunk_size->offset, "imatrix.chunk_size");
    }
    out.datasets = datasets->value.strings;
    // llama-quantize keeps the count in an int.
    out.chunk_count = static_cast<int32_t>(static_cast<uint32_t>(chunk_count->value.bits));
    out.chunk_size = static_cast<uint32_t>(chunk_size->value.bits);

    std::map<std::string, std::pair<const TensorInfo*, const TensorInfo*>> pairs;  // name -> {sums, counts}
    for (const TensorInfo& t : info.tensors) {
        std::string name = t.name;
        if (name.empty()) continue;
        if (remove_suffix(&name, kSumsSuffix)) {
            pairs[name].first = &t;
        } else if (remove_suffix(&name, kCountsSuffix)) {
            pairs[name].second = &t;
        }
    }
    for (const auto& [name, pair] : pairs) {
        const TensorInfo* sums = pair.first;
        const TensorInfo* counts = pair.second;
        if (!sums) return make_error(Error::kBadShape, counts->info_offset, "imatrix.in_sum2");
        if (!counts) return make_error(Error::kBadShape, sums->info_offset, "imatrix.counts");
        if (sums->dtype != DType::F32) return make_error(Error::kBadType, sums->info_offset, "imatrix.in_sum2");
        if (counts->dtype != DType::F32) return make_error(Error::kBadType, counts->info_offset, "imatrix.counts");
        const int64_t ne0 = sums->ne[0];
        const int64_t ne1 = sums->ne[1];
        if (ne0 < 1 || sums->ne[2] != 1 || sums->ne[3] != 1) {
            return make_error(Error::kBadShape, sums->info_offset, "imatrix.in_sum2");
        }
        if (counts->n_elements != static_cast<uint64_t>(ne1)) {
            return make_error(Error::kBadShape, counts->info_offset, "imatrix.counts");
        }
        // The parser has checked both ranges against the file size.
        const uint8_t* sum_bytes = data + sums->offset;
        const uint8_t* count_bytes = data + counts->offset;
        ImatrixEntry e;
        e.name = name;
        e.n_per_row = ne0;
        e.n_mat = ne1;
        e.values_offset = sums->offset;
        e.values.resize(static_cast<size_t>(sums->n_elements));
        for (int64_t j = 0; j < ne1; ++j) {
            const float count = load_f32(count_bytes + 4 * j);
            for (int64_t i = 0; i < ne0; ++i) {
                const size_t k = static_cast<size_t>(j * ne0 + i);
                e.values[k] = count > 0.0f ? load_f32(sum_bytes + 4 * k) / count : 1.0f;
            }
        }
        out.entries.push_back(std::move(e));
    }
    return out;
}

Result<Imatrix> parse_legacy_imatrix(const uint8_t* data, size_t size) {
    size_t pos = 0;
    auto read_i32 = [&](const char* what, int32_t* v) {
        if (size - pos < 4) return make_error(Error::kTruncated, pos, what);
        *v = load_i32(data + pos);
        pos += 4;
        return ok_status();
    };
    int32_t n_entries = 0;
    WS_TRY(read_i32("imatrix.n_entries", &n_entries));
    if (n_entries < 1) return make_error(Error::kBadShape, 0, "imatrix.n_entries");
    if (n_entries > kMaxImatrixEntries) return make_error(Error::kTooLarge, 0, "imatrix.n_entries");

    // In file order; sorted at the end, where the last of a repeated name wins (llama reads into a map). One
    // name per entry: memory is the values plus a small constant per entry, bounded by kMaxImatrixEntries.
    std::vector<ImatrixEntry> read;
    for (int32_t i = 0; i < n_entries; ++i) {
        const size_t entry_at = pos;
        int32_t len = 0;
        WS_TRY(read_i32("imatrix.name", &len));
        if (len < 0) return make_error(Error::kBadShape, entry_at, "imatrix.name");
        if (size - pos < static_cast<size_t>(len)) return make_error(Error::kTruncated, entry_at, "imatrix.name");
        // llama builds the name as a C string: it ends at the first NUL.
        const uint8_t* name_end = std::find(data + pos, data + pos + len, uint8_t(0));
        ImatrixEntry e;
        e.name.assign(reinterpret_cast<const char*>(data + pos), static_cast<size_t>(name_end - (data + pos)));
        pos += static_cast<size_t>(len);
        int32_t ncall = 0, nval = 0;
        WS_TRY(read_i32("imatrix.ncall", &ncall));
        const size_t nval_at = pos;
        WS_TRY(read_i32("imatrix.nval", &nval));
        if (nval < 1) return make_error(Error::kBadShape, nval_at, "imatrix.nval");
        if ((size - pos) / 4 < static_cast<size_t>(nval))
            return make_error(Error::kTruncated, nval_at, "imatrix.values");
        e.n_per_row = nval;
        e.n_mat = 1;
        e.values_offset = pos;
        e.values.resize(static_cast<size_t>(nval));
        for (int32_t k = 0; k < nval; ++k) {
            const float v = load_f32(data + pos + 4 * static_cast<size_t>(k));
            e.values[static_cast<size_t>(k)] = ncall > 0 ? v / static_cast<float>(ncall) : v;
        }
        pos += 4 * static_cast<size_t>(nval);
        read.push_back(std::move(e));
    }

    Imatrix out;
    out.legacy = true;
    if (pos < size) {
        // The newest legacy files end with the chunk count and the dataset's name.
        int32_t last_call = 0, dataset_len = 0;
        WS_TRY(read_i32("imatrix.chunk_count", &last_call));
        const size_t len_at = pos;
        WS_TRY(read_i32("imatrix.dataset", &dataset_len));
        if (dataset_len < 0) return make_error(Error::kBadShape, len_at, "imatrix.dataset");
        if (size - pos < static_cast<size_t>(dataset_len))
            return make_error(Error::kTruncated, len_at, "imatrix.dataset");
        out.chunk_count = last_call;
        out.datasets.emplace_back(reinterpret_cast<const char*>(data + pos), static_cast<size_t>(dataset_len));
    }
    std::stable_sort(read.begin(), read.end(),
                     [](const ImatrixEntry& a, const ImatrixEntry& b) { return a.name < b.name; });
    for (size_t i = 0; i < read.size(); ++i) {
        if (i + 1 < read.size() && read[i + 1].name == read[i].name) continue;  // a later one of the name wins
        out.entries.push_back(std::move(read[i]));
    }
    return out;
}

}  // namespace

const ImatrixEntry* Imatrix::find(const std::string& name) const {
    const auto it = std::lower_bound(entries.begin(), entries.end(), name,
                                     [](const ImatrixEntry& e, const std::string& n) { return e.name < n; });
    return it != entries.end() && it->name == name ? &*it : nullptr;
}

Result<Imatrix> parse_imatrix(const uint8_t* data, size_t size) {
    const bool gguf = size >= 4 && std::memcmp(data, "GGUF", 4) == 0;
    Result<Imatrix> r = gguf ? parse_gguf_imatrix(data, size) : parse_legacy_imatrix(data, size);
    if (!r.ok()) return r.status();
    WS_TRY(check_finite(r.value()));
    return r;
}

}  // namespace ws
