#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A llama-shaped F16 GGUF of seeded N(0, 0.02) weights (a 4 MiB pattern tiled), for timing only (docs/SPEED.md,
# "Operations as jobs"): python3 bench/make_f16_llama.py OUT.gguf N_LAYERS   (2 layers: 446 MiB)
import random, struct, sys
out = sys.argv[1]; n_layer = int(sys.argv[2]); dim = 2048; ffn = 5632; vocab = 32000; heads = 16
random.seed(1)
pattern = b"".join(struct.pack("<e", random.gauss(0, 0.02)) for _ in range(1 << 21))
def s(x): b = x.encode(); return struct.pack("<Q", len(b)) + b
kv = [("general.architecture", 8, s("llama")), ("general.name", 8, s("bench")),
      ("llama.context_length", 4, struct.pack("<I", 4096)), ("llama.embedding_length", 4, struct.pack("<I", dim)),
      ("llama.block_count", 4, struct.pack("<I", n_layer)), ("llama.feed_forward_length", 4, struct.pack("<I", ffn)),
      ("llama.attention.head_count", 4, struct.pack("<I", heads)), ("llama.attention.head_count_kv", 4, struct.pack("<I", heads)),
      ("llama.rope.dimension_count", 4, struct.pack("<I", dim // heads)),
      ("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)), ("general.file_type", 4, struct.pack("<I", 1))]
tensors = [("token_embd.weight", [dim, vocab], 1)]
for i in range(n_layer):
    tensors += [(f"blk.{i}.attn_norm.weight", [dim], 0), (f"blk.{i}.attn_q.weight", [dim, dim], 1),
                (f"blk.{i}.attn_k.weight", [dim, dim], 1), (f"blk.{i}.attn_v.weight", [dim, dim], 1),
                (f"blk.{i}.attn_output.weight", [dim, dim], 1), (f"blk.{i}.ffn_norm.weight", [dim], 0),
                (f"blk.{i}.ffn_gate.weight", [dim, ffn], 1), (f"blk.{i}.ffn_up.weight", [dim, ffn], 1),
                (f"blk.{i}.ffn_down.weight", [ffn, dim], 1)]
tensors += [("output_norm.weight", [dim], 0), ("output.weight", [dim, vocab], 1)]
hdr = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
for k, t, v in kv: hdr += s(k) + struct.pack("<I", t) + v
off = 0; sizes = []
for name, ne, ty in tensors:
    n = 1
    for d in ne: n *= d
    size = n * (4 if ty == 0 else 2); sizes.append(size)
    hdr += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) + struct.pack("<IQ", ty, off)
    off += (size + 31) // 32 * 32
hdr += b"\0" * ((-len(hdr)) % 32)
with open(out, "wb") as f:
    f.write(hdr)
    for (name, ne, ty), size in zip(tensors, sizes):
        if ty == 0: data = struct.pack("<f", 1.0) * (size // 4)
        else: data = (pattern * (size // len(pattern) + 1))[:size]
        f.write(data); f.write(b"\0" * ((-size) % 32))
