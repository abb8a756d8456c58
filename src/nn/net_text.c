/* The network text format: one layer per line ("conv 5x5x32 pad=2"), read through the layer
 * table with line and column in every error, and written back so that parse(text(net)) is the
 * same network. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"

clg_status clg_net_text(const clg_net *net, char *buf, size_t cap, size_t *len)
{
    if (len)
        *len = 0;
    if (!net || (!buf && cap))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_text: net must not be NULL (buf NULL needs cap 0)");
    char line[CLG_LAYER_INPUTS * CLG_LAYER_NAME + 256];
    size_t n = (size_t)snprintf(line, sizeof line, "input %zux%zux%zu", net->input.h,
                                net->input.w, net->input.c);
    size_t norm = clg__net_norm_text(net, NULL, 0); /* the normalisation's values, any length */
    if (buf && n + norm + 1 < cap) {
        memcpy(buf, line, n);
        clg__net_norm_text(net, buf + n, norm + 1);
        memcpy(buf + n + norm, "\n", 2);
    }
    n += norm + 1;
    for (size_t i = 0; i < net->count; i++) {
        clg__layer_text(net, &net->layers[i], i, line, sizeof line - 1);
        strcat(line, "\n");
        size_t m = strlen(line);
        if (buf && n + m < cap)
            memcpy(buf + n, line, m + 1);
        n += m;
    }
    if (len)
        *len = n;
    if (cap && n >= cap) {
        buf[0] = '\0';
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "clg_net_text: %zu bytes needed, buffer holds %zu", n + 1, cap);
    }
    return CLG_OK;
}

#define MAX_TOKENS 16

/* Splits one line (comment removed) into tokens; CLG_ERR_INVALID_ARG past MAX_TOKENS or at a
 * control character. */
static clg_status tokenize(const clg__parser *p, const char *line, size_t len, clg__token *tok,
                           size_t *ntok)
{
    *ntok = 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)line[i] < 0x20 && !isspace((unsigned char)line[i]))
            return clg__text_error(p, &(clg__token){line + i, 1, i + 1}, CLG_ERR_INVALID_ARG,
                                   "control character 0x%02x", (unsigned char)line[i]);
    size_t i = 0;
    while (i < len) {
        while (i < len && isspace((unsigned char)line[i]))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && !isspace((unsigned char)line[i]))
            i++;
        clg__token t = {line + start, i - start, start + 1};
        if (*ntok == MAX_TOKENS)
            return clg__text_error(p, &t, CLG_ERR_INVALID_ARG, "too many words on one line");
        tok[(*ntok)++] = t;
    }
    return CLG_OK;
}

/* mean= or std=: one value or one per channel, comma-separated, into v (C values). */
static clg_status norm_values(const clg__parser *p, const clg__option *o, size_t c, float *v)
{
    size_t n = 0;
    for (const char *s = o->v, *end = o->v + o->vlen; s <= end; n++) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        size_t len = comma ? (size_t)(comma - s) : (size_t)(end - s);
        if (n == c || !clg__text_float(s, len, &v[n]))
            return clg__option_bad(p, o, n == c ? "one value or one per channel" : "numbers");
        s += len + 1;
    }
    if (n != 1 && n != c)
        return clg__option_bad(p, o, "one value or one per channel");
    for (size_t k = n; k < c; k++)
        v[k] = v[0];
    return CLG_OK;
}

