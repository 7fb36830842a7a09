// SPDX-License-Identifier: MIT
// make_samples OUTDIR: writes the bundled sample models with the project's own writers and quantizers.
//   tiny-llama.safetensors  a Hugging Face style llama checkpoint (F32 norms, BF16 attention and embeddings,
//                           F16 MLP and lm_head) with __metadata__
//   tiny-llama-q8_0.gguf    the same weights as llama.cpp's convert_hf_to_gguf.py lays them out (q/k rows
//                           permuted for its RoPE, GGUF tensor names), quantized: Q8_0 and Q4_0 matrices,
//                           F16 output, F32 norms; llama.* hyperparameters and a synthetic SPM vocabulary
// The weights are synthetic (seeded, normal-ish, a different scale per tensor), not a trained model. The
// generator uses integer and exact floating-point arithmetic only, so every run on every platform writes
// the same bytes.
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "weightstream/dequant.h"
#include "weightstream/gguf.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/model_info.h"
#include "weightstream/quantize.h"
#include "weightstream/safetensors.h"
#include "weightstream/safetensors_writer.h"

namespace {

using ws::DType;
using ws::MetadataEntry;
using ws::string_entry;
using ws::TensorInfo;
using ws::Value;
using ws::ValueType;

// Hyperparameters: llama-shaped, small enough for a ~1.4 MB GGUF.
constexpr int kVocab = 512;
constexpr int kEmbd = 256;
constexpr int kFf = 512;
constexpr int kBlocks = 2;
constexpr int kHeads = 4;
constexpr int kHeadsKv = 2;
constexpr int kHeadDim = kEmbd / kHeads;
constexpr int kContext = 256;

// ---- deterministic weights -----------------------------------------------------------------------------------

uint64_t splitmix64(uint64_t* state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Irwin-Hall: the sum of 12 uniforms minus 6 has mean 0 and variance 1. Each uniform has 24 bits, so the
// sum is exact in double: no libm, no rounding differences between platforms.
double normalish(uint64_t* state) {
    double sum = 0.0;
    for (int i = 0; i < 12; ++i) sum += static_cast<double>(splitmix64(state) >> 40) * 0x1p-24;
    return sum - 6.0;
}

// A tensor as a Hugging Face checkpoint holds it: shape outermost first, values already rounded to the
// checkpoint's dtype (so the GGUF below is an exact conversion of the safetensors file).
struct HfTensor {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;  // [rows, cols] or [n]
    std::vector<float> values;
};

float round_to(DType t, float v) {
    if (t == DType::F16) return ws::fp16_to_fp32(ws::fp32_to_fp16(v));
    if (t == DType::BF16) return ws::bf16_to_fp32(ws::fp32_to_bf16(v));
    return v;
}

HfTensor make_tensor(const std::string& name, DType dtype, std::vector<int64_t> shape, double center, double sigma,
                     uint64_t seed) {
    HfTensor t{name, dtype, std::move(shape), {}};
    uint64_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    uint64_t state = seed;
    t.values.resize(n);
    for (float& v : t.values) v = round_to(dtype, static_cast<float>(center + sigma * normalish(&state)));
    return t;
}

std::vector<HfTensor> make_checkpoint() {
    std::vector<HfTensor> ts;
    uint64_t seed = 0x7769676874737472ull;  // "wightstr": one seed per tensor, drawn in order
    auto next_seed = [&seed]() { return splitmix64(&seed); };
    ts.push_back(make_tensor("model.embed_tokens.weight", DType::BF16, {kVocab, kEmbd}, 0.0, 0.02, next_seed()));
    for (int b = 0; b < kBlocks; ++b) {
        const std::string p = "model.layers." + std::to_string(b) + ".";
        const double grow = 1.0 + 0.25 * b;  // later blocks a little larger, so the stats differ per block
        ts.push_back(make_tensor(p + "input_layernorm.weight", DType::F32, {kEmbd}, 1.0, 0.05, next_seed()));
        ts.push_back(make_tensor(p + "self_attn.q_proj.weight", DType::BF16, {kHeads * kHeadDim, kEmbd}, 0.0,
                                 0.0625 * grow, next_seed()));
        ts.push_back(make_tensor(p + "self_attn.k_proj.weight", DType::BF16, {kHeadsKv * kHeadDim, kEmbd}, 0.0,
                                 0.0625 * grow, next_seed()));
        ts.push_back(make_tensor(p + "self_attn.v_proj.weight", DType::BF16, {kHeadsKv * kHeadDim, kEmbd}, 0.0,
                                 0.04 * grow, next_seed()));
        ts.push_back(make_tensor(p + "self_attn.o_proj.weight", DType::BF16, {kEmbd, kHeads * kHeadDim}, 0.0,
                                 0.03 * grow, next_seed()));
        ts.push_back(make_tensor(p + "post_attention_layernorm.weight", DType::F32, {kEmbd}, 1.0, 0.05, next_seed()));
        ts.push_back(make_tensor(p + "mlp.gate_proj.weight", DType::F16, {kFf, kEmbd}, 0.0, 0.05 * grow, next_seed()));
        ts.push_back(make_tensor(p + "mlp.up_proj.weight", DType::F16, {kFf, kEmbd}, 0.0, 0.05 * grow, next_seed()));
        ts.push_back(make_tensor(p + "mlp.down_proj.weight", DType::F16, {kEmbd, kFf}, 0.0, 0.044 * grow, next_seed()));
    }
    ts.push_back(make_tensor("model.norm.weight", DType::F32, {kEmbd}, 1.0, 0.05, next_seed()));
    ts.push_back(make_tensor("lm_head.weight", DType::F16, {kVocab, kEmbd}, 0.0, 0.03, next_seed()));
    return ts;
}

// ---- safetensors -------------------------------------------------------------------------------------------

// The stored bytes of values in type t (empty on failure, which the writers then reject as a size mismatch).
std::vector<uint8_t> encode(DType t, const std::vector<float>& values) {
    uint64_t nbytes = 0;
    if (!ws::dtype_bytes_for(t, values.size(), &nbytes)) return {};
    std::vector<uint8_t> out(nbytes);
    if (!ws::quantize(t, values.data(), values.size(), out.data()).ok()) return {};
    return out;
}

ws::Result<std::vector<uint8_t>> build_safetensors(const std::vector<HfTensor>& checkpoint) {
    const std::vector<MetadataEntry> metadata = {
        string_entry("format", "pt"),
        string_entry("source", "weightstream make_samples: synthetic weights, not a trained model"),
    };
    std::vector<TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
    for (const HfTensor& h : checkpoint) {
        TensorInfo t;
        t.name = h.name;
        t.dtype = h.dtype;
        t.n_dims = static_cast<uint32_t>(h.shape.size());
        for (size_t i = 0; i < h.shape.size(); ++i) t.ne[i] = h.shape[h.shape.size() - 1 - i];
        tensors.push_back(t);
        data.push_back(encode(h.dtype, h.values));
    }
    return ws::safetensors_write(metadata, tensors, data);
}

// ---- GGUF ----------------------------------------------------------------------------------------------------

Value scalar(ValueType t, uint64_t bits) {
    Value v;
    v.type = t;
    v.bits = bits;
    return v;
}

MetadataEntry entry(const std::string& key, Value v) {
    MetadataEntry e;
    e.key = key;
    e.value = std::move(v);
    return e;
}

MetadataEntry u32_entry(const std::string& key, uint32_t v) {
    return entry(key, scalar(ValueType::kUint32, v));
}
MetadataEntry f32_entry(const std::string& key, float v) {
    return entry(key, scalar(ValueType::kFloat32, ws::f32_to_bits(v)));
}
MetadataEntry bool_entry(const std::string& key, bool v) {
    return entry(key, scalar(ValueType::kBool, v ? 1 : 0));
}

template <typename T>
MetadataEntry raw_array_entry(const std::string& key, ValueType item, const std::vector<T>& items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = item;
    v.length = items.size();
    v.raw.resize(items.size() * sizeof(T));
    std::memcpy(v.raw.data(), items.data(), v.raw.size());  // little-endian host, as quant_blocks.h requires
    return entry(key, std::move(v));
}

MetadataEntry string_array_entry(const std::string& key, std::vector<std::string> items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = ValueType::kString;
    v.length = items.size();
    v.strings = std::move(items);
    return entry(key, std::move(v));
}

// A SentencePiece-style vocabulary as llama.cpp expects for tokenizer.ggml.model "llama": <unk> <s> </s>, the
// 256 byte-fallback tokens <0x00>..<0xFF> (type BYTE), then pieces ("\xe2\x96\x81" is the word-start marker).
void make_vocab(std::vector<std::string>* tokens, std::vector<float>* scores, std::vector<int32_t>* types) {
    enum : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kByte = 6 };
    const std::string sp = "\xe2\x96\x81";
    auto add = [&](const std::string& t, float score, int32_t type) {
        tokens->push_back(t);
        scores->push_back(score);
        types->push_back(type);
    };
    add("<unk>", 0.0f, kUnknown);
    add("<s>", 0.0f, kControl);
    add("</s>", 0.0f, kControl);
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        add(name, 0.0f, kByte);
    }
    static const char* const kWords[] = {
        "the",   "of",    "and",    "to",     "in",     "a",     "is",    "that",  "for",   "it",    "as",    "was",
        "with",  "be",    "by",     "on",     "not",    "he",    "this",  "are",   "or",    "his",   "from",  "at",
        "which", "but",   "have",   "an",     "had",    "they",  "you",   "were",  "their", "one",   "all",   "we",
        "can",   "her",   "has",    "there",  "been",   "if",    "more",  "when",  "will",  "would", "who",   "so",
        "no",    "model", "weight", "tensor", "stream", "block", "scale", "float", "byte",  "file",  "layer", "token",
        "hello", "world", "llama",  "tiny",   "sample", "data",  "read",  "write"};
    std::vector<std::string> pieces;
    std::set<std::string> seen;
    auto piece = [&](const std::string& p) {
        if (seen.insert(p).second) pieces.push_back(p);
    };
    for (const char* w : kWords) piece(sp + w);
    piece(sp);
    for (char c = 'a'; c <= 'z'; ++c) piece(std::string(1, c));
    for (char c = 'A'; c <= 'Z'; ++c) piece(std::string(1, c));
    for (char c = '0'; c <= '9'; ++c) piece(std::string(1, c));
    for (const char* p : {".", ",", "!", "?", ":", ";", "'", "\"", "-", "(", ")"}) piece(p);
    for (char c = 'a'; c <= 'z'; ++c) piece(sp + std::string(1, c));
    static const char* const kSuffixes[] = {"ing", "ed", "er", "ly", "es", "tion", "al", "en", "re", "on", "an",
                                            "at",  "or", "ar", "st", "nd", "th",   "ou", "it", "is", "le", "ve"};
    for (const char* s : kSuffixes) piece(s);
    // Two-letter pieces in a fixed order fill the rest (676 of them: more than enough).
    for (char a = 'a'; a <= 'z'; ++a) {
        for (char b = 'a'; b <= 'z'; ++b) piece(std::string(1, a) + b);
    }
    for (size_t i = 0; tokens->size() < static_cast<size_t>(kVocab); ++i) {
        add(pieces[i], -static_cast<float>(i), kNormal);  // SPM scores: log-probability-like, decreasing
    }
}

