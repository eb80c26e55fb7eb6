/* output-int.h - the JSON string writer of the commands that stream their document (simulate,
 * render) instead of building it: output.c's, not for tests or other folders. */
#ifndef GPUSCHED_OUTPUT_INT_H
#define GPUSCHED_OUTPUT_INT_H

#include <stdio.h>

/* out_json_string writes s to f as a JSON string, quoted and escaped the way jansson's
 * dumps escape it (", \\, control characters; UTF-8 passes through), for commands that
 * stream a document instead of building a tree. Errors show up in ferror(f). */
void out_json_string(FILE *f, const char *s);
/* out_json_string_raw is the same without the quotes, to write one string in pieces. */
void out_json_string_raw(FILE *f, const char *s);

#endif
