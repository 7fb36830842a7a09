// SPDX-License-Identifier: MIT
#include "io/curl_library.h"

#include "io/shared_library.h"

namespace ws {
namespace {

LoadedApi<CurlLibrary> load() {
    LoadedApi<CurlLibrary> l;
    SharedLibrary lib("libcurl.so.4");  // Debian's libcurl4 (the SONAME the development package links against)
    CURLcode (*global_init)(long) = nullptr;
    CurlLibrary& a = l.api;
    l.ok = lib.resolve("curl_global_init", &global_init) && lib.resolve("curl_easy_init", &a.easy_init) &&
           lib.resolve("curl_easy_setopt", &a.easy_setopt) && lib.resolve("curl_easy_perform", &a.easy_perform) &&
           lib.resolve("curl_easy_getinfo", &a.easy_getinfo) && lib.resolve("curl_easy_cleanup", &a.easy_cleanup) &&
           lib.resolve("curl_easy_strerror", &a.easy_strerror) && lib.resolve("curl_slist_append", &a.slist_append) &&
           lib.resolve("curl_slist_free_all", &a.slist_free_all) && lib.resolve("curl_getdate", &a.getdate);
    l.error = lib.error();
    if (l.ok && global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        l.ok = false;
        l.error = "libcurl could not be initialised (curl_global_init)";
    }
    return l;
}

}  // namespace

const CurlLibrary* curl_library(std::string* error) {
    static const LoadedApi<CurlLibrary> loaded = load();
    return loaded.get(error);
}

}  // namespace ws
