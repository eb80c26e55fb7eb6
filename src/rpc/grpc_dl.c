/* grpc_dl.c - loading libgrpc.so.29 and binding the gRPC core functions rpc.c calls.
 *
 * Pointers are copied out of dlsym's void * with memcpy, the one conversion ISO C allows
 * between object and function pointers without a diagnostic. */
#include "rpc/grpc_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct rpc_grpc rpc_grpc;

static const struct {
    const char *name;
    size_t offset;
} grpc_symbols[] = {
#define RPC_GRPC_SYM(f) {#f, offsetof(struct rpc_grpc, f)},
    RPC_GRPC_FUNCS(RPC_GRPC_SYM)
#undef RPC_GRPC_SYM
};

static pthread_once_t grpc_once = PTHREAD_ONCE_INIT;
static int grpc_rc;
static char grpc_msg[512];

static void grpc_bind(void)
{
    void *dl;
    size_t i;

    dlerror();
    dl = dlopen(RPC_GRPC_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();

        grpc_rc = -ENOENT;
        snprintf(grpc_msg, sizeof(grpc_msg),
                 "cannot load gRPC library '%s': %s (install "
                 "libgrpc29)",
                 RPC_GRPC_LIB, why ? why : "unknown dlopen error");
        return;
    }
    for (i = 0; i < sizeof(grpc_symbols) / sizeof(grpc_symbols[0]); i++) {
        void *p = dlsym(dl, grpc_symbols[i].name);

        if (!p) {
            grpc_rc = -ENOENT;
            snprintf(grpc_msg, sizeof(grpc_msg),
                     "cannot use gRPC library '%s': it has no "
                     "symbol '%s'",
                     RPC_GRPC_LIB, grpc_symbols[i].name);
            return;
        }
        memcpy((char *)&rpc_grpc + grpc_symbols[i].offset, &p, sizeof(p));
    }
}

int rpc_grpc_load(struct err *err)
{
    pthread_once(&grpc_once, grpc_bind);
    if (grpc_rc)
        return err_set(err, grpc_rc, "%s", grpc_msg);
    return 0;
}
