// SPDX-License-Identifier: MIT
// `weightstream quantize` end to end: the llama-quantize reference runs byte for byte (every run whose
// types this build can quantize; the count is printed), a generated model whose rows are not multiples
// of 256 with and without an importance matrix, and bad input.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <set>

#include "support/recipe_runs.h"
#include "support/run_cli.h"
#include "support/test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"

namespace {

using namespace ws;
using ws_test::quote;

ModelInfo parse_file(const std::vector<uint8_t>& bytes) {
    ParseOptions o;
    o.file_size = bytes.size();
    GgufParser p(o);
    REQUIRE(p.feed(bytes.data(), bytes.size()).ok());
    return p.take_info();
}

std::string file_sha256(const std::string& path) {
    const std::vector<uint8_t> b = ws_test::read_file(path);
    return ws_test::sha256_hex(b.data(), b.size());
}

// The CLI arguments of a manifest run, for `weightstream quantize`.
std::string quantize_args(const ws_test::RecipeRun& run, const std::string& out, unsigned threads) {
    std::string a = "quantize " + quote(run.model) + " " + quote(out) + " --type " + run.ftype + " --threads " +
                    std::to_string(threads);
    if (!run.imatrix.empty()) a += " --imatrix " + quote(run.imatrix);
    if (run.pure) a += " --pure";
    if (run.leave_output) a += " --leave-output-tensor";
    if (!run.output_tensor_type.empty()) a += " --output-tensor-type " + run.output_tensor_type;
    if (!run.token_embedding_type.empty()) a += " --token-embedding-type " + run.token_embedding_type;
    for (const std::string& tt : run.tensor_types) a += " --tensor-type " + quote(tt);
    return a;
}

// Runs the CLI from `dir`: the recipe runs store the imatrix path as typed, relative to it.
ws_test::CliResult run_from(const std::string& dir, const std::string& args) {
    // run_cli prefixes the binary; a subshell gives it the working directory.
    char err_path[] = "/tmp/ws_cli_err_XXXXXX";
    const int fd = mkstemp(err_path);
    close(fd);
    const std::string cmd = "cd " + quote(dir) + " && " + WS_CLI + " " + args + " 2>" + err_path;
    ws_test::CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int raw = pclose(p);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    const std::vector<uint8_t> err = ws_test::read_file(err_path);
    r.err.assign(err.begin(), err.end());
    unlink(err_path);
    return r;
}

// A small llama model with n_embd 96 (not a multiple of 256), GQA 2, two layers, F16 matrices.
struct Fixture {
    std::vector<MetadataEntry> kvs;
    std::vector<TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
};

MetadataEntry u32_kv(const std::string& key, uint32_t v) {
    MetadataEntry e;
    e.key = key;
    e.value.type = ValueType::kUint32;
    e.value.bits = v;
    return e;
}

Fixture odd_fixture() {
    Fixture f;
    f.kvs = {string_entry("general.architecture", "llama"),
             string_entry("general.name", "odd"),
             u32_kv("llama.block_count", 2),
             u32_kv("llama.embedding_length", 96),
             u32_kv("llama.attention.head_count", 4),
             u32_kv("llama.attention.head_count_kv", 2),
             u32_kv("general.file_type", 1)};
    uint32_t seed = 12345;
    auto next = [&] {
        seed = seed * 1664525u + 1013904223u;
        return (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * 0.1f;
    };
    auto add = [&](const std::string& name, DType t, std::vector<int64_t> ne) {
        f.tensors.push_back(ws_test::tensor(name, t, ne));
        uint64_t n = 1;
        for (int64_t d : ne) n *= static_cast<uint64_t>(d);
        std::vector<uint8_t> bytes(n * (t == DType::F32 ? 4 : 2));
        for (uint64_t i = 0; i < n; ++i) {
            const float v = t == DType::F32 ? 1.0f + next() : next();
            if (t == DType::F32) {
                std::memcpy(&bytes[4 * i], &v, 4);
            } else {
                const uint16_t h = fp32_to_fp16(v);
                bytes[2 * i] = static_cast<uint8_t>(h);
                bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
            }
        }
        f.data.push_back(std::move(bytes));
    };
    add("token_embd.weight", DType::F16, {96, 64});
    for (int l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", DType::F32, {96});
        add(b + "attn_q.weight", DType::F16, {96, 96});
        add(b + "attn_k.weight", DType::F16, {96, 48});
        add(b + "attn_v.weight", DType::F16, {96, 48});
        add(b + "attn_output.weight", DType::F16, {96, 96});
        add(b + "ffn_norm.weight", DType::F32, {96});
        add(b + "ffn_gate.weight", DType::F16, {96, 160});
        add(b + "ffn_up.weight", DType::F16, {96, 160});
        add(b + "ffn_down.weight", DType::F16, {160, 96});
    }
    add("output_norm.weight", DType::F32, {96});
    add("output.weight", DType::F16, {96, 64});
    return f;
}

void write_fixture(const Fixture& f, const std::string& path) {
    Result<std::vector<uint8_t>> r = gguf_write(f.kvs, f.tensors, f.data);
    REQUIRE(r.ok());
    ws_test::write_file(path, r.value());
}

// A legacy .dat imatrix with one entry per (name, n_per_row).
std::vector<uint8_t> legacy_imatrix(const std::vector<std::pair<std::string, int>>& entries) {
    std::vector<uint8_t> b;
    auto i32 = [&](int32_t v) {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i)));
    };
    i32(static_cast<int32_t>(entries.size()));
    for (const auto& [name, n] : entries) {
        i32(static_cast<int32_t>(name.size()));
        b.insert(b.end(), name.begin(), name.end());
        i32(10);
        i32(n);
        for (int k = 0; k < n; ++k) {
            const float v = 1.0f + static_cast<float>(k % 7);
            uint32_t u;
            std::memcpy(&u, &v, 4);
            i32(static_cast<int32_t>(u));
        }
    }
    i32(10);
    i32(5);
    b.insert(b.end(), {'c', 'a', 'l', 'i', 'b'});
    return b;
}

