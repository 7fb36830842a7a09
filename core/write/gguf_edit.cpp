// SPDX-License-Identifier: MIT
#include "weightstream/gguf_edit.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "weightstream/parse_options.h"

namespace ws {
namespace {

struct TypeName {
    const char* name;
    ValueType type;
};
constexpr TypeName kTypeNames[] = {
    {"u8", ValueType::kUint8},    {"i8", ValueType::kInt8},    {"u16", ValueType::kUint16},
    {"i16", ValueType::kInt16},   {"u32", ValueType::kUint32}, {"i32", ValueType::kInt32},
    {"u64", ValueType::kUint64},  {"i64", ValueType::kInt64},  {"f32", ValueType::kFloat32},
    {"f64", ValueType::kFloat64}, {"bool", ValueType::kBool},  {"str", ValueType::kString},
};

bool type_of_name(const std::string& name, ValueType* out) {
    for (const TypeName& t : kTypeNames) {
        if (name == t.name) {
            *out = t.type;
            return true;
        }
    }
    return false;
}

bool is_signed(ValueType t) {
    return t == ValueType::kInt8 || t == ValueType::kInt16 || t == ValueType::kInt32 || t == ValueType::kInt64;
}
bool is_float(ValueType t) {
    return t == ValueType::kFloat32 || t == ValueType::kFloat64;
}
bool is_integer(ValueType t) {
    return is_signed(t) || t == ValueType::kUint8 || t == ValueType::kUint16 || t == ValueType::kUint32 ||
           t == ValueType::kUint64;
}

// An integer parsed from JSON or text: its sign and magnitude (so u64 and i64 extremes both fit).
struct Integer {
    bool negative = false;
    uint64_t magnitude = 0;
};

enum class IntegerText { kNot, kInteger, kTooBig };

// An optional sign and decimal digits, the whole text; kTooBig when the magnitude needs more than 64 bits.
IntegerText parse_integer_text(const std::string& s, Integer* out) {
    size_t i = 0;
    Integer v;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) v.negative = s[i++] == '-';
    if (i == s.size()) return IntegerText::kNot;
    bool too_big = false;
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return IntegerText::kNot;
        const uint64_t d = static_cast<uint64_t>(s[i] - '0');
        if (v.magnitude > (std::numeric_limits<uint64_t>::max() - d) / 10) too_big = true;
        v.magnitude = v.magnitude * 10 + d;
    }
    if (too_big) return IntegerText::kTooBig;
    if (v.magnitude == 0) v.negative = false;
    *out = v;
    return IntegerText::kInteger;
}

// A decimal number with a fraction or exponent (or inf/nan as strtod reads them); the whole text.
// *out_of_range: beyond a double's range, which strtod makes Inf (1e400) or 0 (1e-400).
bool parse_float_text(const std::string& s, double* out, bool* out_of_range) {
    if (s.empty() || s.size() > 400) return false;
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
    *out = d;
    *out_of_range = errno == ERANGE && (d == 0 || std::isinf(d));
    return true;
}

// The bits of integer v as type t; false when it does not fit.
bool integer_bits(const Integer& v, ValueType t, uint64_t* bits) {
    uint64_t max_pos = 0;
    uint64_t max_neg = 0;  // magnitude of the most negative value
    switch (t) {
        case ValueType::kUint8:
            max_pos = 0xff;
            break;
        case ValueType::kUint16:
            max_pos = 0xffff;
            break;
        case ValueType::kUint32:
            max_pos = 0xffffffffull;
            break;
        case ValueType::kUint64:
            max_pos = ~0ull;
            break;
        case ValueType::kInt8:
            max_pos = 0x7f, max_neg = 0x80;
            break;
        case ValueType::kInt16:
            max_pos = 0x7fff, max_neg = 0x8000;
            break;
        case ValueType::kInt32:
            max_pos = 0x7fffffffull, max_neg = 0x80000000ull;
            break;
        case ValueType::kInt64:
            max_pos = 0x7fffffffffffffffull, max_neg = 0x8000000000000000ull;
            break;
        default:
            return false;
    }
    if (v.negative ? v.magnitude > max_neg : v.magnitude > max_pos) return false;
    *bits = v.negative ? ~v.magnitude + 1 : v.magnitude;  // two's complement, sign-extended to 64 bits
    return true;
}

