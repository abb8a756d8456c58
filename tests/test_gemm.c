/* SGEMM against a double-precision C reference: every transpose pair, alpha/beta variants,
 * sizes {1,2,3,7,16,33,64,100,257} in every role, padded leading dimensions, offsets, batches,
 * NaN-poisoned outputs and guard regions; exact on small integers; every built-in kernel
 * variant the table or the tuner can choose, and CLBlast. Also argument errors and tuning. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "runtime/testing.h"
#include "ops/gemm_internal.h"
#include "ref/ref_gemm.h"

static clg_ctx *ctx;
static clg_test_rng rng;
static char *cache_dir;

#define SENTINEL 777.0f

typedef struct gemm_case {
    int ta, tb;
    size_t m, n, k;
    float alpha, beta;
    size_t pad, off, batch;
    int integer;
    size_t ldb; /* 0: from pad; else B's leading dimension (a multiple of 1024 takes the
                   packed path that avoids cache-set aliasing) */
    int shared_a; /* every batch entry multiplies the same A (batch stride 0) */
} gemm_case;

/* Relative L2 bound: float32 sums of k products carry an error that grows like sqrt(k) * eps
 * for random signs; 1e-5 for k <= 100, growing with sqrt(k) beyond. The error's norm is taken
 * relative to the same product over the terms' magnitudes (|alpha| |A| |B| + |beta| |C|): the
 * rounding error scales with those, and a small C whose few sums cancel would otherwise fail
 * on rounding alone (a convolution's 1x1-image case did, with seed 14628595391). */
static double tolerance(size_t k)
{
    return k <= 100 ? 1e-5 : 1e-5 * sqrt((double)k / 100.0);
}

static clg_tensor *upload(const float *host, size_t n)
{
    clg_tensor *t;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){n, 1, 1, 1}, &t), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(t, host, n), CLG_OK);
    return t;
}

/* Runs one case; returns 0 when it matches, else prints why and returns 1. */
static int run_case(const gemm_case *c, const char *variant)
{
    size_t ra = c->ta ? c->k : c->m, ca = c->ta ? c->m : c->k;
    size_t rb = c->tb ? c->n : c->k, cb = c->tb ? c->k : c->n;
    size_t lda = ca + c->pad, ldb = c->ldb ? c->ldb : cb + c->pad * 2, ldc = c->n + c->pad;
    size_t sa = c->shared_a ? 0 : ra * lda + 5, sb = rb * ldb + 3, sc = c->m * ldc + 7;
    size_t na = c->off + (c->shared_a ? ra * lda : c->batch * sa) + 17, nb = c->off + c->batch * sb + 17;
    size_t nc = c->off + c->batch * sc + 17;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *cc = malloc(nc * sizeof *cc);
    float *out = malloc(nc * sizeof *out);
    double *ref = malloc(c->m * c->n * sizeof *ref), *mag = malloc(c->m * c->n * sizeof *mag);
    if (c->integer) {
        clg_test_fill_int(&rng, a, na, -4, 4);
        clg_test_fill_int(&rng, b, nb, -4, 4);
    } else {
        clg_test_fill_uniform(&rng, a, na, -1, 1);
        clg_test_fill_uniform(&rng, b, nb, -1, 1);
    }
    /* C: values inside the matrices (NaN when beta = 0: they must not be read), sentinels in
     * the padding, between batches and after the end. */
    for (size_t i = 0; i < nc; i++)
        cc[i] = SENTINEL;
    for (size_t q = 0; q < c->batch; q++)
        for (size_t i = 0; i < c->m; i++)
            for (size_t j = 0; j < c->n; j++) {
                float *x = &cc[c->off + q * sc + i * ldc + j];
                *x = c->beta == 0 ? NAN : c->integer ? (float)((int)(clg_test_rng_next(&rng) % 9) - 4)
                                                    : clg_test_uniform(&rng, -1, 1);
            }
    float *aa = clg_test_abs_copy(a, na), *ab = clg_test_abs_copy(b, nb);
    float *ac = clg_test_abs_copy(cc, nc);
    clg_tensor *ta = upload(a, na), *tb = upload(b, nb), *tc = upload(cc, nc);
    clg_matrix ma = {ta, c->off, lda}, mb = {tb, c->off, ldb}, mc = {tc, c->off, ldc};
    clg_status st = clg_sgemm_batched(ctx, c->ta, c->tb, c->m, c->n, c->k, c->alpha, ma, sa, mb,
                                      sb, c->beta, mc, sc, c->batch);
    if (st == CLG_OK)
        st = clg_tensor_download(tc, out, nc);
    int bad = st != CLG_OK;
    if (bad)
        print_error("%s: %s\n", clg_status_name(st), clg_ctx_last_error(ctx));
    for (size_t q = 0; q < c->batch && !bad; q++) {
        const float *aq = a + c->off + q * sa, *bq = b + c->off + q * sb, *cq = cc + c->off + q * sc;
        ref_sgemm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, aq, lda, bq, ldb, c->beta, cq, ldc, ref);
        size_t at_a = aq - a, at_b = bq - b, at_c = cq - cc;
        ref_sgemm(c->ta, c->tb, c->m, c->n, c->k, fabsf(c->alpha), aa + at_a, lda, ab + at_b, ldb,
                  fabsf(c->beta), ac + at_c, ldc, mag);
        const float *oq = out + c->off + q * sc;
        double num = 0, den = 0;
        for (size_t i = 0; i < c->m && !bad; i++)
            for (size_t j = 0; j < c->n; j++) {
                double got = oq[i * ldc + j], want = ref[i * c->n + j];
                if (isnan(got) || (c->integer && got != want)) {
                    print_error("element (%zu, %zu) of batch %zu is %g, expected %g\n", i, j, q, got, want);
                    bad = 1;
                    break;
                }
                num += (got - want) * (got - want);
                den += mag[i * c->n + j] * mag[i * c->n + j];
            }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        if (!bad && rel > tolerance(c->k)) {
            print_error("relative L2 error %.3g above %.3g\n", rel, tolerance(c->k));
            bad = 1;
        }
    }
    /* Everything outside the C matrices is untouched. */
    for (size_t i = 0; i < nc && !bad; i++) {
        size_t rel_i = i >= c->off ? i - c->off : (size_t)-1, q = rel_i / sc, r = rel_i % sc;
        int inside = rel_i != (size_t)-1 && q < c->batch && r / ldc < c->m && r % ldc < c->n;
        if (!inside && out[i] != SENTINEL) {
            print_error("element %zu outside C changed to %g\n", i, out[i]);
            bad = 1;
        }
    }
    if (bad)
        print_error("FAILED %s: ta=%d tb=%d m=%zu n=%zu k=%zu alpha=%g beta=%g pad=%zu off=%zu batch=%zu%s\n",
                    variant, c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->beta, c->pad, c->off,
                    c->batch, c->integer ? " integer" : "");
    clg_tensor_destroy(ta);
    clg_tensor_destroy(tb);
    clg_tensor_destroy(tc);
    free(a);
    free(b);
    free(cc);
    free(out);
    free(ref);
    free(mag);
    free(aa);
    free(ab);
    free(ac);
    return bad;
}

