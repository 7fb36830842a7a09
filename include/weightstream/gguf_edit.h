// SPDX-License-Identifier: MIT
// Metadata editing of a GGUF file: the new header built from the parsed ModelInfo and a list of changes,
// with the tensor data to be streamed through unchanged (only its offset may move). One place for the CLI
// (`weightstream edit`) and the wasm package (edit()), so both write the same bytes.
//
// The output is what gguf_layout() writes for the edited metadata and the input's tensor infos in the input's
// order: little-endian GGUF v3, the input's alignment (general.alignment, or 32), each tensor's bytes
// re-aligned to it. Values are typed as GGUF types them (ValueType); the text forms parse_edit_value()
// reads are those of the CLI's --set KEY=VALUE[:TYPE].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/gguf_writer.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// One value to set, as text: `text` is the CLI's VALUE (json == false) or a JSON value (json == true, what
// the JavaScript package passes: JSON.stringify of the caller's value). `type` is a type name or "".
// Type names: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str, and for arrays the item type (an array value
// with type "i32" is an array of int32). Without a type: the existing key's type (and item type) when the key
// exists, else inferred: true/false -> bool, an integer -> u32 when it fits, else i32, else i64 (u64 beyond),
// a number with a fraction or exponent -> f32, anything else -> str (CLI text) or by its JSON type; an array
// takes the type its items infer to (all strings -> str; all integers as above over every item; any fraction ->
// f32). CLI text: a value starting with '[' is a JSON array; with type str the text is the string verbatim.
struct EditValue {
    std::string text;
    bool json = false;
    std::string type;
};

struct MetadataEdits {
    std::vector<std::pair<std::string, EditValue>> set;  // in order; an existing key keeps its place
    std::vector<std::string> remove;                     // keys that must exist
};

// "KEY=VALUE[:TYPE]" -> key and value (json false). TYPE is recognised only when the text after the last ':'
// is a type name, so "url=http://x" keeps its colon. False when there is no '=' or the key is empty.
bool parse_set_argument(const std::string& arg, std::string* key, EditValue* value);

// Whether `name` is one of the type names above.
bool edit_type_known(const std::string& name);

// The typed value for `v`, given the existing entry for the key (nullptr for a new key).
// Errors (Status::what says which): kBadType "type" (an unknown type name, or a value not of that type:
// "abc" as u32, a nested array, an array of mixed strings and numbers, an empty array without a type),
// kBadType "value.range" (a number its type cannot hold, never stored as something else: 300 as u8, 1e39 or
// 1e-50 as f32, an integer of more than 64 bits or 1e400 whatever the type), kBadJson "value" (JSON that does
// not parse).
Result<Value> parse_edit_value(const EditValue& v, const Value* existing);

struct EditPlan {
    std::vector<MetadataEntry> metadata;  // the output's, in order
    GgufLayout layout;                    // header bytes, and where each input tensor goes (same order)
};

// Plans the edited file. Safe on untrusted input. Errors: an input that is not a single little-endian GGUF
// (kUnsupported "format"); a key to set or delete that is general.alignment (kBadKey "general.alignment": it
// moves every tensor, so it is not a metadata edit); a key to delete that does not exist (kBadKey "delete"),
// an empty key (kBadKey "key"); parse_edit_value()'s errors; gguf_layout()'s errors. A key both set and
// deleted is deleted last. On an error about one key, *failed_key (when given) names it.
Result<EditPlan> plan_gguf_edit(const ModelInfo& in, const MetadataEdits& edits, std::string* failed_key = nullptr);

// Whether the plan can be written over the input in place: the new header ends within the input's header
// padding, so the data section and every tensor offset stay where they are (ggml's reader puts the data at the
// header end rounded up to the alignment and wants the first tensor at offset 0, so no padding can be added).
// False for an input without tensors (its header is the whole file).
bool edit_fits_in_place(const ModelInfo& in, const EditPlan& plan);

}  // namespace ws