// Whether JSON text holds an integer literal of more than 64 bits: nlohmann reads one as a float, which would
// store 2^64 as 1.8e19 (strings are skipped; any text that is not JSON is left to the parser to refuse).
bool json_has_too_big_integer(const std::string& text) {
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9')) continue;
        size_t end = i;
        bool integer = true;
        while (end < text.size() && std::strchr("+-0123456789.eE", text[end]) != nullptr && text[end] != '\0') {
            integer = integer && std::strchr(".eE", text[end]) == nullptr;
            ++end;
        }
        Integer ignored;
        if (integer && parse_integer_text(text.substr(i, end - i), &ignored) == IntegerText::kTooBig) return true;
        i = end - 1;
    }
    return false;
}

// The bits of finite d as type t; false when an f32 cannot hold it: it overflows to Inf, or a value that is
// not 0 becomes 0 (what was asked for would be stored silently as something else).
bool float_bits(double d, ValueType t, uint64_t* bits) {
    if (t == ValueType::kFloat32) {
        const float f = static_cast<float>(d);
        if (std::isinf(f) || (f == 0 && d != 0)) return false;
        uint32_t b;
        std::memcpy(&b, &f, 4);
        *bits = b;
        return true;
    }
    std::memcpy(bits, &d, 8);
    return true;
}

// One scalar, parsed. kind: what the source was, for inference; kOutOfRange: a number no type holds (an
// integer of more than 64 bits, a float beyond a double's range), refused rather than taken as another.
enum class Kind { kBool, kInteger, kFloat, kString, kOutOfRange };
struct Scalar {
    Kind kind = Kind::kString;
    bool b = false;
    Integer i;
    double d = 0;
    std::string s;
};

bool scalar_from_json(const nlohmann::json& j, Scalar* out) {
    if (j.is_boolean()) {
        out->kind = Kind::kBool;
        out->b = j.get<bool>();
    } else if (j.is_number_unsigned()) {
        out->kind = Kind::kInteger;
        out->i.magnitude = j.get<uint64_t>();
    } else if (j.is_number_integer()) {
        out->kind = Kind::kInteger;
        const int64_t v = j.get<int64_t>();
        out->i.negative = v < 0;
        out->i.magnitude = v < 0 ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
    } else if (j.is_number_float()) {
        out->kind = Kind::kFloat;
        out->d = j.get<double>();
    } else if (j.is_string()) {
        out->kind = Kind::kString;
        out->s = j.get<std::string>();
    } else {
        return false;
    }
    return true;
}

Scalar scalar_from_text(const std::string& text) {
    Scalar s;
    s.s = text;
    if (text == "true" || text == "false") {
        s.kind = Kind::kBool;
        s.b = text == "true";
    } else if (const IntegerText i = parse_integer_text(text, &s.i); i != IntegerText::kNot) {
        s.kind = i == IntegerText::kInteger ? Kind::kInteger : Kind::kOutOfRange;
    } else if (bool out_of_range = false; parse_float_text(text, &s.d, &out_of_range)) {
        // "inf" and "nan" stay text; 1e400 is as out of range as 1e39 is for f32.
        if (out_of_range) {
            s.kind = Kind::kOutOfRange;
        } else if (std::isfinite(s.d)) {
            s.kind = Kind::kFloat;
        }
    }
    return s;
}

ValueType infer_integer(const Integer& v) {
    uint64_t bits;
    if (integer_bits(v, ValueType::kUint32, &bits)) return ValueType::kUint32;
    if (integer_bits(v, ValueType::kInt32, &bits)) return ValueType::kInt32;
    if (integer_bits(v, ValueType::kInt64, &bits)) return ValueType::kInt64;
    return ValueType::kUint64;
}

Status bad_type() {
    return make_error(Error::kBadType, 0, "type");
}

// A number that type t cannot hold (300 as u8, 1e39 as f32, 2^64 as anything).
Status out_of_range() {
    return make_error(Error::kBadType, 0, "value.range");
}

// The bits of scalar s as type t (not string); bad_type() when s is not of that type, out_of_range() when it
// is a number t cannot hold.
Status scalar_bits(const Scalar& s, ValueType t, uint64_t* bits) {
    // A JSON string holding a number counts as the number (large u64/i64 values from JavaScript).
    if (s.kind == Kind::kString && t != ValueType::kString) {
        const Scalar parsed = scalar_from_text(s.s);
        if (parsed.kind == Kind::kString) return bad_type();
        return scalar_bits(parsed, t, bits);
    }
    if (t == ValueType::kBool) {
        if (s.kind != Kind::kBool) return bad_type();
        *bits = s.b ? 1 : 0;
        return ok_status();
    }
    if (s.kind == Kind::kOutOfRange && (is_integer(t) || is_float(t))) return out_of_range();
    if (is_integer(t)) {
        if (s.kind != Kind::kInteger) return bad_type();
        return integer_bits(s.i, t, bits) ? ok_status() : out_of_range();
    }
    if (is_float(t)) {
        double d = s.d;
        if (s.kind == Kind::kInteger) {
            d = static_cast<double>(s.i.magnitude);
            if (s.i.negative) d = -d;
        } else if (s.kind != Kind::kFloat) {
            return bad_type();
        }
        return float_bits(d, t, bits) ? ok_status() : out_of_range();
    }
    return bad_type();
}

