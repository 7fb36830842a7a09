// SPDX-License-Identifier: MIT
// EditJob (include/weightstream/edit_job.h) run in-process (tests/support/job_runner.h) in 1 to 64 parts: its bytes
// are the plan's header followed by every tensor's stored bytes and the plan's padding (what `weightstream edit`
// wrote before it was a job, and what cli_edit_test reads back), whether the header grows or shrinks and whether a
// tensor is copied in one piece or several; a truncated file ends the job with truncated at the tensor's data.
#include "weightstream/edit_job.h"

#include <catch2/catch.hpp>

#include "support/job_runner.h"
#include "support/parse_model.h"
#include "support/recipe_runs.h"
#include "support/test_util.h"
#include "weightstream/gguf_writer.h"

namespace {

using namespace ws;

EditValue text_value(const std::string& text) {
    EditValue v;
    v.text = text;
    return v;
}

// The edited file assembled from the plan and the input, as the command wrote it before the job.
std::vector<uint8_t> expected_output(const std::vector<uint8_t>& file, const ModelInfo& in, const EditPlan& plan) {
    std::vector<uint8_t> out = plan.layout.header;
    for (size_t i = 0; i < in.tensors.size(); ++i) {
        const TensorInfo& t = in.tensors[i];
        out.insert(out.end(), file.begin() + static_cast<std::ptrdiff_t>(t.offset),
                   file.begin() + static_cast<std::ptrdiff_t>(t.offset + t.nbytes));
        out.insert(out.end(), static_cast<size_t>(plan.layout.tensor_padding[i]), 0);
    }
    return out;
}

// Runs the edit in 1 to 64 parts; every run must give expected_output() (and the plan's file size).
void check_edit(const std::vector<uint8_t>& file, const MetadataEdits& edits) {
    const ModelInfo in = ws_test::parse_model_bytes(file);
    std::vector<uint8_t> expected;
    for (const uint32_t parts : {1u, 2u, 5u, 64u}) {
        INFO("parts " << parts);
        Result<std::unique_ptr<EditJob>> job = EditJob::make(in, edits);
        REQUIRE(job.ok());
        if (expected.empty()) expected = expected_output(file, in, job.value()->plan());
        const ws_test::JobRun r = ws_test::run_job(*job.value(), {file}, parts, parts);
        REQUIRE(r.status.ok());
        CHECK(r.work == job.value()->total_work());
        CHECK(r.output.size() == job.value()->plan().layout.file_size);
        CHECK(r.output == expected);
    }
    // The output reads back with the input's tensors, byte for byte.
    const ModelInfo out = ws_test::parse_model_bytes(expected);
    REQUIRE(out.tensors.size() == in.tensors.size());
    for (size_t i = 0; i < in.tensors.size(); ++i) {
        const TensorInfo& a = in.tensors[i];
        const TensorInfo& b = out.tensors[i];
        CHECK(std::equal(file.begin() + static_cast<std::ptrdiff_t>(a.offset),
                         file.begin() + static_cast<std::ptrdiff_t>(a.offset + a.nbytes),
                         expected.begin() + static_cast<std::ptrdiff_t>(b.offset)));
    }
}

// A GGUF aligned to 64 whose first tensor is copied in two pieces (more than kCopyPieceBytes) and whose others
// need padding.
std::vector<uint8_t> two_piece_model() {
    MetadataEntry align;
    align.key = "general.alignment";
    align.value.type = ValueType::kUint32;
    align.value.bits = 64;
    const std::vector<MetadataEntry> meta = {string_entry("general.name", "pieces"), align,
                                             string_entry("general.url", "https://example.com/a/long/enough/url")};
    const int64_t big = static_cast<int64_t>(kCopyPieceBytes / 4 + 1000);
    const std::vector<TensorInfo> tensors = {ws_test::tensor("big", DType::F32, {big}),
                                             ws_test::tensor("small", DType::F16, {5, 3}),
                                             ws_test::tensor("odd", DType::F32, {7})};
    std::vector<std::vector<uint8_t>> data = {std::vector<uint8_t>(static_cast<size_t>(big) * 4),
                                              std::vector<uint8_t>(30, 2), std::vector<uint8_t>(28, 3)};
    for (size_t i = 0; i < data[0].size(); ++i) data[0][i] = static_cast<uint8_t>(i * 7 + i / 251);
    Result<std::vector<uint8_t>> file = gguf_write(meta, tensors, data);
    REQUIRE(file.ok());
    return file.value();
}

}  // namespace

