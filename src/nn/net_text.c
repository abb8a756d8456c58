/* The network text format: one layer per line ("conv 5x5x32 pad=2"), parsed with line and
 * column in every error, and written back so that parse(text(net)) is the same network. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"

static const char *act_name(clg_activation f)
{
    static const char *const names[] = {"relu", "leaky", "elu", "sigmoid", "tanh"};
    return f >= CLG_ACT_RELU && f <= CLG_ACT_TANH ? names[f] : "?";
}

/* "a" when the four pads are one value, "a,b" for (h, w) pairs, else all four. */
static int pad_text(char *buf, size_t cap, int t, int b, int l, int r)
{
    if (t == b && b == l && l == r)
        return snprintf(buf, cap, "%d", t);
    if (t == b && l == r)
        return snprintf(buf, cap, "%d,%d", t, l);
    return snprintf(buf, cap, "%d,%d,%d,%d", t, b, l, r);
}

static int pair_text(char *buf, size_t cap, int h, int w)
{
    return h == w ? snprintf(buf, cap, "%d", h) : snprintf(buf, cap, "%d,%d", h, w);
}

/* The shortest decimal form that reads back as the same float ("0.4", not "0.400000006"). */
static const char *short_float(float v, char out[32])
{
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(out, 32, "%.*g", digits, (double)v);
        if (strtof(out, NULL) == v)
            break;
    }
    return out;
}

void clg__layer_text(const clg__layer *l, char *buf, size_t cap)
{
    char a[64], b[64], f1[32], f2[32];
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__))
    switch (l->kind) {
    case CLG_LAYER_CONV2D: {
        const clg_conv2d_desc *d = &l->conv;
        PUT("conv %zux%zux%zu", l->kernel_h, l->kernel_w, l->filters);
        if (d->pad_top || d->pad_bottom || d->pad_left || d->pad_right) {
            pad_text(a, sizeof a, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right);
            PUT(" pad=%s", a);
        }
        if (d->stride_h != 1 || d->stride_w != 1) {
            pair_text(b, sizeof b, d->stride_h, d->stride_w);
            PUT(" stride=%s", b);
        }
        if (d->dilation_h != 1 || d->dilation_w != 1) {
            pair_text(b, sizeof b, d->dilation_h, d->dilation_w);
            PUT(" dilation=%s", b);
        }
        if (d->groups != 1)
            PUT(" groups=%d", d->groups);
        if (!l->bias)
            PUT(" bias=0");
        break;
    }
    case CLG_LAYER_POOL2D: {
        const clg_pool2d_desc *d = &l->pool;
        PUT("%s %dx%d", d->mode == CLG_POOL_MAX ? "maxpool" : "avgpool", d->window_h, d->window_w);
        if (d->stride_h != d->window_h || d->stride_w != d->window_w) {
            pair_text(b, sizeof b, d->stride_h, d->stride_w);
            PUT(" stride=%s", b);
        }
        if (d->pad_top || d->pad_bottom || d->pad_left || d->pad_right) {
            pad_text(a, sizeof a, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right);
            PUT(" pad=%s", a);
        }
        if (d->ceil_mode)
            PUT(" ceil=1");
        if (d->mode == CLG_POOL_AVG_EXCLUDE)
            PUT(" exclude-pad=1");
        break;
    }
    case CLG_LAYER_GLOBAL_AVG_POOL:
        PUT("gap");
        break;
    case CLG_LAYER_FC:
        PUT("fc %zu", l->outputs);
        break;
    case CLG_LAYER_BATCHNORM:
        PUT("batchnorm momentum=%s eps=%s", short_float(l->momentum, f1), short_float(l->eps, f2));
        break;
    case CLG_LAYER_DROPOUT:
        PUT("dropout %s", short_float(l->p, f1));
        break;
    case CLG_LAYER_ACTIVATION:
        PUT("%s", act_name(l->act));
        if (l->act == CLG_ACT_LEAKY_RELU || l->act == CLG_ACT_ELU)
            PUT(" alpha=%s", short_float(l->alpha, f1));
        break;
    case CLG_LAYER_SOFTMAX_XENT:
        PUT("softmax");
        break;
    }
#undef PUT
}

