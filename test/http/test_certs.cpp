// SPDX-License-Identifier: BSL-1.0
#include "test_certs.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdexcept>
#include <vector>

namespace conclave::test {

namespace {

struct pkey_free {
    void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct x509_free {
    void operator()(X509* p) const { X509_free(p); }
};
struct bio_free {
    void operator()(BIO* p) const { BIO_free_all(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;
using bio_ptr = std::unique_ptr<BIO, bio_free>;

[[noreturn]] void fail(const std::string& what) {
    std::string detail;
    if (const unsigned long e = ERR_get_error(); e != 0) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        detail = std::string(": ") + buf;
    }
    ERR_clear_error();
    throw std::runtime_error("test_pki: " + what + detail);
}

void check(bool ok, const char* what) {
    if (!ok)
        fail(what);
}

pkey_ptr make_key() {
    pkey_ptr key{EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")};
    check(key != nullptr, "EC key generation");
    return key;
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    check(ext != nullptr, "X509V3_EXT_conf_nid");
    const int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    check(ok == 1, "X509_add_ext");
}

struct cert_spec {
    std::string common_name;
    long serial = 1;
    bool ca = false;
    std::string extended_key_usage; // "serverAuth", "clientAuth" or empty
    std::string subject_alt_name;   // e.g. "DNS:localhost,IP:127.0.0.1" or empty
};

// Builds a certificate for `key`, signed by `issuer_key` (issuer == nullptr: self-signed).
x509_ptr make_cert(const cert_spec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key) {
    x509_ptr cert{X509_new()};
    check(cert != nullptr, "X509_new");
    check(X509_set_version(cert.get(), 2) == 1, "X509_set_version");
    check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), spec.serial) == 1, "serial");
    check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr, "notBefore");
    check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24L * 3600) != nullptr, "notAfter");
    check(X509_set_pubkey(cert.get(), key) == 1, "X509_set_pubkey");

    X509_NAME* name = X509_get_subject_name(cert.get());
    check(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                                     reinterpret_cast<const unsigned char*>("conclave tests"), -1,
                                     -1, 0) == 1,
          "subject O");
    check(X509_NAME_add_entry_by_txt(
              name, "CN", MBSTRING_ASC,
              reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1, -1, 0) == 1,
          "subject CN");
    X509* signer = issuer != nullptr ? issuer : cert.get();
    check(X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) == 1, "issuer name");

    if (spec.ca) {
        add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
        add_ext(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    }
    add_ext(cert.get(), signer, NID_subject_key_identifier, "hash");
    add_ext(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
    if (!spec.extended_key_usage.empty())
        add_ext(cert.get(), signer, NID_ext_key_usage, spec.extended_key_usage.c_str());
    if (!spec.subject_alt_name.empty())
        add_ext(cert.get(), signer, NID_subject_alt_name, spec.subject_alt_name.c_str());

    check(X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0,
          "X509_sign");
    return cert;
}

bio_ptr open_for_writing(const std::string& path) {
    bio_ptr out{BIO_new_file(path.c_str(), "w")};
    if (!out)
        fail("cannot write " + path);
    return out;
}

void write_cert(const std::string& path, X509* cert) {
    auto out = open_for_writing(path);
    check(PEM_write_bio_X509(out.get(), cert) == 1, "PEM_write_bio_X509");
}

void write_key(const std::string& path, EVP_PKEY* key) {
    auto out = open_for_writing(path);
    check(PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "PEM_write_bio_PrivateKey");
}

} // namespace

test_pki::test_pki() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/conclave-tls-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
        throw std::runtime_error("test_pki: mkdtemp failed for " + templ);
    dir_ = buf.data();
    try {
        ca_cert = dir_ + "/ca.pem";
        other_ca_cert = dir_ + "/other-ca.pem";
        server_cert = dir_ + "/server.pem";
        server_key = dir_ + "/server-key.pem";
        client_cert = dir_ + "/client.pem";
        client_key = dir_ + "/client-key.pem";

        const auto ca_key = make_key();
        const auto ca = make_cert({.common_name = "conclave test CA", .serial = 1, .ca = true},
                                  ca_key.get(), nullptr, nullptr);
        write_cert(ca_cert, ca.get());
        // OpenSSL's hashed directory layout (what `openssl rehash` makes), for ca_path.
        ca_dir = dir_ + "/ca.d";
        std::filesystem::create_directory(ca_dir);
        char hashed[32];
        std::snprintf(hashed, sizeof hashed, "/%08lx.0", X509_subject_name_hash(ca.get()));
        write_cert(ca_dir + hashed, ca.get());

        // Same subject as the real CA: verification must go by key, not by name.
        const auto other_key = make_key();
        const auto other = make_cert({.common_name = "conclave test CA", .serial = 2, .ca = true},
                                     other_key.get(), nullptr, nullptr);
        write_cert(other_ca_cert, other.get());

        const auto srv_key = make_key();
        const auto srv = make_cert({.common_name = "localhost",
                                    .serial = 3,
                                    .extended_key_usage = "serverAuth",
                                    .subject_alt_name = "DNS:localhost,IP:127.0.0.1"},
                                   srv_key.get(), ca.get(), ca_key.get());
        write_cert(server_cert, srv.get());
        write_key(server_key, srv_key.get());

        const auto cli_key = make_key();
        const auto cli = make_cert({.common_name = "conclave-test-client",
                                    .serial = 4,
                                    .extended_key_usage = "clientAuth"},
                                   cli_key.get(), ca.get(), ca_key.get());
        write_cert(client_cert, cli.get());
        write_key(client_key, cli_key.get());
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
        throw;
    }
}

test_pki::~test_pki() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

} // namespace conclave::test
