/* outfile.h - an output file written as a stream and put in place only when complete: a
 * failed run leaves what was there untouched, and a reader never sees half a file.
 *
 * A regular file, or a path that does not exist yet, is written to a dot-file in the same
 * directory and renamed over the path on success. A symlink is followed (the link stays, the
 * file it names is replaced). A FIFO or a character device (/dev/stdout, a pipe to a reader)
 * is written in place: there is nothing to replace. Anything else (a directory, a socket, a
 * block device, a symlink to nothing) is refused: it is not ours to replace. */
#ifndef BASE_OUTFILE_H
#define BASE_OUTFILE_H

#include <stdio.h>

#include "base/err.h"

struct outfile {
    FILE *f;    /* write here between outfile_open and outfile_commit/outfile_abort */
    char *path; /* the file to put in place (a symlink resolved), malloc()ed */
    char *tmp;  /* the dot-file written, NULL when writing in place; malloc()ed */
};

/* outfile_open starts writing path into o (zeroed first). Returns 0, or a negative errno-style
 * code with err saying "cannot write 'PATH': why" (o is then empty: outfile_abort is a no-op). */
int outfile_open(struct outfile *o, const char *path, struct err *err);

/* outfile_commit flushes, syncs and closes o->f and renames the dot-file over the path (then
 * syncs the directory, so the rename is durable too). On failure the dot-file is removed and
 * the path left as it was; returns 0 or a negative code with err filled. Either way o is
 * released. */
int outfile_commit(struct outfile *o, struct err *err);

/* outfile_abort closes o->f and removes the dot-file, leaving the path as it was (written in
 * place: what was written stays). Accepts an empty or already released o. */
void outfile_abort(struct outfile *o);

#endif
