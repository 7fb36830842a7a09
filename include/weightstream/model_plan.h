// SPDX-License-Identifier: MIT
// Which files make up a model, decided once for the CLI and the package: one file, every part of a split
// GGUF (llama.cpp's `name-00001-of-00003.gguf`), or the shards of a safetensors model with their
// `*.safetensors.index.json` or without it. The plan works on file names only; the caller opens the files
// it lists (natively from the folder of the path, in JavaScript from the sources given or next to a URL),
// parses each header once and hands the parsed parts back to merge() (include/weightstream/split.h does the merging).
//
// File-name rules (the CLI's, from a path's extension; case-sensitive like a path):
//   ".gguf" / ".safetensors" hint the format (the bytes decide; the hint names the parser of an error);
//   "-NNNNN-of-NNNNN.gguf" is a part of a split, all of whose parts are opened;
//   ".index.json" is a safetensors index, all of whose shards are opened.
//
// Errors (Status plus message(): the text the CLI and the package show, naming the files concerned):
//   bad_source: several sources of which some have no name; several files that are not the parts of one
//     model; an index alone (without its shards); with model_files_only, no model file among the sources;
//   bad_split: a file given twice; several indexes; an index naming no tensor, naming shards not given, or
//     not naming some that were; split parts of different splits; missing parts of a split; from merge(), a
//     weight_map that lists a tensor in another shard than holds it, or not at all;
//   too_large: a split of more than PlanOptions::max_split_parts parts; an index over kMaxIndexBytes;
//   and the index parser's own errors (parse_safetensors_index) from set_index().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/safetensors.h"
#include "weightstream/split.h"
#include "weightstream/status.h"

namespace ws {

// The largest index accepted: the reference crate's cap on a header (an index is far smaller, a few
// hundred KB for the largest models).
constexpr uint64_t kMaxIndexBytes = kSafetensorsMaxHeader;
// What PlanPart::source holds for a file to be found next to the source given (a sibling).
constexpr uint32_t kSibling = UINT32_MAX;

// The format a file name announces by its extension, else kUnknown.
Format format_from_name(const std::string& name);

// The models among the file names of one folder, as `scan` lists them: every model file (".gguf",
// ".safetensors", ".safetensors.index.json", any case), where the parts of a split GGUF of one prefix and count
// are one model named by its lowest part present, and the shards "P-NNNNN-of-NNNNN.safetensors" of an index
// "P.safetensors.index.json" among the names are that index's model (named by the index). Returns the other
// files in `names` order, then one name per split by prefix and count. Allocates in proportion to the names.
std::vector<std::string> folder_models(const std::vector<std::string>& names);

// One source handed to the plan.
struct PlanSource {
    std::string name;       // its file name, without folder ("" with named = false)
    bool named = false;     // false: bytes or a stream without a name
    bool siblings = false;  // other files of its folder can be opened by name (a path, a URL)
};

struct PlanOptions {
    // More parts than this are refused (kTooLarge): a name such as `-00001-of-99999` must not make a reader
    // open, or a browser request, 99,999 files.
    uint32_t max_split_parts = kDefaultMaxSplitParts;
    bool split = true;  // false: one source is opened on its own, even when its name is a split's part
    // Several sources: leave out those whose names are not a model file's (".gguf", ".safetensors",
    // ".safetensors.index.json", any case), as a dropped model folder brings config.json and the like.
    bool model_files_only = false;
};

enum class PlanKind : uint8_t {
    kSingle,  // one file
    kSplit,   // the parts of a split GGUF, in part order
    kShards,  // safetensors shards: in the index's order, or (no index) in name order
};

// One file of the planned model.
struct PlanPart {
    std::string name;            // its file name
    uint32_t source = kSibling;  // the index of the source given that is this file, or kSibling
};

// The plan of one model. Safe on untrusted names and index bytes; allocates in proportion to the names
// given, the index's size and at most max_split_parts parts.
class ModelPlan {
public:
    // Plans the model of `sources` (one source, or several given together). On an error, message() says
    // what is wrong. After ok: kind(), parts(); when index_source() is not kSibling, the index (that source)
    // must be read and given to set_index() before parts() is complete.
    Status plan(const std::vector<PlanSource>& sources, const PlanOptions& options = PlanOptions());

    PlanKind kind() const { return kind_; }
    // The model's files in order. kSingle: the one source to open on its own.
    const std::vector<PlanPart>& parts() const { return parts_; }
    // The source that is the index still to be read, or kSibling.
    uint32_t index_source() const { return index_source_; }
    const std::string& index_name() const { return index_name_; }

    // kTooLarge when an index of `size` bytes exceeds kMaxIndexBytes (a reader can stop reading there).
    Status check_index_size(uint64_t size);
    // Parses the index (once: merge() uses it) and lists its shards as parts(). Checks the shards against
    // the sources given with it.
    Status set_index(const uint8_t* json, size_t size);

    // After plan(), check_index_size() or set_index() failed: the text for the user, else "" (then the Status
    // says it all: an error of the index's bytes).
    const std::string& message() const { return message_; }
    // After plan() failed: the source the error is about when the message does not name it (a split over the
    // cap, an index alone), else kSibling. The caller puts its name in front, as for an error in a file.
    uint32_t failed_source() const { return failed_source_; }

    // Merges the parsed parts, given in parts() order, into one model whose tensors know their file
    // (include/weightstream/split.h). Shards without index: a shard holding no tensor is left out (kept() lists the
    // parts the model's files are). On an error, *failed_part (when given) is the part the Status offset is in, or
    // kNoPart (the index, or the model as a whole); for an index whose weight_map disagrees with the shards,
    // message() says how (the tensor, the shard it is listed in and the one holding it). Call at most once.
    Result<ModelInfo> merge(std::vector<ModelInfo> parts, uint32_t* failed_part = nullptr);
    // After merge(): the parts (indices into parts()) that are the merged model's files, in order.
    const std::vector<uint32_t>& kept() const { return kept_; }

private:
    Status fail(Error code, const char* what, std::string message, uint32_t source = kSibling);
    Status plan_one(const PlanSource& source, uint32_t id, const PlanOptions& options);
    Status plan_list(const std::vector<PlanSource>& sources, const std::vector<uint32_t>& ids,
                     const PlanOptions& options);
    Status plan_split(const std::vector<PlanSource>& sources, const std::vector<uint32_t>& ids,
                      const PlanOptions& options);

    PlanKind kind_ = PlanKind::kSingle;
    std::vector<PlanPart> parts_;
    uint32_t index_source_ = kSibling;
    std::string index_name_;
    bool have_index_ = false;
    SafetensorsIndex index_;
    std::vector<PlanPart> given_with_index_;  // the other sources given with the index
    std::vector<uint32_t> kept_;
    std::string message_;
    uint32_t failed_source_ = kSibling;
};

}  // namespace ws
