// SPDX-License-Identifier: MIT
#include "curl_library.h"

#include <dlfcn.h>

namespace ws {
namespace {

struct Loaded {
    CurlLibrary api{};
    bool ok = false;
    std::string error;
};

template <typename F>
bool resolve(void* handle, const char* name, F* out, std::string* error) {
    *out = reinterpret_cast<F>(dlsym(handle, name));
    if (!*out) *error = std::string("libcurl.so.4 has no ") + name;
    return *out != nullptr;
}

Loaded load() {
    Loaded l;
    // Debian's libcurl4 (the SONAME the development package links against); never closed.
    void* handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        l.error = std::string("libcurl.so.4 could not be loaded: ") + (why ? why : "unknown error");
        return l;
    }
    CURLcode (*global_init)(long) = nullptr;
    CurlLibrary& a = l.api;
    l.ok = resolve(handle, "curl_global_init", &global_init, &l.error) &&
           resolve(handle, "curl_easy_init", &a.easy_init, &l.error) &&
           resolve(handle, "curl_easy_setopt", &a.easy_setopt, &l.error) &&
           resolve(handle, "curl_easy_perform", &a.easy_perform, &l.error) &&
           resolve(handle, "curl_easy_getinfo", &a.easy_getinfo, &l.error) &&
           resolve(handle, "curl_easy_cleanup", &a.easy_cleanup, &l.error) &&
           resolve(handle, "curl_easy_strerror", &a.easy_strerror, &l.error) &&
           resolve(handle, "curl_slist_append", &a.slist_append, &l.error) &&
           resolve(handle, "curl_slist_free_all", &a.slist_free_all, &l.error) &&
           resolve(handle, "curl_getdate", &a.getdate, &l.error);
    if (l.ok && global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        l.ok = false;
        l.error = "libcurl could not be initialised (curl_global_init)";
    }
    return l;
}

}  // namespace

const CurlLibrary* curl_library(std::string* error) {
    static const Loaded loaded = load();
    if (!loaded.ok && error) *error = loaded.error;
    return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace ws
