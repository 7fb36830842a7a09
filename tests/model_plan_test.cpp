// SPDX-License-Identifier: MIT
// The model plan (include/weightstream/model_plan.h): which files make up a model, from the names of the sources given,
// and the merge of the parsed parts. Every rule and every error, with the text the CLI and the package show.
#include "weightstream/model_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using ws::Error;
using ws::kSibling;
using ws::ModelPlan;
using ws::PlanKind;
using ws::PlanOptions;
using ws::PlanSource;

namespace {

PlanSource named(const std::string& name, bool siblings = false) {
    return PlanSource{name, true, siblings};
}

std::vector<std::string> names_of(const ModelPlan& plan) {
    std::vector<std::string> out;
    for (const ws::PlanPart& p : plan.parts()) out.push_back(p.name);
    return out;
}

std::vector<uint32_t> sources_of(const ModelPlan& plan) {
    std::vector<uint32_t> out;
    for (const ws::PlanPart& p : plan.parts()) out.push_back(p.source);
    return out;
}

std::vector<uint8_t> bytes_of(const std::string& s) {
    return std::vector<uint8_t>(s.begin(), s.end());
}

ws::Status set_index(ModelPlan& plan, const std::string& json) {
    const std::vector<uint8_t> bytes = bytes_of(json);
    return plan.set_index(bytes.data(), bytes.size());
}

ws::MetadataEntry uint_entry(const std::string& key, uint64_t v, uint64_t offset) {
    ws::MetadataEntry e;
    e.key = key;
    e.value.type = ws::ValueType::kUint16;
    e.value.bits = v;
    e.offset = offset;
    return e;
}

ws::TensorInfo tensor(const std::string& name, uint64_t info_offset) {
    ws::TensorInfo t;
    t.name = name;
    t.dtype = ws::DType::F32;
    t.info_offset = info_offset;
    return t;
}

// Part k (0-based) of a split of `count` parts: split keys (at offsets 24, 40, 56), one tensor per name.
ws::ModelInfo gguf_part(uint32_t k, uint32_t count, uint32_t total_tensors, const std::vector<std::string>& tensors) {
    ws::ModelInfo info;
    info.format = ws::Format::kGguf;
    info.file_size = 1000 + k;
    info.metadata = {uint_entry("split.no", k, 24), uint_entry("split.count", count, 40),
                     uint_entry("split.tensors.count", total_tensors, 56)};
    for (size_t i = 0; i < tensors.size(); ++i) info.tensors.push_back(tensor(tensors[i], 100 + i));
    return info;
}

ws::ModelInfo shard(const std::vector<std::string>& tensors, const std::string& meta = "") {
    ws::ModelInfo info;
    info.format = ws::Format::kSafetensors;
    info.file_size = 500;
    info.data_offset = 64;
    if (!meta.empty()) info.metadata.push_back(ws::string_entry("format", meta));
    for (size_t i = 0; i < tensors.size(); ++i) info.tensors.push_back(tensor(tensors[i], 8 + 10 * i));
    return info;
}

}  // namespace

TEST_CASE("model plan: the format a name announces") {
    CHECK(ws::format_from_name("a.gguf") == ws::Format::kGguf);
    CHECK(ws::format_from_name("a.safetensors") == ws::Format::kSafetensors);
    CHECK(ws::format_from_name("a.GGUF") == ws::Format::kUnknown);  // case-sensitive, as a path
    CHECK(ws::format_from_name("a.bin") == ws::Format::kUnknown);
    CHECK(ws::format_from_name("") == ws::Format::kUnknown);
}

