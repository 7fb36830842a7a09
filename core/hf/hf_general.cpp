// SPDX-License-Identifier: MIT
// hf_general_metadata(): gguf-py's Metadata heuristics (metadata.py get_model_id_components, id_to_title) and
// size label (utility.py), over ASCII: bytes past 0x7F count as letters that have no case.
#include "weightstream/hf_general.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

namespace ws {
namespace {

using Opt = std::optional<std::string>;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_upper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_alpha(char c) {
    return is_upper(c) || is_lower(c) || static_cast<unsigned char>(c) >= 0x80;
}
bool is_word(char c) {
    return is_alpha(c) || is_digit(c) || c == '_';
}
char lower(char c) {
    return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
char upper(char c) {
    return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c;
}

std::string lowered(std::string s) {
    for (char& c : s) c = lower(c);
    return s;
}

// Digits from i; returns the end (i when none).
size_t digits(const std::string& s, size_t i) {
    while (i < s.size() && is_digit(s[i])) ++i;
    return i;
}

// (v|iter)?\d+([.]\d+)*, whole, case-insensitive.
bool is_version(const std::string& part) {
    const std::string s = lowered(part);
    size_t i = s.compare(0, 4, "iter") == 0 ? 4 : (s.compare(0, 1, "v") == 0 ? 1 : 0);
    size_t j = digits(s, i);
    if (j == i) return false;
    while (j < s.size()) {
        if (s[j] != '.') return false;
        const size_t k = digits(s, j + 1);
        if (k == j + 1) return false;
        j = k;
    }
    return true;
}

// i?q\d(_\w)*|b?fp?(16|32), whole, case-insensitive.
bool is_quant_type(const std::string& part) {
    const std::string s = lowered(part);
    size_t i = s.compare(0, 1, "i") == 0 ? 1 : 0;
    if (i < s.size() && s[i] == 'q' && i + 1 < s.size() && is_digit(s[i + 1])) {
        size_t j = i + 2;
        while (j + 1 < s.size() && s[j] == '_' && is_word(s[j + 1])) j += 2;
        if (j == s.size()) return true;
    }
    i = s.compare(0, 1, "b") == 0 ? 1 : 0;
    if (i >= s.size() || s[i] != 'f') return false;
    ++i;
    if (i < s.size() && s[i] == 'p') ++i;
    const std::string rest = s.substr(i);
    return rest == "16" || rest == "32";
}

// \d+([._]\d+)?[KMBT][\d]? from i to the end.
bool size_rest(const std::string& s, size_t i) {
    size_t j = digits(s, i);
    if (j == i) return false;
    if (j < s.size() && (s[j] == '.' || s[j] == '_')) {
        const size_t k = digits(s, j + 1);
        if (k > j + 1) j = k;
    }
    if (j >= s.size() || (s[j] != 'k' && s[j] != 'm' && s[j] != 'b' && s[j] != 't')) return false;
    ++j;
    if (j < s.size() && is_digit(s[j])) ++j;
    return j == s.size();
}

// (([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl), whole, case-insensitive.
bool is_size(const std::string& part) {
    const std::string s = lowered(part);
    if (s == "small" || s == "mini" || s == "medium" || s == "large" || s == "xl" || s == "xxl") return true;
    if (size_rest(s, 0)) return true;
    if (!s.empty() && s[0] == 'a' && size_rest(s, 1)) return true;
    const size_t d = digits(s, 0);
    return d > 0 && d < s.size() && s[d] == 'x' && size_rest(s, d + 1);
}

bool is_finetune_word(const std::string& part) {
    const std::string s = lowered(part);
    return s == "chat" || s == "instruct" || s == "vision" || s == "lora";
}

// Python's float() of what a size label holds before its suffix: digits with at most one '.'.
bool plain_number(const std::string& s, double* out) {
    const size_t i = digits(s, 0);
    size_t j = i;
    if (j < s.size() && s[j] == '.') j = digits(s, j + 1);
    if (j != s.size() || s.empty() || s == ".") return false;
    *out = std::strtod(s.c_str(), nullptr);
    return true;
}

struct Components {
    Opt full, org, basename, finetune, version, size_label;
};

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "-" : "") + v[i];
    return out;
}

// Metadata.get_model_id_components().
Components model_id_components(const std::string& model_id, int64_t total_params) {
    Components c;
    if (model_id.find(' ') != std::string::npos) {
        c.full = model_id;
        return c;
    }
    std::string name = model_id;
    const size_t slash = model_id.find('/');
    if (slash != std::string::npos) {
        c.org = model_id.substr(0, slash);
        name = model_id.substr(slash + 1);
        if (!c.org->empty() && (*c.org)[0] == '.') c.org.reset();
    }
    c.full = name;
    std::vector<std::string> parts;
    for (size_t i = 0; i <= name.size();) {
        const size_t dash = std::min(name.find('-', i), name.size());
        if (dash > i) parts.push_back(name.substr(i, dash - i));
        i = dash + 1;
    }
    std::vector<std::set<std::string>> types(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
        std::string& part = parts[i];
        if (is_version(part)) {
            types[i].insert("version");
        } else if (is_quant_type(part)) {
            types[i].insert("type");
            for (char& ch : part) ch = upper(ch);
        } else if (i > 0 && is_size(part)) {
            for (char& ch : part) ch = ch == '_' ? '.' : ch;
            if (is_digit(part.back()) && part.size() >= 2) {  // bloom-7b1 -> 7.1B
                part = part.substr(0, part.size() - 2) + "." + part.back() + part[part.size() - 2];
            }
            if (part.size() > 1 && is_digit(part[part.size() - 2])) {
                const char l = part.back();
                if (l == 'k' || l == 'm' || l == 'b' || l == 't') part.back() = upper(l);
            }
            double n = 0;
            if (total_params != 0 && plain_number(part.substr(0, part.size() - 1), &n)) {
                const size_t scale = std::string(" KMBT").find(part.back());
                const double label = n * (scale == std::string::npos ? 0.001 : std::pow(1000.0, double(scale)));
                const int64_t total = total_params;
                // A label far from the model's size is a context length ("8k"): a finetune, lowercased.
                if ((total < 0 && label < double(-total / 8)) ||
                    (total > 0 && std::fabs(label - double(total)) > double(7 * total / 8))) {
                    types[i].insert("finetune");
                    part.back() = lower(part.back());
                }
            }
            if (types[i].empty()) types[i].insert("size_label");
        } else if (i > 0 && is_finetune_word(part)) {
            types[i].insert(total_params < 0 && lowered(part) == "lora" ? "type" : "finetune");
        }
    }
    bool numeric_size = false;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (!types[i].count("size_label")) continue;
        for (char ch : parts[i]) numeric_size = numeric_size || is_digit(ch);
    }
    if (numeric_size) {
        for (size_t i = 0; i < parts.size(); ++i) {
            if (!types[i].count("size_label")) continue;
            bool all_alpha = !parts[i].empty();
            for (char ch : parts[i]) all_alpha = all_alpha && is_alpha(ch);
            if (all_alpha) types[i].erase("size_label");
        }
    }
    bool at_start = true;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (at_start && ((types[i].empty() && is_alpha(parts[i][0])) || types[i].count("version"))) {
            types[i].insert("basename");
        } else {
            at_start = false;
            if (types[i].empty()) types[i].insert("finetune");
        }
    }
    for (size_t i = parts.size(); i-- > 0;) {
        if (types[i].count("basename") && types[i].size() > 1) {
            types[i].erase("basename");
        } else {
            break;
        }
    }
    std::vector<std::string> basename, size, finetune, version;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (types[i].count("basename")) basename.push_back(parts[i]);
        if (types[i].count("size_label") && std::find(size.begin(), size.end(), parts[i]) == size.end()) {
            size.push_back(parts[i]);
        }
        if (types[i].count("finetune")) finetune.push_back(parts[i]);
        if (types[i].count("version") && !types[i].count("basename")) version.push_back(parts[i]);
    }
    if (!basename.empty()) c.basename = join(basename);
    if (!size.empty()) c.size_label = join(size);
    if (!finetune.empty()) c.finetune = join(finetune);
    if (!version.empty()) c.version = join(version);
    if (!c.size_label && !c.finetune && !c.version) c.basename.reset();
    return c;
}

