/* Scoring the convolutions' register blocks (conv_mr x conv_nr of clg_gemm_params): the
 * implicit and Winograd algorithms checked against a double reference in every pass, then
 * the passes of the default network's and ResNet-20's layers timed with the algorithms AUTO
 * picks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv_internal.h"
#include "ops/gemm_internal.h"

typedef struct tune_layer {
    size_t N, C, H, K, R, pad;
} tune_layer;

/* c1 and c2 of the default network; ResNet-20's three stages (batch 64) */
static const tune_layer timed[] = {
    {64, 1, 28, 32, 5, 2}, {64, 32, 14, 64, 5, 2}, {64, 16, 28, 16, 3, 1}, {64, 32, 14, 32, 3, 1},
    {64, 64, 7, 64, 3, 1},
};
#define N_TIMED (sizeof timed / sizeof timed[0])

static float next_value(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)(*seed >> 9) / 4194304.0f - 1.0f;
}

/* Plain NCHW references in double: y (forward), dx (pass 1) or dw (pass 2). */
static void reference(const tune_layer *l, int pass, const float *x, const float *w, const float *dy,
                      double *out)
{
    size_t H = l->H, P = H + 2 * l->pad - l->R + 1, R = l->R;
    size_t n_out = pass == 0 ? l->N * l->K * P * P : pass == 1 ? l->N * l->C * H * H : l->K * l->C * R * R;
    memset(out, 0, n_out * sizeof *out);
    for (size_t n = 0; n < l->N; n++)
        for (size_t k = 0; k < l->K; k++)
            for (size_t c = 0; c < l->C; c++)
                for (size_t r = 0; r < R; r++)
                    for (size_t s = 0; s < R; s++)
                        for (size_t p = 0; p < P; p++)
                            for (size_t q = 0; q < P; q++) {
                                long ih = (long)(p + r) - (long)l->pad, iw = (long)(q + s) - (long)l->pad;
                                if (ih < 0 || iw < 0 || ih >= (long)H || iw >= (long)H)
                                    continue;
                                size_t xi = ((n * l->C + c) * H + (size_t)ih) * H + (size_t)iw;
                                size_t wi = ((k * l->C + c) * R + r) * R + s;
                                size_t yi = ((n * l->K + k) * P + p) * P + q;
                                if (pass == 0)
                                    out[yi] += (double)x[xi] * w[wi];
                                else if (pass == 1)
                                    out[xi] += (double)dy[yi] * w[wi];
                                else
                                    out[wi] += (double)dy[yi] * x[xi];
                            }
}

static clg_status run_pass(clg_ctx *ctx, const clg_conv2d_desc *d, clg_tensor *const t[4], int pass)
{
    if (pass == 0) /* t: x, w, y or dy, dx */
        return clg_conv2d_forward(ctx, d, t[0], t[1], NULL, t[2]);
    if (pass == 1)
        return clg_conv2d_backward_data(ctx, d, t[2], t[1], t[3]);
    return clg_conv2d_backward_weights(ctx, d, t[0], t[2], t[1]);
}

static clg_status layer_tensors(clg_ctx *ctx, const tune_layer *l, clg_tensor *t[4])
{
    size_t P = l->H + 2 * l->pad - l->R + 1;
    clg_shape shapes[4] = {{l->N, l->C, l->H, l->H}, {l->K, l->C, l->R, l->R}, {l->N, l->K, P, P},
                           {l->N, l->C, l->H, l->H}};
    clg_status st = CLG_OK;
    for (int i = 0; i < 4; i++)
        t[i] = NULL;
    for (int i = 0; i < 4 && st == CLG_OK; i++)
        st = clg_tensor_create(ctx, shapes[i], &t[i]);
    return st;
}

static void destroy_all(clg_tensor *t[4])
{
    for (int i = 0; i < 4; i++)
        clg_tensor_destroy(t[i]);
}

