/* Reading and writing the pieces of a network text line that all layer kinds share. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/text_internal.h"

clg_status clg__text_error(const clg__parser *p, const clg__token *t, clg_status st,
                           const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return clg__fail(p->ctx, st, "net text: line %zu, column %zu: %s", p->line, t ? t->col : 1,
                     text);
}

int clg__token_is(const clg__token *t, const char *word)
{
    return t->len == strlen(word) && !strncmp(t->s, word, t->len);
}

int clg__text_too_large(const char *s, size_t len, char sep)
{
    size_t run = 0;
    int large = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == sep) {
            run = 0;
            continue;
        }
        if (!isdigit((unsigned char)s[i]))
            return 0;
        run = run || s[i] != '0' ? run + 1 : 0; /* significant digits */
        large |= run > 8 || (run == 8 && strtol(s + i - 7, NULL, 10) > CLG__TEXT_MAX_INT);
    }
    return large;
}

int clg__text_ints(const char *s, size_t len, char sep, long *out, int max)
{
    int n = 0;
    size_t i = 0;
    while (i < len && n < max) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        long v = 0;
        while (i < len && isdigit((unsigned char)s[i])) {
            v = v * 10 + (s[i++] - '0');
            if (v > CLG__TEXT_MAX_INT)
                return 0;
        }
        out[n++] = v;
        if (i < len) {
            if (s[i] != sep || i + 1 == len)
                return 0;
            i++;
        }
    }
    return i == len ? n : 0;
}

int clg__text_float(const char *s, size_t len, float *out)
{
    char buf[64];
    if (!len || len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !isfinite(v) || !isfinite((float)v))
        return 0; /* also numbers a float cannot hold */
    *out = (float)v;
    return 1;
}

clg_status clg__text_sizes(const clg__parser *p, const clg__token *tok, size_t ntok, int count,
                           const char *usage, long *out)
{
    if (ntok < 2)
        return clg__text_error(p, &tok[0], CLG_ERR_INVALID_ARG, "%.*s needs an argument: %s",
                               (int)tok[0].len, tok[0].s, usage);
    if (clg__text_ints(tok[1].s, tok[1].len, 'x', out, count) != count)
        return clg__text_error(p, &tok[1], CLG_ERR_INVALID_ARG, "expected %s, found \"%.*s\"%s",
                               count == 3 ? "HxWxFILTERS" : "HxW", (int)tok[1].len, tok[1].s,
                               clg__text_too_large(tok[1].s, tok[1].len, 'x')
                                   ? ": too large (at most 16777216 each)" : "");
    return CLG_OK;
}

clg_status clg__option_split(const clg__parser *p, const clg__token *t, clg__option *o)
{
    const char *eq = memchr(t->s, '=', t->len);
    if (!eq || eq == t->s || eq + 1 == t->s + t->len)
        return clg__text_error(p, t, CLG_ERR_INVALID_ARG, "expected key=value, found \"%.*s\"",
                               (int)t->len, t->s);
    o->value = t;
    o->key = t->s;
    o->klen = (size_t)(eq - t->s);
    o->v = eq + 1;
    o->vlen = (size_t)(t->s + t->len - o->v);
    return CLG_OK;
}

int clg__option_is(const clg__option *o, const char *key)
{
    return o->klen == strlen(key) && !strncmp(o->key, key, o->klen);
}

clg_status clg__option_bad(const clg__parser *p, const clg__option *o, const char *want)
{
    return clg__text_error(p, o->value, CLG_ERR_INVALID_ARG, "%.*s: expected %s, found \"%.*s\"",
                           (int)o->klen, o->key, want, (int)o->vlen, o->v);
}

clg_status clg__option_unknown(const clg__parser *p, const clg__option *o, const char *layer,
                               const char *known)
{
    if (!known)
        return clg__text_error(p, o->value, CLG_ERR_INVALID_ARG, "%s takes no option \"%.*s\"",
                               layer, (int)o->value->len, o->value->s);
    return clg__text_error(p, o->value, CLG_ERR_INVALID_ARG,
                           "%s has no option \"%.*s\" (options: %s)", layer, (int)o->klen, o->key,
                           known);
}

