#!/usr/bin/env bash
# Sets everything up and runs the main job: builds the native CLI and the wasm package, writes the
# bundled sample models with the project's own writer, builds the inspection page and serves it with
# nginx on localhost (Range requests on), printing the URL to open. Ctrl-C stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

port="${PORT:-8080}"
cmake --preset native-release >/dev/null
cmake --build --preset native-release --target weightstream make_samples
build/bin/make_samples build/samples
npm run build:wasm
node web/build.mjs --samples build/samples

printf '\nSample models (also listed on the page):\n'
for model in build/samples/*.gguf build/samples/*.safetensors; do
    build/bin/weightstream verify "$model"
done
exec node web/serve.mjs --port "$port"
