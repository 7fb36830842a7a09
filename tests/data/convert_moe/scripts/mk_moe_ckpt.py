#!/usr/bin/env python3
"""Tiny Mixture-of-Experts Hugging Face checkpoints (random seeded weights) in the layout convert_hf_to_gguf.py
reads, as ../shared/testdata/convert/scripts/mk_ckpt.py makes the dense ones: each is written twice, as
safetensors (the input of the tool under test) and, in DIR.pt, as pytorch_model.bin with the very same tensors (what
the converter is run on here: this machine's Python has no safetensors module).
Usage: mk_moe_ckpt.py KIND OUTDIR SEED [TOKENIZER.model]
  mixtral    MixtralForCausalLM, F16, one file, the SentencePiece tokenizer.model given
  qwen2moe   Qwen2MoeForCausalLM, BF16, two shards (layer 0's experts split between them), no tokenizer files
  qwen3moe   Qwen3MoeForCausalLM, BF16, one file, no tokenizer files (no reference converter runs for it here)"""
import json, os, shutil, struct, sys
import numpy as np, torch
kind, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
tok = sys.argv[4] if len(sys.argv) > 4 else None
rng = np.random.default_rng(seed)
E, L, H, KV, X = 64, 2, 4, 2, 4  # hidden, layers, heads, kv heads, experts
hd = E // H
bf16 = kind != 'mixtral'
def r(*s): return rng.standard_normal(s).astype(np.float32) * 0.05
def n(k): return 1 + rng.standard_normal(k).astype(np.float32) * 0.01
t = {}
if kind == 'mixtral':
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=tok)
    V, F = sp.vocab_size(), 128
    cfg = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "vocab_size": V, "hidden_size": E,
           "intermediate_size": F, "num_hidden_layers": L, "num_attention_heads": H, "num_key_value_heads": KV,
           "num_local_experts": X, "num_experts_per_tok": 2, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
           "rope_theta": 1000000.0, "torch_dtype": "float16", "bos_token_id": sp.bos_id(), "eos_token_id": sp.eos_id(),
           "tie_word_embeddings": False, "hidden_act": "silu", "router_aux_loss_coef": 0.02, "sliding_window": None}
    tc = {"add_bos_token": True, "add_eos_token": False, "bos_token": sp.id_to_piece(sp.bos_id()),
          "eos_token": sp.id_to_piece(sp.eos_id()), "unk_token": sp.id_to_piece(sp.unk_id()),
          "tokenizer_class": "LlamaTokenizer", "legacy": False}
    t['model.embed_tokens.weight'] = r(V, E)
    for i in range(L):
        p = f'model.layers.{i}.'
        t[p+'input_layernorm.weight'] = n(E)
        t[p+'self_attn.q_proj.weight'] = r(E, E); t[p+'self_attn.k_proj.weight'] = r(KV*hd, E)
        t[p+'self_attn.v_proj.weight'] = r(KV*hd, E); t[p+'self_attn.o_proj.weight'] = r(E, E)
        t[p+'post_attention_layernorm.weight'] = n(E)
        t[p+'block_sparse_moe.gate.weight'] = r(X, E)
        for x in range(X):
            q = p + f'block_sparse_moe.experts.{x}.'
            t[q+'w1.weight'] = r(F, E); t[q+'w2.weight'] = r(E, F); t[q+'w3.weight'] = r(F, E)
    t['model.norm.weight'] = n(E); t['lm_head.weight'] = r(V, E)
