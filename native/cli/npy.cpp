// SPDX-License-Identifier: MIT
#include "cli/npy.h"

namespace ws::cli {

std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
    dict += shape.size() == 1 ? ",), }" : "), }";
    // The data starts at a multiple of 64 bytes. Version 1.0 has a u16 header length; a dict too long for
    // it (a safetensors tensor of very high rank) needs version 2.0 and its u32 length.
    const bool v2 = 10 + dict.size() + 1 + 63 > 0xffff;
    const size_t prefix = v2 ? 12 : 10;
    const size_t unpadded = prefix + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    const size_t len = dict.size();
    std::string header("\x93NUMPY", 6);
    header += static_cast<char>(v2 ? 2 : 1);
    header += '\0';
    for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) header += static_cast<char>((len >> (8 * i)) & 0xff);
    return header + dict;
}

}  // namespace ws::cli