TEST_CASE("EditJob writes the plan's header and every tensor's bytes in any number of parts") {
    const std::vector<uint8_t> file = ws_test::read_file(ws_test::recipes_dir() + "/ref-llama-gqa8-f16.gguf");
    const ModelInfo in = ws_test::parse_model_bytes(file);

    SECTION("the header grows past the data offset") {
        MetadataEdits edits;
        edits.set.emplace_back("general.name", text_value(std::string(5000, 'n')));
        edits.set.emplace_back("new.ids", text_value("[1,2,3]"));
        Result<EditPlan> plan = plan_gguf_edit(in, edits);
        REQUIRE(plan.ok());
        CHECK(plan.value().layout.data_offset > in.data_offset);
        check_edit(file, edits);
    }
    SECTION("the header shrinks") {
        MetadataEdits edits;
        for (const MetadataEntry& e : in.metadata) {
            if (e.key.rfind("tokenizer.", 0) == 0) edits.remove.push_back(e.key);
        }
        REQUIRE_FALSE(edits.remove.empty());
        Result<EditPlan> plan = plan_gguf_edit(in, edits);
        REQUIRE(plan.ok());
        CHECK(plan.value().layout.data_offset < in.data_offset);
        check_edit(file, edits);
    }
    SECTION("the header keeps its size") {
        MetadataEdits edits;
        edits.set.emplace_back("general.name", text_value("REF-LLAMA-GQA8"));
        check_edit(file, edits);
    }
}

TEST_CASE("EditJob copies a tensor larger than a piece in pieces, re-aligned") {
    const std::vector<uint8_t> file = two_piece_model();
    MetadataEdits edits;
    edits.remove.push_back("general.url");
    edits.set.emplace_back("general.name", text_value("a new and somewhat longer name"));
    check_edit(file, edits);

    const ModelInfo in = ws_test::parse_model_bytes(file);
    Result<std::unique_ptr<EditJob>> job = EditJob::make(in, edits);
    REQUIRE(job.ok());
    JobStep step;
    size_t copies_of_big = 0;
    while (job.value()->next(&step)) {
        if (step.tensor == 0 && !step.inputs.empty()) {
            ++copies_of_big;
            CHECK(step.inputs[0].size <= kCopyPieceBytes);
            CHECK(step.work == step.inputs[0].size);
        }
        std::vector<ByteSpan> inputs;
        for (const ByteRange& r : step.inputs) inputs.push_back({file.data() + r.offset, r.size});
        job.value()->run(inputs.data(), 0, 1);
        ByteSpan out;
        REQUIRE(job.value()->complete(&out).ok());
        if (!step.inputs.empty()) CHECK(out.data == inputs[0].data);  // zero-copy: the output is the input
    }
    CHECK(copies_of_big == 2);
}

TEST_CASE("EditJob ends with truncated at the tensor whose bytes lie outside the file") {
    const std::vector<uint8_t> file = two_piece_model();
    const ModelInfo in = ws_test::parse_model_bytes(file);
    MetadataEdits edits;
    edits.set.emplace_back("general.name", text_value("cut"));
    const TensorInfo& big = in.tensors[0];
    // Cut inside the big tensor's second piece: its first piece is written, then the job fails.
    const std::vector<uint8_t> cut(file.begin(),
                                   file.begin() + static_cast<std::ptrdiff_t>(big.offset + kCopyPieceBytes + 10));
    for (const uint32_t parts : {1u, 64u}) {
        Result<std::unique_ptr<EditJob>> job = EditJob::make(in, edits);
        REQUIRE(job.ok());
        const ws_test::JobRun r = ws_test::run_job(*job.value(), {cut}, parts);
        CHECK(r.status.code == Error::kTruncated);
        CHECK(std::string(r.status.what) == "tensor.data");
        CHECK(r.status.offset == big.offset);
        CHECK(r.output.size() == job.value()->plan().layout.header.size() + kCopyPieceBytes);
        JobStep step;
        CHECK_FALSE(job.value()->next(&step));  // a failed job has no more steps
    }
}

TEST_CASE("EditJob refuses what plan_gguf_edit refuses, naming the key") {
    const std::vector<uint8_t> file = two_piece_model();
    const ModelInfo in = ws_test::parse_model_bytes(file);
    MetadataEdits edits;
    edits.remove.push_back("no.such.key");
    std::string key;
    Result<std::unique_ptr<EditJob>> job = EditJob::make(in, edits, &key);
    REQUIRE_FALSE(job.ok());
    CHECK(job.status().code == Error::kBadKey);
    CHECK(std::string(job.status().what) == "delete");
    CHECK(key == "no.such.key");
}
