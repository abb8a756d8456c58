/* clgrad-bench gemm: GFLOP/s of the built-in SGEMM beside CLBlast on the same device and, when
 * built with it, OpenBLAS on the host, for square and CNN-layer shapes. */
#define _GNU_SOURCE /* CPU_SET and sched_setaffinity, to pin OpenBLAS as POCL is pinned */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "bench_common.h"
#include "gemm_set.h"
#include "pocl_pin.h"
#include "tool_error.h"
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

enum { IMPLS = 4, MAX_RUNS = 64 };

#ifdef CLGRAD_BENCH_OPENBLAS
static void openblas_said(char *out, size_t cap, int json);
#endif
static const char *const impl_names[IMPLS] = {"builtin", "clblast", "openblas", "vs"};

/* The built-in's parameters: the device's, and those --vs gives (impl "vs"). */
typedef struct param_sets {
    clg_gemm_params base, vs;
    const char *vs_text; /* --vs as given */
} param_sets;

/* paired: the median of the runs' built-in / this ratios (0: none). */
static void report(const bench_opts *o, const clg_ctx *ctx, const param_sets *ps,
                   const shape *s, const char *impl, result r, double paired)
{
    if (o->json) {
        char extra[256] = "";
        size_t len = 0;
        if (paired > 0)
            len = (size_t)snprintf(extra, sizeof extra, ",\"builtin_ratio\":%.3f", paired);
        if (!strcmp(impl, "vs"))
            snprintf(extra + len, sizeof extra - len, ",\"vs\":\"%s\"", ps->vs_text);
#ifdef CLGRAD_BENCH_OPENBLAS
        if (!strcmp(impl, "openblas"))
            openblas_said(extra + len, sizeof extra - len, 1);
#endif
        bench_json_row(ctx, "gemm", "\"shape\":\"%s\",\"m\":%zu,\"n\":%zu,\"k\":%zu,\"impl\":\"%s\","
                       "\"gflops\":%.1f,\"gflops_min\":%.1f,\"gflops_max\":%.1f%s",
                       s->name, s->m, s->n, s->k, impl, r.med, r.lo, r.hi, extra);
    } else {
        printf("%-8s %6zu %6zu %6zu  %-9s %8.1f  (%.1f-%.1f)", s->name, s->m, s->n, s->k, impl,
               r.med, r.lo, r.hi);
        if (paired > 0)
            printf("  built-in / %s %.2f", impl, paired);
        printf("\n");
    }
    fflush(stdout);
}

static result summarise(const double *gf, int runs)
{
    double v[MAX_RUNS];
    memcpy(v, gf, (size_t)runs * sizeof *v);
    result r;
    r.lo = bench_min(v, (size_t)runs);
    r.hi = bench_max(v, (size_t)runs);
    r.med = bench_median(v, (size_t)runs);
    return r;
}

/* The operands of one shape, on the device and on the host. */
typedef struct operands {
    clg_tensor *a, *b, *c;
    float *ha, *hb, *hc;
} operands;

#ifdef CLGRAD_BENCH_OPENBLAS
/* The best OpenBLAS kernel family for this CPU by its flags ("" when plain SSE is all): the
 * peer must run its best, or the ratio means nothing. */
static const char *best_coretype(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int avx2 = 0, fma = 0, avx512 = 0, bf16 = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            avx2 = strstr(line, " avx2") != NULL, fma = strstr(line, " fma") != NULL;
            avx512 = strstr(line, " avx512f") != NULL, bf16 = strstr(line, " avx512_bf16") != NULL;
            break;
        }
    if (f)
        fclose(f);
    return bf16 ? "Cooperlake" : avx512 ? "SkylakeX" : avx2 && fma ? "Haswell" : "";
}

/* Whether OpenBLAS's core `core` uses the vector width `best` asks for (its own names of the
 * AVX2 and AVX-512 families). */
static int core_at_best(const char *core, const char *best)
{
    static const char *const avx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
    static const char *const avx2[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                       "SapphireRapids"};
    const char *const *list = !strcmp(best, "Haswell") ? avx2 : avx512;
    size_t n = !strcmp(best, "Haswell") ? 5 : 3;
    if (!*best)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(core, list[i]))
            return 1;
    return 0;
}

int bench_openblas_at_best(char **argv)
{
    const char *core = openblas_get_corename(), *best = best_coretype();
    if (core_at_best(core, best) || getenv("OPENBLAS_CORETYPE") ||
        getenv("CLGRAD_BENCH_OPENBLAS_SET"))
        return 0; /* its best already, or the user's (or our) choice: said in the header */
    /* its detection fell back to a generic kernel: the kernel is chosen as the library loads,
     * so the program starts again with OPENBLAS_CORETYPE set */
    fprintf(stderr, "clgrad-bench: OpenBLAS chose its %s kernel on a CPU with %s: running it "
            "as OPENBLAS_CORETYPE=%s\n", core, !strcmp(best, "Haswell") ? "AVX2" : "AVX-512",
            best);
    setenv("OPENBLAS_CORETYPE", best, 1);
    setenv("CLGRAD_BENCH_OPENBLAS_SET", best, 1);
    execv("/proc/self/exe", argv);
    return -1; /* could not start again: the header says what ran */
}