TEST_CASE("model plan: one source") {
    ModelPlan plan;
    SECTION("without a name, or a name without folder, or a plain file: itself") {
        for (const PlanSource& s : {PlanSource{}, named("m-00001-of-00003.gguf"), named("m.gguf", true),
                                    named("m-00001-of-00001.gguf", true)}) {
            REQUIRE(plan.plan({s}).ok());
            CHECK(plan.kind() == PlanKind::kSingle);
            CHECK(names_of(plan) == std::vector<std::string>{s.name});
            CHECK(sources_of(plan) == std::vector<uint32_t>{0});
            CHECK(plan.index_source() == kSibling);
        }
    }
    SECTION("a part of a split brings in its siblings; split = false opens it alone") {
        REQUIRE(plan.plan({named("m-00002-of-00003.gguf", true)}).ok());
        CHECK(plan.kind() == PlanKind::kSplit);
        CHECK(names_of(plan) ==
              std::vector<std::string>{"m-00001-of-00003.gguf", "m-00002-of-00003.gguf", "m-00003-of-00003.gguf"});
        CHECK(sources_of(plan) == std::vector<uint32_t>{kSibling, 0, kSibling});
        PlanOptions alone;
        alone.split = false;
        REQUIRE(plan.plan({named("m-00002-of-00003.gguf", true)}, alone).ok());
        CHECK(plan.kind() == PlanKind::kSingle);
    }
    SECTION("a split of more parts than the cap is refused before any is listed") {
        const ws::Status s = plan.plan({named("m-00001-of-99999.gguf", true)});
        CHECK(s.code == Error::kTooLarge);
        CHECK(std::string(s.what) == "split.count");
        CHECK(plan.message() == "a split of 99999 parts, more than the 1024 allowed");
        CHECK(plan.failed_source() == 0);
        PlanOptions small;
        small.max_split_parts = 3;
        CHECK(plan.plan({named("m-00003-of-00003.gguf", true)}, small).ok());
        CHECK(plan.parts().size() == 3);
        CHECK(plan.plan({named("m-00003-of-00004.gguf", true)}, small).code == Error::kTooLarge);
        CHECK(ws::kDefaultMaxSplitParts == 1024);
    }
    SECTION("an index brings in the shards it names, next to it") {
        REQUIRE(plan.plan({named("model.safetensors.index.json", true)}).ok());
        CHECK(plan.kind() == PlanKind::kShards);
        CHECK(plan.index_source() == 0);
        CHECK(plan.index_name() == "model.safetensors.index.json");
        CHECK(plan.parts().empty());
        REQUIRE(
            set_index(plan, R"({"weight_map": {"a": "s2.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}})")
                .ok());
        CHECK(names_of(plan) == std::vector<std::string>{"s2.safetensors", "s1.safetensors"});
        CHECK(sources_of(plan) == std::vector<uint32_t>{kSibling, kSibling});
    }
    SECTION("an index alone, where its shards cannot be found, is refused") {
        PlanOptions alone;
        alone.split = false;
        for (const auto& [source, options] : {std::make_pair(named("m.safetensors.index.json"), PlanOptions()),
                                              std::make_pair(named("m.safetensors.index.json", true), alone)}) {
            const ws::Status s = plan.plan({source}, options);
            CHECK(s.code == Error::kBadSource);
            CHECK(plan.message() == "the index of a sharded safetensors model: give its .safetensors shards with it");
            CHECK(plan.failed_source() == 0);
        }
    }
}

