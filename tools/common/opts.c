/* The tools' option parser (opts.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/status.h"
#include "opts.h"

enum { HELP_COLUMN = 28, WIDTH = 80 };

int opts_size(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *text == '-' || *text == '+' || *end || errno || v > SIZE_MAX)
        return 0;
    *out = (size_t)v;
    return 1;
}

int opts_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* Whether text is a whole number written in digits, with an optional minus sign. */
static int digits(const char *text)
{
    text += *text == '-';
    if (!*text)
        return 0;
    while (*text >= '0' && *text <= '9')
        text++;
    return !*text;
}

static const opt_def *find(const opt_tool *t, const char *name, size_t len)
{
    for (size_t i = 0; i < t->ndefs; i++)
        if (t->defs[i].kind != OPT_HEADING && strlen(t->defs[i].name) == len &&
            !strncmp(t->defs[i].name, name, len))
            return &t->defs[i];
    return NULL;
}

static int takes_value(const opt_def *d)
{
    return d->kind != OPT_FLAG && (d->kind != OPT_CALL || d->value);
}

/* "a|b|c" as "a, b, c" into buf. */
static void choice_list(const char *choices, char *buf, size_t cap)
{
    size_t n = 0;
    for (const char *c = choices; *c && n + 3 < cap; c++) {
        if (*c == '|')
            buf[n++] = ',', buf[n++] = ' ';
        else
            buf[n++] = *c;
    }
    buf[n] = '\0';
}

/* The choice's index in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *value)
{
    size_t len = strlen(value);
    int i = 0;
    for (const char *c = choices; c; i++) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && !strncmp(c, value, n))
            return i;
        c = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* A range as words: "from 1 to 100", ">= 1". */
static void range_words(const opt_def *d, char *buf, size_t cap)
{
    if (d->max >= UNBOUNDED)
        snprintf(buf, cap, ">= %g", d->min);
    else if (d->min <= -UNBOUNDED)
        snprintf(buf, cap, "<= %g", d->max);
    else
        snprintf(buf, cap, "from %g to %g", d->min, d->max);
}

/* Stores value for option d; NULL, or why it is refused. */
static const char *take(const opt_def *d, const char *value, void *settings, char *why,
                        size_t cap)
{
    char *field = (char *)settings + d->at;
    int ranged = d->min < d->max, whole = d->kind == OPT_SIZE || d->kind == OPT_INT ||
                                          d->kind == OPT_U64;
    double v = 0;
    size_t u = 0;
    switch (d->kind) {
    case OPT_HEADING:
        return "not an option";
    case OPT_FLAG:
        *(int *)field = 1;
        return NULL;
    case OPT_TEXT:
        if (!*value)
            return "expected a value, not an empty word";
        *(const char **)field = value;
        return NULL;
    case OPT_CALL:
        return d->parse(settings, value);
    case OPT_CHOICE: {
        int k = choice_index(d->choices, value);
        char list[256];
        choice_list(d->choices, list, sizeof list);
        if (k < 0) {
            snprintf(why, cap, "the choices are %s", list);
            return why;
        }
        *(int *)field = d->values ? d->values[k] : k;
        return NULL;
    }
    case OPT_SIZE:
    case OPT_U64:
        if (opts_size(value, &u)) {
            v = (double)u;
        } else if (digits(value) && opts_double(value, &v)) { /* negative, or too large */
            if (!ranged || (v > 0 && d->max >= UNBOUNDED)) {
                snprintf(why, cap, v < 0 ? "expected a whole number >= 0" : "too large");
                return why;
            }
        } else {
            snprintf(why, cap, "expected a whole number");
            return why;
        }
        break;
    case OPT_INT:
    case OPT_FLOAT:
    case OPT_DOUBLE:
        if (!opts_double(value, &v)) {
            snprintf(why, cap, "expected %s", whole ? "a whole number" : "a number");
            return why;
        }
        if (whole && (!digits(value) || fabs(v) > 2e9)) {
            snprintf(why, cap, "expected a whole number");
            return why;
        }
        break;
    }
    if (ranged && (v < d->min || v > d->max)) {
        char range[96];
        range_words(d, range, sizeof range);
        snprintf(why, cap, "must be %s", range);
        return why;
    }
    if (d->kind == OPT_SIZE)
        *(size_t *)field = u;
    else if (d->kind == OPT_U64)
        *(uint64_t *)field = u;
    else if (d->kind == OPT_INT)
        *(int *)field = (int)v;
    else if (d->kind == OPT_FLOAT)
        *(float *)field = (float)v;
    else
        *(double *)field = v;
    return NULL;
}