std::vector<std::pair<std::string, int>> fixture_entries() {
    std::vector<std::pair<std::string, int>> e;
    for (int l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"}) {
            e.push_back({b + n + ".weight", 96});
        }
        e.push_back({b + "ffn_down.weight", 160});
    }
    return e;
}

// Whether this build quantizes to t, with importance weights when `imatrix`: every type a recipe plans must be.
bool can_quantize(DType t, bool imatrix) {
    if (!quantize_supported(t)) return false;
    const uint32_t n = std::max<uint32_t>(256, dtype_traits(t).block_elems);
    std::vector<float> x(n, 0.5f), w(n, 1.0f);
    uint64_t bytes = 0;
    REQUIRE(dtype_bytes_for(t, n, &bytes));
    std::vector<uint8_t> out(bytes);
    return quantize_rows(t, x.data(), 1, n, imatrix ? w.data() : nullptr, out.data()).code != Error::kUnsupported;
}

bool exists(const std::string& p) {
    return ws_test::file_exists(p);
}

}  // namespace

TEST_CASE("quantize writes llama-quantize's file byte for byte for every recipe run") {
    const std::string dir = ws_test::recipes_dir();
    ws_test::TempDir tmp;
    int compared = 0;
    for (const ws_test::RecipeRun& run : ws_test::recipe_runs()) {
        const std::string output = run.record["output"].get<std::string>();
        INFO(output);
        const ModelInfo in = parse_file(ws_test::read_file(dir + "/" + run.model));
        for (const auto& t : run.record["tensors"]) {
            const DType out = static_cast<DType>(t["type_id"].get<uint32_t>());
            const TensorInfo* src = in.find_tensor(t["name"].get<std::string>());
            REQUIRE(src);
            if (out != src->dtype) CHECK(can_quantize(out, !run.imatrix.empty()));
        }
        const std::string out = tmp.file(output);
        const ws_test::CliResult r = run_from(dir, quantize_args(run, out, 2));
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(file_sha256(out) == run.record["sha256"].get<std::string>());
        CHECK_FALSE(exists(out + ".tmp"));
        if (compared == 0) {  // the thread count does not change the bytes
            const ws_test::CliResult r1 = run_from(dir, quantize_args(run, out, 1));
            REQUIRE(r1.status == 0);
            CHECK(file_sha256(out) == run.record["sha256"].get<std::string>());
        }
        std::remove(out.c_str());
        ++compared;
    }
    CHECK(compared > 0);  // the recipes of ../shared/testdata/recipes/manifest.json are there
}