TEST_CASE("model plan: several sources") {
    ModelPlan plan;
    SECTION("no source") {
        CHECK(plan.plan({}).code == Error::kBadSource);
    }
    SECTION("some without a name") {
        const ws::Status s = plan.plan({named("a.gguf"), PlanSource{}, PlanSource{}});
        CHECK(s.code == Error::kBadSource);
        CHECK(plan.message() ==
              "open(): 2 of the 3 sources have no file name: give each as a File, a URL, a path or a {name, "
              "source} record, so that the parts of the model can be told apart");
    }
    SECTION("a file given twice") {
        CHECK(plan.plan({named("a.safetensors"), named("b.safetensors"), named("a.safetensors")}).code ==
              Error::kBadSplit);
        CHECK(plan.message() == "the file a.safetensors was given twice");
        CHECK(plan.failed_source() == kSibling);  // the message names it
    }
    SECTION("several indexes") {
        CHECK(plan.plan({named("a.index.json"), named("s.safetensors"), named("b.index.json")}).code ==
              Error::kBadSplit);
        CHECK(plan.message() == "several indexes: a.index.json, b.index.json");
    }
    SECTION("shards with their index: in the index's order") {
        const std::vector<PlanSource> given = {named("s1.safetensors"), named("m.index.json"), named("s2.safetensors")};
        REQUIRE(plan.plan(given).ok());
        CHECK(plan.kind() == PlanKind::kShards);
        CHECK(plan.index_source() == 1);
        REQUIRE(set_index(plan, R"({"weight_map": {"a": "s2.safetensors", "b": "s1.safetensors"}})").ok());
        CHECK(names_of(plan) == std::vector<std::string>{"s2.safetensors", "s1.safetensors"});
        CHECK(sources_of(plan) == std::vector<uint32_t>{2, 0});
    }
    SECTION("an index naming shards not given, or not naming shards given") {
        REQUIRE(plan.plan({named("m.index.json"), named("s1.safetensors")}).ok());
        ws::Status s =
            set_index(plan, R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors", "c": "s3.safetensors"}})");
        CHECK(s.code == Error::kBadSplit);
        CHECK(std::string(s.what) == "weight_map");
        CHECK(plan.message() == "m.index.json names shards not given: s2.safetensors, s3.safetensors");

        REQUIRE(
            plan.plan({named("m.index.json"), named("s1.safetensors"), named("x.safetensors"), named("y.gguf")}).ok());
        s = set_index(plan, R"({"weight_map": {"a": "s1.safetensors"}})");
        CHECK(s.code == Error::kBadSplit);
        CHECK(plan.message() == "m.index.json does not name x.safetensors, y.gguf");
    }
    SECTION("an index naming no tensor") {
        REQUIRE(plan.plan({named("m.index.json", true)}).ok());
        CHECK(set_index(plan, R"({"weight_map": {}})").code == Error::kBadSplit);
        CHECK(plan.message() == "m.index.json names no tensor");
    }
    SECTION("the index's own errors come from its parser, with no message") {
        REQUIRE(plan.plan({named("m.index.json"), named("s1.safetensors")}).ok());
        const ws::Status s = set_index(plan, R"({"weight_map": {"a": "../s1.safetensors"}})");
        CHECK(s.code == Error::kBadJson);
        CHECK(std::string(s.what) == "weight_map");
        CHECK(plan.message().empty());
    }
    SECTION("shards without an index: in name order") {
        REQUIRE(plan.plan({named("c.safetensors"), named("a.safetensors"), named("b.safetensors")}).ok());
        CHECK(plan.kind() == PlanKind::kShards);
        CHECK(plan.index_source() == kSibling);
        CHECK(names_of(plan) == std::vector<std::string>{"a.safetensors", "b.safetensors", "c.safetensors"});
        CHECK(sources_of(plan) == std::vector<uint32_t>{1, 2, 0});
    }
    SECTION("every part of a split, in any order") {
        REQUIRE(plan.plan({named("m-00002-of-00002.gguf"), named("m-00001-of-00002.gguf")}).ok());
        CHECK(plan.kind() == PlanKind::kSplit);
        CHECK(names_of(plan) == std::vector<std::string>{"m-00001-of-00002.gguf", "m-00002-of-00002.gguf"});
        CHECK(sources_of(plan) == std::vector<uint32_t>{1, 0});
    }
    SECTION("files that are not the parts of one model") {
        CHECK(plan.plan({named("m-00001-of-00002.gguf"), named("s.safetensors"), named("config.json")}).code ==
              Error::kBadSource);
        CHECK(plan.message() ==
              "open(): several files that are not the parts of one model (s.safetensors, config.json): give every "
              "part of a split GGUF (name-00001-of-0000N.gguf), or safetensors shards with or without their index");
    }
    SECTION("parts of different splits") {
        for (const char* other : {"n-00002-of-00002.gguf", "m-00002-of-00003.gguf"}) {
            CHECK(plan.plan({named("m-00001-of-00002.gguf"), named(other)}).code == Error::kBadSplit);
            CHECK(plan.message() == "the files are parts of different split models");
        }
    }
    SECTION("missing parts") {
        CHECK(plan.plan({named("m-00001-of-00004.gguf"), named("m-00003-of-00004.gguf")}).code == Error::kBadSplit);
        CHECK(plan.message() == "missing parts of the split model: m-00002-of-00004.gguf, m-00004-of-00004.gguf");
    }
    SECTION("a split over the cap, before its missing parts are listed") {
        CHECK(plan.plan({named("m-00001-of-99999.gguf"), named("m-00002-of-99999.gguf")}).code == Error::kTooLarge);
        CHECK(plan.message() == "a split of 99999 parts, more than the 1024 allowed");
        CHECK(plan.failed_source() == 0);
    }
    SECTION("model_files_only leaves out what is not a model file") {
        PlanOptions pick;
        pick.model_files_only = true;
        REQUIRE(plan.plan({named("config.json"), named("b.SAFETENSORS"), named("tokenizer.json"), named("a.gguf")},
                          pick)
                    .code == Error::kBadSource);  // a.gguf and b.SAFETENSORS: not one model
        CHECK(plan.message().find("(b.SAFETENSORS, a.gguf)") != std::string::npos);

        REQUIRE(
            plan.plan({named("config.json"), named("m.safetensors.index.json"), named("s.safetensors")}, pick).ok());
        CHECK(plan.index_source() == 1);

        REQUIRE(plan.plan({named("config.json"), named("x.bin"), named("m.gguf")}, pick).ok());
        CHECK(plan.kind() == PlanKind::kSingle);
        CHECK(sources_of(plan) == std::vector<uint32_t>{2});

        CHECK(plan.plan({named("config.json"), named("m.safetensors.index.json")}, pick).code == Error::kBadSource);
        CHECK(plan.message().find("the index of a sharded safetensors model") == 0);
        CHECK(plan.failed_source() == 1);

        CHECK(plan.plan({named("config.json"), named("x.bin")}, pick).code == Error::kBadSource);
        CHECK(
            plan.message() ==
            "none of the 2 files is a model file: choose .gguf or .safetensors files (and a .safetensors.index.json)");
        // Without the option they are an error.
        CHECK(plan.plan({named("config.json"), named("m.gguf")}).code == Error::kBadSource);
    }
    SECTION("plan() starts afresh") {
        REQUIRE(plan.plan({named("m.index.json", true)}).ok());
        REQUIRE(plan.plan({named("a.gguf")}).ok());
        CHECK(plan.index_source() == kSibling);
        CHECK(plan.message().empty());
    }
}

