// SPDX-License-Identifier: MIT
// A system library opened with dlopen by its SONAME, for the libraries only some commands use (curl_library.h,
// crypto_library.h): a command that does not use one never maps it. Opened for the life of the process.
#pragma once

#include <dlfcn.h>

#include <string>

namespace ws {

class SharedLibrary {
public:
    explicit SharedLibrary(const char* soname) : soname_(soname), handle_(dlopen(soname, RTLD_NOW | RTLD_LOCAL)) {
        if (!handle_) {
            const char* why = dlerror();
            error_ = soname_ + " could not be loaded: " + (why ? why : "unknown error");
        }
    }

    // Sets *out to the function `name`; false (and error() says which) when the library is not loaded or
    // lacks it. The first failure is the one error() keeps.
    template <typename F>
    bool resolve(const char* name, F* out) {
        *out = handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
        if (!*out && error_.empty()) error_ = soname_ + " has no " + name;
        return *out != nullptr;
    }

    const std::string& error() const { return error_; }

private:
    std::string soname_;
    void* handle_;
    std::string error_;
};

// A library's functions once resolved (Api: a struct of function pointers), or why they are not.
template <typename Api>
struct LoadedApi {
    Api api{};
    bool ok = false;
    std::string error;

    // &api, or nullptr with *error (when not null) saying why.
    const Api* get(std::string* why) const {
        if (!ok && why) *why = error;
        return ok ? &api : nullptr;
    }
};

}  // namespace ws
