/* The GEMM tuner's search (clg_gemm_tune, clg_conv_tune): the table's rows, a grid of
 * register blocks, then steps in one parameter at a time while one helps; every candidate
 * measured by gemm_score.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemm_internal.h"

#define MAX_SEEN 256
/* A quick search measures at most this many sets (each a compile and paired runs: one to two
 * seconds on a CPU), so that it stays near a minute; 40 took the suite 3 minutes cold */
#define QUICK_MOST 28

clg_tune_options clg_tune_options_default(void)
{
    clg_tune_options o = {sizeof o, CLG_TUNE_QUICK, 3, NULL, NULL, NULL, NULL, NULL, 1};
    return o;
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
           a->pack_a_min_n == b->pack_a_min_n && a->thin_nr == b->thin_nr &&
           a->pf_panel == b->pf_panel;
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

/* Measures p once (returns its first paired ratio, 0 when it was not paired). The first set
 * that works is scored alone; every later one runs against
 * the best in paired runs (the two alternating, shape by shape). Scores taken alone are no
 * screen on a noisy machine: on a VM whose slow and fast phases differ by 2x (an Intel
 * Xeon's, 2026-12-02), one set scored 46 to 123 GFLOP/s alone, so a slow phase hid better
 * candidates. A paired win takes the best's place only when a second paired run confirms
 * it, and that second ratio sets its score: with one run, the most flattering of some 60
 * noisy ratios won each time, and a chain of such wins claimed 2.5x for a set that ran at
 * 0.9-1.0x the start in fresh paired runs. */
static double try_params(search *s, const clg_gemm_params *p)
{
    for (size_t i = 0; i < s->n_seen; i++)
        if (same_params(&s->seen[i], p))
            return 0;
    if (s->o.level == CLG_TUNE_QUICK && s->n_seen >= QUICK_MOST)
        return 0;
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
    return ratio;
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

/* Quick: from the axis's current value (index at), one step each way, and on past every
 * step that won or tied (a line search: from a poor start, 4-row blocks reach 8 in one pass;
 * groups of 1 row tile reach 8 through steps of 2-3% each, within the paired runs' noise). */
#define TIED 0.97
static void line_search(search *s, clg_gemm_params *p, unsigned *field, const unsigned *values,
                        int at)
{
    for (int d = -1; d <= 1; d += 2)
        for (int v = at + d; v >= 0 && values[v] != END; v += d) {
            clg_gemm_params before = s->best;
            *p = s->best;
            *field = values[v];
            unsigned width = before.nr * before.local_n; /* the group's, in columns */
            if (field == &p->nr) /* kept where it can be */
                p->local_n = width >= p->nr ? width / p->nr : 1;
            if (p->kernel == CLG_GEMM_KERNEL_REG && p->mr * (p->nr / 16) > max_accumulators(s))
                break;
            double ratio = try_params(s, p);
            if (same_params(&before, &s->best) && ratio < TIED)
                break; /* slower, rejected or seen: this way is done */
        }
}

/* One pass of steps: each axis's values on top of the best so far; returns 1 when the best
 * changed. Quick: a line search from the current value. */
static int refine(search *s, int quick)
{
    clg_gemm_params p;
    /* tile: the local kernel's; choice: values with no order (quick tries each) */
    struct { unsigned *field; int tile, choice; unsigned values[8]; } axes[] = {
        {&p.mr, 0, 0, {4, 6, 8, 10, 12, 14, 16, END}},
        {&p.nr, 0, 0, {16, 32, 48, 64, END}},
        {&p.local_m, 0, 0, {1, 2, 4, 8, 16, END}},
        {&p.local_n, 0, 0, {1, 2, 4, END}},
        {&p.kc, 0, 0, {128, 256, 512, 1024, 2048, END}},
        {&p.pack_min_k, 0, 0, {1, 64, 512, 1000000, END}},
        {&p.stage_b, 0, 1, {0, 1, 2, 3, END}},
        {&p.pack_a_min_n, 0, 0, {0, 128, 512, 2048, END}},
        {&p.pf_panel, 0, 0, {0, 8, 32, 64, END}},
        {&p.mwg, 1, 0, {16, 32, 64, 128, 256, END}},
        {&p.nwg, 1, 0, {16, 32, 64, 128, 256, END}},
        {&p.kwg, 1, 0, {8, 16, 32, 64, END}},
        {&p.mdimc, 1, 0, {4, 8, 16, 32, END}},
        {&p.ndimc, 1, 0, {4, 8, 16, 32, END}},
        {&p.vw, 1, 0, {1, 2, 4, 8, END}},
        {&p.kwi, 1, 0, {1, 2, 4, 8, END}},
        {&p.db, 1, 0, {0, 1, END}},
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
        if (quick && at >= 0 && !axes[a].choice) {
            line_search(s, &p, axes[a].field, axes[a].values, at);
            continue;
        }
        for (int v = 0; axes[a].values[v] != END; v++) {
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
    size_t n_rows = s->o.table_rows ? clg__gemm_table_rows(type, rows, 16) : 0;
    for (size_t i = 0; i < n_rows; i++) {
        rows[i].conv_mr = s->best.conv_mr;
        rows[i].conv_nr = s->best.conv_nr;
        try_params(s, &rows[i]);
    }
    int full = s->o.level == CLG_TUNE_FULL;
    if (full && s->best_score > 0)
        (s->best.kernel == CLG_GEMM_KERNEL_REG ? grid_reg : grid_tile)(s);
    /* until a pass changes nothing (revisits cost nothing: every scored set is remembered) */
    for (int round = 0; round < (full ? 3 : 4) && s->best_score > 0; round++)
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
