// SPDX-License-Identifier: MIT
// A minimal NumPy .npy reader for the tests, written from the format description
// (https://numpy.org/devdocs/reference/generated/numpy.lib.format.html), independent of the CLI's writer:
// magic "\x93NUMPY", major/minor version, a little-endian u16 (v1) or u32 (v2/v3) header length, a Python
// dict literal with 'descr', 'fortran_order' and 'shape', then the raw array bytes.
#pragma once

#include <cstdint>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace ws_test {

struct NpyArray {
    int major = 0;
    std::string descr;  // "<f4", "<f2", "<u2", "|u1", ...
    bool fortran_order = false;
    std::vector<int64_t> shape;
    size_t data_offset = 0;  // where the array bytes start in the file
    std::vector<uint8_t> data;
};

inline NpyArray read_npy(const std::vector<uint8_t>& file) {
    static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (file.size() < 10 || !std::equal(kMagic, kMagic + 6, file.begin())) throw std::runtime_error("npy: bad magic");
    NpyArray a;
    a.major = file[6];
    size_t len = 0, prefix = 0;
    if (a.major == 1) {
        len = file[8] | static_cast<size_t>(file[9]) << 8;
        prefix = 10;
    } else if (a.major == 2 || a.major == 3) {
        if (file.size() < 12) throw std::runtime_error("npy: truncated");
        len = file[8] | static_cast<size_t>(file[9]) << 8 | static_cast<size_t>(file[10]) << 16 |
              static_cast<size_t>(file[11]) << 24;
        prefix = 12;
    } else {
        throw std::runtime_error("npy: unknown version");
    }
    if (file.size() < prefix + len) throw std::runtime_error("npy: truncated header");
    const std::string dict(file.begin() + static_cast<ptrdiff_t>(prefix),
                           file.begin() + static_cast<ptrdiff_t>(prefix + len));
    if (dict.empty() || dict.back() != '\n') throw std::runtime_error("npy: header does not end in a newline");

    std::smatch m;
    if (!std::regex_search(dict, m, std::regex("'descr'\\s*:\\s*'([^']*)'"))) throw std::runtime_error("npy: descr");
    a.descr = m[1];
    if (!std::regex_search(dict, m, std::regex("'fortran_order'\\s*:\\s*(True|False)"))) {
        throw std::runtime_error("npy: fortran_order");
    }
    a.fortran_order = m[1] == "True";
    if (!std::regex_search(dict, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
        throw std::runtime_error("npy: shape");
    const std::string dims = m[1];
    const std::regex number("[0-9]+");
    for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
        a.shape.push_back(std::stoll(it->str()));
    }
    a.data_offset = prefix + len;
    a.data.assign(file.begin() + static_cast<ptrdiff_t>(a.data_offset), file.end());
    return a;
}

}  // namespace ws_test
