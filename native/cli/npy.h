// SPDX-License-Identifier: MIT
// NumPy .npy files (format version 1.0, https://numpy.org/devdocs/reference/generated/numpy.lib.format.html):
// a header naming the dtype and shape, then the array's bytes in C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ws::cli {

// The header of a C-order .npy file: "\x93NUMPY", version 1.0, the u16 header length, then the
// dict "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with spaces and a newline so
// that the data starts at a multiple of 64 bytes (what numpy itself writes). descr is a NumPy type string
// such as "<f4", "<f2", "<u2", "|u1", "<c8"; shape is outermost first ([] for a scalar). A dict longer
// than a u16 can count (thousands of dims) gets version 2.0 and a u32 length instead.
std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape);

}  // namespace ws::cli