static int usage_error(const opt_tool *t, const char *fmt, const char *a, const char *b,
                       const char *c)
{
    fprintf(stderr, "%s: ", t->name);
    fprintf(stderr, fmt, a, b, c);
    fprintf(stderr, " (%s --help lists the options)\n", t->name);
    return 2;
}

int opts_parse(const opt_tool *t, int argc, char **argv, void *settings, size_t *noperands)
{
    *noperands = 0;
    char **operands = argv + 1; /* written behind the reading: never past what is read */
    int only_operands = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_operands || a[0] != '-' || !a[1]) { /* "-" alone: standard input */
            operands[(*noperands)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_operands = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            opts_usage(t, stdout);
            return -1;
        }
        if (!strcmp(a, "--version")) {
            printf("%s %s\n", t->name, t->version ? t->version : clg_version());
            return -1;
        }
        if (a[1] != '-') { /* one dash: a long name typed short, or nothing we take */
            const opt_def *d = find(t, a + 1, strlen(a + 1));
            return d ? usage_error(t, "unknown option %s: options take two dashes, %s%s", a,
                                   "-", a)
                     : usage_error(t, "unknown option %s%s%s", a, "", "");
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_def *d = find(t, name, len);
        if (!d) {
            char typed[128];
            snprintf(typed, sizeof typed, "--%.*s", (int)(len < 100 ? len : 100), name);
            return usage_error(t, "unknown option %s%s%s", typed, "", "");
        }
        const char *value = NULL;
        if (takes_value(d)) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1] == '-' &&
                                       find(t, argv[i + 1] + 2, strlen(argv[i + 1] + 2))))
                value = argv[++i];
            if (!value) {
                fprintf(stderr, "%s: --%s needs a value (%s --help lists the options)\n",
                        t->name, d->name, t->name);
                return 2;
            }
        } else if (eq) {
            fprintf(stderr, "%s: --%s takes no value\n", t->name, d->name);
            return 2;
        }
        char why[256];
        const char *refused = take(d, value, settings, why, sizeof why);
        if (refused) {
            if (value)
                fprintf(stderr, "%s: --%s %s: %s\n", t->name, d->name, value, refused);
            else
                fprintf(stderr, "%s: --%s: %s\n", t->name, d->name, refused);
            return 2;
        }
        if (d->then)
            d->then(settings);
    }
    if (*noperands < t->min_operands || *noperands > t->max_operands) {
        if (*noperands > t->max_operands)
            fprintf(stderr, "%s: unexpected argument %s (it takes %s)\n", t->name,
                    operands[t->max_operands], t->operands ? t->operands : "no operands");
        else
            fprintf(stderr, "%s: expected %s (%s --help says more)\n", t->name, t->operands,
                    t->name);
        return 2;
    }
    return 0;
}

void opts_usage(const opt_tool *t, FILE *f)
{
    fputs(t->usage, f);
    for (size_t i = 0; i < t->ndefs; i++) {
        const opt_def *d = &t->defs[i];
        if (d->kind == OPT_HEADING) {
            fprintf(f, "%s\n", d->help);
            continue;
        }
        char head[128], list[256] = "";
        if (d->kind == OPT_CHOICE)
            choice_list(d->choices, list, sizeof list);
        const char *value = d->kind == OPT_CHOICE ? (d->value ? d->value : d->choices)
                                                  : takes_value(d) ? d->value : NULL;
        int n = snprintf(head, sizeof head, "  --%s%s%s", d->name, value ? " " : "",
                         value ? value : "");
        fputs(head, f);
        const char *help = d->help ? d->help : "";
        int col = n;
        if (col + 2 > HELP_COLUMN && *help) {
            fputc('\n', f);
            col = 0;
        }
        /* the help's words wrapped at the help column (its newlines are spaces) */
        for (const char *w = help; *w;) {
            while (*w == ' ' || *w == '\n')
                w++;
            size_t len = strcspn(w, " \n");
            if (!len)
                break;
            if (col > HELP_COLUMN && col + 1 + (int)len > WIDTH) {
                fputc('\n', f);
                col = 0;
            }
            if (col < HELP_COLUMN)
                col += fprintf(f, "%*s", HELP_COLUMN - col, "");
            else
                col += fprintf(f, " ");
            col += fprintf(f, "%.*s", (int)len, w);
            w += len;
        }
        fputc('\n', f);
    }
    if (t->footer)
        fputs(t->footer, f);
}