clg_status clg__option_pad(const clg__parser *p, const clg__option *o, int same_ok, int *same,
                           int pad[4])
{
    long v[4];
    if (same_ok && o->vlen == 4 && !strncmp(o->v, "same", 4)) {
        *same = 1; /* an odd padding's extra row and column at the end */
        return CLG_OK;
    }
    if (same_ok && o->vlen == 10 && !strncmp(o->v, "same-lower", 10)) {
        *same = 2; /* ... at the start */
        return CLG_OK;
    }
    int n = clg__text_ints(o->v, o->vlen, ',', v, 4);
    if (n == 1)
        pad[0] = pad[1] = pad[2] = pad[3] = (int)v[0];
    else if (n == 2)
        pad[0] = pad[1] = (int)v[0], pad[2] = pad[3] = (int)v[1];
    else if (n == 4)
        pad[0] = (int)v[0], pad[1] = (int)v[1], pad[2] = (int)v[2], pad[3] = (int)v[3];
    else
        return clg__option_bad(p, o, same_ok ? "N, H,W, T,B,L,R, same or same-lower"
                                             : "N, H,W or T,B,L,R");
    return CLG_OK;
}

clg_status clg__option_pair(const clg__parser *p, const clg__option *o, int min, int *h, int *w)
{
    long v[2];
    int n = clg__text_ints(o->v, o->vlen, ',', v, 2);
    if (n < 1 || v[0] < min || v[n - 1] < min)
        return clg__option_bad(p, o, min ? "N or H,W (at least 1)" : "N or H,W");
    *h = (int)v[0];
    *w = (int)v[n - 1];
    return CLG_OK;
}

clg_status clg__option_flag(const clg__parser *p, const clg__option *o, int *out)
{
    if (o->vlen != 1 || (o->v[0] != '0' && o->v[0] != '1'))
        return clg__option_bad(p, o, "0 or 1");
    *out = o->v[0] == '1';
    return CLG_OK;
}

clg_status clg__option_float(const clg__parser *p, const clg__option *o, float *out)
{
    return clg__text_float(o->v, o->vlen, out) ? CLG_OK : clg__option_bad(p, o, "a number");
}

clg_status clg__option_bytes(const clg__parser *p, const clg__option *o, size_t *out)
{
    static const char suffix[] = "KMG";
    size_t len = o->vlen, shift = 0;
    const char *s = len ? strchr(suffix, o->v[len - 1]) : NULL;
    if (s && *s) {
        shift = 10 * (size_t)(s - suffix + 1);
        len--;
    }
    uint64_t v = 0;
    int ok = len > 0;
    for (size_t i = 0; ok && i < len; i++) {
        ok = isdigit((unsigned char)o->v[i]) && v <= (UINT64_MAX - 9) / 10;
        v = v * 10 + (uint64_t)(o->v[i] - '0');
    }
    if (!ok || v > (uint64_t)(SIZE_MAX >> shift))
        return clg__option_bad(p, o, "bytes (N, or N with K, M or G)");
    *out = (size_t)(v << shift);
    return CLG_OK;
}

void clg__text_put(clg__text_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + (o->n < o->cap ? o->n : o->cap), o->n < o->cap ? o->cap - o->n : 0,
                      fmt, ap);
    va_end(ap);
    o->n += n > 0 ? (size_t)n : 0;
}

void clg__text_pad(clg__text_out *o, int t, int b, int l, int r)
{
    if (t == b && b == l && l == r) {
        if (t)
            clg__text_put(o, " pad=%d", t);
    } else if (t == b && l == r) {
        clg__text_put(o, " pad=%d,%d", t, l);
    } else {
        clg__text_put(o, " pad=%d,%d,%d,%d", t, b, l, r);
    }
}

void clg__text_pair(clg__text_out *o, const char *key, int h, int w)
{
    if (h == w)
        clg__text_put(o, " %s=%d", key, h);
    else
        clg__text_put(o, " %s=%d,%d", key, h, w);
}

void clg__text_float_option(clg__text_out *o, const char *key, float v)
{
    char s[32];
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(s, sizeof s, "%.*g", digits, (double)v);
        if (strtof(s, NULL) == v)
            break;
    }
    clg__text_put(o, key[0] ? " %s=%s" : "%s%s", key, s);
}

void clg__text_bytes(clg__text_out *o, const char *key, size_t bytes)
{
    static const char suffix[] = " KMG";
    int k = 0;
    while (k < 3 && bytes && !(bytes & 1023)) {
        bytes >>= 10;
        k++;
    }
    if (k)
        clg__text_put(o, " %s=%zu%c", key, bytes, suffix[k]);
    else
        clg__text_put(o, " %s=%zu", key, bytes);
}
