#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A Hugging Face llama checkpoint folder (model.safetensors, F16, seeded N(0, 0.02) weights: a 4 MiB pattern tiled;
# config.json), for timing the one-pass quantize against convert-then-quantize (bench/onepass.sh):
#   python3 bench/make_hf_llama.py DIR N_LAYERS   (10 layers: 1.16 GB; GQA 16/4 heads, so Q/K are permuted)
import json, os, random, struct, sys
out = sys.argv[1]; n_layer = int(sys.argv[2]); dim = 2048; ffn = 5632; vocab = 32000; heads = 16; kv_heads = 4
kv = dim // heads * kv_heads
random.seed(1)
pattern = b"".join(struct.pack("<e", random.gauss(0, 0.02)) for _ in range(1 << 21))
tensors = [("model.embed_tokens.weight", [vocab, dim])]
for i in range(n_layer):
    p = f"model.layers.{i}."
    tensors += [(p + "input_layernorm.weight", [dim]), (p + "self_attn.q_proj.weight", [dim, dim]),
                (p + "self_attn.k_proj.weight", [kv, dim]), (p + "self_attn.v_proj.weight", [kv, dim]),
                (p + "self_attn.o_proj.weight", [dim, dim]), (p + "post_attention_layernorm.weight", [dim]),
                (p + "mlp.gate_proj.weight", [ffn, dim]), (p + "mlp.up_proj.weight", [ffn, dim]),
                (p + "mlp.down_proj.weight", [dim, ffn])]
tensors += [("model.norm.weight", [dim]), ("lm_head.weight", [vocab, dim])]
header, off = {"__metadata__": {"format": "pt"}}, 0
for name, shape in tensors:
    n = 2
    for d in shape: n *= d
    header[name] = {"dtype": "F16", "shape": shape, "data_offsets": [off, off + n]}; off += n
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((-len(text)) % 8)
os.makedirs(out, exist_ok=True)
ones = struct.pack("<e", 1.0)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for name, shape in tensors:
        b, size = header[name]["data_offsets"]; size -= b
        f.write(ones * (size // 2) if len(shape) == 1 else (pattern * (size // len(pattern) + 1))[:size])
config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": dim,
          "intermediate_size": ffn, "num_hidden_layers": n_layer, "num_attention_heads": heads,
          "num_key_value_heads": kv_heads, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
          "rope_theta": 10000.0, "vocab_size": vocab, "torch_dtype": "float16", "tie_word_embeddings": False}
with open(os.path.join(out, "config.json"), "w") as f: json.dump(config, f, indent=2)