static const size_t sizes[] = {1, 2, 3, 7, 16, 33, 64, 100, 257};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
static const float alphas[] = {1.0f, 0.5f, -1.5f, 1.0f};
static const float betas[] = {0.0f, 2.0f, 1.0f, -0.25f};

/* The case table: every size in every role (m, n, k), the other two sizes rotating through the
 * list, transposes and alpha/beta cycling, some padded, offset, batched, or integer-valued. */
static size_t make_cases(gemm_case *out, int integer)
{
    size_t n = 0;
    for (size_t role = 0; role < 3; role++)
        for (size_t s = 0; s < N_SIZES; s++) {
            gemm_case c = {0};
            size_t d[3] = {sizes[(s + 3) % N_SIZES], sizes[(s + 5) % N_SIZES], sizes[(s + 7) % N_SIZES]};
            d[role] = sizes[s];
            c.m = d[0];
            c.n = d[1];
            c.k = d[2];
            size_t v = role * N_SIZES + s;
            c.ta = (int)(v & 1);
            c.tb = (int)((v >> 1) & 1);
            c.alpha = integer ? 1.0f : alphas[v % 4];
            c.beta = integer ? (float)(v % 3) : betas[(v / 4) % 4];
            c.pad = v % 3 == 0 ? 3 : 0;
            c.off = v % 4 == 1 ? 11 : 0;
            c.batch = v % 5 == 2 ? 3 : 1;
            c.integer = integer;
            out[n++] = c;
        }
    /* B rows 4 KiB or 8 KiB apart, and 1 KiB apart (staged with stage_b 3). */
    gemm_case aliased[] = {
        {0, 0, 33, 100, 257, 1.0f, integer ? 2.0f : 0.5f, 0, 0, 1, integer, 256, 0},
        {0, 0, 33, 100, 257, 1.0f, 0.0f, 0, 0, 1, integer, 1024, 0},
        {0, 0, 7, 33, 64, 0.5f, integer ? 1.0f : -0.25f, 1, 5, 2, integer, 2048, 0},
        {1, 0, 64, 257, 100, 1.0f, 1.0f, 0, 0, 1, integer, 1024, 0},
    };
    for (size_t i = 0; i < sizeof aliased / sizeof aliased[0]; i++)
        out[n++] = aliased[i];
    /* Few output tiles and a long k: the split-K path (slices summed in order). */
    gemm_case split[] = {
        {0, 1, 25, 32, 5003, 1.0f, integer ? 1.0f : 0.5f, 0, 3, 1, integer, 0, 0},
        {1, 0, 7, 33, 8192, integer ? 1.0f : -1.5f, 0.0f, 1, 0, 1, integer, 0, 0},
    };
    for (size_t i = 0; i < sizeof split / sizeof split[0]; i++)
        out[n++] = split[i];
    return n;
}