// Metadata.id_to_title(): words (split at '-' and spaces) in title case unless they have capitals or are a
// version or start with a digit.
std::string id_to_title(const std::string& s) {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == '-' || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
        size_t j = i;
        while (j < s.size() && s[j] != '-' && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r') ++j;
        if (j == i) break;
        std::string w = s.substr(i, j - i);
        bool cased = false, has_upper = false;
        for (char c : w) {
            cased = cased || is_lower(c) || is_upper(c);
            has_upper = has_upper || is_upper(c);
        }
        const bool is_lower_word = cased && !has_upper;
        const bool versionish = is_digit(w[0]) || (w[0] == 'v' && is_version(w));
        if (is_lower_word && !versionish) {
            bool prev_cased = false;
            for (char& c : w) {
                if (is_lower(c) || is_upper(c)) {
                    c = prev_cased ? lower(c) : upper(c);
                    prev_cased = true;
                } else {
                    prev_cased = static_cast<unsigned char>(c) >= 0x80;
                }
            }
        }
        out += (out.empty() ? "" : " ") + w;
        i = j;
    }
    return out;
}

void append_string(std::vector<MetadataEntry>* kv, const char* key, const std::string& s) {
    MetadataEntry e;
    e.key = key;
    e.value.type = ValueType::kString;
    e.value.str = s;
    kv->push_back(std::move(e));
}

}  // namespace

