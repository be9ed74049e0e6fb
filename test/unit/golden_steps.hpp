// SPDX-License-Identifier: BSL-1.0
// The steps of the golden transcripts (requests and real Consul 1.8 answers), for the unit
// tests of the reply parsers and the agent's request decoding.
#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::test {

struct golden_replies {
    std::vector<boost::json::value> kv_lists;
    std::vector<boost::json::value> txns;
};

// The transcripts normalise indexes to "i1", "i2", ...; turns them back into numbers.
inline void denormalise_indexes(boost::json::value& v) {
    static const std::regex index_placeholder("i([0-9]+)");
    if (v.is_object()) {
        for (auto& kv : v.get_object()) {
            std::smatch m;
            std::string text = kv.value().is_string() ? std::string(kv.value().get_string()) : "";
            if (kv.key().ends_with("Index") && std::regex_match(text, m, index_placeholder))
                kv.value() = 1000 + std::stoull(m[1].str());
            else
                denormalise_indexes(kv.value());
        }
    } else if (v.is_array()) {
        for (auto& item : v.get_array())
            denormalise_indexes(item);
    }
}

/// Calls `f(step)` for each step (a JSON object with "do" and maybe "expect") of every
/// transcript in CONCLAVE_GOLDEN_DIR.
template <class F>
void for_each_golden_step(F f) {
    for (const auto& file : std::filesystem::directory_iterator(CONCLAVE_GOLDEN_DIR)) {
        if (file.path().extension() != ".json")
            continue;
        std::ifstream in(file.path());
        std::stringstream text;
        text << in.rdbuf();
        const boost::json::value doc = boost::json::parse(text.str());
        for (const auto& step : doc.at("steps").as_array())
            f(step.as_object());
    }
}

/// The answers of the transcripts: KV lists (GET /v1/kv/...) and txn answers (/v1/txn).
inline golden_replies load_golden_replies() {
    golden_replies g;
    for_each_golden_step([&](const boost::json::object& step) {
        const auto& d = step.at("do").as_object();
        const auto* expect = step.if_contains("expect");
        const auto* body = expect ? expect->as_object().if_contains("json") : nullptr;
        const auto* path_value = d.if_contains("path");
        const auto* method = d.if_contains("method");
        if (!body || !path_value || !method) // sleeps, repeats, ...
            return;
        const std::string_view path = path_value->as_string();
        boost::json::value v = *body;
        denormalise_indexes(v);
        if (path.starts_with("/v1/txn") && v.is_object())
            g.txns.push_back(std::move(v));
        else if (path.starts_with("/v1/kv/") && method->as_string() == "GET" && v.is_array() &&
                 (v.get_array().empty() || v.get_array()[0].is_object()))
            g.kv_lists.push_back(std::move(v));
    });
    return g;
}

} // namespace conclave::test