typedef struct variant {
    const char *name;
    clg_gemm_backend backend;
    clg_gemm_kernel kernel;
    unsigned mr, nr, local_m, local_n, kc, pack_min_k, stage_b;
    unsigned tile[8]; /* mwg nwg kwg mdimc ndimc vw kwi db; zeros: the default's */
    double small_flops;
    unsigned pack_a_min_n;
    unsigned pf_panel; /* the packed panel prefetched that far ahead (a compile path) */
} variant;

/* Every built-in kernel the table or tuner can choose, on the paths it can take: reg in place,
 * packed (K in one or several chunks) and staged, A in place and packed, the GPU tiles (every
 * transpose is its own program), and small for everything. */
static const variant variants[] = {
    {"default", CLG_GEMM_BUILTIN, 0, 0, 0, 0, 0, 0, 0, 0, {0}, -1, 0, 0},
    {"small only", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 8, 1, 256, 128, 0, {0}, 1e12, 0, 0},
    {"reg 8x32 in place", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 8, 4, 256, 100000, 0, {0}, 0, 0, 0},
    /* the packed panel prefetched ahead (the Intel two-port row's; a compile path elsewhere) */
    {"reg 8x32 packed kc16", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 4, 2, 16, 0, 0, {0}, 0, 0, 32},
    {"reg 1x16 packed kc64", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 1, 16, 1, 1, 64, 0, 0, {0}, 0, 0, 0},
    {"reg 12x16 mixed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 12, 16, 16, 8, 32, 50, 0, {0}, 0, 0, 0},
    {"reg 6x32 mixed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 6, 32, 2, 1, 128, 64, 0, {0}, 0, 0, 0},
    {"reg 8x32 staged kc64", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 4, 1, 64, 1, 1, {0}, 0, 0, 0},
    {"reg 5x16 staged kc16", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 5, 16, 3, 1, 16, 1, 1, {0}, 0, 0, 0},
    {"reg 8x32 auto-staged", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 16, 1, 32, 1, 2, {0}, 0, 0, 0},
    {"reg 8x32 auto-staged 1 KiB", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 16, 1, 32, 1, 3, {0}, 0, 0, 0},
    {"reg 6x48 mixed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 6, 48, 4, 1, 128, 64, 0, {0}, 0, 0, 0},
    {"reg 3x64 staged kc32", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 3, 64, 2, 1, 32, 1, 1, {0}, 0, 0, 0},
    /* A packed into panels (every product at least 1 column wide), with B in place (rows
     * prefetched 32 ahead where k >= 64), packed in chunks of k and staged: the blocks of
     * variants above, so that only the pack kernel is compiled again (cold compiles are most
     * of this test's time) */
    {"reg 8x32 in place, A packed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 8, 4, 256, 100000, 0, {0}, 0, 1, 32},
    {"reg 8x32 packed kc16, A packed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 4, 2, 16, 0, 0, {0}, 0, 1, 32},
    {"reg 12x16 mixed, A packed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 12, 16, 16, 8, 32, 50, 0, {0}, 0, 1, 0},
    {"reg 5x16 staged kc16, A packed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 5, 16, 3, 1, 16, 1, 1, {0}, 0, 1, 0},
    {"reg 8x32 auto-staged, A packed", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_REG, 8, 32, 16, 1, 32, 1, 2, {0}, 0, 1, 0},
    /* GPU tiles: square 4 x 4 per item; 8 x 8 per item with 8-float loads; double-buffered
     * with one load per float; nothing a power of two (3 x 5 per item, k steps of 12). */
    {"tile 64x64 k16 16x16", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0,
     {64, 64, 16, 16, 16, 4, 2, 0}, 0, 0, 0},
    {"tile 64x64 k32 8x8 vw8", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0,
     {64, 64, 32, 8, 8, 8, 8, 0}, 0, 0, 0},
    {"tile 32x128 k8 db vw1", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0,
     {32, 128, 8, 16, 16, 1, 1, 1}, 0, 0, 0},
    {"tile 24x40 k12 db", CLG_GEMM_BUILTIN, CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0,
     {24, 40, 12, 8, 8, 4, 4, 1}, 0, 0, 0},
};

static void apply(const variant *v)
{
    CLG_ASSERT_STATUS(clg_gemm_set_backend(ctx, v->backend), CLG_OK);
    clg_gemm_params p = clg_gemm_params_default(clg_ctx_device(ctx));
    if (v->small_flops >= 0) {
        p.kernel = v->kernel;
        p.mr = v->mr;
        p.nr = v->nr;
        p.local_m = v->local_m;
        p.local_n = v->local_n;
        p.kc = v->kc;
        p.pack_min_k = v->pack_min_k;
        p.stage_b = v->stage_b;
        if (v->tile[0]) {
            p.mwg = v->tile[0];
            p.nwg = v->tile[1];
            p.kwg = v->tile[2];
            p.mdimc = v->tile[3];
            p.ndimc = v->tile[4];
            p.vw = v->tile[5];
            p.kwi = v->tile[6];
            p.db = v->tile[7];
        }
        p.small_flops = v->small_flops;
        p.pack_a_min_n = v->pack_a_min_n;
        p.pf_panel = v->pf_panel;
    }
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_OK);
}

static void every_variant_matches_the_reference(void **state)
{
    (void)state;
    gemm_case cases[64];
    int failures = 0;
    size_t total = 0, left_out = 0;
    for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
        apply(&variants[vi]);
        for (int integer = 0; integer < 2; integer++) {
            size_t n = make_cases(cases, integer);
            for (size_t i = 0; i < n; i++, total++) {
                const gemm_case *c = &cases[i];
                if (!clg_test_too_big((double)c->m * c->n * c->k * c->batch, &left_out))
                    failures += run_case(c, variants[vi].name);
            }
        }
    }
    clg_test_report_left_out("GEMM", left_out, total);
    assert_int_equal(failures, 0);
}

/* Batches sharing A with few columns an entry (1x1 convolutions on 7x7 planes): on CPUs the
 * columns of every entry run side by side in one product, blocks crossing from one entry into
 * the next (49, 33, 25 and 20 columns; beta, padding, offsets, A transposed, integers exact),
 * in 16- and 32-wide blocks (thin_nr); and batches of few rows (16-wide blocks by thin_nr 16,
 * image by image). */
static void shared_a_batches_match_the_reference(void **state)
{
    (void)state;
    static const gemm_case cases[] = {
        {0, 0, 40, 49, 24, 1.0f, 0.0f, 0, 0, 3, 0, 0, 1},
        {0, 0, 33, 33, 7, 0.5f, 0.5f, 3, 5, 4, 1, 0, 1},
        {1, 0, 64, 25, 64, 1.0f, 0.0f, 1, 0, 2, 0, 0, 1},
        {0, 0, 17, 20, 3, -1.0f, 2.0f, 0, 2, 5, 1, 0, 1},
        {0, 0, 24, 49, 100, 1.0f, 0.0f, 0, 0, 3, 0, 0, 1}, /* more sum than rows: not side by side */
        {0, 0, 24, 300, 16, 1.0f, 0.5f, 2, 1, 3, 1, 0, 1}, /* few rows: image by image */
        {0, 0, 20, 196, 40, 1.0f, 0.0f, 0, 0, 2, 0, 0, 1}, /* a 14x14 plane, 40 -> 20 */
        /* long sums: A packed once for the whole batch, B's rows prefetched ahead */
        {0, 0, 36, 70, 200, 1.0f, 0.0f, 0, 0, 3, 0, 0, 1},
        {0, 0, 19, 64, 130, 1.0f, 1.0f, 1, 2, 2, 1, 0, 1},
    };
    /* the device's row; 8 and 6 rows, no small kernel; A packed (its panels shared) */
    const size_t use[] = {0, 2, 6, 13};
    const unsigned thin[] = {16, 32};
    int failures = 0;
    for (size_t u = 0; u < sizeof use / sizeof use[0]; u++)
        for (size_t t = 0; t < 2; t++) {
            apply(&variants[use[u]]);
            clg_gemm_params p;
            CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &p), CLG_OK);
            p.thin_nr = thin[t];
            CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_OK);
            char name[96];
            snprintf(name, sizeof name, "%s, thin_nr %u", variants[use[u]].name, thin[t]);
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                failures += run_case(&cases[i], name);
        }
    apply(&variants[0]);
    assert_int_equal(failures, 0);
}

/* The GPU tiles on a grid of at most 2 work-groups per dimension (drivers cap grids at 65535):
 * each group loops over the tiles and batch entries past the grid. */
static void tiles_loop_past_a_small_grid(void **state)
{
    (void)state;
    const variant *tile = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        if (strcmp(variants[i].name, "tile 24x40 k12 db") == 0)
            tile = &variants[i];
    assert_non_null(tile);
    apply(tile);
    gemm_case cases[] = {
        {0, 0, 100, 257, 33, 1.0f, 0.0f, 0, 0, 3, 1, 0, 0}, {1, 1, 65, 130, 47, 0.5f, 1.0f, 1, 2, 5, 0, 0, 0},
    };
    clg__testing_set_max_groups(2);
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        failures += run_case(&cases[i], "tile, 2 groups a dimension");
    clg__testing_set_max_groups(0);
    assert_int_equal(failures, 0);
}

static void clblast_matches_the_reference(void **state)
{
    (void)state;
    if (!clg_gemm_has_clblast())
        skip();
    if (clg_test_small_limit()) { /* under oclgrind: CLBlast's kernels are not ours to check */
        print_message("CLBlast left out (CLG_TEST_SMALL)\n");
        skip();
    }
    CLG_ASSERT_STATUS(clg_gemm_set_backend(ctx, CLG_GEMM_CLBLAST), CLG_OK);
    /* A few shapes: CLBlast compiles a program per routine and shape class. */
    gemm_case cases[] = {
        {0, 0, 33, 100, 7, 1.0f, 0.0f, 0, 0, 1, 0, 0, 0}, {1, 1, 64, 3, 257, 0.5f, 2.0f, 3, 11, 1, 0, 0, 0},
        {0, 1, 16, 16, 16, 1.0f, 1.0f, 0, 0, 3, 1, 0, 0}, {1, 0, 7, 33, 100, -1.5f, 0.0f, 2, 0, 1, 1, 0, 0},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        failures += run_case(&cases[i], "clblast");
    assert_int_equal(failures, 0);
    CLG_ASSERT_STATUS(clg_gemm_set_backend(ctx, CLG_GEMM_AUTO), CLG_OK);
}

static void zero_sizes_follow_blas(void **state)
{
    (void)state;
    apply(&variants[0]);
    float c[6] = {1, 2, 3, 4, 5, 6}, out[6];
    clg_tensor *tc = upload(c, 6), *ta = upload(c, 6);
    clg_matrix m = {tc, 0, 3}, a = {ta, 0, 3};
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 0, 3, 3, 1, a, a, 0, m), CLG_OK);
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 2, 0, 3, 1, a, a, 0, m), CLG_OK);
    CLG_ASSERT_STATUS(clg_sgemm_batched(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 2, 3, 3, 1, a, 0, a, 0, 0, m, 0, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tc, out, 6), CLG_OK);
    assert_memory_equal(out, c, sizeof c); /* no-ops */
    clg_matrix none = {NULL, 0, 0};
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 2, 3, 0, 1, none, none, 2.0f, m), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tc, out, 6), CLG_OK);
    for (int i = 0; i < 6; i++)
        assert_true(out[i] == 2.0f * c[i]); /* k = 0: C = beta * C */
    clg_tensor_destroy(tc);
    clg_tensor_destroy(ta);
}

