/* curl_dl.h - libcurl bound at run time with dlopen("libcurl.so.4"), not at link time.
 *
 * Why: linking libcurl (OpenSSL build, about 33 shared libraries) costs the node agent about
 * 6 MiB of resident memory at process start, even in `gpulabel --oneshot --output -`, which
 * never talks to the API server (that mode's target is 4 MiB peak RSS). So the REST
 * client loads libcurl the first time a client is created. <curl/curl.h> is still included
 * for the types and constants; only the calls go through the table below. */
#ifndef KUBE_CURL_DL_H
#define KUBE_CURL_DL_H

#include <curl/curl.h>

#include "base/err.h"

/* The libcurl functions the client calls, named after curl_<member>. */
struct kube_curl {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    void (*easy_reset)(CURL *h);
    void (*easy_cleanup)(CURL *h);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
    void (*slist_free_all)(struct curl_slist *list);
    CURLcode (*easy_send)(CURL *h, const void *buf, size_t len, size_t *sent);
    CURLcode (*easy_recv)(CURL *h, void *buf, size_t len, size_t *got);
};

/* The table; all members are NULL until kube_curl_load has returned 0, read-only after. */
extern struct kube_curl kube_curl;

/* kube_curl_load loads libcurl.so.4, binds kube_curl and runs curl_global_init, once per
 * process (thread safe: later and concurrent calls wait for and return the first call's
 * result). Returns 0, or -ENOENT/-EIO with err naming the library and why it failed. The
 * library stays loaded until the process exits. */
int kube_curl_load(struct err *err);

#endif
