/* memlimit.c - the process's cgroup memory limit (see memlimit.h). */
#include "base/memlimit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* read_limit parses the one number of a cgroup file; 0 when absent, "max" or not a number */
static uint64_t read_limit(const char *root, const char *name)
{
    char path[4096], text[64];
    unsigned long long v;
    char *end;
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, name);
    f = fopen(path, "re");
    if (!f)
        return 0;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    errno = 0;
    v = strtoull(text, &end, 10);
    if (end == text || errno || (*end && *end != '\n'))
        return 0;
    /* cgroup v1 writes "no limit" as the largest page-aligned 63-bit number */
    if (v >= (1ULL << 62))
        return 0;
    return (uint64_t)v;
}

uint64_t memlimit_cgroup(const char *root)
{
    uint64_t v;

    if (!root)
        root = "/sys/fs/cgroup";
    v = read_limit(root, "memory.max");
    return v ? v : read_limit(root, "memory/memory.limit_in_bytes");
}