// convert_hf_to_gguf.py's LlamaModel.permute (ws::hf_permute_rows, the converter's own in weightstream): within
// each head, HF keeps the two RoPE halves apart, GGUF interleaves them.
std::vector<float> permute_rope_rows(const std::vector<float>& w, int n_head, int cols) {
    const uint64_t rows = w.size() / static_cast<size_t>(cols);
    std::vector<float> out(w.size());
    const ws::Status s =
        ws::hf_permute_rows(reinterpret_cast<const uint8_t*>(w.data()), rows, rows / static_cast<uint64_t>(n_head),
                            sizeof(float) * cols, reinterpret_cast<uint8_t*>(out.data()));
    if (!s.ok()) std::abort();  // the sample's shapes are fixed: whole heads of an even number of rows
    return out;
}

const char kChatTemplate[] =
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ '<<SYS>>\\n' + message['content'] + '\\n<</SYS>>\\n\\n' }}"
    "{% elif message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% endif %}"
    "{% endfor %}";

ws::Result<std::vector<uint8_t>> build_gguf(const std::vector<HfTensor>& checkpoint) {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> token_types;
    make_vocab(&tokens, &scores, &token_types);

    std::vector<MetadataEntry> md = {
        string_entry("general.architecture", "llama"),
        string_entry("general.type", "model"),
        string_entry("general.name", "Tiny Llama (weightstream sample)"),
        string_entry("general.basename", "tiny-llama"),
        string_entry("general.size_label", "1.4M"),
        string_entry("general.description",
                     "Synthetic weights written by weightstream's make_samples: "
                     "llama-shaped, deterministic, not a trained model."),
        string_entry("general.license", "MIT"),
        string_array_entry("general.tags", {"weightstream", "sample", "synthetic"}),
        u32_entry("llama.block_count", kBlocks),
        u32_entry("llama.context_length", kContext),
        u32_entry("llama.embedding_length", kEmbd),
        u32_entry("llama.feed_forward_length", kFf),
        u32_entry("llama.attention.head_count", kHeads),
        u32_entry("llama.attention.head_count_kv", kHeadsKv),
        f32_entry("llama.rope.freq_base", 10000.0f),
        f32_entry("llama.attention.layer_norm_rms_epsilon", 1e-5f),
        u32_entry("llama.rope.dimension_count", kHeadDim),
        u32_entry("llama.vocab_size", kVocab),
        u32_entry("general.file_type", 7),  // LLAMA_FTYPE_MOSTLY_Q8_0 (with Q4_0 attention q/k and MLP gate/up)
        u32_entry("general.quantization_version", 2),
        string_entry("tokenizer.ggml.model", "llama"),
        string_entry("tokenizer.ggml.pre", "default"),
        string_array_entry("tokenizer.ggml.tokens", tokens),
        raw_array_entry("tokenizer.ggml.scores", ValueType::kFloat32, scores),
        raw_array_entry("tokenizer.ggml.token_type", ValueType::kInt32, token_types),
        u32_entry("tokenizer.ggml.bos_token_id", 1),
        u32_entry("tokenizer.ggml.eos_token_id", 2),
        u32_entry("tokenizer.ggml.unknown_token_id", 0),
        bool_entry("tokenizer.ggml.add_bos_token", true),
        bool_entry("tokenizer.ggml.add_eos_token", false),
        string_entry("tokenizer.chat_template", kChatTemplate),
    };

    struct Mapping {
        const char* hf;    // suffix of the HF name
        const char* gguf;  // GGUF name suffix
        DType type;
        int rope_heads;  // > 0: permute rows for RoPE with this many heads
    };
    static const Mapping kBlockMap[] = {
        {"input_layernorm.weight", "attn_norm.weight", DType::F32, 0},
        {"self_attn.q_proj.weight", "attn_q.weight", DType::Q4_0, kHeads},
        {"self_attn.k_proj.weight", "attn_k.weight", DType::Q4_0, kHeadsKv},
        {"self_attn.v_proj.weight", "attn_v.weight", DType::Q8_0, 0},
        {"self_attn.o_proj.weight", "attn_output.weight", DType::Q8_0, 0},
        {"post_attention_layernorm.weight", "ffn_norm.weight", DType::F32, 0},
        {"mlp.gate_proj.weight", "ffn_gate.weight", DType::Q4_0, 0},
        {"mlp.up_proj.weight", "ffn_up.weight", DType::Q4_0, 0},
        {"mlp.down_proj.weight", "ffn_down.weight", DType::Q8_0, 0},
    };

    std::vector<TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
    auto add = [&](const HfTensor& h, const std::string& name, DType type, int rope_heads) {
        TensorInfo t;
        t.name = name;
        t.dtype = type;
        t.n_dims = static_cast<uint32_t>(h.shape.size());
        for (size_t i = 0; i < h.shape.size(); ++i) t.ne[i] = h.shape[h.shape.size() - 1 - i];
        tensors.push_back(t);
        const int cols = static_cast<int>(h.shape.back());
        data.push_back(encode(type, rope_heads > 0 ? permute_rope_rows(h.values, rope_heads, cols) : h.values));
    };
    auto find = [&checkpoint](const std::string& name) -> const HfTensor& {
        for (const HfTensor& h : checkpoint) {
            if (h.name == name) return h;
        }
        return checkpoint.front();  // unreachable: every name below is in make_checkpoint()
    };

    add(find("model.embed_tokens.weight"), "token_embd.weight", DType::Q8_0, 0);
    for (int b = 0; b < kBlocks; ++b) {
        for (const Mapping& m : kBlockMap) {
            add(find("model.layers." + std::to_string(b) + "." + m.hf), "blk." + std::to_string(b) + "." + m.gguf,
                m.type, m.rope_heads);
        }
    }
    add(find("model.norm.weight"), "output_norm.weight", DType::F32, 0);
    add(find("lm_head.weight"), "output.weight", DType::F16, 0);
    return ws::gguf_write(md, tensors, data);
}

