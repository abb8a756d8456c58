/* The GEMM tuner: scores parameter sets (checked against a double reference, then timed on
 * the shapes a CNN multiplies) and searches them: the table's rows, a grid of register
 * blocks, then steps in one parameter at a time while one helps. */
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
#define MAX_SEEN 256

clg_tune_options clg_tune_options_default(void)
{
    clg_tune_options o = {sizeof o, CLG_TUNE_QUICK, 3, NULL, NULL, NULL, NULL, NULL};
    return o;
}

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

/* The search: every scored set is remembered, so revisits cost nothing. */
typedef clg_status (*score_fn)(clg_ctx *ctx, const clg_gemm_params *p, int runs, double *score);
typedef clg_status (*compare_fn)(clg_ctx *ctx, const clg_gemm_params *p, const clg_gemm_params *base,
                                 int runs, double *ratio);

typedef struct search {
    clg_ctx *ctx;
    score_fn score;       /* in this process, when no evaluate callback is given */
    compare_fn compare;   /* the same for the compare callback */
    clg_tune_options o;
    clg_gemm_params seen[MAX_SEEN];
    double seen_score[MAX_SEEN];
    size_t n_seen;
    clg_gemm_params best;
    double best_score;
    char first_why[256]; /* why the first candidate failed, for a search where all fail */
} search;

static int same_params(const clg_gemm_params *a, const clg_gemm_params *b)
{
    if (a->kernel != b->kernel || a->small_flops != b->small_flops || a->conv_mr != b->conv_mr ||
        a->conv_nr != b->conv_nr)
        return 0;
    if (a->kernel == CLG_GEMM_KERNEL_LOCAL)
        return a->mwg == b->mwg && a->nwg == b->nwg && a->kwg == b->kwg && a->mdimc == b->mdimc &&
               a->ndimc == b->ndimc && a->vw == b->vw && a->kwi == b->kwi && a->db == b->db;
    return a->mr == b->mr && a->nr == b->nr && a->local_m == b->local_m && a->local_n == b->local_n &&
           a->kc == b->kc && a->pack_min_k == b->pack_min_k && a->stage_b == b->stage_b &&
           a->pack_a_min_n == b->pack_a_min_n;
}

static double in_process(void *user, const clg_gemm_params *p, char *why, size_t why_size)
{
    search *s = user;
    double score = 0;
    if (s->score(s->ctx, p, s->o.runs, &score) != CLG_OK) {
        snprintf(why, why_size, "%s", clg_ctx_last_error(s->ctx));
        return 0;
    }
    return score;
}

static double compare_in_process(search *s, const clg_gemm_params *p, char *why, size_t why_size)
{
    double ratio = 0;
    if (s->compare(s->ctx, p, &s->best, s->o.runs, &ratio) != CLG_OK) {
        snprintf(why, why_size, "%s", clg_ctx_last_error(s->ctx));
        return 0;
    }
    return ratio;
}

/* Paired runs of p against the best: the ratio, 0 with why when p is rejected. */
static double run_paired(search *s, const clg_gemm_params *p, char *why, size_t why_size)
{
    return s->o.compare ? s->o.compare(s->o.user, p, &s->best, why, why_size)
                        : compare_in_process(s, p, why, why_size);
}

/* Measures p once. The first set that works is scored alone; every later one runs against
 * the best in paired runs (the two alternating, shape by shape). Scores taken alone are no
 * screen on a noisy machine: on a VM whose slow and fast phases differ by 2x (an Intel
 * Xeon's, 2026-12-02), one set scored 46 to 123 GFLOP/s alone, so a slow phase hid better
 * candidates. A paired win takes the best's place only when a second paired run confirms
 * it, and that second ratio sets its score: with one run, the most flattering of some 60
 * noisy ratios won each time, and a chain of such wins claimed 2.5x for a set that ran at
 * 0.9-1.0x the start in fresh paired runs. */
