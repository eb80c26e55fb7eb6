/* replay.c - runs a libFuzzer target over corpus files without libFuzzer, so `make check`
 * replays every corpus with the normal compiler (and under ASan+UBSan in check-san).
 * Usage: fuzz-replay-NAME FILE_OR_DIR...  Prints one line per input it could not read. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    struct buf b = BUF_INIT(0);
    int rc = buf_read_file(path, &b);

    if (rc) {
        fprintf(stderr, "replay: cannot read '%s'\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)b.data, b.len);
    buf_release(&b);
    return 0;
}

int main(int argc, char **argv)
{
    int i, bad = 0, n = 0;

    for (i = 1; i < argc; i++) {
        struct stat st;
        DIR *d;
        struct dirent *de;

        if (stat(argv[i], &st)) {
            fprintf(stderr, "replay: cannot stat '%s'\n", argv[i]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += replay_file(argv[i]);
            n++;
            continue;
        }
        d = opendir(argv[i]);
        while (d && (de = readdir(d))) {
            char path[4096];

            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
            bad += replay_file(path);
            n++;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs\n", n);
    return bad ? 1 : 0;
}
