/* dra.h - the DRA selector environment (stored or new expressions) and device values. */
#ifndef CEL_DRA_H
#define CEL_DRA_H

#include <stdbool.h>

#include "cel/check.h"

/* cel_dra_env returns the environment (built once, thread-safe), NULL when out of memory. */
const struct cel_env *cel_dra_env(bool stored);

#endif
