/* grpc_dl.h - gRPC core bound at run time with dlopen("libgrpc.so.29"), not at link time.
 *
 * Why: Debian's libgrpc (C++, with abseil, re2, OpenSSL and libstdc++ behind it) costs about
 * 8 MiB of resident memory at process start just by being linked (relocations and static
 * constructors), also in `gpulabel --oneshot` and with --device-plugin=false, which never use
 * it. So the device plugin loads it when its first server or call starts, as kube/curl_dl.c
 * does for libcurl. <grpc/grpc.h> is still included for the types; only the calls go through
 * the table below: rpc.c writes G(grpc_init)(). */
#ifndef RPC_GRPC_DL_H
#define RPC_GRPC_DL_H

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "base/err.h"

#define RPC_GRPC_LIB "libgrpc.so.29" /* Debian 12's libgrpc29 (1.51), pinned in install-deps */

/* clang-format off */
#define RPC_GRPC_FUNCS(X) \
    X(gpr_inf_future) \
    X(gpr_now) \
    X(gpr_set_log_function) \
    X(gpr_time_0) \
    X(gpr_time_add) \
    X(gpr_time_from_millis) \
    X(grpc_byte_buffer_destroy) \
    X(grpc_byte_buffer_reader_destroy) \
    X(grpc_byte_buffer_reader_init) \
    X(grpc_byte_buffer_reader_next) \
    X(grpc_call_details_destroy) \
    X(grpc_call_details_init) \
    X(grpc_call_start_batch) \
    X(grpc_call_unref) \
    X(grpc_channel_create) \
    X(grpc_channel_create_call) \
    X(grpc_channel_credentials_release) \
    X(grpc_channel_destroy) \
    X(grpc_completion_queue_create_for_next) \
    X(grpc_completion_queue_create_for_pluck) \
    X(grpc_completion_queue_destroy) \
    X(grpc_completion_queue_next) \
    X(grpc_completion_queue_pluck) \
    X(grpc_completion_queue_shutdown) \
    X(grpc_empty_slice) \
    X(grpc_init) \
    X(grpc_insecure_credentials_create) \
    X(grpc_insecure_server_credentials_create) \
    X(grpc_metadata_array_destroy) \
    X(grpc_metadata_array_init) \
    X(grpc_raw_byte_buffer_create) \
    X(grpc_server_add_channel_from_fd) \
    X(grpc_server_cancel_all_calls) \
    X(grpc_server_create) \
    X(grpc_server_credentials_release) \
    X(grpc_server_destroy) \
    X(grpc_server_register_completion_queue) \
    X(grpc_server_request_call) \
    X(grpc_server_shutdown_and_notify) \
    X(grpc_server_start) \
    X(grpc_shutdown) \
    X(grpc_slice_from_copied_buffer) \
    X(grpc_slice_from_copied_string) \
    X(grpc_slice_unref)
/* clang-format on */

struct rpc_grpc {
#define RPC_GRPC_MEMBER(f) __typeof__(&f) f;
    RPC_GRPC_FUNCS(RPC_GRPC_MEMBER)
#undef RPC_GRPC_MEMBER
};

/* The bound functions; valid after rpc_grpc_load succeeded. */
extern struct rpc_grpc rpc_grpc;
#define G(f) (rpc_grpc.f)

/* rpc_grpc_load loads the library and binds every function, once per process (thread-safe;
 * later calls return the first result). Fails with -ENOENT and err naming the library or
 * the missing symbol. The library stays loaded. */
int rpc_grpc_load(struct err *err);

#endif