// ---- output --------------------------------------------------------------------------------------------------

// Parses what was built and decodes every tensor: the samples must open cleanly in weightstream itself.
template <typename Parser>
bool self_check(const std::vector<uint8_t>& file, bool strict) {
    ws::ParseOptions options;
    options.file_size = file.size();
    options.strict = strict;
    Parser parser(options);
    if (!parser.feed(file.data(), file.size()).ok()) return false;
    const ws::ModelInfo& info = parser.info();
    for (const TensorInfo& t : info.tensors) {
        std::vector<float> out(t.n_elements * ws::dequant_floats_per_element(t.dtype));
        if (!ws::dequantize(t.dtype, file.data() + t.offset, t.n_elements, out.data()).ok()) return false;
    }
    return !info.tensors.empty();
}

int write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        std::fprintf(stderr, "make_samples: error: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
        return 3;
    }
    const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
    const bool ok = written == bytes.size() && std::fclose(f) == 0;
    if (!ok) {
        std::fprintf(stderr, "make_samples: error: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        return 3;
    }
    std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 || argv[1][0] == '\0') {
        std::fprintf(stderr, "usage: make_samples OUTDIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "make_samples: error: cannot create %s: %s\n", dir.c_str(), std::strerror(errno));
        return 3;
    }

    const std::vector<HfTensor> checkpoint = make_checkpoint();
    const ws::Result<std::vector<uint8_t>> st = build_safetensors(checkpoint);
    const ws::Result<std::vector<uint8_t>> gguf = build_gguf(checkpoint);
    for (const ws::Status& s : {st.status(), gguf.status()}) {
        if (!s.ok()) {
            std::fprintf(stderr, "make_samples: error: writer failed: %s (%s)\n", ws::error_name(s.code), s.what);
            return 1;
        }
    }
    if (!self_check<ws::SafetensorsParser>(st.value(), true) || !self_check<ws::GgufParser>(gguf.value(), true)) {
        std::fprintf(stderr, "make_samples: error: a sample does not read back\n");
        return 1;
    }
    if (int rc = write_file(dir + "/tiny-llama.safetensors", st.value())) return rc;
    if (int rc = write_file(dir + "/tiny-llama-q8_0.gguf", gguf.value())) return rc;
    return 0;
}
