/* The table of layer kinds, in clg_layer_kind order, and what all entries share. */
#include <string.h>

#include "nn/layer_table.h"

static const clg__layer_def *const table[] = {
    [CLG_LAYER_CONV2D] = &clg__layer_conv2d,
    [CLG_LAYER_POOL2D] = &clg__layer_pool2d,
    [CLG_LAYER_GLOBAL_AVG_POOL] = &clg__layer_global_avg_pool,
    [CLG_LAYER_FC] = &clg__layer_fc,
    [CLG_LAYER_BATCHNORM] = &clg__layer_batchnorm,
    [CLG_LAYER_DROPOUT] = &clg__layer_dropout,
    [CLG_LAYER_ACTIVATION] = &clg__layer_activation,
    [CLG_LAYER_SOFTMAX_XENT] = &clg__layer_softmax_xent,
    [CLG_LAYER_ADD] = &clg__layer_add,
    [CLG_LAYER_CONCAT] = &clg__layer_concat,
    [CLG_LAYER_MUL] = &clg__layer_mul,
    [CLG_LAYER_SLICE] = &clg__layer_slice,
    [CLG_LAYER_SHUFFLE] = &clg__layer_shuffle,
    [CLG_LAYER_PAD] = &clg__layer_pad,
    [CLG_LAYER_CONV_TRANSPOSE] = &clg__layer_conv_transpose,
    [CLG_LAYER_UPSAMPLE] = &clg__layer_upsample,
    [CLG_LAYER_CROP] = &clg__layer_crop,
    [CLG_LAYER_REGRESSION] = &clg__layer_regression,
    [CLG_LAYER_PIXEL_SOFTMAX] = &clg__layer_pixel_softmax,
};
#define KINDS (sizeof table / sizeof table[0])

const clg__layer_def *clg__layer_def_of(clg_layer_kind kind)
{
    return (size_t)kind < KINDS ? table[kind] : NULL;
}

const clg__layer_def *clg__layer_def_named(const clg__token *word)
{
    for (size_t k = 0; k < KINDS; k++)
        for (const char *const *w = table[k]->keywords; *w; w++)
            if (clg__token_is(word, *w))
                return table[k];
    return NULL;
}

void clg__layer_keywords(char *buf, size_t cap)
{
    clg__text_out o = {buf, cap, 0};
    buf[0] = '\0';
    for (size_t k = 0; k < KINDS; k++)
        for (const char *const *w = table[k]->keywords; *w; w++)
            clg__text_put(&o, "%s%s", o.n ? ", " : "", *w);
}

clg_status clg__layer_tensor(clg_net *net, clg_shape s, float fill, clg_tensor **out)
{
    clg_status st = clg_tensor_create(net->ctx, s, out);
    return st == CLG_OK ? clg_tensor_fill(*out, fill) : st;
}

clg_status clg__layer_options(const clg__parser *p, const clg__token *tok, size_t ntok,
                              size_t first, clg__layer *l,
                              clg_status (*fn)(const clg__parser *p, const clg__option *o,
                                               clg__layer *l))
{
    clg_status st = CLG_OK;
    for (size_t i = first; st == CLG_OK && i < ntok; i++) {
        clg__option o = {0};
        st = clg__option_split(p, &tok[i], &o);
        if (st == CLG_OK)
            st = fn(p, &o, l);
    }
    return st;
}

int clg__layer_pad_same(clg__layer *l, const long k[2], const long s[2], const long d[2],
                        int pad[4])
{
    long in[2] = {(long)l->in.h, (long)l->in.w};
    if (s[0] < 1 || s[1] < 1 || k[0] < 1 || k[1] < 1)
        return 0;
    for (int i = 0; i < 2; i++) {
        long out = (in[i] + s[i] - 1) / s[i], total = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i];
        total = total > 0 ? total : 0;
        long small = total / 2, big = total - small;
        pad[2 * i] = (int)(l->pad_same == 1 ? small : big);      /* top / left */
        pad[2 * i + 1] = (int)(l->pad_same == 1 ? big : small);  /* bottom / right */
    }
    l->pad_same = 0;
    return 1;
}

clg_status clg__layer_no_option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    return clg__option_unknown(p, o, clg__layer_def_of(l->kind)->keywords[0], NULL);
}