/* OpenBLAS's kernel and threads, and how the kernel was chosen, for the table and JSON. */
static void openblas_said(char *out, size_t cap, int json)
{
    const char *set = getenv("CLGRAD_BENCH_OPENBLAS_SET"), *user = getenv("OPENBLAS_CORETYPE");
    const char *how = set ? "set by clgrad-bench: its detection chose a generic kernel"
                      : user ? "OPENBLAS_CORETYPE given" : "its own detection";
    const char *core = openblas_get_corename(), *best = best_coretype();
    if (json)
        snprintf(out, cap, ",\"openblas_core\":\"%s\",\"openblas_threads\":%d,"
                 "\"openblas_at_best\":%s", core, openblas_get_num_threads(),
                 core_at_best(core, best) ? "true" : "false");
    else
        snprintf(out, cap, "OpenBLAS %s kernel (%s), %d threads%s\n", core, how,
                 openblas_get_num_threads(), core_at_best(core, best) ? ""
                 : " -- BELOW its best on this CPU: its ratios mean little");
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* When POCL's threads are pinned one per core (POCL_AFFINITY=1, as clgrad's tools set it: see
 * pocl_pin.c), OpenBLAS's run pinned the same way, so that neither peer gains from it: its
 * thread i on CPU i, the calling thread (its last) only while it runs. Returns whether it
 * pinned; `saved` keeps the calling thread's CPUs for openblas_unpin. */
static int openblas_pin(cpu_set_t *saved)
{
    int n = openblas_get_num_threads();
    if (!pocl_pinned() || n > CPU_SETSIZE ||
        sched_getaffinity(0, sizeof *saved, saved) != 0)
        return 0;
    for (int i = 0; i < n; i++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(i, &one);
        if (openblas_setaffinity(i, sizeof one, &one) != 0)
            return 0;
    }
    return 1;
}

static void openblas_unpin(int pinned, const cpu_set_t *saved)
{
    if (pinned)
        (void)sched_setaffinity(0, sizeof *saved, saved);
}

static double run_openblas(const shape *s, const operands *op, int reps)
{
    cpu_set_t saved;
    int pinned = openblas_pin(&saved);
    double t0 = tool_now();
    for (int i = 0; i < reps; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n, (int)s->k,
                    1.0f, op->ha, (int)s->k, op->hb, (int)s->n, 0.0f, op->hc, (int)s->n);
    double gf = 2e-9 * reps * (double)s->m * (double)s->n * (double)s->k / (tool_now() - t0);
    openblas_unpin(pinned, &saved);
    sleep_ms(150); /* OpenBLAS's threads spin for about 0.1 s after a call: let them park */
    return gf;
}
#else
int bench_openblas_at_best(char **argv)
{
    (void)argv;
    return 0;
}
#endif

/* `reps` products back to back by implementation w; GFLOP/s, or a negative after a message. */
static double run_once(clg_ctx *ctx, const param_sets *ps, int w, const shape *s,
                       const operands *op, int reps)
{
#ifdef CLGRAD_BENCH_OPENBLAS
    if (w == 2)
        return run_openblas(s, op, reps);
#endif
    clg_status st = clg_gemm_set_backend(ctx, w == 1 ? CLG_GEMM_CLBLAST : CLG_GEMM_BUILTIN);
    if (st == CLG_OK && w != 1)
        st = clg_gemm_set_params(ctx, w == 3 ? &ps->vs : &ps->base);
    clg_matrix ma = {op->a, 0, s->k}, mb = {op->b, 0, s->n}, mc = {op->c, 0, s->n};
    double t0 = tool_now();
    for (int i = 0; i < reps && st == CLG_OK; i++)
        st = clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, s->m, s->n, s->k, 1.0f, ma, mb, 0.0f, mc);
    if (st == CLG_OK)
        st = clg_ctx_finish(ctx);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-bench: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
        return -1;
    }
    return 2e-9 * reps * (double)s->m * (double)s->n * (double)s->k / (tool_now() - t0);
}

static float *random_floats(size_t n, unsigned seed)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; x && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
    return x;
}

static int operands_make(clg_ctx *ctx, const shape *s, operands *op)
{
    op->ha = random_floats(s->m * s->k, 1);
    op->hb = random_floats(s->k * s->n, 2);
    op->hc = malloc(s->m * s->n * sizeof *op->hc);
    op->a = op->b = op->c = NULL;
    return op->ha && op->hb && op->hc &&
           clg_tensor_create(ctx, (clg_shape){s->m, s->k, 1, 1}, &op->a) == CLG_OK &&
           clg_tensor_create(ctx, (clg_shape){s->k, s->n, 1, 1}, &op->b) == CLG_OK &&
           clg_tensor_create(ctx, (clg_shape){s->m, s->n, 1, 1}, &op->c) == CLG_OK &&
           clg_tensor_upload(op->a, op->ha, s->m * s->k) == CLG_OK &&
           clg_tensor_upload(op->b, op->hb, s->k * s->n) == CLG_OK;
}

