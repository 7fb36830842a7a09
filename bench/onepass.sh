#!/bin/sh
# SPDX-License-Identifier: MIT
# The one-pass quantize (a Hugging Face checkpoint -> a quantized GGUF) against the two steps it replaces, on a
# checkpoint of bench/make_hf_llama.py (10 layers: 1.16 GB): wall time and peak RSS of each (/usr/bin/time -v), and
# the outputs' sha256 (they must be equal). Not a test: run it on a quiet machine.
#   sh bench/onepass.sh [BUILD_BIN] [WORKDIR] [TYPE] [THREADS]
set -eu
BIN=${1:-build/bin/weightstream}; WORK=${2:-/tmp/ws-onepass-bench}; TYPE=${3:-Q4_K_M}; THREADS=${4:-2}
CKPT=$WORK/Bench-Llama
mkdir -p "$WORK"
[ -f "$CKPT/model.safetensors" ] || python3 "$(dirname "$0")/make_hf_llama.py" "$CKPT" 10
measure() {  # LABEL COMMAND...: one line "LABEL: S s, RSS MiB"
    label=$1; shift
    /usr/bin/time -v "$@" >/dev/null 2>"$WORK/time.txt" || { cat "$WORK/time.txt"; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
    echo "$label: $wall wall, $((rss / 1024)) MiB peak RSS"
}
du -h "$CKPT/model.safetensors"
measure "convert --dtype f16" "$BIN" convert "$CKPT/model.safetensors" "$WORK/mid.gguf" --dtype f16 --threads "$THREADS"
measure "quantize mid.gguf --type $TYPE" "$BIN" quantize "$WORK/mid.gguf" "$WORK/two.gguf" --type "$TYPE" --threads "$THREADS"
measure "quantize CHECKPOINT --type $TYPE (one pass)" "$BIN" quantize "$CKPT" "$WORK/one.gguf" --type "$TYPE" --threads "$THREADS"
echo "intermediate file: $(du -h "$WORK/mid.gguf" | cut -f1) (the one pass writes none)"
a=$(sha256sum < "$WORK/two.gguf"); b=$(sha256sum < "$WORK/one.gguf")
[ "$a" = "$b" ] && echo "outputs identical: ${a%% *}" || { echo "outputs DIFFER"; exit 1; }
