/* tls.c - TLS server contexts and httpd's TLS transport on OpenSSL (see tls.h). */
#include "base/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct tls_server {
    SSL_CTX *ctx;
};

/* tls_fail sets err to what, with OpenSSL's last reason */
static int tls_fail(struct err *err, int code, const char *what)
{
    char reason[256] = "";
    unsigned long e = ERR_get_error();

    if (e)
        ERR_error_string_n(e, reason, sizeof(reason));
    ERR_clear_error();
    return err_set(err, code, "%s%s%s", what, reason[0] ? ": " : "", reason);
}

static int add_ext(X509 *x, int nid, const char *value)
{
    X509V3_CTX v3;
    X509_EXTENSION *e;
    int ok;

    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!e)
        return -1;
    ok = X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    return ok ? 0 : -1;
}

/* self_signed makes kube-scheduler's kind of serving certificate when it is given none: a new
 * key, "localhost@<time>", SANs localhost, 127.0.0.1 and hosts, a year long */
static int self_signed(SSL_CTX *ctx, const char *const *hosts, struct err *err)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    BIGNUM *bn = NULL;
    X509_NAME *name;
    unsigned char serial[16];
    char cn[64], san[2048];
    size_t n;
    int rc = -1;

    if (!key || !x || RAND_bytes(serial, sizeof(serial)) != 1)
        goto out;
    serial[0] &= 0x7f; /* a positive serial number */
    bn = BN_bin2bn(serial, sizeof(serial), NULL);
    snprintf(cn, sizeof(cn), "localhost@%lld", (long long)time(NULL));
    n = (size_t)snprintf(san, sizeof(san), "DNS:localhost,IP:127.0.0.1");
    for (; hosts && *hosts; hosts++) {
        unsigned char ip[16];
        bool is_ip = inet_pton(AF_INET, *hosts, ip) == 1 || inet_pton(AF_INET6, *hosts, ip) == 1;

        if (!**hosts || strpbrk(*hosts, ", ") || n + strlen(*hosts) + 8 >= sizeof(san))
            continue;
        n += (size_t)snprintf(san + n, sizeof(san) - n, ",%s:%s", is_ip ? "IP" : "DNS", *hosts);
    }
    name = X509_get_subject_name(x);
    if (!X509_set_version(x, 2) || !bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) ||
        !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) ||
        !X509_set_issuer_name(x, name) || !X509_set_pubkey(x, key) ||
        add_ext(x, NID_basic_constraints, "critical,CA:FALSE") ||
        add_ext(x, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        add_ext(x, NID_ext_key_usage, "serverAuth") || add_ext(x, NID_subject_alt_name, san) ||
        !X509_sign(x, key, EVP_sha256()) || SSL_CTX_use_certificate(ctx, x) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, key) != 1)
        goto out;
    rc = 0;
out:
    if (rc)
        tls_fail(err, -EPROTO, "cannot make a self-signed serving certificate");
    BN_free(bn);
    X509_free(x);
    EVP_PKEY_free(key);
    return rc ? -EPROTO : 0;
}

int tls_server_new(const char *cert_file, const char *key_file, const char *const *hosts,
                   struct tls_server **out, struct err *err)
{
    struct tls_server *t;
    char what[4200];
    int rc = 0;

    *out = NULL;
    if (!cert_file != !key_file)
        return err_set(err, -EINVAL,
                       "a serving certificate needs both --tls-cert-file and "
                       "--tls-private-key-file");
    t = calloc(1, sizeof(*t));
    if (!t)
        return err_set(err, -ENOMEM, "out of memory");
    t->ctx = SSL_CTX_new(TLS_server_method());
    if (!t->ctx || !SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION)) {
        rc = tls_fail(err, -ENOMEM, "cannot make a TLS context");
        goto out;
    }
    SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION);
    if (cert_file) {
        if (SSL_CTX_use_certificate_chain_file(t->ctx, cert_file) != 1) {
            snprintf(what, sizeof(what), "cannot read certificate '%s'", cert_file);
            rc = tls_fail(err, -EINVAL, what);
            goto out;
        }
        if (SSL_CTX_use_PrivateKey_file(t->ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(t->ctx) != 1) {
            snprintf(what, sizeof(what), "cannot use private key '%s'", key_file);
            rc = tls_fail(err, -EINVAL, what);
            goto out;
        }
    } else {
        rc = self_signed(t->ctx, hosts, err);
    }
out:
    if (rc) {
        tls_server_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void tls_server_free(struct tls_server *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    free(t);
}

/* ---- the transport ------------------------------------------------------------------- */

static void *tls_open(void *ctx, int fd)
{
    struct tls_server *t = ctx;
    SSL *s = SSL_new(t->ctx);

    if (!s || SSL_set_fd(s, fd) != 1) {
        SSL_free(s);
        ERR_clear_error();
        return NULL;
    }
    SSL_set_accept_state(s);
    return s;
}

/* tls_io maps a result of OpenSSL's to the transport's */
static long tls_io(SSL *s, int r)
{
    if (r > 0)
        return r;
    switch (SSL_get_error(s, r)) {
    case SSL_ERROR_WANT_READ:
        return HTTPD_IO_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        return HTTPD_IO_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    default:
        ERR_clear_error();
        return -1;
    }
}

static int tls_handshake(void *conn)
{
    long r = tls_io(conn, SSL_do_handshake(conn));

    return r > 0 ? 1 : r == 0 ? -1 : (int)r;
}

static long tls_read(void *conn, void *buf, size_t n)
{
    return tls_io(conn, SSL_read(conn, buf, n > 0x7fffffff ? 0x7fffffff : (int)n));
}

static long tls_write(void *conn, const void *buf, size_t n)
{
    return tls_io(conn, SSL_write(conn, buf, n > 0x7fffffff ? 0x7fffffff : (int)n));
}

static void tls_close(void *conn)
{
    /* close_notify, once, without waiting for the peer's */
    if (SSL_is_init_finished((SSL *)conn))
        SSL_shutdown(conn);
    SSL_free(conn);
    ERR_clear_error();
}

void tls_server_transport(struct tls_server *t, struct httpd_transport *tr)
{
    tr->ctx = t;
    tr->open = tls_open;
    tr->handshake = tls_handshake;
    tr->read = tls_read;
    tr->write = tls_write;
    tr->close = tls_close;
}

void tls_sha256_hex(const void *data, size_t len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];
    size_t i;

    SHA256(data, len, md);
    for (i = 0; i < sizeof(md); i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}
