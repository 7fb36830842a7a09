#!/usr/bin/env bash
# Sets everything up and runs every test: the native Release build with its tests (core modules, the CLI
# end to end, fuzz corpus replay), the wasm build with the npm package's Node tests, the inspection page
# in headless Chromium, and the native tests again under ASan + UBSan (clang). Under the sanitizers the
# consumer builds and the two llama-quantize recipe reproductions are left out (CMakePresets.json): the
# recipes (every quantizer over 47 whole models, still run in Release) took 552 of the sanitized tests' 817
# test-seconds, while quantize_test runs every quantizer, with and without an importance matrix, on ggml's
# corpus under the sanitizers too. Likewise run in Release only: the 1,000-model scan (96 s sanitized; the other
# scan tests run sanitized), the CLI's 180 llama-tokenize comparisons (67 s; the tokenizer tests compare the same
# ids in process) and the tokenizers' linear-time tests (megabyte texts, timed: 305 s together; the fuzz replays
# and hostile-input tests run sanitized). The sanitized build leaves out libFuzzer's coverage instrumentation of
# the core (the native-fuzz preset builds the fuzzers), which only slowed the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

# Each step's line says when it started (seconds since this script did): where CI's time goes.
step() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }

step "C++ formatting (clang-format)"
git ls-files -z '*.cpp' '*.h' | xargs -0 clang-format --dry-run --Werror

step "native release build + tests"
cmake --preset native-release >/dev/null
cmake --build --preset native-release
ctest --preset native-release -j2

step "wasm build + the npm package's tests (Node, nginx; parity with the native CLI)"
npm run build:wasm
npm run test:wasm-kernels
npm run typecheck
npm run lint:js
npm run test:js

step "inspection page: build + tests in headless Chromium (screenshots in build/screenshots/)"
node web/build.mjs
node --test --test-concurrency=1 tests/browser/

step "ASan + UBSan build + tests (clang)"
cmake --preset native-asan >/dev/null
cmake --build --preset native-asan
ctest --preset native-asan -j2

step "all tests passed"