static void bad_arguments_are_rejected(void **state)
{
    (void)state;
    float h[64];
    clg_test_fill_uniform(&rng, h, 64, -1, 1);
    clg_tensor *t = upload(h, 64), *small = upload(h, 5);
    clg_matrix a = {t, 0, 4}, c = {t, 32, 4};
    /* 4x4 times 4x4 in one tensor: A and B may share memory (both are read); C may not
     * overlap either (oclgrind reports the race) */
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, a, 0, c), CLG_OK);
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, c, 0,
                                (clg_matrix){t, 12, 4}), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "C overlaps A"));
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, c, 0,
                                (clg_matrix){t, 47, 4}), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "C overlaps B"));
    clg_matrix lda_small = {t, 0, 3};
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, lda_small, a, 0, c),
                      CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "ldA = 3"));
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_TRANS, 4, 5, 4, 1, a, a, 0, c),
                      CLG_ERR_INVALID_ARG); /* ldc 4 < n = 5 */
    assert_non_null(strstr(clg_ctx_last_error(ctx), "ldC = 4"));
    clg_matrix off_end = {t, 60, 4};
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 2, 4, 4, 1, off_end, a, 0, c),
                      CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "does not fit"));
    clg_matrix tiny = {small, 0, 4};
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, a, 0, tiny),
                      CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, (clg_matrix){NULL, 0, 4}, a, 0, c),
                      CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_sgemm(NULL, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, a, 0, c), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_sgemm(ctx, (clg_transpose)7, CLG_NO_TRANS, 4, 4, 4, 1, a, a, 0, c), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_sgemm_batched(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, 0, a, 0, 0, c, 8, 2),
                      CLG_ERR_INVALID_ARG); /* overlapping C matrices */
    CLG_ASSERT_STATUS(clg_sgemm_batched(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, a, 40, a, 0, 0, c, 16, 3),
                      CLG_ERR_INVALID_ARG); /* A's batches run past the tensor */
    clg_ctx *other = clg_test_ctx("off");
    clg_tensor *foreign;
    CLG_ASSERT_STATUS(clg_tensor_create(other, (clg_shape){64, 1, 1, 1}, &foreign), CLG_OK);
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 4, 4, 4, 1, (clg_matrix){foreign, 0, 4}, a, 0, c),
                      CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(foreign);
    clg_ctx_destroy(other);
    clg_gemm_params p = clg_gemm_params_default(clg_ctx_device(ctx));
    p.nr = 24;
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "nr"));
    p = clg_gemm_params_default(clg_ctx_device(ctx));
    p.thin_nr = 24;
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "thin_nr"));
    p = clg_gemm_params_default(clg_ctx_device(ctx));
    p.pf_panel = 257;
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "pf_panel"));
    p = clg_gemm_params_default(clg_ctx_device(ctx));
    p.mwg = 48;
    p.mdimc = 5;
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "mdimc"));
    p = clg_gemm_params_default(clg_ctx_device(ctx));
    p.vw = 3;
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "vw"));
    p = clg_gemm_params_default(clg_ctx_device(ctx));
    p.kernel = CLG_GEMM_KERNEL_LOCAL;
    p.mwg = p.nwg = 256;
    p.mdimc = p.ndimc = 16;
    p.kwg = 64;
    p.db = 1; /* 2 x 65 x 514 floats: 267 KB, more than any GPU's local memory */
    if (clg_ctx_device(ctx)->local_mem_bytes < 267280) {
        CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_ERR_INVALID_ARG);
        assert_non_null(strstr(clg_ctx_last_error(ctx), "local memory"));
    }
    CLG_ASSERT_STATUS(clg_gemm_set_backend(ctx, (clg_gemm_backend)9), CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(t);
    clg_tensor_destroy(small);
}

