/* tls.h - TLS for the probe and metrics server (base/httpd), on OpenSSL: a server context with
 * a certificate from files, or a self-signed one made at start as kube-scheduler makes it
 * when given none, and the httpd transport that carries a connection through it.
 *
 * Only the programs that serve HTTPS link it (and -lssl -lcrypto): gpusched serve's secure
 * port. TLS 1.2 at least; the handshake and every read and write are non-blocking, driven by
 * httpd's poll loop under the connection's deadline. */
#ifndef BASE_TLS_H
#define BASE_TLS_H

#include <stddef.h>

#include "base/err.h"
#include "base/httpd.h"

struct tls_server;

/* tls_server_new loads cert_file and key_file (PEM; the certificate file may hold the chain),
 * or, when both are NULL, makes a self-signed certificate for "localhost", 127.0.0.1 and
 * hosts (NULL-terminated names or IP addresses, may be NULL) with a new P-256 key, valid for
 * a year, as kube-scheduler's MaybeDefaultWithSelfSignedCerts does without --cert-dir.
 * Returns 0 or a negative code with err naming the file and OpenSSL's reason. Free with
 * tls_server_free. */
int tls_server_new(const char *cert_file, const char *key_file, const char *const *hosts,
                   struct tls_server **out, struct err *err);
void tls_server_free(struct tls_server *t);

/* tls_server_transport fills tr to carry httpd's connections through t (borrowed: t must
 * outlive the server). */
void tls_server_transport(struct tls_server *t, struct httpd_transport *tr);

/* tls_sha256_hex writes the SHA-256 of len bytes at data as 64 hex digits and a NUL into
 * out: a cache key that is not the secret it stands for (a bearer token). */
void tls_sha256_hex(const void *data, size_t len, char out[65]);

#endif
