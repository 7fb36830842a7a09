// SPDX-License-Identifier: MIT
#include "io/crypto_library.h"

#include "io/shared_library.h"

namespace ws {
namespace {

LoadedApi<CryptoLibrary> load() {
    LoadedApi<CryptoLibrary> l;
    SharedLibrary lib("libcrypto.so.3");  // OpenSSL 3's SONAME, the one Debian's libssl-dev links against
    CryptoLibrary& a = l.api;
    l.ok = lib.resolve("EVP_MD_CTX_new", &a.md_ctx_new) && lib.resolve("EVP_MD_CTX_free", &a.md_ctx_free) &&
           lib.resolve("EVP_DigestInit_ex", &a.digest_init_ex) && lib.resolve("EVP_DigestUpdate", &a.digest_update) &&
           lib.resolve("EVP_DigestFinal_ex", &a.digest_final_ex) && lib.resolve("EVP_sha1", &a.sha1) &&
           lib.resolve("EVP_sha256", &a.sha256);
    l.error = lib.error();
    return l;
}

}  // namespace

const CryptoLibrary* crypto_library(std::string* error) {
    static const LoadedApi<CryptoLibrary> loaded = load();
    return loaded.get(error);
}

}  // namespace ws
