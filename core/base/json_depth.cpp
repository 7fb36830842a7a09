// SPDX-License-Identifier: MIT
#include "base/json_depth.h"

namespace ws {

bool json_nests_deeper_than(const char* text, size_t size, uint32_t max_depth) {
    uint32_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < size; ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // the escaped character cannot end the string
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return true;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return false;
}

}  // namespace ws
