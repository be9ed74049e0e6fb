// SPDX-License-Identifier: BSL-1.0
// Throwaway PKI for TLS tests, generated in-process with OpenSSL's C API: nothing is
// committed, no `openssl` command is run. Every instance has its own temporary directory.
#pragma once

#include <string>

namespace conclave::test {

/// A CA, a server certificate for localhost / 127.0.0.1 and a client certificate (both
/// signed by the CA), plus an unrelated CA, as PEM files in a fresh mkdtemp directory that
/// the destructor removes. Keys are EC P-256. Throws std::runtime_error on failure.
class test_pki {
public:
    test_pki();
    ~test_pki();
    test_pki(const test_pki&) = delete;
    test_pki& operator=(const test_pki&) = delete;

    const std::string& dir() const { return dir_; }

    std::string ca_cert;       ///< the CA (self-signed)
    std::string other_ca_cert; ///< an unrelated self-signed CA (same subject name)
    std::string ca_dir;        ///< a directory holding only the CA, as <subject hash>.0
    std::string server_cert;   ///< CN=localhost, SAN DNS:localhost, IP:127.0.0.1
    std::string server_key;
    std::string client_cert; ///< CN=conclave-test-client, extendedKeyUsage clientAuth
    std::string client_key;

private:
    std::string dir_;
};

} // namespace conclave::test
