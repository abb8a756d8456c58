/* Plain C convolution in double precision; see ref_conv.h. */
#include "ref_conv.h"
#include <stdlib.h>

int ref_conv_init(ref_conv *g)
{
    size_t eh = (g->R - 1) * g->dh + 1, ew = (g->S - 1) * g->dw + 1;
    if (eh > g->H + g->pt + g->pb || ew > g->W + g->pl + g->pr)
        return 0;
    g->P = (g->H + g->pt + g->pb - eh) / g->sh + 1;
    g->Q = (g->W + g->pl + g->pr - ew) / g->sw + 1;
    return 1;
}

/* Input row h of output row p and tap r, or -1 in the padding. */
static long in_row(const ref_conv *g, size_t p, size_t r)
{
    long h = (long)(p * g->sh + r * g->dh) - (long)g->pt;
    return h >= 0 && h < (long)g->H ? h : -1;
}

static long in_col(const ref_conv *g, size_t q, size_t s)
{
    long w = (long)(q * g->sw + s * g->dw) - (long)g->pl;
    return w >= 0 && w < (long)g->W ? w : -1;
}

#define X(n, c, h, w) ((((n) * g->C + (c)) * g->H + (size_t)(h)) * g->W + (size_t)(w))
#define Y(n, k, p, q) ((((n) * g->K + (k)) * g->P + (p)) * g->Q + (q))
#define WI(k, c, r, s) ((((k) * (g->C / g->G) + (c)) * g->R + (r)) * g->S + (s))

void ref_conv_forward_d(const ref_conv *g, const double *x, const double *w, double *y)
{
    size_t Cg = g->C / g->G, Kg = g->K / g->G;
    for (size_t n = 0; n < g->N; n++)
        for (size_t k = 0; k < g->K; k++)
            for (size_t p = 0; p < g->P; p++)
                for (size_t q = 0; q < g->Q; q++) {
                    double s = 0;
                    size_t grp = k / Kg;
                    for (size_t c = 0; c < Cg; c++)
                        for (size_t r = 0; r < g->R; r++)
                            for (size_t t = 0; t < g->S; t++) {
                                long h = in_row(g, p, r), ww = in_col(g, q, t);
                                if (h >= 0 && ww >= 0)
                                    s += x[X(n, grp * Cg + c, h, ww)] * w[WI(k, c, r, t)];
                            }
                    y[Y(n, k, p, q)] = s;
                }
}

static double *widen(const float *a, size_t n)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = a[i];
    return d;
}

void ref_conv_forward(const ref_conv *g, const float *x, const float *w, const float *bias, double *y)
{
    double *xd = widen(x, g->N * g->C * g->H * g->W);
    double *wd = widen(w, g->K * (g->C / g->G) * g->R * g->S);
    ref_conv_forward_d(g, xd, wd, y);
    if (bias)
        for (size_t n = 0; n < g->N; n++)
            for (size_t k = 0; k < g->K; k++)
                for (size_t i = 0; i < g->P * g->Q; i++)
                    y[(n * g->K + k) * g->P * g->Q + i] += bias[k];
    free(xd);
    free(wd);
}

void ref_conv_backward_data(const ref_conv *g, const float *dy, const float *w, double *dx)
{
    size_t Cg = g->C / g->G, Kg = g->K / g->G;
    for (size_t i = 0; i < g->N * g->C * g->H * g->W; i++)
        dx[i] = 0;
    for (size_t n = 0; n < g->N; n++)
        for (size_t k = 0; k < g->K; k++)
            for (size_t p = 0; p < g->P; p++)
                for (size_t q = 0; q < g->Q; q++) {
                    size_t grp = k / Kg;
                    for (size_t c = 0; c < Cg; c++)
                        for (size_t r = 0; r < g->R; r++)
                            for (size_t t = 0; t < g->S; t++) {
                                long h = in_row(g, p, r), ww = in_col(g, q, t);
                                if (h >= 0 && ww >= 0)
                                    dx[X(n, grp * Cg + c, h, ww)] +=
                                        (double)dy[Y(n, k, p, q)] * w[WI(k, c, r, t)];
                            }
                }
}

void ref_conv_backward_weights(const ref_conv *g, const float *x, const float *dy, double *dw)
{
    size_t Cg = g->C / g->G, Kg = g->K / g->G;
    for (size_t k = 0; k < g->K; k++)
        for (size_t c = 0; c < Cg; c++)
            for (size_t r = 0; r < g->R; r++)
                for (size_t t = 0; t < g->S; t++) {
                    double s = 0;
                    size_t grp = k / Kg;
                    for (size_t n = 0; n < g->N; n++)
                        for (size_t p = 0; p < g->P; p++)
                            for (size_t q = 0; q < g->Q; q++) {
                                long h = in_row(g, p, r), ww = in_col(g, q, t);
                                if (h >= 0 && ww >= 0)
                                    s += (double)dy[Y(n, k, p, q)] * x[X(n, grp * Cg + c, h, ww)];
                            }
                    dw[WI(k, c, r, t)] = s;
                }
}

void ref_conv_backward_bias(const ref_conv *g, const float *dy, double *db)
{
    for (size_t k = 0; k < g->K; k++) {
        double s = 0;
        for (size_t n = 0; n < g->N; n++)
            for (size_t i = 0; i < g->P * g->Q; i++)
                s += dy[(n * g->K + k) * g->P * g->Q + i];
        db[k] = s;
    }
}
