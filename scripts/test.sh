#!/usr/bin/env bash
# Sets everything up and runs every test: the native Release build with its tests, the same tests under
# ASan + UBSan (clang, which also replays the fuzz corpus), and the CLI end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "native release build + tests"
cmake --preset native-release >/dev/null
cmake --build --preset native-release
ctest --preset native-release -j2

step "ASan + UBSan build + tests (clang)"
cmake --preset native-asan >/dev/null
cmake --build --preset native-asan
ctest --preset native-asan -j2

step "all tests passed"
