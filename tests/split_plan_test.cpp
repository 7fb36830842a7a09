// SPDX-License-Identifier: MIT
// Writing a split GGUF in the core: --split-max-size's parsing, llama-gguf-split's cut and keys (split_plan.h), and
// SplitJob routing a single GGUF's byte stream into parts (split_job.h), whatever the chunks it comes in. The
// byte-for-byte comparison with llama-gguf-split's own files is cli_gguf_split_test.
#include "weightstream/split_plan.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "support/test_util.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/split_job.h"

namespace {

using ws::SplitOptions;

// A job that writes `bytes` in chunks of `chunk` bytes, one step each, without inputs: the output of a job that
// cuts its output anywhere (the real jobs cut at tensor boundaries).
class ChunkJob final : public ws::Job {
public:
    ChunkJob(std::vector<uint8_t> bytes, size_t chunk) : bytes_(std::move(bytes)), chunk_(chunk) {}
    bool next(ws::JobStep* step) override {
        *step = ws::JobStep();
        if (pos_ >= bytes_.size()) return false;
        n_ = std::min(chunk_, bytes_.size() - pos_);
        step->work = n_;
        return true;
    }
    void run(const ws::ByteSpan*, uint32_t, uint32_t) override {}
    ws::Status complete(ws::ByteSpan* out) override {
        *out = {bytes_.data() + pos_, n_};
        pos_ += n_;
        return ws::ok_status();
    }
    uint64_t total_work() const override { return bytes_.size(); }

private:
    std::vector<uint8_t> bytes_;
    size_t chunk_, pos_ = 0, n_ = 0;
};

struct Model {
    std::vector<ws::MetadataEntry> metadata;
    std::vector<ws::TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
};

// F32 tensors of these many floats (2-D [n, 1]: written back with n_dims 1, as ggml counts dims), bytes i + 1.
Model model_of(const std::vector<int64_t>& floats) {
    Model m;
    m.metadata.push_back(ws::string_entry("general.architecture", "llama"));
    for (size_t i = 0; i < floats.size(); ++i) {
        ws::TensorInfo t = ws_test::tensor("t" + std::to_string(i), ws::DType::F32, {floats[i], 1});
        t.nbytes = static_cast<uint64_t>(floats[i]) * 4;
        m.tensors.push_back(t);
        m.data.emplace_back(t.nbytes, static_cast<uint8_t>(i + 1));
    }
    return m;
}

std::vector<size_t> counts(const ws::SplitPlan& plan) {
    std::vector<size_t> c;
    for (const ws::SplitPart& p : plan.parts) c.push_back(p.count);
    return c;
}

// Part k as a whole file, from the plan's own metadata and the tensors' bytes.
std::vector<uint8_t> expected_part(const Model& m, const ws::SplitPart& part) {
    std::vector<ws::TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
    for (size_t i = part.first; i < part.first + part.count; ++i) {
        ws::TensorInfo t = m.tensors[i];
        t.n_dims = ws::gguf_n_dims(t.ne);
        tensors.push_back(t);
        data.push_back(m.data[i]);
    }
    auto bytes = ws::gguf_write(part.metadata, tensors, data);
    REQUIRE(bytes.ok());
    std::vector<uint8_t> file = bytes.value();
    if (tensors.empty()) file.resize((file.size() + 31) / 32 * 32, 0);  // ggml pads a header without tensors too
    return file;
}

}  // namespace