static void tuning_file_is_used_by_the_next_context(void **state)
{
    (void)state;
    clg_ctx *a = clg_test_ctx(cache_dir);
    clg_gemm_params p = clg_gemm_params_default(clg_ctx_device(a)), got;
    p.mr = 5;
    p.nr = 16;
    p.kc = 96;
    p.small_flops = 1234;
    p.thin_nr = p.thin_nr == 16 ? 32 : 16; /* not the row's */
    p.mwg = 24, p.nwg = 40, p.kwg = 12, p.mdimc = 8, p.ndimc = 8, p.vw = 4, p.kwi = 4, p.db = 1;
    clg_gemm_backend per_class[CLG_GEMM_CLASSES] = {CLG_GEMM_BUILTIN, CLG_GEMM_BUILTIN, CLG_GEMM_BUILTIN};
    CLG_ASSERT_STATUS(clg_gemm_save_tuning(a, &p, per_class), CLG_OK);
    clg_ctx_destroy(a);
    clg_ctx *b = clg_test_ctx(cache_dir);
    CLG_ASSERT_STATUS(clg_gemm_get_params(b, &got), CLG_OK);
    assert_int_equal(got.mr, 5);
    assert_int_equal(got.nr, 16);
    assert_int_equal(got.kc, 96);
    assert_true(got.small_flops == 1234);
    assert_int_equal(got.db, 1);
    assert_memory_equal(&got, &p, sizeof p); /* every field, through the file's text */
    clg_ctx_destroy(b);

    /* The text form both ways (clgrad-tune's --set and worker requests use it) */
    char text[1024];
    int len = clg_gemm_params_print(&p, "=", ",", text, sizeof text);
    assert_true(len > 0 && (size_t)len < sizeof text);
    assert_int_equal(clg_gemm_params_print(&p, "=", ",", NULL, 0), len);
    clg_gemm_params back;
    memset(&back, 0, sizeof back);
    back.struct_size = sizeof back; /* as the _default() sets it: the text holds the tunables */
    char *save = NULL;
    for (char *kv = strtok_r(text, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        CLG_ASSERT_STATUS(clg_gemm_params_set_field(&back, kv, eq + 1), CLG_OK);
    }
    assert_memory_equal(&back, &p, sizeof p);
    CLG_ASSERT_STATUS(clg_gemm_params_set_field(&back, "ts", "32"), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "unknown GEMM parameter \"ts\""));
    CLG_ASSERT_STATUS(clg_gemm_params_set_field(&back, "vw", "-4"), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_gemm_params_set_field(&back, "kernel", "fast"), CLG_ERR_INVALID_ARG);

    /* A damaged tuning file is ignored: defaults, and no error. */
    clg_ctx *c = clg_test_ctx("off"); /* no tuning file: the table's row, as the context decides */
    clg_gemm_params def;
    CLG_ASSERT_STATUS(clg_gemm_get_params(c, &def), CLG_OK);
    clg_ctx_destroy(c);
    c = clg_test_ctx(cache_dir);
    FILE *f = NULL;
    char path[600];
    snprintf(path, sizeof path, "%s", cache_dir);
    clg_ctx_destroy(c);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "for f in '%s'/gemm-*.tune; do printf 'clgrad-gemm-tuning 1\\nmr 99\\n' > \"$f\"; done", cache_dir);
    assert_int_equal(system(cmd), 0);
    (void)f;
    c = clg_test_ctx(cache_dir);
    CLG_ASSERT_STATUS(clg_gemm_get_params(c, &got), CLG_OK);
    assert_int_equal(got.mr, def.mr);
    clg_ctx_destroy(c);

    clg_ctx *off = clg_test_ctx("off");
    CLG_ASSERT_STATUS(clg_gemm_save_tuning(off, &p, per_class), CLG_ERR_IO);
    clg_ctx_destroy(off);
}

