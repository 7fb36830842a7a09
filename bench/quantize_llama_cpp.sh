#!/bin/sh
# Whole-file quantize speed against llama-quantize (issue 23's table, docs/SPEED.md "Quantizing"): for each type,
# llama-quantize on 1 thread, weightstream on 1 and 2 threads and the package's quantize() under Node (wasm), on
# the same F16 GGUF, in alternating rounds; the best wall time of each, as MB/s of float32 input (parameters x 4
# bytes / seconds), and every output's sha256 (all four must be equal: the run stops otherwise). Not a test, never
# in CI: it needs llama.cpp built from its source (LLAMA_SRC, with build/bin/llama-quantize), the native build
# (build/bin/weightstream) and the wasm build (wasm/js/dist). The input defaults to bench/make_f16_llama.py's
# 2-layer model (446 MiB).
#   LLAMA_SRC=/path/to/llama.cpp sh bench/quantize_llama_cpp.sh [ROUNDS] [TYPE...]
set -eu
W=${WORK:-/tmp/ws-quantize-bench}; BIN=${BIN:-build/bin/weightstream}; LL=${LLAMA_SRC:?a llama.cpp checkout with build/bin/llama-quantize}
ROUNDS=${1:-3}; [ $# -gt 0 ] && shift
TYPES=${*:-Q4_K_M Q5_K_M Q6_K Q8_0 Q2_K IQ4_XS}
mkdir -p $W; IN=${IN:-$W/f16.gguf}
[ -f $IN ] || python3 "$(dirname "$0")/make_f16_llama.py" $IN 2
PARAMS=$($BIN info $IN --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["facts"]["parameter_count"])')
# secs OUT CMD...: deletes OUT (freeing an old file's blocks is not the tool's time), runs CMD, prints its wall
# seconds.
secs() { rm -f "$1"; shift; s=$(date +%s.%N); "$@" >/dev/null 2>$W/err.txt || { cat $W/err.txt >&2; exit 1; }; e=$(date +%s.%N); echo "$s $e" | awk '{printf "%.3f", $2 - $1}'; }
best() { if [ -z "$1" ]; then echo "$2"; else echo "$1 $2" | awk '{print ($2 < $1) ? $2 : $1}'; fi; }
mbs() { echo "$PARAMS $1" | awk '{printf "%.1f", $1 * 4 / 1e6 / $2}'; }
echo "input: $IN, $PARAMS parameters; best of $ROUNDS rounds; MB/s of float32 input"
echo "| type | llama-quantize 1t | weightstream 1t | weightstream 2t | wasm (Node) | 1t / llama-quantize | 2t / 1t | wasm / 1t |"
echo "|---|---|---|---|---|---|---|---|"
for T in $TYPES; do
  ll=; w1=; w2=; wa=
  for r in $(seq $ROUNDS); do
    ll=$(best "$ll" $(secs $W/ll.gguf env LD_LIBRARY_PATH=$LL/build/bin $LL/build/bin/llama-quantize $IN $W/ll.gguf $T 1))
    w1=$(best "$w1" $(secs $W/w1.gguf $BIN quantize $IN $W/w1.gguf --type $T --threads 1))
    w2=$(best "$w2" $(secs $W/w2.gguf $BIN quantize $IN $W/w2.gguf --type $T --threads 2))
    wa=$(best "$wa" $(secs $W/wa.gguf node "$(dirname "$0")/package_ops.mjs" . quantize $IN $T $W/wa.gguf))
  done
  n=$(sha256sum $W/ll.gguf $W/w1.gguf $W/w2.gguf $W/wa.gguf | awk '{print $1}' | sort -u | wc -l)
  [ $n -eq 1 ] || { echo "$T: outputs differ" >&2; sha256sum $W/ll.gguf $W/w1.gguf $W/w2.gguf $W/wa.gguf >&2; exit 1; }
  echo "| $T | $(mbs $ll) | $(mbs $w1) | $(mbs $w2) | $(mbs $wa) | $(echo "$ll $w1" | awk '{printf "%.2f", $1 / $2}') | $(echo "$w1 $w2" | awk '{printf "%.2f", $1 / $2}') | $(echo "$w1 $wa" | awk '{printf "%.2f", $1 / $2}') |"
done