/* The first line: "input HxWxC", and its normalisation "mean=.. std=..". */
static clg_status input_line(const clg__parser *p, const clg__token *tok, size_t ntok,
                             clg_net **net)
{
    long s[3];
    if (!clg__token_is(&tok[0], "input"))
        return clg__text_error(p, &tok[0], CLG_ERR_INVALID_ARG,
                               "the first layer must be \"input HxWxC\", found \"%.*s\"",
                               (int)tok[0].len, tok[0].s);
    if (ntok < 2 || clg__text_ints(tok[1].s, tok[1].len, 'x', s, 3) != 3 || !s[0] || !s[1] ||
        !s[2])
        return clg__text_error(p, ntok > 1 ? &tok[1] : &tok[0], CLG_ERR_INVALID_ARG,
                               "expected input HxWxC with sizes >= 1");
    clg_shape in = {1, (size_t)s[2], (size_t)s[0], (size_t)s[1]};
    float *v = ntok > 2 ? clg__malloc(2 * in.c * sizeof *v) : NULL;
    if (ntok > 2 && !v)
        return clg__oom(p->ctx, "net text");
    clg_status st = CLG_OK;
    for (size_t k = 0; k < in.c && v; k++)
        v[k] = 0.0f, v[in.c + k] = 1.0f; /* without mean=: 0; without std=: 1 */
    for (size_t t = 2; st == CLG_OK && t < ntok; t++) {
        clg__option o;
        st = clg__option_split(p, &tok[t], &o);
        if (st == CLG_OK && (clg__option_is(&o, "mean") || clg__option_is(&o, "std")))
            st = norm_values(p, &o, in.c, v + (clg__option_is(&o, "std") ? in.c : 0));
        else if (st == CLG_OK)
            st = clg__option_unknown(p, &o, "input", "mean, std");
    }
    for (size_t k = 0; st == CLG_OK && v && k < in.c; k++)
        if (!(v[in.c + k] > 0.0f))
            st = clg__text_error(p, &tok[1], CLG_ERR_INVALID_ARG, "std of channel %zu is %g; "
                                 "it must be above 0", k + 1, (double)v[in.c + k]);
    if (st == CLG_OK)
        st = p->ctx ? clg_net_create(p->ctx, in, net) : clg__net_create_spec(in, net);
    if (st == CLG_OK && v)
        st = clg_net_set_input_normalization(*net, v, v + in.c, in.c);
    free(v);
    return st;
}

/* Appends the layers named in a comma-separated list (at token t) to l's inputs. */
static clg_status name_list(const clg__parser *p, clg_net *net, const clg__token *t,
                            const char *s, size_t len, clg__layer *l)
{
    for (size_t i = 0; i <= len;) {
        size_t end = i;
        while (end < len && s[end] != ',')
            end++;
        size_t at = clg__net_find(net, s + i, end - i);
        if (end == i || at == CLG__NOT_FOUND)
            return clg__text_error(p, t, CLG_ERR_INVALID_ARG, "no earlier layer named \"%.*s\"",
                                   (int)(end - i), s + i);
        if (l->nin == CLG_LAYER_INPUTS)
            return clg__text_error(p, t, CLG_ERR_INVALID_ARG, "more than %d inputs",
                                   CLG_LAYER_INPUTS);
        l->from[l->nin++] = at;
        i = end + 1;
    }
    return CLG_OK;
}

/* The words every layer line may hold: name=NAME, from=A[,B..] (its inputs, instead of the
 * previous line's output), lr=F (its parameters learn at F times the rate: MATLAB's
 * WeightLearnRateFactor), and for an add or concat the names of its further inputs. They
 * are taken out of tok; what is left is the kind's own. */
