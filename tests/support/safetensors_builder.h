// SPDX-License-Identifier: MIT
// Test-only safetensors writer: well-formed files from a tensor list, and files around a literal header
// for the corrupt-file catalogue. Independent of core/ (the JSON is written by nlohmann's serializer).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ws_test {

// The u64 little-endian length, the header bytes as given, then data_size bytes of data (i & 0xff).
inline std::vector<uint8_t> safetensors_raw(uint64_t header_length, const std::string& header, size_t data_size) {
    std::vector<uint8_t> out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(header_length >> (8 * i)));
    out.insert(out.end(), header.begin(), header.end());
    for (size_t i = 0; i < data_size; ++i) out.push_back(static_cast<uint8_t>(i * 7 + 1));
    return out;
}

// header padded with spaces to a multiple of pad_to (the reference writer pads to 8), its true length
// in front, then data_size bytes.
inline std::vector<uint8_t> safetensors_file(std::string header, size_t data_size, size_t pad_to = 1) {
    while (header.size() % pad_to != 0) header += ' ';
    return safetensors_raw(header.size(), header, data_size);
}

// Absolute file offset of the nth (1-based) occurrence of needle in a header written at offset 8.
inline uint64_t at(const std::string& header, const std::string& needle, int nth = 1) {
    size_t pos = std::string::npos;
    for (int i = 0; i < nth; ++i) {
        pos = header.find(needle, pos == std::string::npos ? 0 : pos + 1);
        if (pos == std::string::npos) throw std::logic_error("needle not in header: " + needle);
    }
    return 8 + pos;
}

// Builds a valid file: tensors laid out contiguously in the order added, keys in that order too.
class SafetensorsBuilder {
public:
    SafetensorsBuilder& metadata(const std::string& key, const std::string& value) {
        metadata_.emplace_back(key, value);
        return *this;
    }
    // Writes "__metadata__": null (as MLX does).
    SafetensorsBuilder& null_metadata() {
        null_metadata_ = true;
        return *this;
    }
    SafetensorsBuilder& tensor(const std::string& name, const std::string& dtype, const std::vector<uint64_t>& shape,
                               uint64_t nbytes) {
        tensors_.push_back({name, dtype, shape, nbytes});
        return *this;
    }
    // Padding of the header (8 like the reference writer; 1 for none).
    SafetensorsBuilder& pad_to(size_t n) {
        pad_to_ = n;
        return *this;
    }

    std::string header_json() const {
        nlohmann::ordered_json j = nlohmann::ordered_json::object();
        if (null_metadata_) {
            j["__metadata__"] = nullptr;
        } else if (!metadata_.empty()) {
            nlohmann::ordered_json m = nlohmann::ordered_json::object();
            for (const auto& kv : metadata_) m[kv.first] = kv.second;
            j["__metadata__"] = m;
        }
        uint64_t offset = 0;
        for (const Entry& t : tensors_) {
            j[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.nbytes}}};
            offset += t.nbytes;
        }
        return j.dump();
    }

    uint64_t data_size() const {
        uint64_t n = 0;
        for (const Entry& t : tensors_) n += t.nbytes;
        return n;
    }

    std::vector<uint8_t> build() const { return safetensors_file(header_json(), data_size(), pad_to_); }

private:
    struct Entry {
        std::string name;
        std::string dtype;
        std::vector<uint64_t> shape;
        uint64_t nbytes;
    };
    std::vector<std::pair<std::string, std::string>> metadata_;
    std::vector<Entry> tensors_;
    bool null_metadata_ = false;
    size_t pad_to_ = 8;
};

}  // namespace ws_test
