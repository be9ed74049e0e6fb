// SPDX-License-Identifier: BSL-1.0
#include "cli/common/session_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace conclave::cli {

std::string read_session_file(const std::string& path) {
    if (path.empty())
        return {};
    std::ifstream in(path);
    std::string id;
    std::getline(in, id);
    return id;
}

std::string write_session_file(const std::string& path, const std::string& id) {
    if (path.empty())
        return {};
    const std::string temporary = path + ".new";
    std::FILE* f = std::fopen(temporary.c_str(), "w");
    bool ok = f != nullptr && std::fprintf(f, "%s\n", id.c_str()) > 0;
    if (f != nullptr)
        ok = std::fclose(f) == 0 && ok;
    const int error = errno;
    if (ok && std::rename(temporary.c_str(), path.c_str()) == 0)
        return {};
    std::remove(temporary.c_str());
    return "Cannot write the session file '" + path + "': " + std::strerror(ok ? errno : error);
}

void remove_session_file(const std::string& path) {
    if (!path.empty())
        std::remove(path.c_str());
}

session_config resuming_from(session_config cfg, const std::string& path) {
    if (auto id = read_session_file(path); !id.empty())
        cfg.resume_id = std::move(id);
    return cfg;
}

} // namespace conclave::cli
