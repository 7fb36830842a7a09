// SPDX-License-Identifier: MIT
// The llama-quantize reference runs (../shared/testdata/recipes/manifest.json): each run's command line
// read back into its parts, so a test can replay it through the planner or the CLI.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace ws_test {

inline std::string recipes_dir() {
    return shared_path("recipes");
}

struct RecipeRun {
    std::string model;    // input file name in recipes_dir()
    std::string ftype;    // "Q4_K_M"
    std::string imatrix;  // the path as typed ("" without)
    bool pure = false;
    bool leave_output = false;
    std::string output_tensor_type, token_embedding_type;
    std::vector<std::string> tensor_types;  // "attn_v=q8_0"
    nlohmann::json record;                  // the manifest's run
};

// Splits `llama-quantize [options] IN OUT TYPE NTHREADS` (the manifest's commands have no quoting).
inline RecipeRun parse_recipe_run(const nlohmann::json& run) {
    RecipeRun r;
    r.record = run;
    std::istringstream in(run["command"].get<std::string>());
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    size_t i = 1;
    for (; i < words.size() && words[i].rfind("--", 0) == 0; ++i) {
        const std::string& o = words[i];
        if (o == "--pure") {
            r.pure = true;
        } else if (o == "--leave-output-tensor") {
            r.leave_output = true;
        } else if (o == "--imatrix") {
            r.imatrix = words[++i];
        } else if (o == "--output-tensor-type") {
            r.output_tensor_type = words[++i];
        } else if (o == "--token-embedding-type") {
            r.token_embedding_type = words[++i];
        } else if (o == "--tensor-type") {
            r.tensor_types.push_back(words[++i]);
        } else {
            throw std::runtime_error("unexpected option in manifest command: " + o);
        }
    }
    r.model = words.at(i);
    r.ftype = words.at(i + 2);
    return r;
}

inline std::vector<RecipeRun> recipe_runs() {
    const nlohmann::json m = read_json(recipes_dir() + "/manifest.json");
    std::vector<RecipeRun> runs;
    for (const auto& run : m["runs"]) runs.push_back(parse_recipe_run(run));
    return runs;
}

}  // namespace ws_test
