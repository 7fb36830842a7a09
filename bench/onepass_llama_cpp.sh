#!/bin/sh
# llama.cpp's two steps (convert_hf_to_gguf.py --outtype f16, then llama-quantize) against weightstream's one pass,
# on bench/make_hf_llama.py's 1.16 GB checkpoint with tiny-llama-spm's SentencePiece tokenizer beside it: wall time
# and peak RSS of each step, and every output's sha256 (llama.cpp's F16 file and weightstream convert's must be
# equal, and llama-quantize's, weightstream's two steps' and its one pass's). Not a test, never in CI: it needs
# llama.cpp built from its source (LLAMA_SRC, with build/bin/llama-quantize) and Debian's python3-torch,
# python3-numpy and python3-sentencepiece for the converter, which reads a pytorch_model.bin made here (no
# safetensors module in Debian 12).
#   LLAMA_SRC=/path/to/llama.cpp sh bench/onepass_llama_cpp.sh [TYPE]
set -eu
W=${WORK:-/tmp/ws-onepass-bench}; BIN=${BIN:-build/bin/weightstream}; LL=${LLAMA_SRC:?a llama.cpp checkout with build/bin/llama-quantize}; T=${1:-Q4_K_M}
CK=$W/Bench-Llama; PT=$W/pt/Bench-Llama
[ -f $CK/model.safetensors ] || python3 "$(dirname "$0")/make_hf_llama.py" $CK 10
cp ${SHARED:-../shared/testdata}/convert/tiny-llama-spm/tokenizer.model ${SHARED:-../shared/testdata}/convert/tiny-llama-spm/tokenizer_config.json $CK/
mkdir -p $PT; cp $CK/config.json $CK/tokenizer.model $CK/tokenizer_config.json $PT/
[ -f $PT/pytorch_model.bin ] || /usr/bin/python3 - "$CK/model.safetensors" "$PT/pytorch_model.bin" <<'PY'
import json, struct, sys, numpy as np, torch
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n)); base = 8 + n
data = np.memmap(src, dtype=np.uint8, mode="r")
out = {}
for k, v in h.items():
    if k == "__metadata__": continue
    a, b = v["data_offsets"]
    out[k] = torch.from_numpy(np.array(data[base + a:base + b]).view(np.float16).reshape(v["shape"]))
torch.save(out, dst)
PY
m() { label=$1; shift; /usr/bin/time -v "$@" >/dev/null 2>$W/t.txt || { tail -30 $W/t.txt; exit 1; }
  echo "$label: $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' $W/t.txt) wall, $(( $(sed -n 's/.*Maximum resident set size (kbytes): //p' $W/t.txt) / 1024 )) MiB peak RSS"; }
m "llama.cpp convert_hf_to_gguf.py --outtype f16" /usr/bin/python3 ${SHARED:-../shared/testdata}/convert/scripts/run_convert.py $LL/convert_hf_to_gguf.py $PT --outtype f16 --outfile $W/mid-llama.gguf
m "llama.cpp llama-quantize $T (2 threads)" env LD_LIBRARY_PATH=$LL/build/bin $LL/build/bin/llama-quantize $W/mid-llama.gguf $W/two-llama.gguf $T 2
m "weightstream convert --dtype f16" $BIN convert $CK/model.safetensors $W/mid.gguf --dtype f16 --threads 2
m "weightstream quantize mid.gguf $T" $BIN quantize $W/mid.gguf $W/two.gguf --type $T --threads 2
m "weightstream quantize CHECKPOINT $T (one pass)" $BIN quantize $CK $W/one.gguf --type $T --threads 2
sha256sum $W/mid-llama.gguf $W/mid.gguf $W/two-llama.gguf $W/two.gguf $W/one.gguf
ls -l $W/mid.gguf $W/one.gguf
