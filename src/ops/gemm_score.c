/* The GEMM tuner's measurements: a parameter set checked against a double reference on
 * awkward shapes, then timed on the shapes a CNN multiplies, alone (a score) or alternating
 * with another set (paired runs). The search that uses them: gemm_tune.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemm_internal.h"

typedef struct tune_shape {
    size_t m, n, k;
} tune_shape;

/* The default network's products (conv1, conv2, fc1, fc1t), one small and one large square. */
static const tune_shape tune_shapes[] = {
    {1024, 1024, 1024}, {32, 50176, 25}, {64, 12544, 800}, {64, 1024, 3136}, {1024, 64, 3136},
    {256, 256, 256},
};
#define N_SHAPES (sizeof tune_shapes / sizeof tune_shapes[0])

static float next_value(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)(*seed >> 9) / 4194304.0f - 1.0f; /* in [-1, 1) */
}

/* One product on fresh buffers of exactly its size, C poisoned with NaN; CLG_ERR_NUMERICS
 * when it differs from a double reference by more than a bound that grows with sqrt(k). */
static clg_status check_one(clg_ctx *ctx, size_t m, size_t n, size_t k, int ta, int tb, unsigned seed)
{
    float *h = clg__malloc((m * k + k * n + m * n) * sizeof *h);
    if (!h)
        return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "GEMM tuner: out of memory");
    float *a = h, *b = h + m * k, *c = b + k * n;
    for (size_t i = 0; i < m * k + k * n; i++)
        h[i] = next_value(&seed);
    clg_tensor *da = NULL, *db = NULL, *dc = NULL;
    clg_status st = clg_tensor_create(ctx, (clg_shape){m * k, 1, 1, 1}, &da);
    if (st == CLG_OK)
        st = clg_tensor_create(ctx, (clg_shape){k * n, 1, 1, 1}, &db);
    if (st == CLG_OK)
        st = clg_tensor_create(ctx, (clg_shape){m * n, 1, 1, 1}, &dc);
    if (st == CLG_OK)
        st = clg_tensor_upload(da, a, m * k);
    if (st == CLG_OK)
        st = clg_tensor_upload(db, b, k * n);
    if (st == CLG_OK)
        st = clg_tensor_fill(dc, NAN);
    clg_matrix ma = {da, 0, ta ? m : k}, mb = {db, 0, tb ? k : n}, mc = {dc, 0, n};
    if (st == CLG_OK)
        st = clg_sgemm(ctx, (clg_transpose)ta, (clg_transpose)tb, m, n, k, 1.0f, ma, mb, 0.0f, mc);
    if (st == CLG_OK)
        st = clg_tensor_download(dc, c, m * n);
    double num = 0, den = 0;
    for (size_t i = 0; st == CLG_OK && i < m * n; i++) {
        size_t r = i / n, col = i % n;
        double s = 0;
        for (size_t p = 0; p < k; p++)
            s += (double)(ta ? a[p * m + r] : a[r * k + p]) * (tb ? b[col * k + p] : b[p * n + col]);
        num += isnan(c[i]) ? INFINITY : (c[i] - s) * (c[i] - s);
        den += s * s;
    }
    /* float32 sums of k products: rounding error grows about as sqrt(k) */
    if (st == CLG_OK && !(sqrt(num / den) <= 1e-5 * sqrt((double)k / 16.0 + 1.0)))
        st = clg__fail(ctx, CLG_ERR_NUMERICS, "wrong results on %zux%zux%zu%s%s (relative error %.3g)",
                       m, n, k, ta ? " A^T" : "", tb ? " B^T" : "", sqrt(num / den));
    clg_tensor_destroy(da);
    clg_tensor_destroy(db);
    clg_tensor_destroy(dc);
    free(h);
    return st;
}

/* Awkward shapes (below, between and past every tile size), every transpose pair. */
static clg_status check_all(clg_ctx *ctx)
{
    static const size_t dims[][3] = {{33, 100, 257}, {7, 65, 300}, {100, 33, 1}, {64, 64, 64}, {1, 257, 33}};
    clg_status st = CLG_OK;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0] && st == CLG_OK; d++)
        for (int tr = 0; tr < 4 && st == CLG_OK; tr++)
            st = check_one(ctx, dims[d][0], dims[d][1], dims[d][2], tr & 1, tr >> 1,
                           (unsigned)(d * 4 + (size_t)tr + 1));
    return st;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}


/* Tensors big enough for every tuning shape. */
static clg_status shape_tensors(clg_ctx *ctx, clg_tensor *t[3])
{
    size_t most[3] = {1, 1, 1}; /* elements of A, B and C */
    for (size_t i = 0; i < N_SHAPES; i++) {
        size_t need[3] = {tune_shapes[i].m * tune_shapes[i].k, tune_shapes[i].k * tune_shapes[i].n,
                          tune_shapes[i].m * tune_shapes[i].n};
        for (int j = 0; j < 3; j++)
            most[j] = need[j] > most[j] ? need[j] : most[j];
    }
    clg_status st = CLG_OK;
    for (int j = 0; j < 3; j++)
        t[j] = NULL;
    for (int j = 0; j < 3 && st == CLG_OK; j++) {
        st = clg_tensor_create(ctx, (clg_shape){most[j], 1, 1, 1}, &t[j]);
        if (st == CLG_OK)
            st = clg_tensor_fill(t[j], j == 2 ? 0.0f : 0.5f);
    }
    return st;
}

/* One product of a tuning shape (a clg__tune_timer). */
typedef struct shape_run {
    clg_ctx *ctx;
    const tune_shape *s;
    clg_tensor *const *t;
} shape_run;

