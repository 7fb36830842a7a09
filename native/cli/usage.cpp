// SPDX-License-Identifier: MIT
#include "cli/usage.h"

namespace ws::cli {
namespace {

// Shared by the texts of dump and stats, so that the two say the same.
#define WS_ROWS_TEXT                                                                                           \
    "  --rows SLICE          rows as a Python slice (a row = the innermost dim, ne[0] elements): START:STOP\n" \
    "                        (0:16), either end left out (-8: the last 8, :4 the first 4), negative numbers\n" \
    "                        from the end; I alone is the single row I. Ends past the tensor are clamped as\n" \
    "                        numpy clamps them (an empty slice gives no rows); a single row must exist\n"

#define WS_FILTER_TEXT                                                                                           \
    "  --filter PATTERN      tensors whose name matches PATTERN: a glob of the whole name by default\n"          \
    "                        ('blk.*.attn_q.weight': * any characters, dots included, ? one, [abc] [a-z] [!a]\n" \
    "                        one of a set, \\ quotes), or a regex searched anywhere in the name when written\n"  \
    "                        /.../ ('/attn_(q|k)/'; a linear-time engine: no backreferences or look-behind)\n"

#define WS_SPLIT_TEXT                                                                                          \
    "  --split-max-tensors N, --split-max-size N(M|G), --no-tensor-first-split\n"                              \
    "                        writes OUT's parts (OUT without .gguf, then -00001-of-0000N.gguf ...) as split\n" \
    "                        would cut OUT (see split --help), without OUT itself\n"

#define WS_THREADS_TEXT "  --threads N           worker threads (default: all cores); the output does not depend on N\n"

constexpr CommandHelp kHelp[] = {
    {"info", "weightstream info FILE [--json]", "summary, metadata and tensor table",
     "The header: a summary (format, architecture, parameters, bytes by dtype), the metadata and the tensor table.\n"
     "  --json                the header as JSON: {format, metadata, tensors, ...} (ARCHITECTURE.md)\n"},
    {"tensors", "weightstream tensors FILE [--filter PATTERN] [--json]", "tensor table only",
     "The tensor table: name, dtype, shape, offset, bytes (and the part of a split model).\n" WS_FILTER_TEXT
     "  --json                as info --json, without the metadata (only the matching tensors)\n"},
    {"verify", "weightstream verify FILE [--json] [--threads N]",
     "every structural check (strict, as ggml), then every tensor decoded",
     "Every structural check in strict mode (what ggml accepts), every tensor's type and byte range, then every\n"
     "tensor decoded. NaN/Inf block scales are warnings (exit 0).\n"
     "  --json                one JSON object on stdout, scan's fields for the verdict: {\"source\", \"verdict\"\n"
     "                        (\"ok\" or the error's code), \"error\": null | {\"file\", \"offset\", \"what\",\n"
     "                        \"message\"}, \"warnings\": [lines], \"tensors\", \"decoded\", \"metadata_keys\",\n"
     "                        \"scales\": [{\"tensor\", \"blocks\", \"nan_blocks\", \"inf_blocks\", "
     "\"first_offset\"}]};\n"
     "                        the exit status is verify's (1 invalid, 3 I/O)\n" WS_THREADS_TEXT},
    {"dump",
     "weightstream dump FILE (TENSOR | --filter PATTERN) [-o OUT] [--as f32|f16|bf16|raw] [--rows SLICE]\n"
     "                  [--threads N]",
     "one tensor as little-endian numbers or .npy",
     "One tensor as little-endian numbers (default f32; raw = the stored bytes) to OUT or stdout (never a\n"
     "terminal). OUT ending .npy writes NumPy .npy with the tensor's shape and dtype: <f4 (<c8 for C64), <f2,\n"
     "|u1 for raw (shape [nbytes]), and <u2 for bf16 (numpy has no bfloat16: the bits, view them with\n"
     "ml_dtypes).\n"
     "  -o OUT                the output file (default: stdout)\n"
     "  --as TYPE             f32, f16, bf16 or raw\n" WS_ROWS_TEXT
     "                        (shape [rows, row length])\n"
     "  --filter PATTERN      in place of TENSOR: the one tensor matching PATTERN (see tensors --help); a\n"
     "                        pattern matching none or several is a usage error that lists the "
     "matches\n" WS_THREADS_TEXT},
    {"stats",
     "weightstream stats FILE [TENSOR ... | --filter PATTERN] [--rows SLICE] [--bins N] [--json] [--threads N]",
     "min, max, mean, std, special-value counts and a histogram per tensor",
     "Min, max, mean, std (population, of the finite values), NaN/+Inf/-Inf/zero counts and a histogram over\n"
     "[min, max]; no TENSOR = every tensor.\n" WS_FILTER_TEXT WS_ROWS_TEXT
     "                        (with exactly one TENSOR)\n"
     "  --bins N              histogram bins, 1 to 4096 (default 32)\n"
     "  --json                {\"tensors\": [{\"name\", \"dtype\", \"n_elements\", \"min\", \"max\", \"mean\", "
     "\"std\",\n"
     "                        \"nan\", \"pos_inf\", \"neg_inf\", \"zeros\", \"histogram\": {\"min\", \"max\", "
     "\"counts\"},\n"
     "                        \"rows\": [first, count] with --rows}]} (no finite value: null; a type without a\n"
     "                        decoder: \"error\" instead of the numbers)\n" WS_THREADS_TEXT},
    {"hash",
     "weightstream hash FILE [--filter PATTERN] [--json] [--threads N]\n"
     "       weightstream hash --manifest [--xxh64] [--xxh3] [--sha1] [--sha256] [--all] [--uuid] [--no-layer] FILE\n"
     "       weightstream hash --check MANIFEST [digest options] FILE",
     "per-tensor sha256 fingerprints, or llama-gguf-hash manifests",
     "Per tensor the sha256 of the stored bytes and of the float32 decode, one line each (raw, f32 or \"-\" for a\n"
     "type without a decoder, dtype, name).\n" WS_FILTER_TEXT
     "  --json                {\"tensors\": [{\"name\", \"dtype\", \"raw_sha256\", \"f32_sha256\"}]} (f32_sha256 null\n"
     "                        for a type without a decoder)\n" WS_THREADS_TEXT
     "  --manifest            llama.cpp's llama-gguf-hash manifest of a GGUF: per tensor (directory order) and\n"
     "                        for the whole model (every tensor's data bytes in that order), lines\n"
     "                        \"TYPE  HEX  FILE:TENSOR\" then \"TYPE  HEX  FILE\" (FILE as typed). No digest\n"
     "                        option: xxh64; --all: xxh64, xxh3, sha1, sha256; --uuid adds the UUIDv5 of the\n"
     "                        tensor data in llama.cpp's namespace; --no-layer: the whole-model lines only\n"
     "  --check MANIFEST      verifies FILE against such a manifest as llama-gguf-hash does (by default the\n"
     "                        strongest digest it holds); exit 0 Success, 1 Failure (a mismatch), 3 no line of\n"
     "                        FILE found, 4 no known digest type, 5 MANIFEST unreadable\n"},
    {"convert",
     "weightstream convert IN OUT [--dtype TYPE] [--allow-requantize] [--imatrix FILE] [--json] [--threads N]\n"
     "                     [--strict-tokenizer] [--split-max-tensors N | --split-max-size N(M|G)]\n"
     "                     [--no-tensor-first-split]",
     "GGUF <-> safetensors by OUT's extension",
     "To safetensors: quantized tensors decoded to F32 (or --dtype f16/bf16), GGUF metadata as strings (arrays\n"
     "as JSON). To GGUF: F32/F16/BF16 kept; BOOL/U8/U16/U32 widen to the next signed type, F8/F6/F4 become F32.\n"
     "As llama.cpp converts: 1-D tensors and norms stay F32 with --dtype; tensors already quantized are kept\n"
     "unless --allow-requantize; general.file_type is the llama_ftype of the result. A safetensors checkpoint\n"
     "with config.json of a known family (llama/mistral/mixtral, qwen2/qwen3, qwen2-moe/qwen3-moe,\n"
     "gemma/gemma2/gemma3, phi3) gets GGUF names, the Q/K permutation and Gemma norm + 1, experts stacked\n"
     "into blk.N.ffn_*_exps, config.json's hyperparameters, general.* and the tokenizer beside it\n"
     "(tokenizer.model, tokenizer.json, added_tokens.json, tokenizer_config.json, chat_template.jinja/json) in\n"
     "convert_hf_to_gguf.py's order and types. The written tokenizer is checked against the source's on a fixed\n"
     "multilingual text; a difference is a warning naming the first differing token.\n"
     "  --strict-tokenizer    that difference is an error, before anything is written\n"
     "  --dtype TYPE          q8_0, q4_k, iq2_xxs, ... (any type this build quantizes to) quantizes float\n"
     "                        tensors whose rows are a multiple of the type's block as ggml does;\n"
     "                        f32/f16/bf16 re-encodes every float and quantized tensor (integers never are)\n"
     "  --imatrix FILE        an importance matrix; its entry of a tensor's name weights that tensor\n"
     "  --json                on stdout: {\"output\", \"format\", \"file_size\", \"metadata_keys\", \"tensors\":\n"
     "                        [{\"name\", \"dtype\", \"shape\", \"bytes\", \"source_dtype\", \"action\": \"copy\" |\n"
     "                        \"widen\" | \"encode\"}], \"totals\": {\"tensors\", \"re_encoded\", \"bytes\"},\n"
     "                        \"warnings\": [lines]} (warnings go to stderr as well)\n" WS_THREADS_TEXT WS_SPLIT_TEXT},
    {"edit",
     "weightstream edit IN OUT [--set KEY=VALUE[:TYPE]] ... [--delete KEY] ... [--set-chat-template FILE]\n"
     "                  [--force]\n"
     "       weightstream edit IN --in-place [--set ...] [--delete ...] [--set-chat-template FILE]",
     "a GGUF's metadata changed, tensor bytes streamed through",
     "Tensor bytes are streamed through unchanged and re-aligned; general.alignment cannot be edited.\n"
     "  --set KEY=VALUE[:TYPE] TYPE: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str (an array's item type);\n"
     "                        without it an existing key keeps its type, a new one is inferred (true/false\n"
     "                        bool, integers u32 then i32/i64, other numbers f32, else str). Arrays are JSON:\n"
     "                        '[1,2]:i32', '[\"a\",\"b\"]'\n"
     "  --delete KEY          removes KEY (an error when it is not there)\n"
     "  --set-chat-template FILE  tokenizer.chat_template = FILE's text\n"
     "  --force               replaces an existing OUT\n"
     "  --in-place            rewrites IN's header only when it fits the old header's padding (else exit 2,\n"
     "                        nothing written); a local file only. Crash-safe: a new file made from IN (a clone\n"
     "                        sharing its blocks where the file system can: btrfs, XFS; else a full copy, which\n"
     "                        needs IN's size in free space) gets the header and is renamed over IN, so a reader\n"
     "                        or a kill sees the old file or the new one; IN replaced meanwhile is kept (exit 3)\n"},
    {"split",
     "weightstream split IN PREFIX [--split-max-tensors N | --split-max-size N(M|G)] [--no-tensor-first-split]\n"
     "                  [--dry-run]",
     "a GGUF cut into parts, as llama-gguf-split --split",
     "The same parts, byte for byte, as llama.cpp's llama-gguf-split --split: PREFIX-00001-of-0000N.gguf ...; the\n"
     "first holds the metadata, every part split.no, split.tensors.count and split.count. Prints the tool's plan\n"
     "(n_split, and per part n_tensors and total_size in MB rounded down), then the parts written. The parts are\n"
     "renamed into place only when all are complete, the first last. IN may be a split (it is split anew).\n"
     "  --split-max-tensors N at most N tensors per part (default 128)\n"
     "  --split-max-size N(M|G)  at most N megabytes (1000^2 bytes) or gigabytes of tensor data (each tensor\n"
     "                        with its padding to 32 bytes) per part; a larger tensor gets a part of its own\n"
     "  --no-tensor-first-split  the first part holds the metadata only\n"
     "  --dry-run             prints the plan and writes nothing\n"},
    {"merge", "weightstream merge PART OUT [--force]", "a split GGUF merged into one file, as llama-gguf-split --merge",
     "The same file, byte for byte, as llama-gguf-split --merge: the parts (found from any of them by name,\n"
     "checked against split.no, split.count and split.tensors.count) as one GGUF, the first part's metadata with\n"
     "split.count set to 0.\n"
     "  --force               replaces an existing OUT (never one of the parts)\n"},
    {"quantize",
     "weightstream quantize IN OUT --type FTYPE [--imatrix FILE] [--threads N] [--tensor-type REGEX=TYPE ...]\n"
     "                      [--pure] [--output-tensor-type TYPE] [--token-embedding-type TYPE]\n"
     "                      [--leave-output-tensor] [--allow-requantize] [--json] [--strict-tokenizer]\n"
     "                      [--split-max-tensors N | --split-max-size N(M|G)] [--no-tensor-first-split]",
     "llama-quantize's recipes (Q4_K_M, Q8_0, IQ2_XXS, ...)",
     "The same tensor types, order, metadata and bytes as llama-quantize writes for the same input and options,\n"
     "streamed a row window at a time. IN may be a Hugging Face checkpoint (its folder, model.safetensors or\n"
     "model.safetensors.index.json, with config.json): one pass, the bytes of `convert IN tmp.gguf --dtype F`\n"
     "(F: convert_hf_to_gguf.py --outtype auto's choice, F16 for an F16 checkpoint, else BF16) then quantize,\n"
     "without the intermediate file.\n"
     "  --type FTYPE          the llama-quantize file type (Q4_K_M, Q8_0, IQ2_XXS, ...)\n"
     "  --imatrix FILE        an imatrix GGUF or a legacy .dat; its path is stored as typed in\n"
     "                        quantize.imatrix.file\n"
     "  --tensor-type R=TYPE  tensors whose name matches regex R get TYPE (repeatable)\n"
     "  --pure, --output-tensor-type TYPE, --token-embedding-type TYPE, --leave-output-tensor,\n"
     "  --allow-requantize    as llama-quantize\n"
     "  --json                on stdout: {\"output\", \"ftype\", \"file_size\", \"tensors\": [{\"name\", \"dtype\",\n"
     "                        \"shape\", \"bytes\", \"source_dtype\", \"quantized\"}], \"totals\": {\"tensors\",\n"
     "                        \"quantized\", \"fallbacks\", \"bytes\"}, \"warnings\": [lines]}\n" WS_THREADS_TEXT
         WS_SPLIT_TEXT},
    {"diff", "weightstream diff A B [--json] [--tensors REGEX] [--max-nmse X] [--threads N]",
     "compares two models tensor by tensor",
     "By name, or a Hugging Face safetensors checkpoint against a GGUF by llama.cpp's conversion rules\n"
     "(llama/mistral/mixtral, qwen2/qwen3, qwen2-moe/qwen3-moe, gemma/gemma2/gemma3, phi3; the converter's Q/K\n"
     "permutation and Gemma +1 undone first, each expert against its slice of the stacked tensor). Per pair: verdict, "
     "max_abs, rmse, nmse, cosine, counts and a hint naming a known\n"
     "conversion mistake that explains a difference.\n"
     "  --tensors REGEX       keeps pairs with a name matching REGEX\n"
     "  --max-nmse X          exits 4 when a compared pair has nmse > X or the verdict non_finite (NaN\n"
     "                        or Inf where the other side has another value)\n"
     "  --json                {\"a\", \"b\", \"mapping\", \"metadata\", \"tensors\": [{\"a\", \"b\", \"dtype_a\",\n"
     "                        \"dtype_b\", \"shape_a\", \"shape_b\", \"transform\", \"verdict\", \"metrics\",\n"
     "                        \"hint\"}], \"summary\"}\n" WS_THREADS_TEXT},
    {"scan",
     "weightstream scan [SOURCE ...] [--list FILE] [--jobs N] [--threads N] [--decode] [--shard I/N]\n"
     "                  [--resume OUT.jsonl]",
     "many models: one JSON line each with verify's verdict",
     "One JSON line per model (JSONL, in list order) with verify's verdict (\"ok\" or the error's code;\n"
     "\"error\": {file, offset, what, message} as verify prints it), warnings, format, architecture, name,\n"
     "parameters, file_size, files, tensors, dtypes {TYPE: {tensors, bytes}}, split {kind, parts, consistent},\n"
     "chat_template_sha256 and flags (lfs_pointer, html, empty, unknown_type; with --decode: nan_scale,\n"
     "inf_scale, zero_tensor). SOURCE: a file, a URL, or a directory (recursive: .gguf, .safetensors,\n"
     ".safetensors.index.json; a split GGUF or an index's shards count once). The list is sorted and\n"
     "deduplicated. Summary on stderr. Exit 1 when any model is not ok, 3 when the list cannot be read.\n"
     "  --list FILE           one source a line (- = stdin)\n"
     "  --decode              decode every tensor as verify does\n"
     "  --shard I/N           keeps items k with k mod N == I\n"
     "  --resume OUT          skips sources a line of OUT reports and appends the new lines to OUT (which\n"
     "                        must be scan's own output: any other file is refused, unchanged)\n"
     "  --jobs N              models at once (default: cores)\n"
     "  --threads N           decode threads per model (default: cores / jobs)\n"},
    {"tokenize",
     "weightstream tokenize MODEL (TEXT | --file F | --stdin) [--ids | --json] [--no-bos]\n"
     "                      [--no-add-special] [--no-parse-special]",
     "text to token ids, as llama.cpp or Hugging Face does",
     "MODEL is a GGUF (path or URL: only its header is read; llama.cpp's tokenizer), a tokenizer.json (Hugging\n"
     "Face's tokenizers), a tokenizer.model (SentencePiece) or a checkpoint folder (its tokenizer.json, else its\n"
     "tokenizer.model; tokenizer_config.json beside either is read). As llama-tokenize: the BOS/EOS the model\n"
     "wants are added and special tokens written in the text are parsed. Prints ID -> 'text' per token.\n"
     "  --ids                 the ids alone, as [1, 2, 3]\n"
     "  --json                {\"tokenizer\", \"count\", \"ids\", \"pieces\"} (pieces as the vocabulary stores them)\n"
     "  --no-bos              no BOS added (the rest the model adds still is)\n"
     "  --no-add-special      nothing added\n"
     "  --no-parse-special    special tokens' text in TEXT is ordinary text\n"},
    {"detokenize", "weightstream detokenize MODEL ID... [--skip-special]", "token ids to text",
     "MODEL as for tokenize. IDs are separate arguments or one list as tokenize --ids prints it ('[1, 2, 3]').\n"
     "  --skip-special        special tokens' text left out\n"},
    {"bench",
     "weightstream bench [FILE] [--json] [--threads N] [--type NAME]\n"
     "       weightstream bench --hash [FILE] [--json] [--threads N] [--rounds R]\n"
     "       weightstream bench --quantize [--json] [--threads N] [--type NAME]",
     "decode, hash and quantize throughput",
     "Decode GB/s per type vs a float32 store loop; with FILE, parse + decode it.\n"
     "  --hash                hash's GB/s of tensor bytes against decoding alone, 1 and N threads, medians of R\n"
     "                        (10) alternating rounds; without FILE on a generated 1.1 GiB GGUF (Q4_K, Q8_0,\n"
     "                        F16, F32) written to $TMPDIR and removed after\n"
     "  --quantize            quantize MB/s of float32 input per type (the quantizers this CPU runs), with and\n"
     "                        without an importance matrix, 1 and N threads (bytes checked first)\n"
     "  --type NAME           one type only\n"
     "  --json                the figures as JSON\n"},
};

#undef WS_ROWS_TEXT
#undef WS_FILTER_TEXT
#undef WS_THREADS_TEXT
#undef WS_SPLIT_TEXT

constexpr const char* kCommon =
    "FILE is a .gguf, a .safetensors, any part of a split GGUF (name-00001-of-00003.gguf) or a sharded\n"
    "safetensors index (*.safetensors.index.json). Exit status: 0 ok, 1 invalid input, 2 usage error (also:\n"
    "an unknown TENSOR name), 3 I/O error (missing file, unwritable output, disk full), 4 diff --max-nmse\n"
    "exceeded; hash --check has llama-gguf-hash's statuses.\n"
    "Outputs are written to a new temporary file beside OUT (OUT.tmp-RANDOM), synced and renamed over OUT when\n"
    "complete (a replaced OUT keeps its mode; OUT may not be the input); an interrupted or failed command\n"
    "leaves no temporary file. Long operations show a progress bar when stderr is a terminal. Error and\n"
    "warning lines are coloured on a terminal unless NO_COLOR is set (--color=auto|always|never, before or\n"
    "after the command, overrides).\n"
    "Every FILE, IN, A and B may also be an http:// or https:// URL: the header is read with Range requests,\n"
    "then only the bytes a command needs (split parts and shards next to the URL). With any command:\n"
    "  --header 'Name: value'    sent with every request (repeatable)\n"
    "  --timeout SECONDS         connect timeout, and the longest a response may stall: no response, or\n"
    "                            fewer than 16 KiB of its body, in that long (default 30)\n"
    "  --no-cache                no header cache (also WEIGHTSTREAM_CACHE=0). Else a URL's header is kept in\n"
    "                            $XDG_CACHE_HOME/weightstream (~/.cache/weightstream) and used after a 1-byte\n"
    "                            conditional request confirms the file (304)\n"
    "  --io                      --json gets \"io\" for a local FILE too (a URL's always has it): requests,\n"
    "                            bytes_fetched, bytes_from_cache, retries, time_to_first_byte_ms, io_ms,\n"
    "                            decoded_bytes, decode_ms, decode_gbps\n"
    "  --trace FILE              Chrome trace-event JSON (Perfetto): a span per request and per decoded tensor\n"
    "HF_TOKEN in the environment is sent as a bearer token to the URL's own host (never to the host of a\n"
    "redirect) and is never printed. Failed requests are retried with backoff; a file that changes on the\n"
    "server while it is read fails with source_changed (exit 3). weightstream --version prints the version.\n";

}  // namespace

const CommandHelp* find_help(const std::string& name) {
    for (const CommandHelp& h : kHelp) {
        if (name == h.name) return &h;
    }
    return nullptr;
}

std::string overview_text() {
    std::string s = "usage: weightstream COMMAND ... [options]\n       weightstream help COMMAND\n\ncommands:\n";
    for (const CommandHelp& h : kHelp) {
        std::string name = h.name;
        name.resize(10, ' ');
        s += "  " + name + h.summary + "\n";
    }
    s += "\n'weightstream COMMAND --help' shows a command's options.\n\n";
    return s + kCommon;
}

std::string command_help_text(const CommandHelp& help) {
    return std::string("usage: ") + help.synopsis + "\n\n" + help.details + "\n" + kCommon;
}

}  // namespace ws::cli
