# SPDX-License-Identifier: MIT
# nlohmann_json for the Emscripten build (the wasm-release preset points nlohmann_json_DIR here).
# Debian's own package config puts /usr/include on the include path, where em++ would then find the host's
# C and C++ headers instead of its sysroot's. Expose a build-tree directory that holds only `nlohmann/`.
find_path(WS_NLOHMANN_INCLUDE_DIR nlohmann/json.hpp PATHS /usr/include /usr/local/include
          NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
if(NOT WS_NLOHMANN_INCLUDE_DIR)
    set(nlohmann_json_FOUND FALSE)
    set(nlohmann_json_NOT_FOUND_MESSAGE "nlohmann/json.hpp not found (apt-get install nlohmann-json3-dev)")
    return()
endif()

set(ws_nlohmann_only_dir ${CMAKE_BINARY_DIR}/nlohmann-only)
file(MAKE_DIRECTORY ${ws_nlohmann_only_dir})
file(CREATE_LINK ${WS_NLOHMANN_INCLUDE_DIR}/nlohmann ${ws_nlohmann_only_dir}/nlohmann SYMBOLIC)

if(NOT TARGET nlohmann_json::nlohmann_json)
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
    # Imported targets' include directories are -isystem: nlohmann's own warnings stay out of our build.
    set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${ws_nlohmann_only_dir})
endif()
set(nlohmann_json_FOUND TRUE)