static void try_params(search *s, const clg_gemm_params *p)
{
    for (size_t i = 0; i < s->n_seen; i++)
        if (same_params(&s->seen[i], p))
            return;
    char why[256] = "";
    double score = 0, ratio = 0;
    int is_paired = s->best_score > 0;
    if (clg__gemm_params_check(s->ctx, p) != CLG_OK) {
        snprintf(why, sizeof why, "%s", clg_ctx_last_error(s->ctx));
        is_paired = 0;
    } else if (!is_paired) {
        score = s->o.evaluate ? s->o.evaluate(s->o.user, p, why, sizeof why)
                              : in_process(s, p, why, sizeof why);
    } else {
        ratio = run_paired(s, p, why, sizeof why);
        score = ratio > 0 ? s->best_score * ratio : 0;
    }
    if (!(score > 0))
        score = 0;
    if (s->n_seen < MAX_SEEN) {
        s->seen[s->n_seen] = *p;
        s->seen_score[s->n_seen++] = score;
    }
    if (score == 0 && !s->first_why[0])
        snprintf(s->first_why, sizeof s->first_why, "%s", why[0] ? why : "rejected");
    if (s->o.on_candidate)
        s->o.on_candidate(s->o.user, p, score, why);
    if (is_paired && score > 0 && s->o.on_compared)
        s->o.on_compared(s->o.user, p, ratio, "");
    if (score > 0 && s->best_score == 0) { /* the first that works */
        s->best = *p;
        s->best_score = score;
    } else if (is_paired && ratio > 1.02) { /* beyond the paired runs' noise: once more */
        char again_why[256] = "";
        double again = run_paired(s, p, again_why, sizeof again_why);
        if (s->o.on_compared)
            s->o.on_compared(s->o.user, p, again, again > 0 ? "again" : again_why);
        if (again > 1.02) {
            s->best = *p;
            s->best_score *= again;
        }
    }
}

/* Float16 accumulators a register block may keep: AVX-512's 32 registers less B and A; on
 * AVX2 a float16 takes 2 of its 16 registers (on a Zen 3, 10 x 16 blocks and larger ran at
 * half of 4 x 16's speed or less, so they only cost tuning time; 8 x 16 spills a little and
 * ran level with 6 x 16). */
static unsigned max_accumulators(const search *s)
{
    clg_cpu_class c = CLG_CPU_CLASS_NONE;
    if (s->ctx)
        (void)clg_device_cpu_class(clg_ctx_device(s->ctx), &c);
    return c == CLG_CPU_CLASS_AVX2 ? 8 : 28;
}

/* CPUs: every register block the vector registers hold. */
static void grid_reg(search *s)
{
    static const unsigned mrs[] = {4, 6, 8, 10, 12, 14, 16}, nrs[] = {16, 32, 48, 64};
    clg_gemm_params base = s->best;
    for (size_t j = 0; j < sizeof nrs / sizeof nrs[0]; j++)
        for (size_t i = 0; i < sizeof mrs / sizeof mrs[0]; i++) {
            if (mrs[i] * (nrs[j] / 16) > max_accumulators(s))
                continue;
            clg_gemm_params p = base;
            p.mr = mrs[i];
            p.nr = nrs[j];
            try_params(s, &p);
        }
}

/* GPUs: work-group tiles of 32 to 128 each way, 64 to 256 work-items of 2 x 2 to 8 x 8
 * results, k steps of 16 and 32 (the space CLBlast's tuning database spans); sets the device
 * cannot run are rejected by the parameter check before anything is built. */
static void grid_tile(search *s)
{
    static const unsigned tiles[] = {32, 64, 128}, dims[] = {8, 16, 32}, kwgs[] = {16, 32};
    clg_gemm_params base = s->best;
    for (size_t mi = 0; mi < 3; mi++)
        for (size_t ni = 0; ni < 3; ni++)
            for (size_t di = 0; di < 3; di++)
                for (size_t ei = 0; ei < 3; ei++)
                    for (size_t ki = 0; ki < 2; ki++) {
                        clg_gemm_params p = base;
                        p.mwg = tiles[mi];
                        p.nwg = tiles[ni];
                        p.mdimc = dims[di];
                        p.ndimc = dims[ei];
                        p.kwg = kwgs[ki];
                        unsigned mwi = p.mwg / p.mdimc, nwi = p.nwg / p.ndimc;
                        if (mwi < 2 || nwi < 2 || mwi > 8 || nwi > 8 || p.mdimc * p.ndimc < 64 ||
                            p.mdimc * p.ndimc > 256)
                            continue;
                        p.vw = p.vw > 4 ? 4 : p.vw;
                        try_params(s, &p);
                    }
}