static void operands_free(operands *op)
{
    clg_tensor_destroy(op->a);
    clg_tensor_destroy(op->b);
    clg_tensor_destroy(op->c);
    free(op->ha);
    free(op->hb);
    free(op->hc);
}

/* One shape: two warm-up runs of each implementation (the first compiles and allocates
 * scratch, the second sets how many products a run takes: at least 20 ms of them, so that
 * waking threads up does not weigh on small shapes), then the implementations take turns run by run, so that a noisy
 * machine's slow and fast phases hit all of them alike; the built-in's ratio to each peer is
 * the median of the runs' ratios. */
static int bench_shape(clg_ctx *ctx, const bench_opts *o, const param_sets *ps, const shape *s,
                       const int *use)
{
    int runs = o->runs > MAX_RUNS ? MAX_RUNS : o->runs < 1 ? 1 : o->runs;
    double gf[IMPLS][MAX_RUNS];
    int reps[IMPLS] = {1, 1, 1, 1};
    operands op;
    int rc = operands_make(ctx, s, &op) ? 0 : 1;
    if (rc)
        fprintf(stderr, "clgrad-bench: %s: %s\n", s->name, clg_ctx_last_error(ctx));
    double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    for (int r = -2; r < runs && rc == 0; r++) /* -2: builds and allocates; -1: sets reps */
        for (int w = 0; w < IMPLS && rc == 0; w++) {
            if (!use[w])
                continue;
            double g = run_once(ctx, ps, w, s, &op, reps[w]);
            if (g < 0)
                rc = 1;
            else if (r >= 0)
                gf[w][r] = g;
            else if (r == -1) { /* 20 ms of products at the warm rate */
                double want = 0.02 * g * 1e9 / flop;
                reps[w] = want < 1 ? 1 : want > 1000 ? 1000 : (int)want;
            }
        }
    for (int w = 0; w < IMPLS && rc == 0; w++) {
        if (!use[w])
            continue;
        double ratios[MAX_RUNS], paired = 0;
        if (w > 0 && use[0]) {
            for (int r = 0; r < runs; r++)
                ratios[r] = gf[0][r] / gf[w][r];
            paired = bench_median(ratios, (size_t)runs);
        }
        report(o, ctx, ps, s, impl_names[w], summarise(gf[w], runs), paired);
    }
    operands_free(&op);
    return rc;
}

int bench_gemm(const bench_opts *o, const char *only, const char *impl, const char *vs)
{
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    param_sets ps;
    clg_status st = clg_gemm_get_params(ctx, &ps.base);
    ps.vs = ps.base;
    ps.vs_text = vs;
    if (st == CLG_OK && vs && !gemm_set_apply("clgrad-bench", "vs", vs, &ps.vs)) {
        clg_ctx_destroy(ctx);
        return 2;
    }
    if (st == CLG_OK && vs && (st = clg_gemm_set_params(ctx, &ps.vs)) == CLG_OK)
        st = clg_gemm_set_params(ctx, &ps.base);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-bench: --vs: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
        clg_ctx_destroy(ctx);
        return 2;
    }
    int use[IMPLS];
    for (int w = 0; w < IMPLS; w++)
        use[w] = !impl || strcmp(impl, impl_names[w]) == 0;
    use[0] = use[0] || vs; /* the set --vs is compared with */
    use[1] = use[1] && clg_gemm_has_clblast();
    use[3] = vs != NULL;
#ifndef CLGRAD_BENCH_OPENBLAS
    use[2] = 0;
#endif
    char peer[256] = "";
#ifdef CLGRAD_BENCH_OPENBLAS
    if (use[2])
        openblas_said(peer, sizeof peer, 0);
#endif
    if (!o->json)
        printf("SGEMM on %s, GFLOP/s: median of %d (min-max), the implementations taking turns\n"
               "%s%-8s %6s %6s %6s  %-9s %8s\n",
               clg_ctx_device(ctx)->name, o->runs, peer, "shape", "m", "n", "k", "impl",
               "GFLOP/s");
    if (!o->json && vs)
        printf("vs: the built-in with %s\n", vs);
    int rc = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && rc == 0; i++) {
        const shape *s = &shapes[i];
        if (only ? strcmp(only, s->name) != 0 : s->big && clg_ctx_device(ctx)->type == CLG_DEVICE_CPU)
            continue;
        rc = bench_shape(ctx, o, &ps, s, use);
    }
    clg_ctx_destroy(ctx);
    return rc;
}
