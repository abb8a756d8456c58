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

int clg__group_streamed(const clg__group *g)
{
    return g->streamed;
}

/* On a CPU the copies run on the cores that compute: nothing to gain by default. */
int clg__group_overlaps(const clg__group *g, const replica *r)
{
    return g->overlap > 0 ||
           (g->overlap < 0 && clg_ctx_device(r->net->ctx)->type != CLG_DEVICE_CPU);
}

/* grad[lo, hi) = the working devices' sums, in device order, / the batch; then to the caller. */
void clg__group_take_range(void *user, size_t lo, size_t hi)
{
    clg__group *g = user;
    float *grad = g->step_grad;
    const float inv = g->step_inv;
    size_t last = 0, have = 0;
    for (size_t i = 0; i < g->n; i++)
        last = g->r[i].count ? i : last;
    /* one pass per device (13 MB each for the default net): the last one adds and scales */
    for (size_t i = 0; i < g->n; i++) {
        const float *src = g->r[i].grad;
        if (!g->r[i].count)
            continue;
        if (i == last && !have)
            for (size_t k = lo; k < hi; k++)
                grad[k] = src[k] * inv;
        else if (i == last)
            for (size_t k = lo; k < hi; k++)
                grad[k] = (grad[k] + src[k]) * inv;
        else if (!have)
            memcpy(grad + lo, src + lo, (hi - lo) * sizeof *grad);
        else
            for (size_t k = lo; k < hi; k++)
                grad[k] += src[k];
        have = 1;
    }
    if (g->ntaken < CLG__MAX_RANGES) {
        g->taken_lo[g->ntaken] = lo;
        g->taken_hi[g->ntaken] = hi;
        g->ntaken++;
    }
    if (g->streaming)
        g->stream.ready(g->stream.user, grad + lo, lo, hi - lo);
}

void clg__group_stream_idle(void *user)
{
    clg__group *g = user;
    if (g->stream.idle)
        g->stream.idle(g->stream.user);
}

/* After a streamed step: the parameters no range covered (layers past the table), taken now. */
void clg__group_take_the_rest(clg__group *g)
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
            clg__group_take_range(g, at, next);
        if (i < n && g->taken_hi[i] > at)
            at = g->taken_hi[i];
    }
}