#define END 0xFFFFFFFFu

/* One pass of steps: each axis's values on top of the best so far; returns 1 when the best
 * changed. Quick: only the neighbours of the current value. */
static int refine(search *s, int quick)
{
    clg_gemm_params p;
    struct { unsigned *field; int tile; unsigned values[8]; } axes[] = { /* tile: local kernel's */
        {&p.mr, 0, {4, 6, 8, 10, 12, 14, 16, END}},
        {&p.nr, 0, {16, 32, 48, 64, END}},
        {&p.local_m, 0, {1, 2, 4, 8, 16, END}},
        {&p.local_n, 0, {1, 2, 4, END}},
        {&p.kc, 0, {128, 256, 512, 1024, 2048, END}},
        {&p.pack_min_k, 0, {1, 64, 512, 1000000, END}},
        {&p.stage_b, 0, {0, 1, 2, END}},
        {&p.pack_a_min_n, 0, {0, 128, 512, 2048, END}},
        {&p.mwg, 1, {16, 32, 64, 128, 256, END}},
        {&p.nwg, 1, {16, 32, 64, 128, 256, END}},
        {&p.kwg, 1, {8, 16, 32, 64, END}},
        {&p.mdimc, 1, {4, 8, 16, 32, END}},
        {&p.ndimc, 1, {4, 8, 16, 32, END}},
        {&p.vw, 1, {1, 2, 4, 8, END}},
        {&p.kwi, 1, {1, 2, 4, 8, END}},
        {&p.db, 1, {0, 1, END}},
    };
    clg_gemm_params start = s->best;
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) {
        if (axes[a].tile != (s->best.kernel == CLG_GEMM_KERNEL_LOCAL))
            continue;
        p = s->best;
        unsigned now = *axes[a].field;
        int at = -1;
        for (int v = 0; axes[a].values[v] != END; v++)
            if (axes[a].values[v] == now)
                at = v;
        for (int v = 0; axes[a].values[v] != END; v++) {
            if (quick && at >= 0 && (v < at - 1 || v > at + 1))
                continue;
            p = s->best;
            *axes[a].field = axes[a].values[v];
            if (p.kernel == CLG_GEMM_KERNEL_REG && p.mr * (p.nr / 16) > max_accumulators(s))
                continue;
            try_params(s, &p);
        }
    }
    return !same_params(&start, &s->best);
}

/* A search ready to run: arguments (outputs: the caller's result pointers are not NULL) and
 * options checked, the start scored. NULL on failure, with the status in *failed and the
 * reason in ctx. */
static search *search_begin(clg_ctx *ctx, const clg_tune_options *opts, score_fn score,
                            compare_fn compare, const char *what, int outputs, clg_status *failed)
{
    if (!ctx || !outputs) {
        *failed = clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: NULL argument", what);
        return NULL;
    }
    search *s = clg__calloc(1, sizeof *s);
    if (!s) {
        *failed = clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "%s: out of memory", what);
        return NULL;
    }
    s->ctx = ctx;
    s->score = score;
    s->compare = compare;
    s->o = clg_tune_options_default();
    clg_status st = CLG_OK;
    if (opts && clg__options_read(&s->o, opts, sizeof s->o, what) != CLG_OK)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s", clg_last_error());
    else if (s->o.level != CLG_TUNE_QUICK && s->o.level != CLG_TUNE_FULL)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: level %d must be CLG_TUNE_QUICK or "
                       "CLG_TUNE_FULL", what, (int)s->o.level);
    else if (s->o.runs < 1 || s->o.runs > CLG__TUNE_MAX_RUNS)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: runs %d must be 1..%d", what, s->o.runs, CLG__TUNE_MAX_RUNS);
    clg_gemm_params start;
    if (st == CLG_OK)
        st = clg_gemm_get_params(ctx, &start);
    if (st != CLG_OK) {
        free(s);
        *failed = st;
        return NULL;
    }
    try_params(s, &start);
    /* the start's score is the bar every candidate's first must clear: a median of three, so
     * that one fast phase of a noisy machine does not set it too high */
    char why[256];
    double again[2];
    for (int i = 0; i < 2 && s->best_score > 0; i++)
        again[i] = s->o.evaluate ? s->o.evaluate(s->o.user, &start, why, sizeof why)
                                 : in_process(s, &start, why, sizeof why);
    if (s->best_score > 0) {
        double a = s->best_score, b = again[0], c = again[1];
        s->best_score = a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
    }
    return s;
}

