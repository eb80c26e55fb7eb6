/* flag.h - command-line flags for every program of the project, read the way kubectl's
 * (cobra/pflag) are.
 *
 * A command describes its flags in one table of struct flag, ended by FLAG_END, which may
 * include another table in its place (FLAG_GROUP_OF: flags several commands share); flag_parse
 * reads argv against it: --name VALUE, --name=VALUE, -n VALUE, -nVALUE and -n=VALUE; a bool flag never takes
 * the next word (--name=false turns it off); a list flag may repeat and splits "a,b" into a
 * and b; "--" ends the flags; -h and --help ask for help. A flag may name an environment
 * variable, read by flag_parse_env, so that with env first and argv second the command line
 * wins. flag_usage writes the flags' part of --help from the same table, so the help cannot
 * forget a flag.
 *
 * Nothing here prints: a fault comes back in a struct flag_fault (what is wrong, with which
 * word and which flag) and each program words it the way its users expect. */
#ifndef BASE_FLAG_H
#define BASE_FLAG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

enum flag_type {
    FLAG_BOOL,   /* dest is a bool *; a value, when given, is read by go_parse_bool */
    FLAG_STRING, /* dest is a const char **: the value as given (borrowed from argv/environ) */
    FLAG_LIST,   /* dest is a struct flag_list *: every value, split at commas */
    FLAG_FUNC,   /* set(dest, value, err) reads and checks the value */
    FLAG_GROUP,  /* not a flag: dest is another table (ended by FLAG_END), included here */
};

/* The values of a list flag, or the positional arguments. */
struct flag_list {
    const char **v; /* borrowed from argv, or one of owned[] */
    size_t n;
    char **owned; /* copies made by the comma split, freed by flag_list_release */
    size_t nowned;
};

struct flag {
    const char *name; /* long name, without "--"; NULL ends the table ("" for a group) */
    char shorthand;   /* one letter, or 0 */
    enum flag_type type;
    void *dest;
    /* FLAG_FUNC: store value in dest; 0, or a negative errno-style code with err saying why
     * the value is refused (the program adds the flag's name) */
    int (*set)(void *dest, const char *value, struct err *err);
    const char *env;   /* environment variable flag_parse_env reads, or NULL */
    const char *arg;   /* the value's name in the help ("PATH"), NULL for a bool */
    const char *usage; /* help text; '\n' starts another line */
};

/* The end of a table, and a table included in another's place. */
#define FLAG_END                                                                                   \
    {                                                                                              \
        NULL, 0, FLAG_BOOL, NULL, NULL, NULL, NULL, NULL                                           \
    }
#define FLAG_GROUP_OF(table)                                                                       \
    {                                                                                              \
        "", 0, FLAG_GROUP, (void *)(table), NULL, NULL, NULL, NULL                                 \
    }

enum flag_status {
    FLAG_OK = 0,
    FLAG_HELP,      /* -h or --help: nothing after it was read */
    FLAG_UNKNOWN,   /* no flag of that name */
    FLAG_NO_VALUE,  /* the flag needs a value and the words ran out */
    FLAG_BAD_VALUE, /* the value was refused; err says why */
    FLAG_EXTRA,     /* a word that is not a flag where none is taken */
    FLAG_NOMEM,
};

struct flag_fault {
    enum flag_status status;
    const struct flag *flag; /* the flag at fault (NO_VALUE, BAD_VALUE) */
    const char *word;        /* the argv word at fault, or the environment variable's name */
    char name[128];          /* the flag as it was named: "--name", "-n", or the variable */
    char shorthand;          /* the letter, when the flag was named by it */
    const char *value;       /* BAD_VALUE: the value refused */
    struct err err;          /* BAD_VALUE: why */
};

/* flag_parse reads argv[1..argc) against the table flags. Words that are not flags (and every
 * word after "--") go to pos when pos is not NULL, else they are a FLAG_EXTRA fault. Returns
 * FLAG_OK, FLAG_HELP, or the fault's status with *fault filled; fault->status is the same.
 * Values stored so far stay stored. */
int flag_parse(const struct flag *flags, int argc, char **argv, struct flag_list *pos,
               struct flag_fault *fault);

/* flag_parse_env sets every flag whose environment variable is set, in table order, as if its
 * value had been given on the command line. Returns FLAG_OK or a fault as flag_parse does
 * (fault->name and fault->word are the variable's name). */
int flag_parse_env(const struct flag *flags, struct flag_fault *fault);

/* flag_list_release frees a list's arrays and copies (not the argv strings it borrows). */
void flag_list_release(struct flag_list *l);

/* flag_usage appends the flags' help to out, one flag a line as kubectl prints them:
 * "  -f, --filename FILE   usage", the usage column lined up (at column, or, with column 0,
 * after the longest flag of at most 30 characters), "[ENV]" after a flag read from the
 * environment, and last "  -h, --help" with help_usage. Returns 0 or buf_append's error. */
int flag_usage(const struct flag *flags, const char *help_usage, int column, struct buf *out);

#endif
