/* clgrad-tune gemm: searches the built-in GEMM's parameters for a device (every candidate is
 * checked against a host reference first, wrong ones are rejected), compares the winner with
 * CLBlast per shape class, and stores the result as the device's tuning file, which every
 * context on that device uses from then on. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clgrad/clgrad.h"

typedef struct shape {
    const char *name;
    size_t m, n, k;
} shape;

/* What the search optimises: the geometric mean over CNN-like shapes. */
static const shape tune_shapes[] = {
    {"sq1024", 1024, 1024, 1024}, {"conv1", 32, 50176, 25}, {"conv2", 64, 12544, 800},
    {"fc1", 64, 1024, 3136},      {"fc1t", 1024, 64, 3136}, {"sq256", 256, 256, 256},
};
#define N_TUNE (sizeof tune_shapes / sizeof tune_shapes[0])

/* One representative per shape class for the CLBlast comparison. */
static const shape class_shapes[CLG_GEMM_CLASSES] = {
    {"small", 64, 64, 64}, {"medium", 256, 256, 256}, {"large", 1024, 1024, 1024},
};

typedef struct tuner {
    clg_ctx *ctx;
    clg_tensor *a, *b, *c;  /* big enough for every shape */
    int runs;
    int verbose;
} tuner;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median GFLOP/s of one shape with the context's current settings; < 0 on error. */
static double measure(tuner *t, const shape *s)
{
    double gf[16];
    int runs = t->runs > 16 ? 16 : t->runs;
    clg_matrix a = {t->a, 0, s->k}, b = {t->b, 0, s->n}, c = {t->c, 0, s->n};
    for (int r = -1; r < runs; r++) {
        double t0 = now();
        if (clg_sgemm(t->ctx, CLG_NO_TRANS, CLG_NO_TRANS, s->m, s->n, s->k, 1.0f, a, b, 0.0f, c) != CLG_OK ||
            clg_ctx_finish(t->ctx) != CLG_OK)
            return -1;
        if (r >= 0)
            gf[r] = 2e-9 * (double)s->m * (double)s->n * (double)s->k / (now() - t0);
    }
    qsort(gf, (size_t)runs, sizeof gf[0], cmp_double);
    return gf[runs / 2];
}

static float *random_matrix(size_t n, unsigned *seed)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; x && i < n; i++)
        x[i] = (float)((*seed = *seed * 1103515245u + 12345u) >> 9) / 4194304.0f - 1.0f;
    return x;
}

/* One product on fresh tensors of exactly the needed size; returns 1 when it matches a double
 * reference (relative L2 within a bound that grows with sqrt(k)). */
static int correct_one(clg_ctx *ctx, size_t m, size_t n, size_t k, int ta, int tb, unsigned seed)
{
    float *a = random_matrix(m * k, &seed), *b = random_matrix(k * n, &seed);
    float *c = malloc(m * n * sizeof *c);
    clg_tensor *da = NULL, *db = NULL, *dc = NULL;
    int ok = a && b && c && clg_tensor_create(ctx, (clg_shape){m * k, 1, 1, 1}, &da) == CLG_OK &&
             clg_tensor_create(ctx, (clg_shape){k * n, 1, 1, 1}, &db) == CLG_OK &&
             clg_tensor_create(ctx, (clg_shape){m * n, 1, 1, 1}, &dc) == CLG_OK &&
             clg_tensor_upload(da, a, m * k) == CLG_OK && clg_tensor_upload(db, b, k * n) == CLG_OK &&
             clg_tensor_fill(dc, NAN) == CLG_OK;
    clg_matrix ma = {da, 0, ta ? m : k}, mb = {db, 0, tb ? k : n}, mc = {dc, 0, n};
    ok = ok && clg_sgemm(ctx, ta, tb, m, n, k, 1.0f, ma, mb, 0.0f, mc) == CLG_OK &&
         clg_tensor_download(dc, c, m * n) == CLG_OK;
    double num = 0, den = 0;
    for (size_t i = 0; ok && i < m; i++)
        for (size_t j = 0; ok && j < n; j++) {
            double s = 0;
            for (size_t p = 0; p < k; p++)
                s += (double)(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
            ok = !isnan(c[i * n + j]);
            num += (c[i * n + j] - s) * (c[i * n + j] - s);
            den += s * s;
        }
    ok = ok && sqrt(num / den) <= 1e-5 * sqrt((double)k / 16.0 + 1.0);
    clg_tensor_destroy(da);
    clg_tensor_destroy(db);
    clg_tensor_destroy(dc);
    free(a);
    free(b);
    free(c);
    return ok;
}

/* Checks the current settings on awkward shapes and every transpose pair; 1 when right. */
static int correct(tuner *t)
{
    static const size_t dims[][3] = {{33, 100, 257}, {7, 65, 300}, {100, 33, 1}, {64, 64, 64}, {1, 257, 33}};
    int ok = 1;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0] && ok; d++)
        for (int tr = 0; tr < 4 && ok; tr++)
            ok = correct_one(t->ctx, dims[d][0], dims[d][1], dims[d][2], tr & 1, tr >> 1,
                             (unsigned)(d * 4 + (size_t)tr + 1));
    return ok;
}