/* The best set into ctx and the caller's variables, or why nothing worked. */
static clg_status search_end(search *s, clg_gemm_params *best, double *best_score, const char *what)
{
    clg_status st;
    if (s->best_score > 0) {
        *best = s->best;
        *best_score = s->best_score;
        st = clg_gemm_set_params(s->ctx, best);
    } else {
        st = clg__fail(s->ctx, CLG_ERR_UNSUPPORTED, "%s: no candidate works on %s; the first: %s",
                       what, s->ctx->device.name, s->first_why);
    }
    free(s);
    return st;
}

clg_status clg_gemm_tune(clg_ctx *ctx, const clg_tune_options *opts, clg_gemm_params *best,
                         double *best_score)
{
    clg_status failed = CLG_OK;
    search *s = search_begin(ctx, opts, clg_gemm_tune_score, clg_gemm_tune_compare, "clg_gemm_tune",
                             best && best_score, &failed);
    if (!s)
        return failed;
    /* The table's rows for the device's type: other classes' blocks may suit this CPU. The
     * convolutions' blocks stay as they are (clg_conv_tune searches them). */
    clg_gemm_params rows[16];
    clg_device_type type = clg_ctx_decides_as_gpu(ctx) ? CLG_DEVICE_GPU : ctx->device.type;
    size_t n_rows = clg__gemm_table_rows(type, rows, 16);
    for (size_t i = 0; i < n_rows; i++) {
        rows[i].conv_mr = s->best.conv_mr;
        rows[i].conv_nr = s->best.conv_nr;
        try_params(s, &rows[i]);
    }
    int full = s->o.level == CLG_TUNE_FULL;
    if (full && s->best_score > 0)
        (s->best.kernel == CLG_GEMM_KERNEL_REG ? grid_reg : grid_tile)(s);
    for (int round = 0; round < (full ? 3 : 1) && s->best_score > 0; round++)
        if (!refine(s, !full))
            break;
    return search_end(s, best, best_score, "clg_gemm_tune");
}

clg_status clg_conv_tune(clg_ctx *ctx, const clg_tune_options *opts, clg_gemm_params *best,
                         double *best_score)
{
    clg_status failed = CLG_OK;
    search *s = search_begin(ctx, opts, clg_conv_tune_score, clg_conv_tune_compare, "clg_conv_tune",
                             best && best_score, &failed);
    if (!s)
        return failed;
    if (s->best_score > 0 && s->best.kernel == CLG_GEMM_KERNEL_REG) {
        /* Quick: rows next to the GEMM's; full: every block the registers hold. */
        clg_gemm_params base = s->best;
        unsigned mr = base.conv_mr ? base.conv_mr : base.mr;
        for (unsigned nr = 16; nr <= 32; nr += 16)
            for (unsigned m = 4; m <= 16; m += 2) {
                int near = m + 2 >= mr && m <= mr + 2;
                if ((s->o.level == CLG_TUNE_QUICK && !near) || m * (nr / 16) > max_accumulators(s))
                    continue;
                clg_gemm_params p = base;
                p.conv_mr = m;
                p.conv_nr = nr;
                try_params(s, &p);
            }
    }
    return search_end(s, best, best_score, "clg_conv_tune");
}
