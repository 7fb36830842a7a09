// SPDX-License-Identifier: MIT
// `tokenize MODEL (TEXT | --file F | --stdin) [--ids] [--json] [--no-bos] [--no-add-special] [--no-parse-special]`
// and `detokenize MODEL ID... [--skip-special]`: the core's tokenizers (include/weightstream/tokenizer.h) on text,
// with llama-tokenize's habits (the BOS/EOS the model wants added, special tokens in the text parsed; --ids prints
// `[1, 2, 3]`). This file finds the tokenizer's files, reads the text and prints.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli/cli.h"
#include "io/mapped_file.h"
#include "weightstream/model_json.h"
#include "weightstream/tokenizer.h"

namespace ws::cli {
namespace {

// Tokenizer files and texts larger than this are refused: the largest real tokenizer.json is ~33 MB.
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 30;

bool is_directory(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A file's bytes, whole (a regular file, a pipe or a FIFO: read front to back; "" is standard input, whatever it
// is: a socket cannot be opened as /dev/stdin). False with *error.
bool read_input(const std::string& path, std::string* out, std::string* error) {
    MappedFile file;
    if (path.empty()) {
        const int fd = ::dup(0);
        if (fd < 0) {
            *error = std::strerror(errno);
            return false;
        }
        file.open_stream(fd);
    } else if (!file.open(path, error)) {
        return false;
    }
    if (!file.is_stream()) {
        if (file.size() > kMaxInputBytes) {
            *error = "larger than " + human_bytes(kMaxInputBytes);
            return false;
        }
        out->assign(reinterpret_cast<const char*>(file.data()), static_cast<size_t>(file.size()));
        return true;
    }
    std::vector<uint8_t> buf(size_t(1) << 20);
    for (;;) {
        const int64_t n = file.read_next(buf.data(), buf.size(), error);
        if (n < 0) return false;
        if (n == 0) return true;
        if (out->size() + static_cast<uint64_t>(n) > kMaxInputBytes) {
            *error = "longer than " + human_bytes(kMaxInputBytes);
            return false;
        }
        out->append(reinterpret_cast<const char*>(buf.data()), static_cast<size_t>(n));
    }
}

// An optional file: false only when it exists and cannot be read (*error then names it).
bool read_optional(const std::string& path, std::string* out, std::string* error) {
    if (::access(path.c_str(), F_OK) != 0) return true;
    std::string why;
    if (read_input(path, out, &why)) return true;
    *error = path + ": " + why;
    return false;
}

std::string folder_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// The tokenizer MODEL names: a checkpoint folder, a tokenizer.json or tokenizer.model (with the
// tokenizer_config.json beside it), or a GGUF (a path or URL: only its header is read). Prints the error and sets
// *exit_status on failure.
std::unique_ptr<Tokenizer> open_tokenizer(const std::string& model, int* exit_status) {
    const bool folder = is_directory(model);
    const bool json = ends_with(model, ".json");
    const bool sentencepiece = ends_with(model, ".model");
    if (folder || json || sentencepiece) {
        const std::string dir = folder ? (ends_with(model, "/") ? model : model + "/") : folder_of(model);
        std::string tokenizer_json, tokenizer_config, tokenizer_model, error;
        bool read =
            folder ? read_optional(dir + "tokenizer.json", &tokenizer_json, &error) &&
                         (!tokenizer_json.empty() || read_optional(dir + "tokenizer.model", &tokenizer_model, &error))
                   : read_input(model, json ? &tokenizer_json : &tokenizer_model, &error);
        if (!read && !folder) error = model + ": " + error;
        read = read && read_optional(dir + "tokenizer_config.json", &tokenizer_config, &error);
        if (!read) {
            *exit_status = fail(kExitIo, error);
            return nullptr;
        }
        if (folder && tokenizer_json.empty() && tokenizer_model.empty()) {
            *exit_status = fail(kExitInvalid, model + ": no tokenizer.json or tokenizer.model in this folder");
            return nullptr;
        }
        HfTokenizerFiles files;
        files.tokenizer_json = tokenizer_json;
        files.tokenizer_config = tokenizer_config;
        files.tokenizer_model = tokenizer_model;
        Result<std::unique_ptr<Tokenizer>> t = hf_files_tokenizer(files);
        if (!t.ok()) {
            const std::string which = !tokenizer_json.empty()    ? dir + "tokenizer.json"
                                      : !tokenizer_model.empty() ? dir + "tokenizer.model"
                                                                 : model;
            *exit_status = fail(kExitInvalid, describe(folder ? which : model, t.status()));
            return nullptr;
        }
        return std::move(t).value();
    }
    LoadedModel loaded;
    if (!load(model, false, &loaded, exit_status)) return nullptr;
    Result<std::unique_ptr<Tokenizer>> t = gguf_tokenizer(loaded.info);
    if (!t.ok()) {
        *exit_status = fail(kExitInvalid, describe(loaded.paths.empty() ? model : loaded.paths[0], t.status()));
        return nullptr;
    }
    return std::move(t).value();
}

// What a token stands for in text (tokenizer.h token_text(); a byte token's stored piece, <0x0A>, rather than its
// one byte), for printing.
std::string token_text(const Tokenizer& tokenizer, int32_t id) {
    if (tokenizer.kind(id) == TokenKind::kByte) return std::string(tokenizer.piece(id));
    std::string text;
    if (!tokenizer.token_text(id, &text).ok()) return std::string(tokenizer.piece(id));
    return text;
}

// stdout's writes are checked once, at the end of every command (finish_stdout in main.cpp).
void print(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
}

}  // namespace

int cmd_tokenize(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--ids", "--json", "--no-bos", "--no-add-special", "--no-parse-special", "--stdin"},
                    {"--file"}, &args)) {
        return kExitUsage;
    }
    const int sources = int(args.positional.size() == 2) + int(args.has("--file")) + int(args.has("--stdin"));
    if (args.positional.empty() || args.positional.size() > 2 || sources != 1) {
        return usage_error("give MODEL and one of TEXT, --file F or --stdin");
    }
    if (args.has("--ids") && args.has("--json")) return usage_error("give --ids or --json, not both");
    std::string text, error;
    if (args.positional.size() == 2) {
        text = args.positional[1];
    } else {
        const std::string path = args.has("--stdin") ? std::string() : args.get("--file");
        if (!read_input(path, &text, &error))
            return fail(kExitIo, (args.has("--stdin") ? "stdin" : path) + ": " + error);
    }
    int status = kExitOk;
    const std::unique_ptr<Tokenizer> tokenizer = open_tokenizer(args.positional[0], &status);
    if (!tokenizer) return status;