TEST_CASE("quantize a model whose rows are not multiples of 256, with and without an imatrix") {
    ws_test::TempDir tmp;
    const Fixture f = odd_fixture();
    const std::string in = tmp.file("odd-f16.gguf");
    write_fixture(f, in);
    const std::string imatrix = tmp.file("odd.imatrix.dat");
    ws_test::write_file(imatrix, legacy_imatrix(fixture_entries()));
    const ModelInfo model = parse_file(ws_test::read_file(in));

    struct Case {
        const char* ftype;
        bool with_imatrix;
    };
    int ran = 0;
    for (const Case& c : {Case{"Q8_0", false}, Case{"Q8_0", true}, Case{"Q4_0", false}, Case{"Q4_K_M", false},
                          Case{"Q4_K_M", true}, Case{"Q3_K_M", false}, Case{"IQ4_XS", true}, Case{"IQ2_XXS", true},
                          Case{"Q5_K_M", false}, Case{"Q2_K", true}}) {
        INFO(c.ftype << (c.with_imatrix ? " with imatrix" : ""));
        // What the recipe wants.
        RecipeOptions o;
        REQUIRE(ftype_from_name(c.ftype, &o.ftype));
        Imatrix im;
        if (c.with_imatrix) {
            const std::vector<uint8_t> b = ws_test::read_file(imatrix);
            Result<Imatrix> r = parse_imatrix(b.data(), b.size());
            REQUIRE(r.ok());
            im = std::move(r).value();
            o.imatrix = &im;
            o.imatrix_path = imatrix;
        }
        Result<QuantPlan> plan = plan_quantization(model, o);
        REQUIRE(plan.ok());
        for (const PlannedTensor& p : plan.value().tensors) {
            if (p.quantize) CHECK(can_quantize(p.out.dtype, p.imatrix != nullptr));
        }
        if (std::string(c.ftype) != "Q8_0" && std::string(c.ftype) != "Q4_0") {
            // 96-wide rows take the fallbacks: nothing of 256-element blocks is planned.
            for (const PlannedTensor& p : plan.value().tensors) {
                if (p.quantize && p.out.ne[0] == 96) CHECK(dtype_traits(p.out.dtype).block_elems == 32);
            }
            CHECK(plan.value().n_fallback > 0);
        }
        const std::string out = tmp.file(std::string("odd-") + c.ftype + (c.with_imatrix ? "-im" : "") + ".gguf");
        std::string args = "quantize " + quote(in) + " " + quote(out) + " --type " + c.ftype;
        if (c.with_imatrix) args += " --imatrix " + quote(imatrix);
        const ws_test::CliResult r = ws_test::run_cli(args);
        INFO(r.err);
        REQUIRE(r.status == 0);
        // Strict verify: layout as ggml requires, every tensor decodes.
        const ws_test::CliResult v = ws_test::run_cli("verify " + quote(out));
        INFO(v.out << v.err);
        CHECK(v.status == 0);
        // The result is the plan, and decodes close to the input.
        const std::vector<uint8_t> bytes = ws_test::read_file(out);
        const ModelInfo q = parse_file(bytes);
        REQUIRE(q.tensors.size() == plan.value().tensors.size());
        CHECK(bytes.size() == plan.value().layout.file_size);
        for (size_t i = 0; i < q.tensors.size(); ++i) {
            const TensorInfo& t = q.tensors[i];
            CHECK(t.dtype == plan.value().tensors[i].out.dtype);
            const TensorInfo* src = model.find_tensor(t.name);
            REQUIRE(src);
            std::vector<float> a(src->n_elements), b(t.n_elements);
            const std::vector<uint8_t> in_bytes = ws_test::read_file(in);
            REQUIRE(dequantize(src->dtype, in_bytes.data() + src->offset, src->n_elements, a.data()).ok());
            REQUIRE(dequantize(t.dtype, bytes.data() + t.offset, t.n_elements, b.data()).ok());
            double err = 0;
            for (size_t k = 0; k < a.size(); ++k) err = std::max(err, std::fabs(double(a[k]) - b[k]));
            CHECK(err < 0.02);  // values are within +-0.05; 4-bit steps are about 0.007
        }
        const bool has_im = q.find("quantize.imatrix.file") != nullptr;
        CHECK(has_im == c.with_imatrix);
        if (c.with_imatrix) {
            CHECK(q.find("quantize.imatrix.file")->value.str == imatrix);
            CHECK(q.find("quantize.imatrix.dataset")->value.str == "calib");
            CHECK(q.find("quantize.imatrix.entries_count")->value.bits == 14);
            CHECK(q.find("quantize.imatrix.chunks_count")->value.bits == 10);
        }
        ++ran;
    }
    WARN("quantized the 96-wide fixture with " << ran << " of 10 recipes");
    CHECK(ran >= 3);
}