Result<Value> scalar_value(const Scalar& s, ValueType t) {
    Value v;
    v.type = t;
    if (t == ValueType::kString) {
        if (s.kind != Kind::kString) return bad_type();
        if (s.s.size() > ParseOptions().max_string_bytes) return make_error(Error::kTooLarge, 0, "value.length");
        v.str = s.s;
        return v;
    }
    WS_TRY(scalar_bits(s, t, &v.bits));
    return v;
}

// The type an array's items are stored as when none is given, from the items one at a time (no list of them is
// kept): strings, bools, or the narrowest number type that holds every number (f32 when any is a float).
class ItemTypeInference {
public:
    void add(const Scalar& s) {
        ++count_;
        any_string_ = any_string_ || s.kind == Kind::kString;
        all_string_ = all_string_ && s.kind == Kind::kString;
        any_float_ = any_float_ || s.kind == Kind::kFloat;
        any_bool_ = any_bool_ || s.kind == Kind::kBool;
        all_bool_ = all_bool_ && s.kind == Kind::kBool;
        if (s.kind != Kind::kInteger) return;
        const ValueType t = infer_integer(s.i);
        const int r = t == ValueType::kUint32 ? 0 : t == ValueType::kInt32 ? 1 : t == ValueType::kInt64 ? 2 : 3;
        if (r > rank_) rank_ = r, widest_ = t;
        uint64_t b;
        not_i32_ = not_i32_ || !integer_bits(s.i, ValueType::kInt32, &b);
        negative_ = negative_ || s.i.negative;
    }
    ValueType result(bool* ok) const {
        *ok = count_ > 0;
        if (all_string_) return ValueType::kString;
        if (all_bool_) return ValueType::kBool;
        if (any_string_ || any_bool_) *ok = false;
        if (any_float_) return ValueType::kFloat32;
        if (rank_ == 1 && not_i32_) return ValueType::kInt64;  // i32 and u32 values together need a type for both
        if (rank_ == 3 && negative_) *ok = false;              // u64 values and negative ones: no type holds both
        return widest_;
    }

private:
    uint64_t count_ = 0;
    bool any_string_ = false, all_string_ = true, any_float_ = false, all_bool_ = true, any_bool_ = false;
    bool not_i32_ = false, negative_ = false;
    ValueType widest_ = ValueType::kUint32;
    int rank_ = 0;  // u32 < i32 < i64 < u64
};

// A SAX handler for a JSON array of scalars: item(Scalar) per item, in order, without a document (nlohmann's
// costs 16 bytes and more per item: 8 times the text of an array of small numbers, 3.3 GB for 40M items with the
// list of parsed items beside it). Anything nested (an array, an object) or null is not_scalar; a parse error is
// bad_json.
template <typename F>
class ArrayItems {
public:
    using Json = nlohmann::json;
    explicit ArrayItems(F* item) : item_(item) {}
    bool not_scalar = false, bad_json = false;

    bool null() { return nested(); }
    bool boolean(bool b) {
        Scalar s;
        s.kind = Kind::kBool;
        s.b = b;
        return emit(s);
    }
    bool number_integer(Json::number_integer_t v) {
        Scalar s;
        s.kind = Kind::kInteger;
        s.i.negative = v < 0;
        s.i.magnitude = v < 0 ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
        return emit(s);
    }
    bool number_unsigned(Json::number_unsigned_t v) {
        Scalar s;
        s.kind = Kind::kInteger;
        s.i.magnitude = v;
        return emit(s);
    }
    bool number_float(Json::number_float_t v, const Json::string_t&) {
        Scalar s;
        s.kind = Kind::kFloat;
        s.d = v;
        return emit(s);
    }
    bool string(Json::string_t& v) {
        Scalar s;
        s.kind = Kind::kString;
        s.s = std::move(v);
        return emit(s);
    }
    bool binary(Json::binary_t&) { return nested(); }
    bool start_object(std::size_t) { return nested(); }
    bool key(Json::string_t&) { return nested(); }
    bool end_object() { return nested(); }
    bool start_array(std::size_t) { return depth_++ == 0 ? true : nested(); }
    bool end_array() {
        --depth_;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
        bad_json = true;
        return false;
    }

private:
    bool nested() {
        not_scalar = true;
        return false;
    }
    bool emit(const Scalar& s) { return depth_ == 1 ? (*item_)(s) : nested(); }
    F* item_;
    int depth_ = 0;
};