TEST_CASE("split sizes are read as llama-gguf-split reads N(M|G), and refused where it would misread them") {
    uint64_t bytes = 0;
    std::string why;
    CHECK(ws::parse_split_size("1M", &bytes, &why));
    CHECK(bytes == 1000000);
    CHECK(ws::parse_split_size("4G", &bytes, &why));
    CHECK(bytes == 4000000000ull);
    CHECK(ws::parse_split_size("2147483647G", &bytes, &why));
    CHECK(bytes == 2147483647000000000ull);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"", "supported units are M (megabytes) or G (gigabytes), but got: nothing"},
        {"100", "supported units are M (megabytes) or G (gigabytes), but got: 0"},
        {"1K", "supported units are M (megabytes) or G (gigabytes), but got: K"},
        {"0M", "size must be a positive value"},
        {"-5G", "size must be a positive value"},
        {"M", "'M' has no number before its unit"},
        {"1.5G", "'1.5G': a whole number of M or G is expected (1500M, not 1.5G)"},
        {"2147483648M", "'2147483648M' is larger than 2147483647M"},
        {"99999999999999999999999G", "'99999999999999999999999G' is larger than 2147483647G"},
    };
    for (const auto& [text, words] : bad) {
        INFO(text);
        CHECK_FALSE(ws::parse_split_size(text, &bytes, &why));
        CHECK(why == words);
    }
}

TEST_CASE("the split is cut where llama-gguf-split cuts it") {
    // Padded to 32: 32, 32, 64, 32, 96 bytes.
    const Model m = model_of({8, 3, 16, 1, 20});
    SplitOptions by_tensors;
    by_tensors.max_tensors = 2;
    auto plan = ws::plan_gguf_split(m.metadata, m.tensors, by_tensors);
    REQUIRE(plan.ok());
    CHECK(counts(plan.value()) == std::vector<size_t>{2, 2, 1});
    by_tensors.no_tensor_first_split = true;
    plan = ws::plan_gguf_split(m.metadata, m.tensors, by_tensors);
    REQUIRE(plan.ok());
    CHECK(counts(plan.value()) == std::vector<size_t>{0, 2, 2, 1});

    SplitOptions by_size;
    by_size.mode = SplitOptions::Mode::kSize;
    by_size.max_bytes = 64;  // a part reaching exactly the limit is not cut; the 96-byte tensor stands alone
    plan = ws::plan_gguf_split(m.metadata, m.tensors, by_size);
    REQUIRE(plan.ok());
    CHECK(counts(plan.value()) == std::vector<size_t>{2, 1, 1, 1});
    by_size.max_bytes = 31;  // the first tensor alone is over: the tool's "one of splits have 0 tensors"
    plan = ws::plan_gguf_split(m.metadata, m.tensors, by_size);
    REQUIRE_FALSE(plan.ok());
    CHECK(std::string(plan.status().what) == "split.empty_part");

    // The keys: the model's metadata in the first part, the three split keys last in every part.
    plan = ws::plan_gguf_split(m.metadata, m.tensors, SplitOptions());
    REQUIRE(plan.ok());
    REQUIRE(plan.value().parts.size() == 1);
    const auto& meta = plan.value().parts[0].metadata;
    REQUIRE(meta.size() == 4);
    CHECK(meta[0].key == "general.architecture");
    CHECK(meta[1].key == "split.no");
    CHECK(meta[1].value.type == ws::ValueType::kUint16);
    CHECK(meta[2].key == "split.tensors.count");
    CHECK(meta[2].value.type == ws::ValueType::kInt32);
    CHECK(meta[2].value.bits == 5);
    CHECK(meta[3].key == "split.count");
    CHECK(meta[3].value.bits == 1);
}

TEST_CASE("the split refuses what the tool would write broken or cannot count") {
    Model m = model_of({8});
    ws::MetadataEntry align;
    align.key = "general.alignment";
    align.value.type = ws::ValueType::kUint32;
    align.value.bits = 64;
    m.metadata.push_back(align);
    auto plan = ws::plan_gguf_split(m.metadata, m.tensors, SplitOptions());
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code == ws::Error::kUnsupported);
    m.metadata.back().value.bits = 32;  // the default, written as the tool writes it
    CHECK(ws::plan_gguf_split(m.metadata, m.tensors, SplitOptions()).ok());

    // 65,536 parts of one tensor each: split.count is a u16.
    Model many = model_of(std::vector<int64_t>(65536, 1));
    SplitOptions one;
    one.max_tensors = 1;
    plan = ws::plan_gguf_split(many.metadata, many.tensors, one);
    REQUIRE_FALSE(plan.ok());
    CHECK(std::string(plan.status().what) == "split.count");

    // Split keys already in the model (a split split again) move to the end, as gguf_set_val moves them.
    Model again = model_of({8});
    ws::MetadataEntry no;
    no.key = "split.no";
    no.value.type = ws::ValueType::kUint16;
    again.metadata.insert(again.metadata.begin(), no);
    plan = ws::plan_gguf_split(again.metadata, again.tensors, SplitOptions());
    REQUIRE(plan.ok());
    CHECK(plan.value().parts[0].metadata.front().key == "general.architecture");
    CHECK(plan.value().parts[0].metadata.size() == 4);
}