TEST_CASE("quantize refuses bad input with clear errors and leaves no half-written output") {
    ws_test::TempDir tmp;
    Fixture f = odd_fixture();
    const std::string in = tmp.file("in.gguf");
    write_fixture(f, in);
    const std::string out = tmp.file("out.gguf");

    // An existing output survives a failed run untouched, and no temporary file remains.
    ws_test::write_file(out, {'o', 'l', 'd'});
    auto output_untouched = [&] {
        CHECK(ws_test::read_file(out) == std::vector<uint8_t>{'o', 'l', 'd'});
        CHECK_FALSE(exists(out + ".tmp"));
    };

    SECTION("usage errors exit 2") {
        CHECK(ws_test::run_cli("quantize " + quote(in) + " " + quote(out)).status == 2);
        CHECK(ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q9_K").status == 2);
        CHECK(ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --tensor-type '(=q8_0'")
                  .status == 2);
        CHECK(ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --tensor-type attn=q9")
                  .status == 2);
        CHECK(ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --output-tensor-type x")
                  .status == 2);
        output_untouched();
    }
    SECTION("missing files exit 3") {
        CHECK(ws_test::run_cli("quantize " + quote(tmp.file("none.gguf")) + " " + quote(out) + " --type Q8_0").status ==
              3);
        CHECK(ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --imatrix " +
                               quote(tmp.file("none.dat")))
                  .status == 3);
        output_untouched();
    }
    SECTION("an imatrix of the wrong length, or for other tensors") {
        std::vector<std::pair<std::string, int>> e = fixture_entries();
        e[0].second = 50;  // blk.0.attn_q.weight has 96 columns
        ws_test::write_file(tmp.file("short.dat"), legacy_imatrix(e));
        ws_test::CliResult r = ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --imatrix " +
                                                quote(tmp.file("short.dat")));
        CHECK(r.status == 1);
        // Said of the imatrix file, not of the model (it was "IN: bad_shape: an impossible tensor shape").
        CHECK(r.err.find("weightstream: error: " + tmp.file("short.dat") +
                         ": its entry for blk.0.attn_q.weight has 50 values where the tensor in " + in +
                         " has 96 columns (ne[0] x ne[2]): an importance matrix of another model?\n") !=
              std::string::npos);
        output_untouched();

        // For other tensors, where the type needs one (the 512-wide reference model: IQ2_XXS stays IQ2_XXS;
        // the 96-wide rows here would fall back to IQ4_NL, which needs none).
        ws_test::write_file(tmp.file("other.dat"), legacy_imatrix({{"other.weight", 96}}));
        r = ws_test::run_cli("quantize " + quote(ws_test::recipes_dir() + "/ref-llama-gqa8-f16.gguf") + " " +
                             quote(out) + " --type IQ2_XXS --imatrix " + quote(tmp.file("other.dat")));
        CHECK(r.status == 1);
        CHECK(r.err.find("requires an importance matrix") != std::string::npos);
        CHECK(r.err.find("blk.0.attn_k.weight") != std::string::npos);
        output_untouched();
        // Without an imatrix at all, before anything is written.
        r = ws_test::run_cli("quantize " + quote(ws_test::recipes_dir() + "/ref-llama-gqa8-f16.gguf") + " " +
                             quote(out) + " --type IQ1_S");
        CHECK(r.status == 1);
        CHECK(r.err.find("requires an importance matrix") != std::string::npos);
        output_untouched();
        // For other tensors with a type that needs none: warnings, and the entries are still counted.
        r = ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --imatrix " +
                             quote(tmp.file("other.dat")));
        CHECK(r.status == 0);
        CHECK(r.err.find("did not find importance matrix weights for blk.0.attn_q.weight") != std::string::npos);
        const ModelInfo q = parse_file(ws_test::read_file(out));
        CHECK(q.find("quantize.imatrix.entries_count")->value.bits == 1);
        // A broken imatrix file.
        ws_test::write_file(tmp.file("bad.dat"), {1, 0, 0, 0, 9});
        r = ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --imatrix " +
                             quote(tmp.file("bad.dat")));
        CHECK(r.status == 1);
        CHECK(r.err.find("truncated") != std::string::npos);
    }
    SECTION("NaN or infinite source values are refused, as llama-quantize's loader refuses them") {
        Fixture nan = f;
        nan.data[2][10] = 0x00;
        nan.data[2][11] = 0x7e;  // blk.0.attn_q.weight element 5: an F16 NaN
        write_fixture(nan, tmp.file("nan.gguf"));
        ws_test::CliResult r =
            ws_test::run_cli("quantize " + quote(tmp.file("nan.gguf")) + " " + quote(out) + " --type Q8_0");
        CHECK(r.status == 1);
        CHECK(r.err.find("blk.0.attn_q.weight") != std::string::npos);
        CHECK(r.err.find("NaN or infinite") != std::string::npos);
        output_untouched();

        Fixture inf = f;
        const float pinf = INFINITY;
        std::memcpy(&inf.data[1][8], &pinf, 4);  // blk.0.attn_norm.weight, copied as stored: still checked
        write_fixture(inf, tmp.file("inf.gguf"));
        r = ws_test::run_cli("quantize " + quote(tmp.file("inf.gguf")) + " " + quote(out) + " --type Q8_0");
        CHECK(r.status == 1);
        CHECK(r.err.find("blk.0.attn_norm.weight") != std::string::npos);
        output_untouched();
    }
    SECTION("the output goes through a temporary file of its own and replaces OUT only when complete") {
        // A symlink planted at the old fixed temporary name is neither followed nor reused.
        const std::string victim = tmp.file("victim");
        ws_test::write_file(victim, std::vector<uint8_t>{'v'});
        REQUIRE(::symlink(victim.c_str(), (out + ".tmp").c_str()) == 0);
        const ws_test::CliResult r = ws_test::run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0");
        CHECK(r.status == 0);
        CHECK(ws_test::read_file(victim) == std::vector<uint8_t>{'v'});
        CHECK(parse_file(ws_test::read_file(out)).tensors.size() == f.tensors.size());
    }
    SECTION("requantizing needs --allow-requantize, which warns") {
        REQUIRE(ws_test::run_cli("quantize " + quote(in) + " " + quote(tmp.file("q8.gguf")) + " --type Q8_0").status ==
                0);
        ws_test::CliResult r =
            ws_test::run_cli("quantize " + quote(tmp.file("q8.gguf")) + " " + quote(out) + " --type Q4_0");
        CHECK(r.status == 1);
        CHECK(r.err.find("--allow-requantize") != std::string::npos);
        output_untouched();
        r = ws_test::run_cli("quantize " + quote(tmp.file("q8.gguf")) + " " + quote(out) +
                             " --type Q4_0 --allow-requantize");
        CHECK(r.status == 0);
        CHECK(r.err.find("warning: requantizing from Q8_0") != std::string::npos);
    }
}