static void backend_comes_from_the_environment(void **state)
{
    (void)state;
    const char *names[] = {"builtin", "clblast", "auto", "bogus"};
    clg_gemm_backend want[] = {CLG_GEMM_BUILTIN, clg_gemm_has_clblast() ? CLG_GEMM_CLBLAST : CLG_GEMM_AUTO,
                               CLG_GEMM_AUTO, CLG_GEMM_AUTO};
    for (int i = 0; i < 4; i++) {
        setenv("CLGRAD_GEMM", names[i], 1);
        clg_ctx *c = clg_test_ctx("off");
        clg_gemm_backend got;
        CLG_ASSERT_STATUS(clg_gemm_get_backend(c, &got), CLG_OK);
        assert_int_equal(got, want[i]);
        clg_ctx_destroy(c);
    }
    unsetenv("CLGRAD_GEMM");
}

static void default_table_fits_the_device(void **state)
{
    (void)state;
    clg_device_info d;
    memset(&d, 0, sizeof d);
    d.type = CLG_DEVICE_GPU;
    snprintf(d.vendor, sizeof d.vendor, "NVIDIA Corporation");
    assert_int_equal(clg_gemm_params_default(&d).kernel, CLG_GEMM_KERNEL_LOCAL);
    d.type = CLG_DEVICE_CPU;
    d.vec_width_float = 16;
    clg_gemm_params p = clg_gemm_params_default(&d);
    assert_int_equal(p.kernel, CLG_GEMM_KERNEL_REG);
    assert_int_equal(p.mr, 8);
    d.vec_width_float = 8; /* AVX2: 4 x 16 GEMM blocks, 6 x 32 convolution blocks (tuned) */
    assert_int_equal(clg_gemm_params_default(&d).mr, 4);
    assert_int_equal(clg_gemm_params_default(&d).conv_mr, 6);
    d.vec_width_float = 4;
    assert_int_equal(clg_gemm_params_default(&d).nr, 16);
    /* Intel's CPU runtime prefers width 1 and is 16 wide (AVX-512): its own row */
    snprintf(d.vendor, sizeof d.vendor, "Intel(R) Corporation");
    d.vec_width_float = 1;
    d.native_vec_width_float = 16;
    p = clg_gemm_params_default(&d);
    assert_int_equal(p.mr, 6);
    assert_int_equal(p.local_m, 16);
    snprintf(d.vendor, sizeof d.vendor, "GenuineIntel"); /* POCL on an Intel CPU */
    p = clg_gemm_params_default(&d);
    assert_int_equal(p.mr, 8);
    assert_int_equal(p.stage_b, 3); /* two FMA ports (a Xeon by default): its own row */
    assert_int_equal(p.pack_a_min_n, 512);
    assert_int_equal(p.thin_nr, 32); /* two ports: thin products keep 32-wide blocks */
    assert_int_equal(p.pf_panel, 32);
    snprintf(d.vendor, sizeof d.vendor, "AuthenticAMD");
    assert_int_equal(clg_gemm_params_default(&d).thin_nr, 16);
    assert_int_equal(clg_gemm_params_default(&d).pf_panel, 0);
    d.native_vec_width_float = 8; /* AVX2 */
    assert_int_equal(clg_gemm_params_default(&d).mr, 4);
    /* Every row is valid for the device it is meant for. */
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &p), CLG_OK);
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &p), CLG_OK);
}

