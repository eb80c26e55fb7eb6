/* memlimit.h - the memory limit the process runs under: its cgroup's (a container's
 * resources.limits.memory), for caps that must stay below it (kube_client_max_body).
 *
 * Reads cgroup v2's memory.max, then cgroup v1's memory.limit_in_bytes, at the usual mount
 * point inside a container (/sys/fs/cgroup); "max" or v1's "unlimited" value is no limit. */
#ifndef BASE_MEMLIMIT_H
#define BASE_MEMLIMIT_H

#include <stdint.h>

/* memlimit_cgroup returns the limit in bytes, or 0 when there is none or it cannot be read.
 * root is where the cgroup file system is mounted (NULL: /sys/fs/cgroup). */
uint64_t memlimit_cgroup(const char *root);

#endif
