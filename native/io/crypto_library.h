// SPDX-License-Identifier: MIT
// OpenSSL's libcrypto, loaded with dlopen when a command first needs SHA-1 or SHA-256 (`hash`, `scan`, the
// header cache of URLs): linked, its 17,000 start-up relocations and CPU probe were most of what a bare
// `weightstream --version` cost (docs/SPEED.md, "Start-up"). Only the EVP functions the digests call; EVP picks
// SHA-NI where the CPU has it.
#pragma once

#include <openssl/evp.h>

#include <string>

namespace ws {

struct CryptoLibrary {
    EVP_MD_CTX* (*md_ctx_new)();
    void (*md_ctx_free)(EVP_MD_CTX*);
    int (*digest_init_ex)(EVP_MD_CTX*, const EVP_MD*, ENGINE*);
    int (*digest_update)(EVP_MD_CTX*, const void*, size_t);
    int (*digest_final_ex)(EVP_MD_CTX*, unsigned char*, unsigned int*);
    const EVP_MD* (*sha1)();
    const EVP_MD* (*sha256)();
};

// The library, loaded once (thread-safe). nullptr when it cannot be loaded, with *error (when not null)
// saying why: "libcrypto.so.3 could not be loaded: ...".
const CryptoLibrary* crypto_library(std::string* error);

}  // namespace ws