static void describe(const clg_gemm_params *p, char *out, size_t size)
{
    if (p->kernel == CLG_GEMM_KERNEL_REG)
        snprintf(out, size, "reg mr=%u nr=%u local_m=%u local_n=%u kc=%u pack_min_k=%u stage_b=%u",
                 p->mr, p->nr, p->local_m, p->local_n, p->kc, p->pack_min_k, p->stage_b);
    else
        snprintf(out, size, "local ts=%u wpt=%u", p->ts, p->wpt);
}

/* Score of a parameter set: geometric mean GFLOP/s over the tuning shapes, 0 when rejected. */
static double score(tuner *t, const clg_gemm_params *p)
{
    char text[160];
    describe(p, text, sizeof text);
    if (clg_gemm_set_params(t->ctx, p) != CLG_OK) {
        printf("  %-60s invalid: %s\n", text, clg_ctx_last_error(t->ctx));
        return 0;
    }
    if (!correct(t)) {
        printf("  %-60s REJECTED: wrong results\n", text);
        return 0;
    }
    double logsum = 0;
    for (size_t i = 0; i < N_TUNE; i++) {
        double g = measure(t, &tune_shapes[i]);
        if (g <= 0)
            return 0;
        logsum += log(g);
    }
    double s = exp(logsum / N_TUNE);
    printf("  %-60s %7.1f GFLOP/s\n", text, s);
    fflush(stdout);
    return s;
}

#define END 0xFFFFFFFFu /* ends a list of values */

typedef struct axis {
    const char *name;
    unsigned *field;
    unsigned values[8];
} axis;

/* Coordinate descent: vary one parameter at a time, keep what helps, until nothing does. */
static clg_gemm_params search(tuner *t, clg_gemm_params best, double *best_score)
{
    clg_gemm_params p = best;
    axis axes[] = {
        {"mr", &p.mr, {4, 6, 8, 10, 12, 14, END}},
        {"nr", &p.nr, {16, 32, END}},
        {"local_m", &p.local_m, {1, 2, 4, 8, 16, END}},
        {"local_n", &p.local_n, {1, 2, 4, 8, END}},
        {"kc", &p.kc, {128, 256, 512, 1024, 2048, END}},
        {"pack_min_k", &p.pack_min_k, {1, 64, 128, 512, 1000000, END}},
        {"stage_b", &p.stage_b, {0, 1, 2, END}},
        {"ts", &p.ts, {16, 32, 64, END}},
        {"wpt", &p.wpt, {1, 2, 4, 8, 16, END}},
    };
    *best_score = score(t, &best);
    for (int round = 0, improved = 1; improved && round < 3; round++) {
        improved = 0;
        for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) {
            int is_local_axis = axes[a].field == &p.ts || axes[a].field == &p.wpt;
            if (is_local_axis != (best.kernel == CLG_GEMM_KERNEL_LOCAL))
                continue;
            for (int v = 0; axes[a].values[v] != END; v++) {
                p = best;
                if (*axes[a].field == axes[a].values[v])
                    continue;
                *axes[a].field = axes[a].values[v];
                double s = score(t, &p);
                if (s > *best_score * 1.02) { /* 2%: above the noise */
                    best = p;
                    *best_score = s;
                    improved = 1;
                }
            }
        }
    }
    return best;
}