// Calls item(const Scalar&) for each item of the JSON array `text` (item returns false to stop). kBadJson when the
// text is not JSON, bad_type() when it is not an array of scalars.
template <typename F>
Status for_each_item(const std::string& text, F item) {
    ArrayItems<F> handler(&item);
    const bool done = nlohmann::json::sax_parse(text, &handler);
    if (handler.bad_json) return make_error(Error::kBadJson, 0, "value");
    if (handler.not_scalar) return bad_type();
    return done ? ok_status() : make_error(Error::kInternal, 0, "value");  // stopped by item(): it says why
}

// An array value from its JSON text in two passes over the text (the item type, then the items stored as that
// type): memory is the value itself.
Result<Value> array_value(const std::string& text, const std::string& type_name, const Value* existing) {
    ItemTypeInference inference;
    uint64_t count = 0;
    WS_TRY(for_each_item(text, [&](const Scalar& s) {
        ++count;
        inference.add(s);
        return true;
    }));
    ValueType item_type;
    if (!type_name.empty()) {
        if (!type_of_name(type_name, &item_type)) return bad_type();
    } else if (existing && existing->type == ValueType::kArray && existing->item_type != ValueType::kArray) {
        item_type = existing->item_type;
    } else {
        bool ok = false;
        item_type = inference.result(&ok);
        if (!ok) return bad_type();
    }
    // What the GGUF reader takes (ParseOptions' defaults): a longer array would be written and then refused.
    if (count > ParseOptions().max_array_length) return make_error(Error::kTooLarge, 0, "value.length");
    Value v;
    v.type = ValueType::kArray;
    v.item_type = item_type;
    v.length = count;
    const uint32_t size = value_type_size(item_type);
    if (item_type == ValueType::kString) {
        v.strings.reserve(static_cast<size_t>(count));
    } else {
        v.raw.reserve(static_cast<size_t>(count * size));
    }
    Status failed = ok_status();
    const Status walked = for_each_item(text, [&](const Scalar& s) {
        if (item_type == ValueType::kString) {
            if (s.kind != Kind::kString) failed = bad_type();
            if (s.s.size() > ParseOptions().max_string_bytes) failed = make_error(Error::kTooLarge, 0, "value.length");
            if (!failed.ok()) return false;
            v.strings.push_back(s.s);
            return true;
        }
        uint64_t bits = 0;
        failed = scalar_bits(s, item_type, &bits);
        if (!failed.ok()) return false;
        for (uint32_t b = 0; b < size; ++b) v.raw.push_back(static_cast<uint8_t>(bits >> (8 * b)));
        return true;
    });
    if (!failed.ok()) return failed;
    WS_TRY(walked);
    return v;
}

}  // namespace

bool edit_type_known(const std::string& name) {
    ValueType t;
    return type_of_name(name, &t);
}

bool parse_set_argument(const std::string& arg, std::string* key, EditValue* value) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    *key = arg.substr(0, eq);
    std::string text = arg.substr(eq + 1);
    EditValue v;
    const size_t colon = text.rfind(':');
    if (colon != std::string::npos && edit_type_known(text.substr(colon + 1))) {
        v.type = text.substr(colon + 1);
        text.resize(colon);
    }
    v.text = std::move(text);
    *value = std::move(v);
    return true;
}

