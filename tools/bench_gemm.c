/* clgrad-bench gemm: GFLOP/s of the built-in SGEMM beside CLBlast on the same device and, when
 * built with it, OpenBLAS on the host, for square and CNN-layer shapes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#ifdef CLGRAD_BENCH_OPENBLAS
#include <cblas.h>
#endif

typedef struct shape {
    const char *name;
    size_t m, n, k;
    int big; /* only on GPUs unless asked for by --shape (seconds a run on a CPU) */
} shape;

static const shape shapes[] = {
    {"sq256", 256, 256, 256, 0},     {"sq512", 512, 512, 512, 0},   {"sq1024", 1024, 1024, 1024, 0},
    {"sq2048", 2048, 2048, 2048, 0}, {"sq4096", 4096, 4096, 4096, 1}, {"conv1", 32, 50176, 25, 0},
    {"conv2", 64, 12544, 800, 0},    {"fc1", 64, 1024, 3136, 0},    {"fc1t", 1024, 64, 3136, 0},
};

typedef struct result {
    double med, lo, hi;
} result;

static void report(const bench_opts *o, const clg_ctx *ctx, const shape *s, const char *impl,
                   result r)
{
    if (o->json)
        bench_json_row(ctx, "gemm", "\"shape\":\"%s\",\"m\":%zu,\"n\":%zu,\"k\":%zu,\"impl\":\"%s\","
                       "\"gflops\":%.1f,\"gflops_min\":%.1f,\"gflops_max\":%.1f",
                       s->name, s->m, s->n, s->k, impl, r.med, r.lo, r.hi);
    else
        printf("%-8s %6zu %6zu %6zu  %-9s %8.1f  (%.1f-%.1f)\n", s->name, s->m, s->n, s->k, impl,
               r.med, r.lo, r.hi);
    fflush(stdout);
}

static result summarise(double *gf, int runs)
{
    result r;
    r.lo = bench_min(gf, (size_t)runs);
    r.hi = bench_max(gf, (size_t)runs);
    r.med = bench_median(gf, (size_t)runs);
    return r;
}

/* Times clg_sgemm on ctx with the given backend; returns GFLOP/s or a negative on failure. */
static int time_device(clg_ctx *ctx, const bench_opts *o, const shape *s, clg_gemm_backend be,
                       clg_tensor *a, clg_tensor *b, clg_tensor *c, result *out)
{
    double gf[64];
    int runs = o->runs > 64 ? 64 : o->runs;
    if (clg_gemm_set_backend(ctx, be) != CLG_OK)
        return -1;
    clg_matrix ma = {a, 0, s->k}, mb = {b, 0, s->n}, mc = {c, 0, s->n};
    for (int r = -1; r < runs; r++) { /* run -1 warms up: compiles, allocates scratch */
        double t0 = bench_now();
        clg_status st = clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, s->m, s->n, s->k, 1.0f, ma, mb,
                                  0.0f, mc);
        if (st == CLG_OK)
            st = clg_ctx_finish(ctx);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-bench: %s: %s\n", clg_status_name(st), clg_ctx_last_error(ctx));
            return -1;
        }
        if (r >= 0)
            gf[r] = 2e-9 * (double)s->m * (double)s->n * (double)s->k / (bench_now() - t0);
    }
    *out = summarise(gf, runs);
    return 0;
}

#ifdef CLGRAD_BENCH_OPENBLAS
static void time_openblas(const bench_opts *o, const shape *s, const float *a, const float *b,
                          float *c, result *out)
{
    double gf[64];
    int runs = o->runs > 64 ? 64 : o->runs;
    for (int r = -1; r < runs; r++) {
        double t0 = bench_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n, (int)s->k,
                    1.0f, a, (int)s->k, b, (int)s->n, 0.0f, c, (int)s->n);
        if (r >= 0)
            gf[r] = 2e-9 * (double)s->m * (double)s->n * (double)s->k / (bench_now() - t0);
    }
    *out = summarise(gf, runs);
}
#endif

static float *random_floats(size_t n, unsigned seed)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; x && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
    return x;
}

/* Implementations run one after the other over all shapes, OpenBLAS last: its threads keep
 * spinning for a while after each call and would slow whatever runs next on the same cores. */
int bench_gemm(const bench_opts *o, const char *only, const char *impl)
{
    static const char *const impls[] = {"builtin", "clblast", "openblas"};
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    if (!o->json)
        printf("SGEMM on %s, GFLOP/s: median of %d (min-max)\n%-8s %6s %6s %6s  %-9s %8s\n",
               clg_ctx_device(ctx)->name, o->runs, "shape", "m", "n", "k", "impl", "GFLOP/s");
    int rc = 0;
    for (size_t w = 0; w < 3 && rc == 0; w++) {
        if (impl && strcmp(impl, impls[w]) != 0)
            continue;
        if (w == 1 && !clg_gemm_has_clblast())
            continue;
#ifndef CLGRAD_BENCH_OPENBLAS
        if (w == 2)
            continue;
#endif
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && rc == 0; i++) {
            const shape *s = &shapes[i];
            if (only ? strcmp(only, s->name) != 0 : s->big && clg_ctx_device(ctx)->type == CLG_DEVICE_CPU)
                continue;
            float *ha = random_floats(s->m * s->k, 1), *hb = random_floats(s->k * s->n, 2);
            float *hc = malloc(s->m * s->n * sizeof *hc);
            clg_tensor *a = NULL, *b = NULL, *c = NULL;
            result r;
            if (w < 2) {
                if (clg_tensor_create(ctx, (clg_shape){s->m, s->k, 1, 1}, &a) != CLG_OK ||
                    clg_tensor_create(ctx, (clg_shape){s->k, s->n, 1, 1}, &b) != CLG_OK ||
                    clg_tensor_create(ctx, (clg_shape){s->m, s->n, 1, 1}, &c) != CLG_OK ||
                    clg_tensor_upload(a, ha, s->m * s->k) != CLG_OK ||
                    clg_tensor_upload(b, hb, s->k * s->n) != CLG_OK ||
                    time_device(ctx, o, s, w == 0 ? CLG_GEMM_BUILTIN : CLG_GEMM_CLBLAST, a, b, c, &r) != 0) {
                    fprintf(stderr, "clgrad-bench: %s\n", clg_ctx_last_error(ctx));
                    rc = 1;
                }
            } else {
#ifdef CLGRAD_BENCH_OPENBLAS
                time_openblas(o, s, ha, hb, hc, &r);
#endif
            }
            if (rc == 0)
                report(o, ctx, s, impls[w], r);
            clg_tensor_destroy(a);
            clg_tensor_destroy(b);
            clg_tensor_destroy(c);
            free(ha);
            free(hb);
            free(hc);
        }
    }
    clg_ctx_destroy(ctx);
    return rc;
}
