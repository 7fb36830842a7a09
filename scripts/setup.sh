#!/usr/bin/env bash
# Installs everything weightstream needs on Debian 12 (run as root). Idempotent: installs only what is
# missing, runs `apt-get update` at most once, then `npm ci` when node_modules is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential cmake ninja-build clang lld libclang-rt-14-dev clang-format  # native build, sanitizers, libFuzzer
    nlohmann-json3-dev catch2 libssl-dev                                         # JSON, C++ tests, sha256 (hash)
    libcurl4-openssl-dev libxxhash-dev                                           # URL source, llama-gguf-hash manifests
    emscripten nodejs npm                                                        # wasm build, JS package
    nginx chromium                                                               # Range server, browser tests
    python3 ca-certificates
    unicode-data                                                                 # UCD 15.0.0: core/unicode's generated tables
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The machine may already carry a newer Node than Debian's; keep it.
if command -v node >/dev/null && command -v npm >/dev/null; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -ra missing <<<"${missing[*]}"
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -f package-lock.json ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
    npm ci --no-audit --no-fund --loglevel=error
fi