Result<Value> parse_edit_value(const EditValue& v, const Value* existing) {
    ValueType type = ValueType::kString;
    const bool typed = !v.type.empty();
    if (typed && !type_of_name(v.type, &type)) return bad_type();
    if (!v.json && !(typed && type == ValueType::kString) && !v.text.empty() && v.text[0] == '[') {
        if (!nlohmann::json::accept(v.text)) return make_error(Error::kBadJson, 0, "value");
        if (json_has_too_big_integer(v.text)) return out_of_range();
        return array_value(v.text, v.type, existing);
    }
    Scalar s;
    if (v.json) {
        const size_t first = v.text.find_first_not_of(" \t\r\n");
        if (first != std::string::npos && v.text[first] == '[') {  // an array: read without a JSON document
            if (!nlohmann::json::accept(v.text)) return make_error(Error::kBadJson, 0, "value");
            if (json_has_too_big_integer(v.text)) return out_of_range();
            return array_value(v.text, v.type, existing);
        }
        const nlohmann::json j = nlohmann::json::parse(v.text, nullptr, false);
        if (j.is_discarded()) return make_error(Error::kBadJson, 0, "value");
        if (json_has_too_big_integer(v.text)) return out_of_range();
        if (!scalar_from_json(j, &s)) return bad_type();
    } else {
        s = scalar_from_text(v.text);
    }
    if (!typed) {
        if (existing && existing->type != ValueType::kArray) {
            type = existing->type;
        } else if (existing) {
            return bad_type();  // an array key needs an array value
        } else {
            switch (s.kind) {
                case Kind::kBool:
                    type = ValueType::kBool;
                    break;
                case Kind::kInteger:
                    type = infer_integer(s.i);
                    break;
                case Kind::kOutOfRange:
                    return out_of_range();
                case Kind::kFloat:
                    type = ValueType::kFloat32;
                    break;
                case Kind::kString:
                    type = ValueType::kString;
                    break;
            }
        }
    }
    // Text for a string key is the string itself, whatever it looks like ("true", "12").
    if (type == ValueType::kString && !v.json) s.kind = Kind::kString, s.s = v.text;
    return scalar_value(s, type);
}

Result<EditPlan> plan_gguf_edit(const ModelInfo& in, const MetadataEdits& edits, std::string* failed_key) {
    auto fail_key = [&](const std::string& key, Status s) {
        if (failed_key) *failed_key = key;
        return s;
    };
    if (in.format != Format::kGguf || in.big_endian || in.files.size() > 1) {
        return make_error(Error::kUnsupported, 0, "format");
    }
    EditPlan plan;
    for (const MetadataEntry& e : in.metadata) {
        MetadataEntry copy = e;
        copy.offset = 0;
        plan.metadata.push_back(std::move(copy));
    }
    auto find = [&](const std::string& key) -> MetadataEntry* {
        for (MetadataEntry& e : plan.metadata) {
            if (e.key == key) return &e;
        }
        return nullptr;
    };
    for (const auto& [key, value] : edits.set) {
        if (key.empty()) return fail_key(key, make_error(Error::kBadKey, 0, "key"));
        if (key == "general.alignment") return fail_key(key, make_error(Error::kBadKey, 0, "general.alignment"));
        MetadataEntry* e = find(key);
        Result<Value> parsed = parse_edit_value(value, e ? &e->value : nullptr);
        if (!parsed.ok()) return fail_key(key, parsed.status());
        if (e) {
            e->value = std::move(parsed).value();
        } else {
            MetadataEntry added;
            added.key = key;
            added.value = std::move(parsed).value();
            plan.metadata.push_back(std::move(added));
        }
    }
    for (const std::string& key : edits.remove) {
        if (key == "general.alignment") return fail_key(key, make_error(Error::kBadKey, 0, "general.alignment"));
        size_t at = 0;
        while (at < plan.metadata.size() && plan.metadata[at].key != key) ++at;
        if (at == plan.metadata.size()) return fail_key(key, make_error(Error::kBadKey, 0, "delete"));
        plan.metadata.erase(plan.metadata.begin() + static_cast<std::ptrdiff_t>(at));
    }
    std::vector<TensorInfo> tensors = in.tensors;
    for (TensorInfo& t : tensors) t.nbytes = 0;  // sized by gguf_layout from type and shape
    WS_ASSIGN_OR_RETURN(plan.layout, gguf_layout(plan.metadata, tensors));
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (plan.layout.tensor_nbytes[i] != in.tensors[i].nbytes) {
            return make_error(Error::kInternal, in.tensors[i].info_offset, "tensor.nbytes");
        }
    }
    return plan;
}

bool edit_fits_in_place(const ModelInfo& in, const EditPlan& plan) {
    if (in.tensors.empty() || plan.layout.data_offset != in.data_offset || plan.layout.file_size > in.file_size) {
        return false;
    }
    for (size_t i = 0; i < in.tensors.size(); ++i) {
        if (plan.layout.tensor_offsets[i] != in.tensors[i].offset) return false;
    }
    return true;
}

}  // namespace ws
