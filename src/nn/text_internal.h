/* What every layer kind's entry uses to read and write its line of the network text format:
 * the words of a line, errors with line and column, key=value options, and numbers written
 * so that they read back the same. */
#ifndef CLGRAD_NN_TEXT_INTERNAL_H
#define CLGRAD_NN_TEXT_INTERNAL_H

#include <stddef.h>
#include "runtime/runtime_internal.h"

typedef struct clg__token {
    const char *s;
    size_t len;
    size_t col; /* 1-based */
} clg__token;

typedef struct clg__parser {
    clg_ctx *ctx; /* NULL when parsing a spec */
    size_t line;
} clg__parser;

/* key=value after a layer's positional arguments. */
typedef struct clg__option {
    const clg__token *value; /* the whole word */
    const char *key, *v;
    size_t klen, vlen;
} clg__option;

/* "net text: line L, column C: ..." at token t (column 1 when t is NULL). */
clg_status clg__text_error(const clg__parser *p, const clg__token *t, clg_status st,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int clg__token_is(const clg__token *t, const char *word);
/* Up to max integers in [0, CLG__TEXT_MAX_INT] separated by sep; how many, 0 on any junk. */
#define CLG__TEXT_MAX_INT (1L << 24)
int clg__text_ints(const char *s, size_t len, char sep, long *out, int max);
/* Whether the len bytes at s hold digits (and separators sep) with a number past
 * CLG__TEXT_MAX_INT: a size too large, not junk. */
int clg__text_too_large(const char *s, size_t len, char sep);
/* A finite float; 0 on junk or a value a float cannot hold. */
int clg__text_float(const char *s, size_t len, float *out);
/* tok[1] as HxW.. with `count` sizes (CLG_ERR_INVALID_ARG saying `want` otherwise), after
 * checking that it is there at all (`usage` in the message). */
clg_status clg__text_sizes(const clg__parser *p, const clg__token *tok, size_t ntok, int count,
                           const char *usage, long *out);

clg_status clg__option_split(const clg__parser *p, const clg__token *t, clg__option *o);
int clg__option_is(const clg__option *o, const char *key);
clg_status clg__option_bad(const clg__parser *p, const clg__option *o, const char *want);
clg_status clg__option_unknown(const clg__parser *p, const clg__option *o, const char *layer,
                               const char *known);
/* pad=N, pad=H,W, pad=T,B,L,R, or (same_ok) pad=same. pad: top, bottom, left, right. */
clg_status clg__option_pad(const clg__parser *p, const clg__option *o, int same_ok, int *same,
                           int pad[4]);
/* N or H,W, each >= min. */
clg_status clg__option_pair(const clg__parser *p, const clg__option *o, int min, int *h, int *w);
clg_status clg__option_flag(const clg__parser *p, const clg__option *o, int *out);
clg_status clg__option_float(const clg__parser *p, const clg__option *o, float *out);
/* Bytes: N, or N with K, M or G (binary multiples). */
clg_status clg__option_bytes(const clg__parser *p, const clg__option *o, size_t *out);

/* A line being written: appends stop at cap but n counts what was asked. */
typedef struct clg__text_out {
    char *buf;
    size_t cap, n;
} clg__text_out;

void clg__text_put(clg__text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* " key=a" when the four pads are one value, "a,b" for (h, w) pairs, else all four; nothing
 * when all are 0. */
void clg__text_pad(clg__text_out *o, int top, int bottom, int left, int right);
/* " key=h" or " key=h,w". */
void clg__text_pair(clg__text_out *o, const char *key, int h, int w);
/* " key=" and the shortest decimal form that reads back as v ("0.4", not "0.400000006"). */
void clg__text_float_option(clg__text_out *o, const char *key, float v);
/* " key=" and bytes with the largest binary suffix that keeps them exact. */
void clg__text_bytes(clg__text_out *o, const char *key, size_t bytes);

#endif
