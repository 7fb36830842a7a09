// SPDX-License-Identifier: MIT
// Moving a model description to JavaScript fast. The description is the CLI's `info --json` object, but a
// tokenizer's arrays (100k+ strings and scores) cost far more as JSON text built by nlohmann and re-parsed by
// JSON.parse than as bytes: so the JSON goes without the items of flat arrays, and each such array crosses
// on its own as its stored bytes (numbers) or as one UTF-8 buffer that one TextDecoder call turns into a
// string the JavaScript slices (strings). The JavaScript puts the items back where the JSON has them. The
// tensor table crosses as columns (names packed as below, numbers in Float64Arrays), and the few integers
// beyond 2^53 that a double cannot hold are listed apart, as decimal text, for the JavaScript to make BigInts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/model_info.h"

namespace ws {

// True for the metadata values whose items cross as bytes: arrays of scalars or strings (arrays of arrays
// stay in the JSON).
bool is_flat_array(const Value& v);

// model_json(info) as compact text, except that "tensors" is [] and every flat array has "value": []
// (their items and the tensor table cross as typed arrays, see wasm/bindings.cpp).
std::string info_json_without_tables(const ModelInfo& info);

// Strings as one buffer for a single TextDecoder("utf-16le").decode(): the valid UTF-8 strings converted to
// UTF-16 back to back, and where each ends in it. UTF-16 rather than the UTF-8 bytes because a JavaScript
// string is UTF-16: decoding UTF-16 is a copy, while decoding UTF-8 that is mostly not ASCII (byte-level BPE
// vocabularies) costs several times more. A string that is not valid UTF-8 adds nothing (its end repeats the
// previous one) and is listed in `invalid`, for the caller to send as nlohmann prints it: the CLI's JSON
// replaces invalid sequences by U+FFFD in nlohmann's own way.
struct PackedStrings {
    std::vector<uint16_t> utf16;
    std::vector<uint32_t> utf16_ends;
    std::vector<uint32_t> invalid;  // indices into the strings
};

// An integer JavaScript holds as a safe Number (|v| <= 2^53 - 1, Number.MAX_SAFE_INTEGER); beyond, a BigInt.
bool exact_in_double(uint64_t v);

// Needs the total UTF-16 length below 2^32 (header caps keep it far below); false if it is not.
bool pack_strings(const std::vector<std::string>& strings, PackedStrings* out);

}  // namespace ws