/* One algorithm's three passes on one small layer against the reference. */
static clg_status check_layer(clg_ctx *ctx, const tune_layer *l, clg_conv_algo algo, unsigned seed)
{
    clg_tensor *t[4];
    clg_status st = layer_tensors(ctx, l, t);
    size_t n[4];
    for (int i = 0; i < 4; i++)
        n[i] = t[i] ? clg_tensor_shape(t[i]).n * clg_tensor_shape(t[i]).c * clg_tensor_shape(t[i]).h *
                          clg_tensor_shape(t[i]).w : 0;
    size_t most = n[1] > n[2] ? n[1] : n[2]; /* the largest a pass writes */
    most = n[3] > most ? n[3] : most;
    float *host = st == CLG_OK ? clg__malloc((n[0] + n[1] + n[2] + most) * sizeof *host) : NULL;
    double *ref = st == CLG_OK ? clg__malloc(most * sizeof *ref) : NULL;
    if (st == CLG_OK && (!host || !ref))
        st = clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "conv tuner: out of memory");
    float *x = host, *w = x + (st == CLG_OK ? n[0] : 0), *dy = w + (st == CLG_OK ? n[1] : 0),
          *out = dy + (st == CLG_OK ? n[2] : 0);
    clg_conv2d_desc d = clg_conv2d_desc_default();
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = (int)l->pad;
    d.algo = algo;
    for (int pass = 0; pass < 3 && st == CLG_OK; pass++) {
        for (size_t i = 0; i < n[0] + n[1] + n[2]; i++)
            host[i] = next_value(&seed);
        int got = pass == 0 ? 2 : pass == 1 ? 3 : 1; /* the tensor the pass writes */
        st = clg_tensor_upload(t[0], x, n[0]);
        if (st == CLG_OK && pass != 2)
            st = clg_tensor_upload(t[1], w, n[1]);
        if (st == CLG_OK && pass != 0)
            st = clg_tensor_upload(t[2], dy, n[2]);
        if (st == CLG_OK)
            st = clg_tensor_fill(t[got], NAN); /* an unwritten element fails */
        if (st == CLG_OK)
            st = run_pass(ctx, &d, t, pass);
        if (st == CLG_OK)
            st = clg_tensor_download(t[got], out, n[got]);
        if (st != CLG_OK)
            break;
        reference(l, pass, x, w, dy, ref);
        double num = 0, den = 0;
        for (size_t i = 0; i < n[got]; i++) {
            num += isnan(out[i]) ? INFINITY : (out[i] - ref[i]) * (out[i] - ref[i]);
            den += ref[i] * ref[i];
        }
        /* float32 sums of up to N*P*Q products (the weight gradient), Winograd's transforms
         * add a few roundings more: a bound that grows with the sums' length */
        double sums = (double)(pass == 2 ? l->N * l->H * l->H : l->C * l->R * l->R);
        if (!(sqrt(num / den) <= 1e-5 * (sqrt(sums / 16.0) + 4.0)))
            st = clg__fail(ctx, CLG_ERR_NUMERICS, "wrong %s results of the %s convolution on "
                           "N%zu C%zu %zux%zu K%zu %zux%zu (relative error %.3g)",
                           pass == 0 ? "forward" : pass == 1 ? "backward-data" : "backward-weights",
                           clg_conv_algo_name(algo), l->N, l->C, l->H, l->H, l->K, l->R, l->R,
                           sqrt(num / den));
    }
    free(host);
    free(ref);
    destroy_all(t);
    return st;
}

/* One layer's three passes (a clg__tune_timer). */
typedef struct layer_run {
    clg_ctx *ctx;
    const clg_conv2d_desc *d;
    clg_tensor *const *t;
} layer_run;

static clg_status time_passes(void *arg, double *sec)
{
    const layer_run *r = arg;
    double t0 = clg__now();
    clg_status st = CLG_OK;
    for (int pass = 0; pass < 3 && st == CLG_OK; pass++)
        st = run_pass(r->ctx, r->d, r->t, pass);
    if (st == CLG_OK)
        st = clg_ctx_finish(r->ctx);
    *sec = clg__now() - t0;
    return st;
}