static clg_status graph_words(const clg__parser *p, clg_net *net, const clg__layer_def *def,
                              clg__token *tok, size_t *ntok, clg__layer *l)
{
    clg__token from = {0}, more = {0}; /* copies: tok is compacted below */
    size_t kept = 1;
    for (size_t i = 1; i < *ntok; i++) {
        const clg__token *t = &tok[i];
        if (t->len > 5 && !strncmp(t->s, "name=", 5)) {
            const char *bad = clg__net_bad_name(net, t->s + 5, t->len - 5);
            if (bad)
                return clg__text_error(p, t, CLG_ERR_INVALID_ARG, "name \"%.*s\": %s",
                                       (int)t->len - 5, t->s + 5, bad);
            snprintf(l->name, sizeof l->name, "%.*s", (int)t->len - 5, t->s + 5);
        } else if (t->len > 5 && !strncmp(t->s, "from=", 5)) {
            from = *t;
        } else if (t->len > 3 && !strncmp(t->s, "lr=", 3)) {
            char num[64], *end;
            snprintf(num, sizeof num, "%.*s", (int)t->len - 3, t->s + 3);
            double f = strtod(num, &end);
            if (*end || !(f >= 0.0 && f <= 1e6))
                return clg__text_error(p, t, CLG_ERR_INVALID_ARG, "lr=%s: a learning-rate factor "
                                       ">= 0", num);
            l->lr_set = 1, l->lr_factor = (float)f;
        } else if (def->multi_input && !memchr(t->s, '=', t->len)) {
            if (more.s)
                return clg__text_error(p, t, CLG_ERR_INVALID_ARG,
                                       "the inputs are one comma-separated list");
            more = *t;
        } else {
            tok[kept++] = *t;
        }
    }
    *ntok = kept;
    clg_status st = CLG_OK;
    if (from.s)
        st = name_list(p, net, &from, from.s + 5, from.len - 5, l);
    else
        l->from[l->nin++] = clg__net_default_input(net);
    if (st == CLG_OK && more.s)
        st = name_list(p, net, &more, more.s, more.len, l);
    return st;
}

/* A layer line: its kind's entry reads the settings, the builder adds it. */
static clg_status layer_line(const clg__parser *p, clg__token *tok, size_t ntok, clg_net *net)
{
    if (clg__token_is(&tok[0], "input"))
        return clg__text_error(p, &tok[0], CLG_ERR_INVALID_ARG, "a second input layer");
    const clg__layer_def *def = clg__layer_def_named(&tok[0]);
    if (!def) {
        char known[256];
        clg__layer_keywords(known, sizeof known);
        return clg__text_error(p, &tok[0], CLG_ERR_INVALID_ARG, "unknown layer \"%.*s\" (layers: %s)",
                               (int)tok[0].len, tok[0].s, known);
    }
    clg__layer l = {.kind = def->kind};
    clg_status st = graph_words(p, net, def, tok, &ntok, &l);
    if (st == CLG_OK)
        st = def->parse(p, tok, ntok, &l); /* its errors say line and column */
    if (st != CLG_OK)
        return st;
    st = clg__net_append(net, &l, def->keywords[0]);
    return st == CLG_OK ? st : clg__text_error(p, &tok[0], st, "%s", clg_last_error());
}

clg_status clg_net_parse(clg_ctx *ctx, const char *text, clg_net **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !text || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_net_parse: ctx, text and out must not be NULL");
    return clg__net_parse(ctx, text, out);
}

static clg_status parse_text(clg_ctx *ctx, const char *text, int whole, clg_net **out)
{
    *out = NULL;
    clg__parser p = {ctx, 0};
    clg_net *net = NULL;
    clg_status st = CLG_OK;
    const char *line = text;
    while (st == CLG_OK && *line) {
        p.line++;
        size_t len = strcspn(line, "\n");
        size_t code = strcspn(line, "#\n");
        clg__token tok[MAX_TOKENS];
        size_t ntok;
        st = tokenize(&p, line, code, tok, &ntok);
        if (st == CLG_OK && ntok)
            st = net ? layer_line(&p, tok, ntok, net) : input_line(&p, tok, ntok, &net);
        line += len + (line[len] == '\n');
    }
    if (st == CLG_OK && !net)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "net text: no layers (expected input HxWxC first)");
    if (st == CLG_OK && whole && !clg__net_has_output(net))
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "net text: line %zu: the last layer must be "
                       "softmax (the output)", p.line);
    if (st != CLG_OK) {
        clg_net_destroy(net);
        return st;
    }
    *out = net;
    return CLG_OK;
}

clg_status clg__net_parse(clg_ctx *ctx, const char *text, clg_net **out)
{
    return parse_text(ctx, text, 1, out);
}

clg_status clg__net_parse_prefix(const char *text, clg_net **out)
{
    return parse_text(NULL, text, 0, out);
}