static clg_status time_once(void *arg, double *sec)
{
    const shape_run *r = arg;
    const tune_shape *s = r->s;
    clg_matrix a = {r->t[0], 0, s->k}, b = {r->t[1], 0, s->n}, c = {r->t[2], 0, s->n};
    double t0 = clg__now();
    clg_status st = clg_sgemm(r->ctx, CLG_NO_TRANS, CLG_NO_TRANS, s->m, s->n, s->k, 1.0f, a, b, 0.0f, c);
    if (st == CLG_OK)
        st = clg_ctx_finish(r->ctx);
    *sec = clg__now() - t0;
    return st;
}

/* Median GFLOP/s of one shape over `runs` timed runs after one untimed. */
static clg_status time_shape(clg_ctx *ctx, const tune_shape *s, int runs, clg_tensor *const t[3],
                             double *gflops)
{
    shape_run r = {ctx, s, t};
    double sec = 1;
    clg_status st = clg__tune_time(time_once, &r, runs, &sec);
    if (st == CLG_OK)
        *gflops = 2e-9 * (double)s->m * (double)s->n * (double)s->k / sec;
    return st;
}

clg_status clg__tune_time(clg__tune_timer time, void *arg, int runs, double *median)
{
    double v[CLG__TUNE_MAX_RUNS];
    for (int r = -1; r < runs; r++) {
        double sec = 1;
        clg_status st = time(arg, &sec);
        if (st != CLG_OK)
            return st;
        if (r >= 0)
            v[r] = sec;
    }
    qsort(v, (size_t)runs, sizeof v[0], cmp_double);
    *median = v[(runs - 1) / 2];
    return CLG_OK;
}

clg_status clg__tune_pairs(const clg__tune_guard *g, const clg_gemm_params *p,
                           const clg_gemm_params *base, clg__tune_timer time, void *arg, int runs,
                           double *ratio)
{
    double r[CLG__TUNE_MAX_RUNS], sp = 1, sb = 0;
    clg_status st = CLG_OK;
    for (int k = -1; k < runs && st == CLG_OK; k++) {
        g->s->params = *base;
        st = time(arg, &sb);
        g->s->params = *p;
        if (st == CLG_OK)
            st = time(arg, &sp);
        if (k >= 0)
            r[k] = sb / sp;
    }
    if (st == CLG_OK) {
        qsort(r, (size_t)runs, sizeof r[0], cmp_double);
        *ratio = r[runs / 2];
    }
    return st;
}


clg_status clg__tune_begin(clg_ctx *ctx, const char *what, const clg_gemm_params *p,
                           const clg_gemm_params *base, int need_base, int runs, double *out,
                           clg__tune_guard *g)
{
    g->s = NULL;
    if (!ctx || !p || (need_base && !base) || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: NULL argument", what);
    *out = 0;
    if (runs < 1 || runs > CLG__TUNE_MAX_RUNS)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: runs %d must be 1..%d", what, runs, CLG__TUNE_MAX_RUNS);
    clg_status st = clg__gemm_state_get(ctx, &g->s);
    if (st != CLG_OK)
        return st;
    g->params = g->s->params;
    g->backend = g->s->backend;
    g->s->backend = CLG_GEMM_BUILTIN;
    if (base)
        st = clg_gemm_set_params(ctx, base);
    if (st == CLG_OK)
        st = clg_gemm_set_params(ctx, p);
    return st;
}

void clg__tune_end(const clg__tune_guard *g)
{
    if (g->s) {
        g->s->params = g->params;
        g->s->backend = g->backend;
    }
}

clg_status clg_gemm_tune_compare(clg_ctx *ctx, const clg_gemm_params *p, const clg_gemm_params *base,
                                 int runs, double *ratio)
{
    clg__tune_guard g;
    clg_status st = clg__tune_begin(ctx, "clg_gemm_tune_compare", p, base, 1, runs, ratio, &g);
    if (st == CLG_OK)
        st = check_all(ctx);
    clg_tensor *t[3] = {NULL, NULL, NULL};
    if (st == CLG_OK)
        st = shape_tensors(ctx, t);
    double logsum = 0;
    for (size_t i = 0; i < N_SHAPES && st == CLG_OK; i++) {
        shape_run r = {ctx, &tune_shapes[i], t};
        double one = 1;
        st = clg__tune_pairs(&g, p, base, time_once, &r, runs, &one);
        logsum += log(one);
    }
    for (int j = 0; j < 3; j++)
        clg_tensor_destroy(t[j]);
    if (st == CLG_OK)
        *ratio = exp(logsum / (double)N_SHAPES);
    clg__tune_end(&g);
    return st;
}

static clg_status time_all(clg_ctx *ctx, int runs, double *score)
{
    clg_tensor *t[3];
    clg_status st = shape_tensors(ctx, t);
    double logsum = 0;
    for (size_t i = 0; i < N_SHAPES && st == CLG_OK; i++) {
        double g = 0;
        st = time_shape(ctx, &tune_shapes[i], runs, t, &g);
        logsum += log(g > 0 ? g : 1e-9);
    }
    for (int j = 0; j < 3; j++)
        clg_tensor_destroy(t[j]);
    *score = st == CLG_OK ? exp(logsum / (double)N_SHAPES) : 0;
    return st;
}

clg_status clg_gemm_tune_score(clg_ctx *ctx, const clg_gemm_params *p, int runs, double *score)
{
    clg__tune_guard g;
    clg_status st = clg__tune_begin(ctx, "clg_gemm_tune_score", p, NULL, 0, runs, score, &g);
    if (st == CLG_OK)
        st = check_all(ctx);
    if (st == CLG_OK)
        st = time_all(ctx, runs, score);
    clg__tune_end(&g);
    return st;
}
