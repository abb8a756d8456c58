/* One option parser for every tool: each tool describes its options in a table (name, value
 * kind, where the value goes, range or choices, help) and gets strict values, the bad argument
 * named with what is accepted, options before or after the operands, "--name=value",
 * -h/--help/--version and "--" (the rest are operands), and its --help text from the table. */
#ifndef CLGRAD_TOOLS_OPTS_H
#define CLGRAD_TOOLS_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef enum opt_kind {
    OPT_HEADING, /* not an option: a line of the help text */
    OPT_FLAG,    /* no value: sets an int to 1 */
    OPT_TEXT,    /* a string (a file, a folder, a filter) */
    OPT_SIZE,    /* a whole number >= 0 into a size_t */
    OPT_INT,     /* a whole number into an int */
    OPT_U64,     /* a whole number >= 0 into a uint64_t */
    OPT_FLOAT,   /* a number into a float */
    OPT_DOUBLE,  /* a number into a double */
    OPT_CHOICE,  /* one of `choices` ("a|b|c"): its index into an int-sized enum, or
                    values[index] when values is given */
    OPT_CALL     /* parse(settings, value) decides; NULL back, or the reason it refuses */
} opt_kind;

/* A bound at or past this is no bound (min -UNBOUNDED, max UNBOUNDED). */
#define UNBOUNDED 1e300

typedef struct opt_def {
    opt_kind kind;
    const char *name;       /* "epochs" for --epochs */
    size_t at;              /* offsetof the field in the tool's settings */
    double min, max;        /* numbers: the range accepted, when min < max */
    const char *choices;    /* OPT_CHOICE */
    const int *values;      /* OPT_CHOICE: the enum values of the choices, or NULL */
    const char *value;      /* the value's name in the help ("N", "FILE") */
    const char *help;       /* its help: lines after the first indented; may be NULL */
    /* OPT_CALL: NULL when value is taken (the reason otherwise, as "expected HxW"). With a
     * flag-like OPT_CALL (value_name NULL) value is NULL. */
    const char *(*parse)(void *settings, const char *value);
    /* Called after the option was taken (another field it implies). */
    void (*then)(void *settings);
} opt_def;

typedef struct opt_tool {
    const char *name;       /* "clgrad-train" */
    const char *version;
    const char *usage;      /* the usage lines and what the tool does, before the options */
    const char *footer;     /* after the options, or NULL */
    const opt_def *defs;
    size_t ndefs;
    size_t min_operands, max_operands; /* (size_t)-1: no limit */
    const char *operands;   /* what they are, for messages ("MODEL IMAGE...") */
} opt_tool;

/* The tool's help text, from its table. */
void opts_usage(const opt_tool *t, FILE *f);

/* Parses argv into settings (its defaults already set) and moves the operands, in order, to
 * argv[1] .. argv[*noperands] (as getopt permutes). Returns 0 to go on, -1 after --help or
 * --version (exit 0), 2 after a usage error, said on stderr in one line naming the argument.
 * version NULL in the tool: clgrad's. */
int opts_parse(const opt_tool *t, int argc, char **argv, void *settings, size_t *noperands);

/* Strict numbers for tools' own values: the whole text, in range. 1 when taken. */
int opts_size(const char *text, size_t *out);
int opts_double(const char *text, double *out);

#endif
