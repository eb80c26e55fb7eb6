/* curl_dl.c - loading libcurl.so.4 with dlopen once per process and binding kube_curl (why:
 * see curl_dl.h). The outcome of the one load, including its error message, is kept so every
 * later kube_curl_load reports the same thing. Pointers are copied out of dlsym's void * with
 * memcpy, the one conversion ISO C allows between object and function pointers. */
#include "kube/curl_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define CURL_DL_LIB "libcurl.so.4"

struct kube_curl kube_curl;

struct curl_dl_symbol {
    const char *name;
    size_t offset; /* of the function pointer in struct kube_curl */
};

/* clang-format off */
#define SYM(member_) {"curl_" #member_, offsetof(struct kube_curl, member_)}
/* clang-format on */

static const struct curl_dl_symbol curl_dl_symbols[] = {
    SYM(global_init),  SYM(easy_init),      SYM(easy_setopt),  SYM(easy_perform),
    SYM(easy_getinfo), SYM(easy_reset),     SYM(easy_cleanup), SYM(easy_strerror),
    SYM(slist_append), SYM(slist_free_all), SYM(easy_send),    SYM(easy_recv),
};

static pthread_once_t curl_dl_once = PTHREAD_ONCE_INIT;
static int curl_dl_rc;
static char curl_dl_msg[512];

static void curl_dl_load(void)
{
    struct kube_curl t;
    const char *why;
    void *dl, *p;
    CURLcode cc;
    size_t i;

    dlerror();
    dl = dlopen(CURL_DL_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        why = dlerror();
        curl_dl_rc = -ENOENT;
        snprintf(curl_dl_msg, sizeof(curl_dl_msg), "cannot load %s: %s; install libcurl4",
                 CURL_DL_LIB, why ? why : "unknown dlopen error");
        return;
    }
    memset(&t, 0, sizeof(t));
    for (i = 0; i < sizeof(curl_dl_symbols) / sizeof(curl_dl_symbols[0]); i++) {
        p = dlsym(dl, curl_dl_symbols[i].name);
        if (!p) {
            curl_dl_rc = -ENOENT;
            snprintf(curl_dl_msg, sizeof(curl_dl_msg),
                     "cannot use %s: it has no symbol '%s'; install libcurl4", CURL_DL_LIB,
                     curl_dl_symbols[i].name);
            dlclose(dl);
            return;
        }
        memcpy((char *)&t + curl_dl_symbols[i].offset, &p, sizeof(p));
    }
    cc = t.global_init(CURL_GLOBAL_DEFAULT);
    if (cc != CURLE_OK) {
        curl_dl_rc = -EIO;
        snprintf(curl_dl_msg, sizeof(curl_dl_msg), "cannot initialise libcurl: %s",
                 t.easy_strerror(cc));
        return; /* global_init may have left state behind: keep the library loaded */
    }
    kube_curl = t;
}

int kube_curl_load(struct err *err)
{
    pthread_once(&curl_dl_once, curl_dl_load);
    if (curl_dl_rc)
        return err_set(err, curl_dl_rc, "%s", curl_dl_msg);
    return 0;
}
