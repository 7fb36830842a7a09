#!/usr/bin/env bash
# Sets everything up and runs the main job: builds weightstream, writes the bundled sample models with
# the project's own writer, and shows what the CLI sees in them.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

cmake --preset native-release >/dev/null
cmake --build --preset native-release --target weightstream make_samples
mkdir -p build/samples
build/bin/make_samples build/samples

for model in build/samples/*.gguf build/samples/*.safetensors; do
    printf '\n== weightstream info %s\n' "$model"
    build/bin/weightstream info "$model"
    build/bin/weightstream verify "$model"
done