clg_status clg_net_text(const clg_net *net, char *buf, size_t cap, size_t *len)
{
    if (len)
        *len = 0;
    if (!net || (!buf && cap))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_text: net must not be NULL (buf NULL needs cap 0)");
    char line[200];
    size_t n = (size_t)snprintf(line, sizeof line, "input %zux%zux%zu\n", net->input.h,
                                net->input.w, net->input.c);
    if (buf && n < cap)
        memcpy(buf, line, n + 1);
    for (size_t i = 0; i < net->count; i++) {
        clg__layer_text(&net->layers[i], line, sizeof line - 1);
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

/* --- parsing --- */

typedef struct token {
    const char *s;
    size_t len;
    size_t col;   /* 1-based */
} token;

typedef struct parser {
    clg_ctx *ctx;
    size_t line;
} parser;

#define MAX_TOKENS 16

static clg_status perr(const parser *p, const token *t, clg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static clg_status perr(const parser *p, const token *t, clg_status st, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return clg__fail(p->ctx, st, "net text: line %zu, column %zu: %s", p->line, t ? t->col : 1,
                     text);
}

static int tok_is(const token *t, const char *word)
{
    return t->len == strlen(word) && !strncmp(t->s, word, t->len);
}

/* Parses up to max non-negative integers separated by sep ('x' or ','); returns how many,
 * 0 on any junk. Each value must fit an int. */
static int parse_ints(const char *s, size_t len, char sep, long *out, int max)
{
    int n = 0;
    size_t i = 0;
    while (i < len && n < max) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        long v = 0;
        while (i < len && isdigit((unsigned char)s[i])) {
            v = v * 10 + (s[i++] - '0');
            if (v > 1 << 24)
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

static int parse_float(const char *s, size_t len, float *out)
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

/* key=value options after the layer's positional arguments. */
typedef struct option {
    const char *key;
    const token *value;   /* the whole token; the value starts after '=' */
    const char *v;
    size_t vlen;
} option;

static clg_status split_option(const parser *p, const token *t, option *o)
{
    const char *eq = memchr(t->s, '=', t->len);
    if (!eq || eq == t->s || eq + 1 == t->s + t->len)
        return perr(p, t, CLG_ERR_INVALID_ARG, "expected key=value, found \"%.*s\"", (int)t->len,
                     t->s);
    o->value = t;
    o->key = t->s;
    o->v = eq + 1;
    o->vlen = (size_t)(t->s + t->len - o->v);
    return CLG_OK;
}

static int key_is(const option *o, const char *key)
{
    size_t klen = (size_t)(o->v - 1 - o->key);
    return klen == strlen(key) && !strncmp(o->key, key, klen);
}

static clg_status bad_value(const parser *p, const option *o, const char *want)
{
    return perr(p, o->value, CLG_ERR_INVALID_ARG, "%.*s: expected %s, found \"%.*s\"",
                (int)(o->v - 1 - o->key), o->key, want, (int)o->vlen, o->v);
}

/* pad=N, pad=H,W, pad=T,B,L,R, or (for convolutions) pad=same. */
static clg_status opt_pad(const parser *p, const option *o, int same_ok, int *same, int pad[4])
{
    long v[4];
    if (same_ok && o->vlen == 4 && !strncmp(o->v, "same", 4)) {
        *same = 1;
        return CLG_OK;
    }
    int n = parse_ints(o->v, o->vlen, ',', v, 4);
    if (n == 1)
        pad[0] = pad[1] = pad[2] = pad[3] = (int)v[0];
    else if (n == 2)
        pad[0] = pad[1] = (int)v[0], pad[2] = pad[3] = (int)v[1];
    else if (n == 4)
        pad[0] = (int)v[0], pad[1] = (int)v[1], pad[2] = (int)v[2], pad[3] = (int)v[3];
    else
        return bad_value(p, o, same_ok ? "N, H,W, T,B,L,R or same" : "N, H,W or T,B,L,R");
    return CLG_OK;
}

static clg_status opt_pair(const parser *p, const option *o, int min, int *h, int *w)
{
    long v[2];
    int n = parse_ints(o->v, o->vlen, ',', v, 2);
    if (n < 1 || v[0] < min || v[n - 1] < min)
        return bad_value(p, o, min ? "N or H,W (at least 1)" : "N or H,W");
    *h = (int)v[0];
    *w = (int)v[n - 1];
    return CLG_OK;
}

static clg_status opt_flag(const parser *p, const option *o, int *out)
{
    if (o->vlen != 1 || (o->v[0] != '0' && o->v[0] != '1'))
        return bad_value(p, o, "0 or 1");
    *out = o->v[0] == '1';
    return CLG_OK;
}

static clg_status opt_float(const parser *p, const option *o, float *out)
{
    return parse_float(o->v, o->vlen, out) ? CLG_OK : bad_value(p, o, "a number");
}

static clg_status unknown_option(const parser *p, const option *o, const char *layer,
                                 const char *known)
{
    return perr(p, o->value, CLG_ERR_INVALID_ARG, "%s has no option \"%.*s\" (options: %s)",
                layer, (int)(o->v - 1 - o->key), o->key, known);
}

static clg_status expect_args(const parser *p, const token *tok, size_t ntok, size_t want,
                              const char *usage)
{
    if (ntok < want + 1)
        return perr(p, &tok[0], CLG_ERR_INVALID_ARG, "%.*s needs an argument: %s",
                    (int)tok[0].len, tok[0].s, usage);
    return CLG_OK;
}

static clg_status parse_conv(clg_net *net, const parser *p, const token *tok, size_t ntok)
{
    clg_status st = expect_args(p, tok, ntok, 1, "conv HxWxFILTERS [pad=..] [stride=..]");
    long k[3];
    if (st == CLG_OK && parse_ints(tok[1].s, tok[1].len, 'x', k, 3) != 3)
        st = perr(p, &tok[1], CLG_ERR_INVALID_ARG, "expected HxWxFILTERS, found \"%.*s\"",
                  (int)tok[1].len, tok[1].s);
    clg_conv2d_desc d = clg_conv2d_desc_default();
    int pad[4] = {0, 0, 0, 0}, same = 0, bias = 1;
    for (size_t i = 2; st == CLG_OK && i < ntok; i++) {
        option o = {0};
        st = split_option(p, &tok[i], &o);
        if (st != CLG_OK)
            break;
        if (key_is(&o, "pad"))
            st = opt_pad(p, &o, 1, &same, pad);
        else if (key_is(&o, "stride"))
            st = opt_pair(p, &o, 1, &d.stride_h, &d.stride_w);
        else if (key_is(&o, "dilation"))
            st = opt_pair(p, &o, 1, &d.dilation_h, &d.dilation_w);
        else if (key_is(&o, "groups")) {
            long g;
            if (parse_ints(o.v, o.vlen, ',', &g, 1) != 1 || g < 1)
                st = bad_value(p, &o, "a count >= 1");
            d.groups = (int)g;
        } else if (key_is(&o, "bias"))
            st = opt_flag(p, &o, &bias);
        else
            st = unknown_option(p, &o, "conv", "pad, stride, dilation, groups, bias");
    }
    if (st != CLG_OK)
        return st;
    if (same) { /* output size = ceil(input / stride): total padding (k-1)*dilation at stride 1 */
        int th = (int)(k[0] - 1) * d.dilation_h, tw = (int)(k[1] - 1) * d.dilation_w;
        pad[0] = th / 2, pad[1] = th - th / 2, pad[2] = tw / 2, pad[3] = tw - tw / 2;
    }
    d.pad_top = pad[0], d.pad_bottom = pad[1], d.pad_left = pad[2], d.pad_right = pad[3];
    st = clg_net_add_conv2d(net, (size_t)k[0], (size_t)k[1], (size_t)k[2], &d, bias);
    return st == CLG_OK ? st : perr(p, &tok[0], st, "%s", clg_last_error());
}

static clg_status parse_pool(clg_net *net, const parser *p, const token *tok, size_t ntok,
                             int max)
{
    clg_status st = expect_args(p, tok, ntok, 1, "maxpool HxW [stride=..] [pad=..]");
    long k[2];
    if (st == CLG_OK && parse_ints(tok[1].s, tok[1].len, 'x', k, 2) != 2)
        st = perr(p, &tok[1], CLG_ERR_INVALID_ARG, "expected HxW, found \"%.*s\"",
                  (int)tok[1].len, tok[1].s);
    clg_pool2d_desc d = clg_pool2d_desc_default();
    if (st == CLG_OK) {
        d.mode = max ? CLG_POOL_MAX : CLG_POOL_AVG;
        d.window_h = d.stride_h = (int)k[0];
        d.window_w = d.stride_w = (int)k[1];
    }
    int pad[4] = {0, 0, 0, 0}, same = 0;
    for (size_t i = 2; st == CLG_OK && i < ntok; i++) {
        option o = {0};
        int flag = 0;
        st = split_option(p, &tok[i], &o);
        if (st != CLG_OK)
            break;
        if (key_is(&o, "pad"))
            st = opt_pad(p, &o, 0, &same, pad);
        else if (key_is(&o, "stride"))
            st = opt_pair(p, &o, 1, &d.stride_h, &d.stride_w);
        else if (key_is(&o, "ceil")) {
            st = opt_flag(p, &o, &flag);
            d.ceil_mode = flag;
        } else if (!max && key_is(&o, "exclude-pad")) {
            st = opt_flag(p, &o, &flag);
            d.mode = flag ? CLG_POOL_AVG_EXCLUDE : CLG_POOL_AVG;
        } else
            st = unknown_option(p, &o, max ? "maxpool" : "avgpool",
                                max ? "stride, pad, ceil" : "stride, pad, ceil, exclude-pad");
    }
    if (st != CLG_OK)
        return st;
    d.pad_top = pad[0], d.pad_bottom = pad[1], d.pad_left = pad[2], d.pad_right = pad[3];
    st = clg_net_add_pool2d(net, &d);
    return st == CLG_OK ? st : perr(p, &tok[0], st, "%s", clg_last_error());
}

/* Layers with only key=value options and simple settings. */
static clg_status parse_simple(clg_net *net, const parser *p, const token *tok, size_t ntok)
{
    clg_status st = CLG_OK;
    const token *name = &tok[0];
    float alpha = tok_is(name, "elu") ? 1.0f : 0.01f, momentum = 0.1f, eps = 1e-5f, prob = 0.5f;
    size_t first_opt = 1;
    long units = 0;
    if (tok_is(name, "fc")) {
        st = expect_args(p, tok, ntok, 1, "fc UNITS");
        if (st == CLG_OK && (parse_ints(tok[1].s, tok[1].len, ',', &units, 1) != 1 || units < 1))
            st = perr(p, &tok[1], CLG_ERR_INVALID_ARG, "expected a unit count >= 1, found \"%.*s\"",
                      (int)tok[1].len, tok[1].s);
        first_opt = 2;
    } else if (tok_is(name, "dropout") && ntok > 1 && !memchr(tok[1].s, '=', tok[1].len)) {
        if (!parse_float(tok[1].s, tok[1].len, &prob))
            st = perr(p, &tok[1], CLG_ERR_INVALID_ARG, "expected a probability, found \"%.*s\"",
                      (int)tok[1].len, tok[1].s);
        first_opt = 2;
    }
    int is_act = tok_is(name, "relu") || tok_is(name, "leaky") || tok_is(name, "elu") ||
                 tok_is(name, "sigmoid") || tok_is(name, "tanh");
    if (!is_act && !tok_is(name, "fc") && !tok_is(name, "gap") && !tok_is(name, "batchnorm") &&
        !tok_is(name, "dropout") && !tok_is(name, "softmax"))
        return perr(p, name, CLG_ERR_INVALID_ARG,
                    "unknown layer \"%.*s\" (layers: conv, maxpool, avgpool, gap, fc, batchnorm, "
                    "dropout, relu, leaky, elu, sigmoid, tanh, softmax)", (int)name->len, name->s);
    for (size_t i = first_opt; st == CLG_OK && i < ntok; i++) {
        option o = {0};
        st = split_option(p, &tok[i], &o);
        if (st != CLG_OK)
            break;
        if ((tok_is(name, "leaky") || tok_is(name, "elu")) && key_is(&o, "alpha"))
            st = opt_float(p, &o, &alpha);
        else if (tok_is(name, "batchnorm") && key_is(&o, "momentum"))
            st = opt_float(p, &o, &momentum);
        else if (tok_is(name, "batchnorm") && key_is(&o, "eps"))
            st = opt_float(p, &o, &eps);
        else if (tok_is(name, "dropout") && key_is(&o, "p"))
            st = opt_float(p, &o, &prob);
        else
            st = perr(p, &tok[i], CLG_ERR_INVALID_ARG, "%.*s takes no option \"%.*s\"",
                      (int)name->len, name->s, (int)tok[i].len, tok[i].s);
    }
    if (st != CLG_OK)
        return st;
    if (tok_is(name, "fc"))
        st = clg_net_add_fc(net, (size_t)units);
    else if (tok_is(name, "gap"))
        st = clg_net_add_global_avg_pool(net);
    else if (tok_is(name, "batchnorm"))
        st = clg_net_add_batchnorm(net, momentum, eps);
    else if (tok_is(name, "dropout"))
        st = clg_net_add_dropout(net, prob);
    else if (tok_is(name, "softmax"))
        st = clg_net_add_softmax_xent(net);
    else {
        clg_activation f = tok_is(name, "relu") ? CLG_ACT_RELU : tok_is(name, "leaky") ? CLG_ACT_LEAKY_RELU
                         : tok_is(name, "elu") ? CLG_ACT_ELU : tok_is(name, "sigmoid") ? CLG_ACT_SIGMOID
                         : CLG_ACT_TANH;
        st = clg_net_add_activation(net, f, alpha);
    }
    return st == CLG_OK ? st : perr(p, name, st, "%s", clg_last_error());
}

/* Splits one line (comment removed) into tokens; CLG_ERR_INVALID_ARG past MAX_TOKENS. */
static clg_status tokenize(const parser *p, const char *line, size_t len, token *tok,
                           size_t *ntok)
{
    *ntok = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && isspace((unsigned char)line[i]))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && !isspace((unsigned char)line[i]))
            i++;
        token t = {line + start, i - start, start + 1};
        if (*ntok == MAX_TOKENS)
            return perr(p, &t, CLG_ERR_INVALID_ARG, "too many words on one line");
        tok[(*ntok)++] = t;
    }
    return CLG_OK;
}

/* A network without a context holds no tensors: shapes and settings only. */
static clg_status net_create(clg_ctx *ctx, clg_shape input, clg_net **out)
{
    if (ctx)
        return clg_net_create(ctx, input, out);
    clg_net *net = clg__calloc(1, sizeof *net);
    if (!net)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "net text: out of host memory");
    input.n = 1;
    net->input = input;
    *out = net;
    return CLG_OK;
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

clg_status clg__net_parse(clg_ctx *ctx, const char *text, clg_net **out)
{
    *out = NULL;
    parser p = {ctx, 0};
    clg_net *net = NULL;
    clg_status st = CLG_OK;
    const char *line = text;
    while (st == CLG_OK && *line) {
        p.line++;
        size_t len = strcspn(line, "\n");
        size_t code = strcspn(line, "#\n");
        token tok[MAX_TOKENS];
        size_t ntok;
        st = tokenize(&p, line, code, tok, &ntok);
        if (st == CLG_OK && ntok) {
            for (size_t i = 0; i < code && st == CLG_OK; i++)
                if ((unsigned char)line[i] < 0x20 && !isspace((unsigned char)line[i]))
                    st = perr(&p, &(token){line + i, 1, i + 1}, CLG_ERR_INVALID_ARG,
                              "control character 0x%02x", (unsigned char)line[i]);
            if (st != CLG_OK)
                break;
            if (!net) {
                long s[3];
                if (!tok_is(&tok[0], "input"))
                    st = perr(&p, &tok[0], CLG_ERR_INVALID_ARG,
                              "the first layer must be \"input HxWxC\", found \"%.*s\"",
                              (int)tok[0].len, tok[0].s);
                else if (ntok != 2 || parse_ints(tok[1].s, tok[1].len, 'x', s, 3) != 3 ||
                         !s[0] || !s[1] || !s[2])
                    st = perr(&p, ntok > 1 ? &tok[1] : &tok[0], CLG_ERR_INVALID_ARG,
                              "expected input HxWxC with sizes >= 1");
                else
                    st = net_create(ctx, (clg_shape){1, (size_t)s[2], (size_t)s[0], (size_t)s[1]},
                                    &net);
            } else if (tok_is(&tok[0], "conv")) {
                st = parse_conv(net, &p, tok, ntok);
            } else if (tok_is(&tok[0], "maxpool") || tok_is(&tok[0], "avgpool")) {
                st = parse_pool(net, &p, tok, ntok, tok_is(&tok[0], "maxpool"));
            } else if (tok_is(&tok[0], "input")) {
                st = perr(&p, &tok[0], CLG_ERR_INVALID_ARG, "a second input layer");
            } else {
                st = parse_simple(net, &p, tok, ntok);
            }
        }
        line += len + (line[len] == '\n');
    }
    if (st == CLG_OK && !net)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "net text: no layers (expected input HxWxC first)");
    if (st == CLG_OK && (!net->count || net->layers[net->count - 1].kind != CLG_LAYER_SOFTMAX_XENT))
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "net text: line %zu: the last layer must be "
                       "softmax (the output)", p.line);
    if (st != CLG_OK) {
        clg_net_destroy(net);
        return st;
    }
    *out = net;
    return CLG_OK;
}