TEST_CASE("SplitJob routes a single GGUF's bytes into the parts whatever chunks they come in") {
    const Model m = model_of({8, 3, 16, 1, 20, 7});
    auto single = ws::gguf_write(m.metadata, m.tensors, m.data);
    REQUIRE(single.ok());
    auto layout = ws::gguf_layout(m.metadata, m.tensors);
    REQUIRE(layout.ok());
    for (bool no_first : {false, true}) {
        for (size_t chunk : {size_t(1), size_t(7), size_t(45), size_t(100000)}) {
            INFO("chunk " << chunk << ", no_first " << no_first);
            SplitOptions options;
            options.max_tensors = 4;
            options.no_tensor_first_split = no_first;
            auto plan = ws::plan_gguf_split(m.metadata, m.tensors, options);
            REQUIRE(plan.ok());
            ChunkJob inner(single.value(), chunk);
            auto made = ws::SplitJob::make(inner, layout.value(), plan.value());
            REQUIRE(made.ok());
            ws::SplitJob& job = *made.value();
            std::map<uint32_t, std::vector<uint8_t>> files;
            ws::JobStep step;
            uint32_t last = 0;
            while (job.next(&step)) {
                CHECK(step.output >= last);  // a file is finished before the next one starts
                last = step.output;
                job.run(nullptr, 0, 1);
                ws::ByteSpan out;
                REQUIRE(job.complete(&out).ok());
                files[step.output].insert(files[step.output].end(), out.data, out.data + out.size);
            }
            REQUIRE(files.size() == plan.value().parts.size());
            for (size_t k = 0; k < files.size(); ++k) {
                CHECK(files[static_cast<uint32_t>(k)] == expected_part(m, plan.value().parts[k]));
            }
        }
    }
}

TEST_CASE("SplitJob reports an inner job that ends short of its layout") {
    const Model m = model_of({8, 3});
    auto single = ws::gguf_write(m.metadata, m.tensors, m.data);
    REQUIRE(single.ok());
    auto layout = ws::gguf_layout(m.metadata, m.tensors);
    REQUIRE(layout.ok());
    auto plan = ws::plan_gguf_split(m.metadata, m.tensors, SplitOptions());
    REQUIRE(plan.ok());
    std::vector<uint8_t> short_bytes = single.value();
    short_bytes.resize(short_bytes.size() - 1);
    ChunkJob inner(short_bytes, 16);
    auto made = ws::SplitJob::make(inner, layout.value(), plan.value());
    REQUIRE(made.ok());
    ws::JobStep step;
    ws::Status last = ws::ok_status();
    while (made.value()->next(&step)) {
        ws::ByteSpan out;
        last = made.value()->complete(&out);
        if (!last.ok()) break;
    }
    CHECK(last.code == ws::Error::kInternal);
    CHECK(std::string(last.what) == "split.stream");

    // A plan of other tensors than the layout's is refused.
    const Model other = model_of({8, 4});
    auto other_plan = ws::plan_gguf_split(other.metadata, other.tensors, SplitOptions());
    REQUIRE(other_plan.ok());
    ChunkJob again(single.value(), 16);
    CHECK_FALSE(ws::SplitJob::make(again, layout.value(), other_plan.value()).ok());
}