static int tune_gemm(clg_ctx *ctx, int runs, int dry_run, const char *set)
{
    tuner t = {ctx, NULL, NULL, NULL, runs, 0};
    size_t most = 2048 * 2048 * 2;
    for (size_t i = 0; i < N_TUNE; i++) {
        size_t need = tune_shapes[i].n * tune_shapes[i].k;
        most = need > most ? need : most;
    }
    if (clg_tensor_create(ctx, (clg_shape){most, 1, 1, 1}, &t.a) != CLG_OK ||
        clg_tensor_create(ctx, (clg_shape){most, 1, 1, 1}, &t.b) != CLG_OK ||
        clg_tensor_create(ctx, (clg_shape){most, 1, 1, 1}, &t.c) != CLG_OK ||
        clg_tensor_fill(t.a, 0.5f) != CLG_OK || clg_tensor_fill(t.b, 0.25f) != CLG_OK) {
        fprintf(stderr, "clgrad-tune: %s\n", clg_ctx_last_error(ctx));
        return 1;
    }
    clg_gemm_set_backend(ctx, CLG_GEMM_BUILTIN);
    clg_gemm_params start;
    clg_gemm_get_params(ctx, &start);
    double best_score;
    clg_gemm_params best;
    if (set) {
        /* Evaluate one hand-given set: key=value,... on top of the current parameters. */
        best = start;
        char *copy = strdup(set), *save = NULL;
        for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            unsigned v = eq ? (unsigned)strtoul(eq + 1, NULL, 10) : 0;
            if (eq)
                *eq = '\0';
            if (!strcmp(kv, "mr")) best.mr = v;
            else if (!strcmp(kv, "nr")) best.nr = v;
            else if (!strcmp(kv, "local_m")) best.local_m = v;
            else if (!strcmp(kv, "local_n")) best.local_n = v;
            else if (!strcmp(kv, "kc")) best.kc = v;
            else if (!strcmp(kv, "pack_min_k")) best.pack_min_k = v;
            else if (!strcmp(kv, "stage_b")) best.stage_b = v;
            else if (!strcmp(kv, "ts")) best.ts = v;
            else if (!strcmp(kv, "wpt")) best.wpt = v;
            else if (!strcmp(kv, "kernel")) best.kernel = v ? CLG_GEMM_KERNEL_LOCAL : CLG_GEMM_KERNEL_REG;
            else {
                fprintf(stderr, "clgrad-tune: unknown parameter %s\n", kv);
                free(copy);
                return 2;
            }
        }
        free(copy);
        best_score = score(&t, &best);
        for (size_t i = 0; i < N_TUNE && best_score > 0; i++)
            printf("    %-8s %7.1f\n", tune_shapes[i].name, measure(&t, &tune_shapes[i]));
    } else {
        printf("searching GEMM parameters on %s (score: geometric mean GFLOP/s)\n",
               clg_ctx_device(ctx)->name);
        best = search(&t, start, &best_score);
        /* The other kernel family too, from its defaults. */
        clg_gemm_params other = start;
        other.kernel = start.kernel == CLG_GEMM_KERNEL_REG ? CLG_GEMM_KERNEL_LOCAL : CLG_GEMM_KERNEL_REG;
        double other_score;
        other = search(&t, other, &other_score);
        if (other_score > best_score) {
            best = other;
            best_score = other_score;
        }
    }
    if (best_score <= 0) {
        fprintf(stderr, "clgrad-tune: no working parameters\n");
        return 1;
    }
    clg_gemm_backend per_class[CLG_GEMM_CLASSES];
    clg_gemm_set_params(ctx, &best);
    for (int c = 0; c < CLG_GEMM_CLASSES; c++) {
        clg_gemm_set_backend(ctx, CLG_GEMM_BUILTIN);
        double mine = measure(&t, &class_shapes[c]), theirs = -1;
        if (clg_gemm_has_clblast() && clg_gemm_set_backend(ctx, CLG_GEMM_CLBLAST) == CLG_OK)
            theirs = measure(&t, &class_shapes[c]);
        per_class[c] = theirs > mine ? CLG_GEMM_CLBLAST : CLG_GEMM_BUILTIN;
        printf("class %-6s (%s %zux%zux%zu): builtin %.1f, clblast %.1f GFLOP/s -> %s\n",
               class_shapes[c].name, class_shapes[c].name, class_shapes[c].m, class_shapes[c].n,
               class_shapes[c].k, mine, theirs, per_class[c] == CLG_GEMM_CLBLAST ? "clblast" : "builtin");
    }
    char text[160];
    describe(&best, text, sizeof text);
    printf("best: %s, %.1f GFLOP/s\n", text, best_score);
    int rc = 0;
    if (!dry_run) {
        clg_status st = clg_gemm_save_tuning(ctx, &best, per_class);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-tune: %s: %s\n", clg_status_name(st), clg_ctx_last_error(ctx));
            rc = 1;
        } else {
            printf("saved in %s\n", clg_ctx_cache_dir(ctx));
        }
    }
    clg_tensor_destroy(t.a);
    clg_tensor_destroy(t.b);
    clg_tensor_destroy(t.c);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: clgrad-tune gemm [--runs N] [--dry-run] [--set K=V,...] [--filter FILTER]\n"
               "Searches the built-in GEMM's parameters on the first device of the auto\n"
               "environment and stores them for that device in the cache folder.\n"
               "  --runs N     timed runs per shape (median; default 3)\n"
               "  --dry-run    search and print, but do not store\n"
               "  --set K=V,.. evaluate (and with no --dry-run, store) one parameter set:\n"
               "               mr nr local_m local_n kc pack_min_k stage_b ts wpt kernel(0 reg, 1 local)\n");
}

int main(int argc, char **argv)
{
    int runs = 3, dry = 0;
    const char *filter = NULL, *set = NULL, *what = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dry-run"))
            dry = 1;
        else if (!strcmp(argv[i], "--set") && i + 1 < argc)
            set = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
            filter = argv[++i];
        else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("clgrad-tune %s\n", clg_version());
            return 0;
        } else if (!what && argv[i][0] != '-')
            what = argv[i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (!what || strcmp(what, "gemm") != 0 || runs < 1) {
        usage(stderr);
        return 2;
    }
    clg_device_info *all;
    size_t n, count;
    clg_device_info *chosen;
    clg_ctx *ctx = NULL;
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK && (st = clg_devices_select(all, n, CLG_ENV_AUTO, filter, &chosen, &count)) == CLG_OK) {
        st = clg_ctx_create(&chosen[0], NULL, &ctx);
        clg_devices_free(chosen, count);
    }
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-tune: %s: %s\n", clg_status_name(st), clg_last_error());
        return 1;
    }
    int rc = tune_gemm(ctx, runs, dry, set);
    clg_ctx_destroy(ctx);
    clg_devices_free(all, n);
    return rc;
}