/* Which way the register kernel reads B: staged where rows of B alias in the caches (a
 * multiple of 4 KiB apart; with stage_b 3, of 1 KiB where k spans a block), k spans a block
 * and one group holds every row tile; packed where they alias otherwise or B is transposed;
 * else in place. */
static void b_mode_follows_the_rows_of_b(void **state)
{
    (void)state;
    clg_gemm_params p = {.mr = 8, .nr = 32, .local_m = 8, .kc = 512, .pack_min_k = 64};
    clg__gemm_call g = {.ta = CLG_NO_TRANS, .tb = CLG_NO_TRANS, .m = 64, .n = 12544, .k = 800,
                        .batch = 1, .ldb = 12544}; /* rows 49 KiB apart */
    enum {
        IN_PLACE = CLG__GEMM_B_IN_PLACE,
        PACKED = CLG__GEMM_B_PACKED,
        STAGED = CLG__GEMM_B_STAGED
    };
    static const struct { unsigned stage_b; size_t m, k, ldb; int tb, want; } rows[] = {
        {2, 64, 800, 12544, 0, IN_PLACE}, {3, 64, 800, 12544, 0, STAGED},
        {2, 64, 800, 1024, 0, STAGED},    {3, 64, 800, 1024, 0, STAGED},
        {2, 72, 800, 12544, 0, IN_PLACE}, /* 9 row tiles: more than a group holds */
        {3, 72, 800, 12544, 0, PACKED},   {3, 72, 800, 1024, 0, PACKED},
        {3, 64, 400, 12544, 0, IN_PLACE}, {3, 64, 400, 1024, 0, PACKED}, /* k < kc */
        {3, 64, 800, 12545, 0, IN_PLACE}, {3, 64, 800, 12544, 1, PACKED},
        {0, 64, 800, 1024, 0, PACKED},    {1, 64, 40, 12545, 0, STAGED},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        p.stage_b = rows[i].stage_b;
        g.m = rows[i].m;
        g.k = rows[i].k;
        g.ldb = rows[i].ldb;
        g.tb = rows[i].tb ? CLG_TRANS : CLG_NO_TRANS;
        if (clg__gemm_b_mode(&p, &g) != rows[i].want)
            fail_msg("row %zu: stage_b %u m %zu k %zu ldb %zu: mode %d, expected %d", i,
                     rows[i].stage_b, g.m, g.k, g.ldb, clg__gemm_b_mode(&p, &g), rows[i].want);
    }
}