TEST_CASE("convert --dtype quantizes with quantize_rows: Q8_0 tensors equal llama-quantize's") {
    ws_test::TempDir tmp;
    const std::string in = ws_test::recipes_dir() + "/ref-llama-gqa8-f16.gguf";
    const std::string out = tmp.file("q8.gguf");
    ws_test::CliResult r = ws_test::run_cli("convert " + quote(in) + " " + quote(out) + " --dtype Q8_0 --threads 2");
    INFO(r.err);
    REQUIRE(r.status == 0);
    r = ws_test::run_cli("hash --json " + quote(out));
    REQUIRE(r.status == 0);
    const nlohmann::json hashes = nlohmann::json::parse(r.out);
    nlohmann::json run;
    const nlohmann::json manifest = ws_test::read_json(ws_test::recipes_dir() + "/manifest.json");
    for (const auto& x : manifest["runs"]) {
        if (x["output"] == "ref-llama-gqa8-Q8_0.gguf") run = x;
    }
    REQUIRE(run.is_object());
    int matched = 0;
    for (const auto& t : run["tensors"]) {
        for (const auto& h : hashes["tensors"]) {
            if (h["name"] != t["name"]) continue;
            INFO(t["name"]);
            if (t["ne"].size() < 2) {
                // Norms: F32, as llama-quantize keeps them (and convert_hf_to_gguf.py writes them).
                CHECK(h["dtype"] == "F32");
                CHECK(t["type"] == "F32");
                CHECK(h["raw_sha256"] == t["raw_sha256"]);
                continue;
            }
            CHECK(h["dtype"] == "Q8_0");
            CHECK(h["raw_sha256"] == t["raw_sha256"]);
            ++matched;
        }
    }
    CHECK(matched == 22);

    // Types and options convert refuses.
    CHECK(ws_test::run_cli("convert " + quote(in) + " " + quote(tmp.file("x.safetensors")) + " --dtype q8_0").status ==
          2);
    CHECK(ws_test::run_cli("convert " + quote(in) + " " + quote(tmp.file("x.gguf")) + " --dtype f16 --imatrix x")
              .status == 2);
    CHECK(ws_test::run_cli("convert " + quote(in) + " " + quote(tmp.file("x.gguf")) + " --dtype q9_0").status == 2);
    // IQ2_XXS needs an importance matrix: refused without one (exit 1).
    r = ws_test::run_cli("convert " + quote(in) + " " + quote(tmp.file("x.gguf")) + " --dtype iq2_xxs");
    CHECK(r.status == 1);
    CHECK_FALSE(exists(tmp.file("x.gguf")));
}
