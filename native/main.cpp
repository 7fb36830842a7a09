// SPDX-License-Identifier: MIT
// weightstream: the command-line tool (ARCHITECTURE.md, "CLI").
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "header_cache.h"
#include "http_source.h"
#include "io_metrics.h"

namespace {

constexpr const char* kUsage =
    "usage: weightstream COMMAND FILE [options]\n"
    "       weightstream --version | -V\n"
    "\n"
    "  info FILE [--json]        summary, metadata and tensor table\n"
    "  tensors FILE [--json]     tensor table only\n"
    "  verify FILE [--threads N] every structural check (strict, as ggml), then every tensor decoded;\n"
    "                            NaN/Inf block scales are warnings (exit 0)\n"
    "  dump FILE TENSOR [-o OUT] [--as f32|f16|bf16|raw] [--rows START:COUNT] [--threads N]\n"
    "                            one tensor as little-endian numbers (default f32; raw = stored bytes) to OUT\n"
    "                            or stdout. OUT ending .npy writes NumPy .npy with the tensor's shape and dtype\n"
    "                            <f4 (<c8 for C64), <f2, |u1 for raw (shape [nbytes]), and <u2 for bf16 (numpy\n"
    "                            has no bfloat16: the bits, view them with ml_dtypes). --rows reads rows START ..\n"
    "                            START+COUNT-1 (a row = the innermost dim), shape [COUNT, row length]\n"
    "  stats FILE [TENSOR ...] [--json] [--threads N]\n"
    "                            min, max, mean, std (population, of the finite values), NaN/+Inf/-Inf/zero\n"
    "                            counts and a 32-bin histogram over [min, max]; no TENSOR = every tensor. JSON:\n"
    "                            {\"tensors\": [{\"name\", \"dtype\", \"n_elements\", \"min\", \"max\", \"mean\",\n"
    "                            \"std\", \"nan\", \"pos_inf\", \"neg_inf\", \"zeros\",\n"
    "                            \"histogram\": {\"min\", \"max\", \"counts\": [32]}}]}  (no finite value: null;\n"
    "                            a type without a decoder: \"error\" instead of the numbers)\n"
    "  hash FILE [--json] [--threads N]\n"
    "                            per tensor sha256 of the stored bytes and of the float32 decode. JSON:\n"
    "                            {\"tensors\": [{\"name\", \"dtype\", \"raw_sha256\", \"f32_sha256\"}]}\n"
    "                            (f32_sha256 null for a type without a decoder). The digests run on --threads\n"
    "                            threads, one digest per task (the output does not depend on the count)\n"
    "  hash --manifest [--xxh64] [--xxh3] [--sha1] [--sha256] [--all] [--uuid] [--no-layer] FILE\n"
    "                            llama.cpp's llama-gguf-hash manifest of a GGUF: per tensor (directory order)\n"
    "                            and for the whole model (every tensor's data bytes in that order), lines\n"
    "                            \"TYPE  HEX  FILE:TENSOR\" then \"TYPE  HEX  FILE\" (FILE as typed); --uuid adds the\n"
    "                            UUIDv5 of the tensor data in llama.cpp's namespace. No digest option: xxh64;\n"
    "                            --all: xxh64, xxh3, sha1, sha256; --no-layer: the whole-model lines only\n"
    "  hash --check MANIFEST [digest options] FILE\n"
    "                            verifies FILE against such a manifest as llama-gguf-hash does (by default\n"
    "                            the strongest digest it holds); exit 0 Success, 1 Failure (a mismatch),\n"
    "                            3 no line of FILE found, 4 no known digest type, 5 MANIFEST unreadable\n"
    "  convert IN OUT [--dtype TYPE] [--imatrix FILE] [--threads N]\n"
    "                            GGUF <-> safetensors by OUT's extension. To safetensors: quantized tensors\n"
    "                            decoded to F32 (or --dtype f16/bf16), GGUF metadata as strings (arrays as\n"
    "                            JSON). To GGUF: F32/F16/BF16 kept, --dtype q8_0, q4_k, iq2_xxs, ... (any type\n"
    "                            this build quantizes to) quantizes float tensors whose rows are a multiple of\n"
    "                            the type's block as ggml does, with FILE's importance matrix entry of the same\n"
    "                            name; BOOL/U8/U16/U32 widen to the next signed type, F8/F6/F4 become F32.\n"
    "                            --dtype f32/f16/bf16 re-encodes every float and quantized tensor (integers are\n"
    "                            never re-encoded)\n"
    "  quantize IN OUT --type FTYPE [--imatrix FILE] [--threads N] [--tensor-type REGEX=TYPE ...] [--pure]\n"
    "         [--output-tensor-type TYPE] [--token-embedding-type TYPE] [--leave-output-tensor]\n"
    "         [--allow-requantize]\n"
    "                            llama-quantize's recipes (Q4_K_M, Q8_0, IQ2_XXS, ...): the same tensor types,\n"
    "                            order, metadata and bytes as llama-quantize writes for the same input and\n"
    "                            options, streamed a row window at a time. FILE is an imatrix GGUF or a legacy\n"
    "                            .dat; its path is stored as typed in quantize.imatrix.file\n"
    "  diff A B [--json] [--tensors REGEX] [--max-nmse X] [--threads N]\n"
    "                            compares two models tensor by tensor: by name, or a Hugging Face safetensors\n"
    "                            checkpoint against a GGUF by llama.cpp's conversion rules (llama/mistral,\n"
    "                            qwen2/qwen3, gemma/gemma2/gemma3, phi3; the converter's Q/K permutation and\n"
    "                            Gemma +1 undone first). Per pair: verdict, max_abs, rmse, nmse, cosine, counts\n"
    "                            and a hint naming a known conversion mistake that explains a difference.\n"
    "                            --tensors keeps pairs with a name matching REGEX; --max-nmse X exits 4 when a\n"
    "                            compared pair has nmse > X. JSON: {\"a\", \"b\", \"mapping\", \"metadata\",\n"
    "                            \"tensors\": [{\"a\", \"b\", \"dtype_a\", \"dtype_b\", \"shape_a\", \"shape_b\",\n"
    "                            \"transform\", \"verdict\", \"metrics\", \"hint\"}], \"summary\"}\n"
    "  scan [SOURCE ...] [--list FILE] [--jobs N] [--threads N] [--decode] [--shard I/N] [--resume OUT]\n"
    "                            many models: one JSON line each (JSONL, in list order) with verify's verdict\n"
    "                            (\"ok\" or the error's code; \"error\": {file, offset, what, message} as verify\n"
    "                            prints it), warnings, format, architecture, name, parameters, file_size,\n"
    "                            files, tensors, dtypes {TYPE: {tensors, bytes}}, split {kind, parts,\n"
    "                            consistent}, chat_template_sha256 and flags (lfs_pointer, html, empty,\n"
    "                            unknown_type; with --decode, which decodes every tensor as verify does:\n"
    "                            nan_scale, inf_scale, zero_tensor). SOURCE: a file, a URL, or a directory\n"
    "                            (recursive: .gguf, .safetensors, .safetensors.index.json; a split GGUF or an\n"
    "                            index's shards count once); --list FILE: one source a line (- = stdin).\n"
    "                            The list is sorted and deduplicated; --shard I/N keeps items k with\n"
    "                            k mod N == I; --resume OUT skips sources a line of OUT reports and appends\n"
    "                            the new lines to OUT. --jobs: models at once (default: cores); --threads:\n"
    "                            decode threads per model (default: cores / jobs). Summary on stderr.\n"
    "                            Exit 1 when any model is not ok, 3 when the list cannot be read\n"
    "  bench [FILE] [--json] [--threads N] [--type NAME]\n"
    "                            decode GB/s per type vs a float32 store loop; with FILE, parse + decode it\n"
    "  bench --hash [FILE] [--json] [--threads N] [--rounds R]\n"
    "                            hash's GB/s of tensor bytes against decoding alone, 1 and N threads, medians\n"
    "                            of R (10) alternating rounds; without FILE on a generated 1.1 GiB GGUF\n"
    "                            (Q4_K, Q8_0, F16, F32) written to $TMPDIR and removed after\n"
    "  bench --quantize [--json] [--threads N] [--type NAME]\n"
    "                            quantize MB/s of float32 input per type (the scalar reference path), with\n"
    "                            and without an importance matrix, 1 and N threads (bytes checked first)\n"
    "\n"
    "FILE is a .gguf, a .safetensors, any part of a split GGUF (name-00001-of-00003.gguf) or a\n"
    "sharded safetensors index (*.safetensors.index.json). Exit status: 0 ok, 1 invalid input,\n"
    "2 usage error (also: an unknown TENSOR name), 3 I/O error (missing file, unwritable output,\n"
    "disk full), 4 diff --max-nmse exceeded; hash --check has llama-gguf-hash's statuses (above).\n"
    "Outputs are written to a new temporary file beside OUT (OUT.tmp-RANDOM), synced and renamed over OUT\n"
    "when complete (a replaced OUT keeps its mode; OUT may not be the input); an interrupted or failed\n"
    "command leaves no temporary file. --threads defaults to all cores; the output does not depend on it.\n"
    "Long operations show a progress bar when stderr is a terminal.\n"
    "\n"
    "Every FILE, IN, A and B may also be an http:// or https:// URL: the header is read with Range requests,\n"
    "then only the bytes a command needs (split parts and shards next to the URL). Before the command:\n"
    "  --header 'Name: value'    sent with every request (repeatable)\n"
    "  --timeout SECONDS         connect timeout, and the longest a response may stall (default 30)\n"
    "HF_TOKEN in the environment is sent as a bearer token to the URL's own host (never to the host of a\n"
    "redirect) and is never printed. Failed requests are retried with backoff; a file that changes on the\n"
    "server while it is read fails with source_changed (exit 3).\n"
    "  --no-cache                no header cache (also WEIGHTSTREAM_CACHE=0). Else a URL's header is kept in\n"
    "                            $XDG_CACHE_HOME/weightstream (~/.cache/weightstream) and used after a 1-byte\n"
    "                            request confirms its ETag (304): a second info URL costs one request\n"
    "  --io                      --json gets \"io\" for a local FILE too (a URL's always has it): requests,\n"
    "                            bytes_fetched, bytes_from_cache, retries, time_to_first_byte_ms, io_ms,\n"
    "                            decoded_bytes, decode_ms, decode_gbps (info, tensors, stats, hash)\n"
    "  --trace FILE              Chrome trace-event JSON (Perfetto): a span per request and per decoded tensor\n";

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"info", ws::cli::cmd_info},       {"tensors", ws::cli::cmd_tensors}, {"verify", ws::cli::cmd_verify},
    {"dump", ws::cli::cmd_dump},       {"stats", ws::cli::cmd_stats},     {"hash", ws::cli::cmd_hash},
    {"convert", ws::cli::cmd_convert}, {"bench", ws::cli::cmd_bench},     {"quantize", ws::cli::cmd_quantize},
    {"diff", ws::cli::cmd_diff},       {"scan", ws::cli::cmd_scan},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return ws::cli::kExitUsage;
    }
    // Before anything else: a version query loads and builds nothing (README, start-up).
    if (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0) {
        std::fputs("weightstream " WS_VERSION "\n", stdout);
        return ws::cli::kExitOk;
    }
    const std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(kUsage, stdout);
        return ws::cli::kExitOk;
    }
    // The URL options, anywhere among the command's arguments: taken here, for every command at once.
    std::vector<std::string> rest;
    ws::HttpOptions& http = ws::http_options();
    ws::IoOptions& io = ws::io_options();
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--io" || a == "--no-cache") {
            if (a == "--io") io.io = true;
            if (a == "--no-cache") ws::set_header_cache_disabled(true);
            continue;
        }
        if (a == "--trace") {
            if (i + 1 >= argc) return ws::cli::fail(ws::cli::kExitUsage, a + " needs a value");
            io.trace_path = argv[++i];
            if (io.trace_path.empty()) return ws::cli::fail(ws::cli::kExitUsage, "--trace needs a file name");
            continue;
        }
        if (a == "--header" || a == "--timeout") {
            if (i + 1 >= argc) return ws::cli::fail(ws::cli::kExitUsage, a + " needs a value");
            const std::string v = argv[++i];
            if (a == "--header") {
                if (v.find(':') == std::string::npos || v.find_first_of("\r\n") != std::string::npos) {
                    return ws::cli::fail(ws::cli::kExitUsage, "--header needs 'Name: value' (its value is not shown)");
                }
                http.headers.push_back(v);
            } else {
                uint64_t seconds = 0;
                if (!ws::cli::parse_u64(v, &seconds) || seconds < 1 || seconds > 86400) {
                    return ws::cli::fail(ws::cli::kExitUsage,
                                         "--timeout needs seconds from 1 to 86400, not '" + v + "'");
                }
                http.connect_timeout_ms = static_cast<long>(seconds * 1000);
            }
            continue;
        }
        rest.push_back(a);
    }
    if (const char* token = std::getenv("HF_TOKEN")) http.bearer_token = token;
    for (const Command& c : kCommands) {
        if (command != c.name) continue;
        const int status = c.run(rest);
        // The trace of a failed command too: it shows where the time went before the failure.
        std::string why;
        if (!io.trace_path.empty() && !ws::write_trace(&why)) {
            return ws::cli::fail(ws::cli::kExitIo, why);
        }
        return status;
    }
    return ws::cli::fail(ws::cli::kExitUsage, "unknown command '" + command + "' (see weightstream --help)");
}