TEST_CASE("model plan: the index size cap") {
    ModelPlan plan;
    REQUIRE(plan.plan({named("m.index.json", true)}).ok());
    CHECK(plan.check_index_size(ws::kMaxIndexBytes).ok());
    const ws::Status s = plan.check_index_size(ws::kMaxIndexBytes + 1);
    CHECK(s.code == Error::kTooLarge);
    CHECK(std::string(s.what) == "index");
    CHECK(plan.message() == "larger than 100000000 bytes");
    CHECK(ws::kMaxIndexBytes == 100000000);
    // set_index() checks the size before parsing (the bytes are never looked at).
    static const uint8_t kByte = '{';
    CHECK(plan.set_index(&kByte, ws::kMaxIndexBytes + 1).code == Error::kTooLarge);
}

TEST_CASE("model plan: merging a split") {
    ModelPlan plan;
    REQUIRE(plan.plan({named("m-00001-of-00002.gguf", true)}).ok());
    std::vector<ws::ModelInfo> parts = {gguf_part(0, 2, 3, {"a", "b"}), gguf_part(1, 2, 3, {"c"})};
    SECTION("fits") {
        uint32_t failed = 7;
        ws::Result<ws::ModelInfo> merged = plan.merge(std::move(parts), &failed);
        REQUIRE(merged.ok());
        CHECK(failed == ws::kNoPart);
        const ws::ModelInfo& m = merged.value();
        CHECK(m.files == names_of(plan));
        REQUIRE(m.tensors.size() == 3);
        CHECK(m.tensors[2].name == "c");
        CHECK(m.tensors[2].file_index == 1);
        CHECK(m.file_size == 2001);
        CHECK(plan.kept() == std::vector<uint32_t>{0, 1});
    }
    SECTION("a part with the wrong split.no names that part") {
        parts[1] = gguf_part(0, 2, 3, {"c"});
        uint32_t failed = ws::kNoPart;
        ws::Result<ws::ModelInfo> merged = plan.merge(std::move(parts), &failed);
        CHECK(merged.status().code == Error::kBadSplit);
        CHECK(std::string(merged.status().what) == "split.no");
        CHECK(merged.status().offset == 24);
        CHECK(failed == 1);
    }
    SECTION("as many parts as planned, or it is a bug") {
        parts.pop_back();
        CHECK(plan.merge(std::move(parts)).status().code == Error::kInternal);
    }
}

