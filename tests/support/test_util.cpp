// SPDX-License-Identifier: MIT
#include "test_util.h"

#include <openssl/sha.h>

namespace ws_test {

std::string sha256_hex(const uint8_t* data, size_t size) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(data, size, digest);
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : digest) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
    }
    return out;
}

}  // namespace ws_test
