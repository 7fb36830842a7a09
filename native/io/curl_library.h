// SPDX-License-Identifier: MIT
// libcurl, loaded with dlopen when the first URL is opened: a command on local files then never maps libcurl
// and the thirty-odd libraries it depends on (TLS, HTTP/2, IDN, LDAP, Kerberos ...), which would be most of
// its start-up (docs/SPEED.md, "Start-up"). Only the functions http_source.cpp calls.
#pragma once

#include <curl/curl.h>

#include <ctime>
#include <string>

namespace ws {

struct CurlLibrary {
    CURL* (*easy_init)();
    CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
    CURLcode (*easy_perform)(CURL*);
    CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
    void (*easy_cleanup)(CURL*);
    const char* (*easy_strerror)(CURLcode);
    curl_slist* (*slist_append)(curl_slist*, const char*);
    void (*slist_free_all)(curl_slist*);
    time_t (*getdate)(const char*, const time_t*);
};

// The library, loaded and curl_global_init'ed once (thread-safe). nullptr when it cannot be loaded, with
// *error (when not null) saying why: "libcurl.so.4 could not be loaded: ...".
const CurlLibrary* curl_library(std::string* error);

}  // namespace ws