elif kind in ('qwen2moe', 'qwen3moe'):
    V, F, FE, FS = 1000, 128, 32, 96
    q3 = kind == 'qwen3moe'
    cfg = {"architectures": ["Qwen3MoeForCausalLM" if q3 else "Qwen2MoeForCausalLM"],
           "model_type": "qwen3_moe" if q3 else "qwen2_moe", "vocab_size": V, "hidden_size": E,
           "intermediate_size": F, "moe_intermediate_size": FE, "num_hidden_layers": L, "num_attention_heads": H,
           "num_key_value_heads": KV, "num_experts": X, "num_experts_per_tok": 2, "decoder_sparse_step": 1,
           "mlp_only_layers": [], "norm_topk_prob": q3, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
           "rope_theta": 1000000.0, "torch_dtype": "bfloat16", "tie_word_embeddings": False, "hidden_act": "silu",
           "bos_token_id": 0, "eos_token_id": 1}
    if q3: cfg["head_dim"] = hd
    else: cfg["shared_expert_intermediate_size"] = FS
    tc = None
    t['model.embed_tokens.weight'] = r(V, E)
    for i in range(L):
        p = f'model.layers.{i}.'
        t[p+'input_layernorm.weight'] = n(E)
        t[p+'self_attn.q_proj.weight'] = r(H*hd, E); t[p+'self_attn.k_proj.weight'] = r(KV*hd, E)
        t[p+'self_attn.v_proj.weight'] = r(KV*hd, E)
        if q3:
            t[p+'self_attn.q_norm.weight'] = n(hd); t[p+'self_attn.k_norm.weight'] = n(hd)
        else:
            t[p+'self_attn.q_proj.bias'] = r(H*hd); t[p+'self_attn.k_proj.bias'] = r(KV*hd)
            t[p+'self_attn.v_proj.bias'] = r(KV*hd)
        t[p+'self_attn.o_proj.weight'] = r(E, H*hd)
        t[p+'post_attention_layernorm.weight'] = n(E)
        t[p+'mlp.gate.weight'] = r(X, E)
        for x in range(X):
            q = p + f'mlp.experts.{x}.'
            t[q+'gate_proj.weight'] = r(FE, E); t[q+'up_proj.weight'] = r(FE, E); t[q+'down_proj.weight'] = r(E, FE)
        if not q3:
            t[p+'mlp.shared_expert.gate_proj.weight'] = r(FS, E); t[p+'mlp.shared_expert.up_proj.weight'] = r(FS, E)
            t[p+'mlp.shared_expert.down_proj.weight'] = r(E, FS); t[p+'mlp.shared_expert_gate.weight'] = r(1, E)
    t['model.norm.weight'] = n(E); t['lm_head.weight'] = r(V, E)
else:
    sys.exit('unknown kind ' + kind)

def to_bits(a):
    """The stored 16-bit values: F16 (numpy's round to nearest even), or BF16 (float32 rounded to nearest even)."""
    if not bf16: return a.astype(np.float16).view(np.uint16)
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)
bits = {k: to_bits(a) for k, a in t.items()}
names = list(t)
# qwen2moe: two shards, the second from the middle of layer 0's experts on
shards = [names] if kind != 'qwen2moe' else [names[:names.index('model.layers.0.mlp.experts.2.gate_proj.weight')],
                                               names[names.index('model.layers.0.mlp.experts.2.gate_proj.weight'):]]
def write(d, st):
    os.makedirs(d, exist_ok=True)
    json.dump(cfg, open(os.path.join(d, 'config.json'), 'w'), indent=2)
    if tc is not None: json.dump(tc, open(os.path.join(d, 'tokenizer_config.json'), 'w'), indent=2)
    if tok: shutil.copy(tok, os.path.join(d, 'tokenizer.model'))
    ext, base = ('safetensors', 'model') if st else ('bin', 'pytorch_model')
    files = [f'{base}.{ext}'] if len(shards) == 1 else \
            [f'{base}-{k + 1:05d}-of-{len(shards):05d}.{ext}' for k in range(len(shards))]
    for f, part in zip(files, shards):
        if st:
            hdr, off, blobs = {"__metadata__": {"format": "pt"}}, 0, []
            for k in part:
                b = bits[k].tobytes()
                hdr[k] = {"dtype": "BF16" if bf16 else "F16", "shape": list(t[k].shape), "data_offsets": [off, off + len(b)]}
                blobs.append(b); off += len(b)
            h = json.dumps(hdr, separators=(',', ':')).encode(); h += b' ' * ((-len(h)) % 8)
            open(os.path.join(d, f), 'wb').write(struct.pack('<Q', len(h)) + h + b''.join(blobs))
        else:
            dt = torch.bfloat16 if bf16 else torch.float16
            torch.save({k: torch.from_numpy(bits[k].view(np.int16).copy()).view(dt) for k in part}, os.path.join(d, f))
    if len(files) > 1:
        size = sum(bits[k].nbytes for k in names)
        wm = {k: files[j] for j, part in enumerate(shards) for k in part}
        json.dump({"metadata": {"total_size": size}, "weight_map": wm}, open(os.path.join(d, f'{base}.{ext}.index.json'), 'w'), indent=2)
write(out, True)
write(out + '.pt', False)