static int setup(void **state)
{
    (void)state;
    cache_dir = clg_test_tempdir("gemm");
    /* No binary cache: this context builds about 60 programs, each once; on POCL, storing a
     * binary compiles every kernel of its program again (for a work-group size left open),
     * which doubled this test's cold run (6 min on a 2-core Zen 3 VM) and saves nothing that
     * POCL's own kernel cache does not. The binary cache is test_program_cache's. */
    ctx = clg_test_ctx("off");
    clg_test_rng_init(&rng, clg_test_seed());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_ctx_destroy(ctx);
    clg_test_rmtree(cache_dir);
    free(cache_dir);
    clg_test_devices_release();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_variant_matches_the_reference),
        cmocka_unit_test(shared_a_batches_match_the_reference),
        cmocka_unit_test(tiles_loop_past_a_small_grid),
        cmocka_unit_test(clblast_matches_the_reference),
        cmocka_unit_test(zero_sizes_follow_blas),
        cmocka_unit_test(bad_arguments_are_rejected),
        cmocka_unit_test(tuning_file_is_used_by_the_next_context),
        cmocka_unit_test(default_table_fits_the_device),
        cmocka_unit_test(b_mode_follows_the_rows_of_b),
        cmocka_unit_test(backend_comes_from_the_environment),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
