/* The host's side of a multi-device step: the devices' gradient sums added in device order
 * and scaled, whole or (streaming to MPI) range by range as the devices finish reading them. */
#include <string.h>

#include "parallel/group_internal.h"

void clg__group_set_stream(clg__group *g, const clg__group_stream *s)
{
    g->has_stream = s != NULL && g->ranges_ok;
    if (s)
        g->stream = *s;
}

void clg__group_set_update(clg__group *g, const clg__group_update *u)
{
    g->has_update = u != NULL && g->ranges_ok;
    if (u)
        g->update = *u;
}

int clg__group_updated(const clg__group *g)
{
    return g->updated;
}

/* A range this step has taken (so that the step's end takes only the rest). */
static void note_taken(clg__group *g, size_t lo, size_t hi)
{
    if (g->ntaken < g->ranges.cap) {
        g->taken_lo[g->ntaken] = lo;
        g->taken_hi[g->ntaken] = hi;
        g->ntaken++;
    }
}

void clg__group_update_range(void *user, size_t lo, size_t hi)
{
    clg__group *g = user;
    note_taken(g, lo, hi);
    g->update.range(g->update.user, g->params, lo, hi);
}

int clg__group_streamed(const clg__group *g)
{
    return g->streamed;
}

/* On a CPU the copies run on the cores that compute: nothing to gain by default, unless the
 * replica computes in host memory (then there is nothing to copy, and a layer's gradients are
 * ready for the host, streaming, as soon as its backward is done). */
int clg__group_overlaps(const clg__group *g, const replica *r)
{
    return g->overlap > 0 ||
           (g->overlap < 0 &&
            (clg_ctx_decides_as_gpu(r->net->ctx) || r->shared));
}

/* dst = (have ? dst + src : src) * (last ? inv : 1) */
CLG__VECTOR_CLONES
static void add_scaled(float *restrict dst, const float *restrict src, size_t n, int have,
                       int last, float inv)
{
    if (!have && !last)
        memcpy(dst, src, n * sizeof *dst);
    else if (!have)
        for (size_t k = 0; k < n; k++)
            dst[k] = src[k] * inv;
    else if (last)
        for (size_t k = 0; k < n; k++)
            dst[k] = (dst[k] + src[k]) * inv;
    else
        for (size_t k = 0; k < n; k++)
            dst[k] += src[k];
}

/* The working devices before the last one (*last: its index, g->n if none works) added into
 * out[0, hi - lo) in device order, unscaled; whether there were any. */
static int sum_before_last(const clg__group *g, float *out, size_t lo, size_t hi, size_t *last)
{
    int have = 0;
    *last = g->n;
    for (size_t i = 0; i < g->n; i++)
        *last = g->r[i].count ? i : *last;
    for (size_t i = 0; *last < g->n && i < *last; i++) {
        if (!g->r[i].count)
            continue;
        add_scaled(out, g->r[i].grad + lo, hi - lo, have, 0, 1.0f);
        have = 1;
    }
    return have;
}

void clg__group_sum(const clg__group *g, float *out, size_t lo, size_t hi)
{
    /* one pass per device (13 MB each for the default net): the last one adds and scales */
    size_t last;
    int have = sum_before_last(g, out, lo, hi, &last);
    if (last < g->n)
        add_scaled(out, g->r[last].grad + lo, hi - lo, have, 1, g->step_inv);
}

size_t clg__group_shards(const clg__group *g, const float **first, const float **last,
                         float *inv)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (!g->r[i].count)
            continue;
        *first = k++ ? *first : g->r[i].grad;
        *last = g->r[i].grad;
    }
    *inv = g->step_inv;
    return k;
}

void clg__group_sum_but_last(const clg__group *g, float *out, size_t lo, size_t hi)
{
    size_t last;
    (void)sum_before_last(g, out, lo, hi, &last);
}

/* grad[lo, hi) = the working devices' sums, in device order, / the batch; then to the caller. */
void clg__group_take_range(void *user, size_t lo, size_t hi)
{
    clg__group *g = user;
    float *grad = g->step_grad;
    clg__group_sum(g, grad + lo, lo, hi);
    note_taken(g, lo, hi);
    if (g->streaming)
        g->stream.ready(g->stream.user, grad + lo, lo, hi - lo);
}

void clg__group_stream_idle(void *user)
{
    clg__group *g = user;
    if (g->stream.idle)
        g->stream.idle(g->stream.user);
}

/* After a streamed or updating step: the parameters no range covered (layers past the
 * table), taken now. */
void clg__group_take_the_rest(clg__group *g, void (*take)(void *user, size_t lo, size_t hi))
{
    size_t n = g->ntaken; /* sort the taken ranges by start (a few dozen) */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && g->taken_lo[k - 1] > g->taken_lo[k]; k--) {
            size_t a = g->taken_lo[k], b = g->taken_hi[k];
            g->taken_lo[k] = g->taken_lo[k - 1], g->taken_hi[k] = g->taken_hi[k - 1];
            g->taken_lo[k - 1] = a, g->taken_hi[k - 1] = b;
        }
    size_t at = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t next = i < n ? g->taken_lo[i] : g->nparams;
        if (next > at)
            take(g, at, next);
        if (i < n && g->taken_hi[i] > at)
            at = g->taken_hi[i];
    }
}

