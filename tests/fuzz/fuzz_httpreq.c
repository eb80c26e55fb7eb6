/* fuzz_httpreq.c - libFuzzer target for the probe and metrics server's request parser
 * (httpd_parse_request). Besides not crashing: an accepted request gives a method of
 * capital letters and a path that starts with '/', holds no '?' or control character and
 * fits its buffer; and the answer never changes once the head is whole (bytes after the
 * blank line, a body or the next request, do not matter). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/httpd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char method[16], path[64], m2[16], p2[64];
    char *more;
    int rc, rc2;
    size_t i;

    if (size > 2 * HTTPD_REQ_MAX)
        return 0;
    rc = httpd_parse_request((const char *)data, size, method, sizeof(method), path, sizeof(path));
    if (rc < -1 || rc > 1)
        abort();
    if (rc == 1) {
        if (!method[0] || strlen(method) >= sizeof(method) || path[0] != '/' ||
            strlen(path) >= sizeof(path) || strchr(path, '?'))
            abort();
        for (i = 0; method[i]; i++)
            if (method[i] < 'A' || method[i] > 'Z')
                abort();
        for (i = 0; path[i]; i++)
            if ((unsigned char)path[i] <= ' ' || path[i] == 0x7f)
                abort();
    }
    if (rc != 0) {
        more = malloc(size + 7);
        if (!more)
            return 0;
        memcpy(more, data, size);
        memcpy(more + size, "x\r\n\r\nGE", 7);
        rc2 = httpd_parse_request(more, size + 7, m2, sizeof(m2), p2, sizeof(p2));
        free(more);
        if (rc2 != rc || (rc == 1 && (strcmp(m2, method) || strcmp(p2, path))))
            abort();
    }
    return 0;
}