/* A timed layer's tensors (filled) and descriptor. */
static clg_status timed_setup(clg_ctx *ctx, const tune_layer *l, clg_tensor *t[4], clg_conv2d_desc *d)
{
    clg_status st = layer_tensors(ctx, l, t);
    for (int i = 0; i < 4 && st == CLG_OK; i++)
        st = clg_tensor_fill(t[i], 0.25f);
    *d = clg_conv2d_desc_default();
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = (int)l->pad;
    return st;
}

/* Median GFLOP/s (2*N*K*C*R*S*P*Q per pass) of one layer's three passes together. */
static clg_status time_layer(clg_ctx *ctx, const tune_layer *l, int runs, double *gflops)
{
    clg_tensor *t[4];
    clg_conv2d_desc d;
    clg_status st = timed_setup(ctx, l, t, &d);
    size_t P = l->H + 2 * l->pad - l->R + 1;
    double flops = 3 * 2.0 * (double)(l->N * l->K * l->C * l->R * l->R * P * P), sec = 1;
    layer_run r = {ctx, &d, t};
    if (st == CLG_OK)
        st = clg__tune_time(time_passes, &r, runs, &sec);
    destroy_all(t);
    if (st == CLG_OK)
        *gflops = 1e-9 * flops / sec;
    return st;
}

/* The awkward layers that every candidate's implicit and Winograd passes must get right. */
static clg_status check_all(clg_ctx *ctx)
{
    static const tune_layer checked[] = {{3, 5, 9, 7, 3, 1}, {2, 3, 7, 33, 5, 2}, {1, 17, 6, 3, 3, 0}};
    clg_status st = CLG_OK;
    for (size_t i = 0; i < sizeof checked / sizeof checked[0] && st == CLG_OK; i++) {
        st = check_layer(ctx, &checked[i], CLG_CONV_ALGO_IMPLICIT, (unsigned)i + 1);
        if (st == CLG_OK && checked[i].R == 3) /* Winograd: its F(4x4, 3x3) products */
            st = check_layer(ctx, &checked[i], CLG_CONV_ALGO_WINOGRAD, (unsigned)i + 11);
    }
    return st;
}

clg_status clg_conv_tune_compare(clg_ctx *ctx, const clg_gemm_params *p, const clg_gemm_params *base,
                                 int runs, double *ratio)
{
    clg__tune_guard g;
    clg_status st = clg__tune_begin(ctx, "clg_conv_tune_compare", p, base, 1, runs, ratio, &g);
    if (st == CLG_OK)
        st = check_all(ctx);
    double logsum = 0;
    for (size_t i = 0; i < N_TIMED && st == CLG_OK; i++) {
        clg_tensor *t[4];
        clg_conv2d_desc d;
        st = timed_setup(ctx, &timed[i], t, &d);
        layer_run r = {ctx, &d, t};
        double one = 1;
        if (st == CLG_OK)
            st = clg__tune_pairs(&g, p, base, time_passes, &r, runs, &one);
        destroy_all(t);
        logsum += log(one);
    }
    if (st == CLG_OK)
        *ratio = exp(logsum / (double)N_TIMED);
    clg__tune_end(&g);
    return st;
}

clg_status clg_conv_tune_score(clg_ctx *ctx, const clg_gemm_params *p, int runs, double *score)
{
    clg__tune_guard g;
    clg_status st = clg__tune_begin(ctx, "clg_conv_tune_score", p, NULL, 0, runs, score, &g);
    if (st == CLG_OK) /* awkward sizes: channels and pixels off every tile, one image, several */
        st = check_all(ctx);
    double logsum = 0;
    for (size_t i = 0; i < N_TIMED && st == CLG_OK; i++) {
        double g = 0;
        st = time_layer(ctx, &timed[i], runs, &g);
        logsum += log(g > 0 ? g : 1e-9);
    }
    if (st == CLG_OK)
        *score = exp(logsum / (double)N_TIMED);
    clg__tune_end(&g);
    return st;
}