    TokenizeOptions options;
    options.add_special = !args.has("--no-add-special");
    options.add_bos = !args.has("--no-bos");
    options.parse_special = !args.has("--no-parse-special");
    std::vector<int32_t> ids;
    // The text itself is never invalid (ill-formed UTF-8 is handled as the reference does): a failure is the
    // vocabulary's, found while tokenizing (a byte token it lacks, a walk past its budget).
    const Status s = tokenizer->tokenize(text, options, &ids);
    if (!s.ok()) return fail(kExitInvalid, describe(args.positional[0], s) + " (while tokenizing the text)");

    if (args.has("--ids")) {
        std::string out = "[";
        for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
        print(out + "]\n");
    } else if (args.has("--json")) {
        nlohmann::json j;
        j["tokenizer"] = tokenizer->description();
        j["count"] = ids.size();
        j["ids"] = ids;
        nlohmann::json pieces = nlohmann::json::array();
        for (int32_t id : ids) pieces.push_back(std::string(tokenizer->piece(id)));
        j["pieces"] = std::move(pieces);
        print(json_dump(j, 2) + "\n");
    } else {
        // llama-tokenize's layout: the id right-aligned, then what the token stands for.
        for (int32_t id : ids) {
            char head[24];
            std::snprintf(head, sizeof head, "%6d -> '", id);
            print(head + printable(token_text(*tokenizer, id), 200) + "'\n");
        }
        print(counted(ids.size(), "token") + "\n");
    }
    return kExitOk;
}

int cmd_detokenize(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--skip-special"}, {}, &args)) return kExitUsage;
    if (args.positional.size() < 2) return usage_error("give MODEL and at least one ID");
    // IDs as separate arguments or pasted from --ids ("[1, 2, 3]"): brackets and commas separate too.
    std::vector<int32_t> ids;
    for (size_t i = 1; i < args.positional.size(); ++i) {
        std::string word;
        const std::string a = args.positional[i] + " ";  // the space ends the last id
        for (char c : a) {
            if (c != '[' && c != ']' && c != ',' && !std::isspace(static_cast<unsigned char>(c))) {
                word += c;
                continue;
            }
            if (word.empty()) continue;
            uint64_t id = 0;
            if (!parse_u64(word, &id) || id > uint64_t(INT32_MAX)) {
                return usage_error("a token ID is a number from 0 to 2147483647, not '" + printable(word, 40) + "'");
            }
            ids.push_back(static_cast<int32_t>(id));
            word.clear();
        }
    }
    int status = kExitOk;
    const std::unique_ptr<Tokenizer> tokenizer = open_tokenizer(args.positional[0], &status);
    if (!tokenizer) return status;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (static_cast<size_t>(ids[i]) >= tokenizer->size()) {
            return fail(kExitUsage, "token ID " + std::to_string(ids[i]) + " is outside the vocabulary (" +
                                        counted(tokenizer->size(), "token") + ")");
        }
    }
    DetokenizeOptions options;
    options.unparse_special = !args.has("--skip-special");
    std::string text;
    const Status s = tokenizer->detokenize(ids.data(), ids.size(), options, &text);
    if (!s.ok()) return fail(kExitInvalid, describe(args.positional[0], s) + " (while detokenizing)");
    print(text + "\n");
    return kExitOk;
}

}  // namespace ws::cli