std::string hf_size_label(uint64_t total, uint64_t shared, uint64_t expert, uint64_t expert_count) {
    auto rounded = [](uint64_t count) {
        const double n = static_cast<double>(count);
        double scaled;
        const char* suffix;
        if (n > 1e12) {
            scaled = n * 1e-12, suffix = "T";
        } else if (n > 1e9) {
            scaled = n * 1e-9, suffix = "B";
        } else if (n > 1e6) {
            scaled = n * 1e-6, suffix = "M";
        } else {
            scaled = n * 1e-3, suffix = "K";
        }
        // Python's round() (half to even) and len(str(...).lstrip('0')): the digits of the rounded integer part.
        const double r = std::nearbyint(scaled);
        char digits_buf[32];
        std::snprintf(digits_buf, sizeof digits_buf, "%.0f", r);
        std::string int_digits = digits_buf;
        int_digits.erase(0, int_digits.find_first_not_of('0') == std::string::npos ? int_digits.size()
                                                                                   : int_digits.find_first_not_of('0'));
        const int fix = std::max(2 - static_cast<int>(int_digits.size()), 0);
        char out[64];
        std::snprintf(out, sizeof out, "%.*f%s", fix, scaled, suffix);
        return std::string(out);
    };
    if (expert_count > 0) return std::to_string(expert_count) + "x" + rounded(shared + expert);
    return rounded(total);
}

std::vector<MetadataEntry> hf_general_metadata(const std::string& folder_name, const HfConfig& config,
                                               const std::vector<TensorInfo>& tensors) {
    uint64_t total = 0, shared = 0, expert = 0, expert_sum = 0, expert_tensors = 0;
    for (const TensorInfo& t : tensors) {
        const uint64_t size = t.n_elements;
        total += size;
        if (t.name.find("_exps.") != std::string::npos && t.n_dims >= 3 && t.ne[2] > 0) {
            expert += size / static_cast<uint64_t>(t.ne[2]);
            expert_sum += static_cast<uint64_t>(t.ne[2]);
            ++expert_tensors;
        } else {
            shared += size;
        }
    }
    const uint64_t expert_count = expert_tensors > 0 ? expert_sum / expert_tensors : 0;
    const int64_t total_params = static_cast<int64_t>(total);

    Components m;  // the fields found so far: the first source that gives one wins
    auto take = [&](const Components& c) {
        if (!m.full && c.full) m.full = id_to_title(*c.full);
        if (!m.org && c.org) m.org = id_to_title(*c.org);
        if (!m.basename && c.basename) m.basename = c.basename;
        if (!m.finetune && c.finetune) m.finetune = c.finetune;
        if (!m.version && c.version) m.version = c.version;
        if (!m.size_label && c.size_label) m.size_label = c.size_label;
    };
    const auto name_or_path = config.hparams.find("_name_or_path");
    if (name_or_path != config.hparams.end() && name_or_path->is_string()) {
        const std::string id = name_or_path->get<std::string>();
        if (std::count(id.begin(), id.end(), '/') <= 1) take(model_id_components(id, total_params));
    }
    take(model_id_components(folder_name, total_params));
    if (!m.full) m.full = folder_name;
    if (!m.size_label && total > 0) m.size_label = hf_size_label(total, shared, expert, expert_count);

    std::vector<MetadataEntry> out;
    append_string(&out, "general.type", "model");
    append_string(&out, "general.name", *m.full);
    if (m.version) append_string(&out, "general.version", *m.version);
    if (m.org) append_string(&out, "general.organization", *m.org);
    if (m.finetune) append_string(&out, "general.finetune", *m.finetune);
    if (m.basename) append_string(&out, "general.basename", *m.basename);
    if (m.size_label) append_string(&out, "general.size_label", *m.size_label);
    return out;
}

}  // namespace ws
