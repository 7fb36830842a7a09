# SPDX-License-Identifier: MIT
# Builds and runs tests/consumer against this build of weightstream (cmake -P; tests/CMakeLists.txt registers it):
#   -DMODE=install        `cmake --install` of the build tree BINARY into a fresh prefix, then find_package()
#   -DMODE=subdirectory   add_subdirectory() of the checkout SOURCE
# Either way the consumer is configured with OpenSSL and Catch2 made unfindable, so a dependency that leaks out
# of the CLI or the tests fails the test. WORK is this test's own directory; GENERATOR, MAKE_PROGRAM, CXX and
# CXX_FLAGS (the sanitizer flags of an ASan build, which the installed library needs at link time too) and
# NLOHMANN_DIR repeat the outer build's choices.
foreach(var MODE SOURCE BINARY WORK GENERATOR CXX)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run.cmake: -D${var}=... is required")
    endif()
endforeach()

set(configure_args -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
                   -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON
                   -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON)
if(MAKE_PROGRAM)
    list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(NLOHMANN_DIR)
    list(APPEND configure_args -Dnlohmann_json_DIR=${NLOHMANN_DIR})
endif()

if(MODE STREQUAL "install")
    set(prefix ${WORK}/prefix)
    file(REMOVE_RECURSE ${prefix})
    execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY} --prefix ${prefix} COMMAND_ERROR_IS_FATAL ANY
                    OUTPUT_QUIET)
    # The install holds the public headers under include/weightstream/ and none of the core's internals.
    foreach(header status.h header_parser.h gguf.h model_info.h)
        if(NOT EXISTS ${prefix}/include/weightstream/${header})
            message(FATAL_ERROR "the install has no include/weightstream/${header}")
        endif()
    endforeach()
    file(GLOB internal ${prefix}/include/weightstream/*_internal.h)
    if(internal)
        message(FATAL_ERROR "internal headers were installed: ${internal}")
    endif()
    list(APPEND configure_args -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
elseif(MODE STREQUAL "subdirectory")
    # The core is compiled once more here: with no build type (no optimisation), a fraction of Release's compile
    # time, as what this proves is how the package is consumed, not how fast it runs.
    list(APPEND configure_args -DWEIGHTSTREAM_SOURCE_DIR=${SOURCE} -DCMAKE_BUILD_TYPE=)
else()
    message(FATAL_ERROR "run.cmake: MODE is install or subdirectory, not '${MODE}'")
endif()

set(build ${WORK}/build)
# A fresh configure each time: a cached weightstream_DIR or option must not hide a broken package.
file(REMOVE_RECURSE ${build}/CMakeCache.txt)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer -B ${build} ${configure_args}
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} --parallel 2 COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${build}/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer exited with ${rc}")
endif()
# The JSON it prints names the tensor and the architecture it parsed.
if(NOT out MATCHES "\"name\": \"t\"" OR NOT out MATCHES "\"llama\"")
    message(FATAL_ERROR "unexpected consumer output:\n${out}")
endif()
message(STATUS "consumer (${MODE}) ok")