TEST_CASE("model plan: merging shards with their index") {
    ModelPlan plan;
    REQUIRE(plan.plan({named("m.index.json", true)}).ok());
    std::vector<ws::ModelInfo> parts = {shard({"a", "b"}, "pt"), shard({"c"})};
    CHECK(plan.merge(std::vector<ws::ModelInfo>()).status().code == Error::kInternal);  // index not read yet
    REQUIRE(set_index(plan, R"({"metadata": {"total_size": 96},
                                "weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}})")
                .ok());
    SECTION("fits: the index's metadata, then the first shard's") {
        ws::Result<ws::ModelInfo> merged = plan.merge(std::move(parts));
        REQUIRE(merged.ok());
        const ws::ModelInfo& m = merged.value();
        CHECK(m.files == std::vector<std::string>{"s1.safetensors", "s2.safetensors"});
        REQUIRE(m.metadata.size() == 2);
        CHECK(m.metadata[0].key == "total_size");
        CHECK(m.metadata[1].key == "format");
        CHECK(m.tensors[2].file_index == 1);
    }
    SECTION("a tensor in another shard than the index says") {
        parts[1] = shard({"b"});
        parts[0] = shard({"a", "c"});
        uint32_t failed = ws::kNoPart;
        ws::Result<ws::ModelInfo> merged = plan.merge(std::move(parts), &failed);
        CHECK(merged.status().code == Error::kBadSplit);
        CHECK(merged.status().offset == 18);  // "c"'s entry in the first shard
        CHECK(failed == 0);
    }
}

TEST_CASE("model plan: merging shards without an index") {
    ModelPlan plan;
    REQUIRE(plan.plan({named("s3.safetensors"), named("s1.safetensors"), named("s2.safetensors")}).ok());
    SECTION("a shard holding no tensor is left out; the first kept shard gives the metadata") {
        std::vector<ws::ModelInfo> parts = {shard({}, "empty"), shard({"x", "y"}, "pt"), shard({"z"}, "other")};
        ws::Result<ws::ModelInfo> merged = plan.merge(std::move(parts));
        REQUIRE(merged.ok());
        const ws::ModelInfo& m = merged.value();
        CHECK(plan.kept() == std::vector<uint32_t>{1, 2});
        CHECK(m.files == std::vector<std::string>{"s2.safetensors", "s3.safetensors"});
        CHECK(m.format == ws::Format::kSafetensors);
        CHECK(m.file_size == 1000);
        CHECK(m.data_offset == 64);
        REQUIRE(m.metadata.size() == 1);
        CHECK(m.metadata[0].value.str == "pt");
        REQUIRE(m.tensors.size() == 3);
        CHECK(m.tensors[0].file_index == 0);
        CHECK(m.tensors[2].name == "z");
        CHECK(m.tensors[2].file_index == 1);
    }
    SECTION("a tensor in two shards: duplicate_name in the second") {
        uint32_t failed = ws::kNoPart;
        ws::Result<ws::ModelInfo> merged = plan.merge({shard({"x"}), shard({"y"}), shard({"q", "y"})}, &failed);
        CHECK(merged.status().code == Error::kDuplicateName);
        CHECK(merged.status().offset == 18);
        CHECK(failed == 2);
    }
    SECTION("a shard that is not safetensors") {
        std::vector<ws::ModelInfo> parts = {shard({"x"}), gguf_part(0, 1, 1, {"y"}), shard({"z"})};
        uint32_t failed = ws::kNoPart;
        CHECK(plan.merge(std::move(parts), &failed).status().code == Error::kBadSplit);
        CHECK(failed == 1);
    }
    SECTION("no shard holds a tensor") {
        uint32_t failed = 0;
        ws::Result<ws::ModelInfo> merged = plan.merge({shard({}), shard({}), shard({})}, &failed);
        CHECK(merged.status().code == Error::kBadSplit);
        CHECK(std::string(merged.status().what) == "shards");
        CHECK(failed == ws::kNoPart);
    }
}

TEST_CASE("model plan: a single file is not merged") {
    ModelPlan plan;
    REQUIRE(plan.plan({named("a.gguf")}).ok());
    CHECK(plan.merge({gguf_part(0, 1, 1, {"a"})}).status().code == Error::kInternal);
}

TEST_CASE("folder_models lists a folder's models: a split once by its lowest part, an index for its shards") {
    const std::vector<std::string> names = {
        "README.md",
        "b.gguf",
        "m-00003-of-00003.gguf",
        "m-00002-of-00003.gguf",
        "s.safetensors.index.json",
        "s-00001-of-00002.safetensors",
        "s-00002-of-00002.safetensors",
        "t-00001-of-00002.safetensors",  // no index: a model of its own
        "A.SAFETENSORS",
        "m-00001-of-00002.gguf",  // another split (another count), listed first: by prefix, then count
        "config.json",
    };
    CHECK(ws::folder_models(names) == std::vector<std::string>{"b.gguf", "s.safetensors.index.json",
                                                               "t-00001-of-00002.safetensors", "A.SAFETENSORS",
                                                               "m-00001-of-00002.gguf", "m-00002-of-00003.gguf"});
}
