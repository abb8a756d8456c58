/* Softmax cross-entropy and batch normalisation against double references, their backward
 * passes against finite differences, and bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "ops/norm_internal.h"
#include "runtime/testing.h"

static clg_ctx *ctx;
static clg_test_rng rng;

static clg_tensor *make(clg_shape s, const float *host)
{
    return clg_test_tensor(ctx, s, host);
}

static double ref_xent(const float *row, size_t C, int label, double *probs)
{
    double m = row[0], s = 0;
    for (size_t c = 1; c < C; c++)
        m = fmax(m, row[c]);
    for (size_t c = 0; c < C; c++)
        s += exp(row[c] - m);
    for (size_t c = 0; probs && c < C; c++)
        probs[c] = exp(row[c] - m) / s;
    return log(s) + m - row[label];
}

static void xent_matches_the_reference(void **state)
{
    (void)state;
    /* classes: the usual 10, one, and more than a GPU work-group's 64 items take at once */
    const size_t Ns[] = {1, 7, 64, 5, 3}, Cs[] = {10, 10, 10, 1, 200};
    for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++) {
        size_t N = Ns[ni], C = Cs[ni];
        float *z = malloc(N * C * sizeof *z), *l = malloc(N * sizeof *l), *dz = malloc(N * C * sizeof *dz);
        int32_t *lab = malloc(N * sizeof *lab);
        double *probs = malloc(C * sizeof *probs), mean = 0, got_mean;
        size_t correct = 0, got_correct;
        clg_test_fill_uniform(&rng, z, N * C, -5, 5);
        if (N > 1) { /* huge logits: finite and right */
            for (size_t c = 0; c < C; c++)
                z[c] = c % 2 ? 1e4f : -1e4f;
        }
        for (size_t i = 0; i < N; i++)
            lab[i] = (int32_t)(clg_test_rng_next(&rng) % C);
        if (C > 130) { /* a tie for the largest: the first (3) is the prediction, not 130 */
            z[C + 3] = z[C + 130] = 20.0f;
            lab[1] = 3;
            z[2 * C + 3] = z[2 * C + 130] = 20.0f;
            lab[2] = 130;
        }
        clg_tensor *tz = make((clg_shape){N, C, 1, 1}, z), *tl = make((clg_shape){N, 1, 1, 1}, NULL);
        clg_tensor *tdz = make((clg_shape){N, C, 1, 1}, NULL);
        CLG_ASSERT_STATUS(clg_softmax_xent_forward(ctx, tz, lab, N, tl, &got_mean, &got_correct), CLG_OK);
        CLG_ASSERT_STATUS(clg_softmax_xent_backward(ctx, tz, lab, N, 1.0f / (float)N, tdz), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tl, l, N), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tdz, dz, N * C), CLG_OK);
        for (size_t i = 0; i < N; i++) {
            double want = ref_xent(z + i * C, C, lab[i], probs);
            mean += want / (double)N;
            size_t arg = 0;
            for (size_t c = 1; c < C; c++)
                arg = z[i * C + c] > z[i * C + arg] ? c : arg;
            correct += arg == (size_t)lab[i];
            assert_false(isnan(l[i]) || isinf(l[i]));
            /* log-sum-exp of C terms: a few float roundings of values up to |z|, and a sum's
             * rounding that grows with its length */
            if (fabs(l[i] - want) > 1e-5 * (1 + fabs(want)) * sqrt((double)C / 10 + 1) + 1e-6 * fabs(z[i * C]))
                fail_msg("N=%zu sample %zu: loss %.8g, expected %.8g", N, i, l[i], want);
            for (size_t c = 0; c < C; c++) {
                double g = (probs[c] - (c == (size_t)lab[i])) / (double)N;
                if (fabs(dz[i * C + c] - g) > 1e-6)
                    fail_msg("N=%zu dz[%zu][%zu] = %.8g, expected %.8g", N, i, c, dz[i * C + c], g);
            }
        }
        /* each loss as above: sample 0's, with its logits of 1e4, rounds at 1e4's float
         * spacing (about 1e-3) */
        double mean_tol = 1e-5 * (1 + fabs(mean)) + (N > 1 ? 1e-6 * 1e4 / (double)N : 0);
        if (!(fabs(got_mean - mean) < mean_tol))
            fail_msg("N=%zu C=%zu: mean loss %.9g, expected %.9g", N, C, got_mean, mean);
        assert_int_equal(got_correct, correct);
        /* Without a losses tensor, and in place backward. */
        CLG_ASSERT_STATUS(clg_softmax_xent_forward(ctx, tz, lab, N, NULL, &got_mean, NULL), CLG_OK);
        assert_true(fabs(got_mean - mean) < mean_tol);
        CLG_ASSERT_STATUS(clg_softmax_xent_backward(ctx, tz, lab, N, 1.0f / (float)N, tz), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tz, z, N * C), CLG_OK);
        assert_memory_equal(z, dz, N * C * sizeof *z);
        lab[N - 1] = (int32_t)C;
        CLG_ASSERT_STATUS(clg_softmax_xent_forward(ctx, tdz, lab, N, NULL, &got_mean, NULL), CLG_ERR_INVALID_ARG);
        assert_non_null(strstr(clg_ctx_last_error(ctx), "outside"));
        lab[N - 1] = -1;
        CLG_ASSERT_STATUS(clg_softmax_xent_backward(ctx, tdz, lab, N, 1.0f, tdz), CLG_ERR_INVALID_ARG);
        lab[N - 1] = 0;
        CLG_ASSERT_STATUS(clg_softmax_xent_forward(ctx, tdz, lab, N + 1, NULL, &got_mean, NULL), CLG_ERR_SHAPE);
        clg_tensor_destroy(tz);
        clg_tensor_destroy(tl);
        clg_tensor_destroy(tdz);
        free(z);
        free(l);
        free(dz);
        free(lab);
        free(probs);
    }
}

static void xent_backward_matches_finite_differences(void **state)
{
    (void)state;
    enum { N = 3, C = 5 };
    float z[N * C], dz[N * C];
    int32_t lab[N] = {0, 4, 2};
    clg_test_fill_uniform(&rng, z, N * C, -2, 2);
    clg_tensor *tz = make((clg_shape){N, C, 1, 1}, z), *tdz = make((clg_shape){N, C, 1, 1}, NULL);
    CLG_ASSERT_STATUS(clg_softmax_xent_backward(ctx, tz, lab, N, 1.0f / N, tdz), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdz, dz, N * C), CLG_OK);
    for (int i = 0; i < N * C; i++) {
        double l[2];
        float keep = z[i];
        for (int side = 0; side < 2; side++) {
            z[i] = keep + (side ? 1e-2f : -1e-2f);
            CLG_ASSERT_STATUS(clg_tensor_upload(tz, z, N * C), CLG_OK);
            CLG_ASSERT_STATUS(clg_softmax_xent_forward(ctx, tz, lab, N, NULL, &l[side], NULL), CLG_OK);
        }
        z[i] = keep;
        double fd = (l[1] - l[0]) / 2e-2;
        if (fabs(fd - dz[i]) > 1e-3)
            fail_msg("dz[%d]: finite difference %g, backward %g", i, fd, dz[i]);
    }
    clg_tensor_destroy(tz);
    clg_tensor_destroy(tdz);
}

/* Batch norm reference in double: forward, and backward by the closed form. */
static void ref_bn(size_t N, size_t C, size_t HW, const double *x, const double *gamma,
                   const double *beta, double eps, double *y, double *mean, double *var)
{
    double M = (double)(N * HW);
    for (size_t c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (size_t n = 0; n < N; n++)
            for (size_t i = 0; i < HW; i++)
                s += x[(n * C + c) * HW + i];
        double mu = s / M;
        for (size_t n = 0; n < N; n++)
            for (size_t i = 0; i < HW; i++)
                q += (x[(n * C + c) * HW + i] - mu) * (x[(n * C + c) * HW + i] - mu);
        mean[c] = mu;
        var[c] = q / M;
        for (size_t n = 0; n < N; n++)
            for (size_t i = 0; i < HW; i++) {
                size_t at = (n * C + c) * HW + i;
                y[at] = gamma[c] * (x[at] - mu) / sqrt(var[c] + eps) + beta[c];
            }
    }
}

/* The rounding a float sum of channel c's M terms (dy, or dy * xhat with xhat[c] from mean and
 * var) may carry, as the scale of a random walk of roundings: sqrt(sum over k of s_k^2) for the
 * partial sums s_k in serial order, the longest chain any kernel form uses (a CPU plane of
 * fewer than 16 floats is summed one value at a time). Roundings of u * |s_k| each add up
 * like a random walk, so its spread is about u * sqrt(sum s_k^2) / sqrt(3); the sums' exact
 * order and fused multiply-adds differ by form and by runtime. */
static double channel_sum_rounding(size_t N, size_t C, size_t HW, size_t c, const float *dy,
                                   const double *xd, double mean, double var, double eps,
                                   int times_xhat)
{
    double s = 0, walk = 0;
    for (size_t n = 0; n < N; n++)
        for (size_t i = 0; i < HW; i++) {
            size_t at = (n * C + c) * HW + i;
            s += dy[at] * (times_xhat ? (xd[at] - mean) / sqrt(var + eps) : 1.0);
            walk += s * s;
        }
    return sqrt(walk) * 0x1p-24;
}

/* One shape: forward (training and inference) against the double reference, the running
 * statistics, backward against central differences of the reference, bad arguments. */
static void batchnorm_case(size_t N, size_t C, size_t H, size_t W)
{
    const size_t HW = H * W, n = N * C * HW;
    const float eps = 1e-5f, momentum = 0.1f;
    float *x = malloc(n * sizeof *x), *dy = malloc(n * sizeof *dy), *out = malloc(n * sizeof *out);
    float *dx = malloc(n * sizeof *dx), *ch = malloc(9 * C * sizeof *ch);
    float *gamma = ch, *beta = ch + C, *rm = ch + 2 * C, *rv = ch + 3 * C, *tmp = ch + 4 * C;
    float *dg = ch + 5 * C, *db = ch + 6 * C, *rm0 = ch + 7 * C, *rv0 = ch + 8 * C;
    double *xd = malloc(n * sizeof *xd), *y = malloc(n * sizeof *y), *y2 = malloc(n * sizeof *y2);
    double *cd = malloc(4 * C * sizeof *cd), *gd = cd, *bd = cd + C, *mean = cd + 2 * C;
    double *var = cd + 3 * C;
    clg_test_fill_uniform(&rng, x, n, -2, 3);
    clg_test_fill_uniform(&rng, dy, n, -1, 1);
    clg_test_fill_uniform(&rng, gamma, C, 0.5f, 1.5f);
    clg_test_fill_uniform(&rng, beta, C, -1, 1);
    clg_test_fill_uniform(&rng, rm0, C, -1, 2);
    clg_test_fill_uniform(&rng, rv0, C, 0.5f, 2);
    memcpy(rm, rm0, C * sizeof *rm);
    memcpy(rv, rv0, C * sizeof *rv);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    for (size_t c = 0; c < C; c++)
        gd[c] = gamma[c], bd[c] = beta[c];
    ref_bn(N, C, HW, xd, gd, bd, eps, y, mean, var);
    clg_shape xs = {N, C, H, W}, cs = {C, 1, 1, 1};
    clg_tensor *tx = make(xs, x), *ty = make(xs, NULL), *tg = make(cs, gamma), *tb = make(cs, beta);
    clg_tensor *trm = make(cs, rm), *trv = make(cs, rv), *tsm = make(cs, NULL), *tsi = make(cs, NULL);
    clg_tensor *tdy = make(xs, dy), *tdx = make(xs, NULL), *tdg = make(cs, NULL), *tdb = make(cs, NULL);
    CLG_ASSERT_STATUS(clg_batchnorm_forward_train(ctx, tx, tg, tb, momentum, eps, trm, trv, tsm, tsi, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, out, n), CLG_OK);
    for (size_t i = 0; i < n; i++)
        if (!(fabs(out[i] - y[i]) < 1e-5 * (1 + fabs(y[i]))))
            fail_msg("%zux%zux%zux%zu: y[%zu] = %g, expected %g", N, C, H, W, i, out[i], y[i]);
    double M = (double)(N * HW);
    CLG_ASSERT_STATUS(clg_tensor_download(trm, tmp, C), CLG_OK);
    for (size_t c = 0; c < C; c++)
        assert_true(fabs(tmp[c] - (0.9 * rm0[c] + 0.1 * mean[c])) < 1e-5);
    CLG_ASSERT_STATUS(clg_tensor_download(trv, tmp, C), CLG_OK);
    for (size_t c = 0; c < C; c++) /* unbiased: var * M / (M - 1) */
        assert_true(fabs(tmp[c] - (0.9 * rv0[c] + 0.1 * var[c] * M / (M - 1))) < 1e-5);
    /* Backward against central differences of the double reference on L = sum(dy * y). */
    CLG_ASSERT_STATUS(clg_batchnorm_backward(ctx, tx, tdy, tg, tsm, tsi, tdx, tdg, tdb), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, n), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdg, dg, C), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdb, db, C), CLG_OK);
    const double h = 1e-6;
    double *rounding = malloc(2 * C * sizeof *rounding); /* dgamma's, then dbeta's */
    for (size_t c = 0; c < C; c++)
        for (int k = 0; k < 2; k++)
            rounding[k * C + c] = channel_sum_rounding(N, C, HW, c, dy, xd, mean[c], var[c], eps, !k);
    /* every input of small shapes; of large ones a spread of 300 (each probe is a pass) */
    size_t step = n > 300 ? n / 300 : 1;
    for (size_t probe = 0; probe < n + 2 * C; probe += probe < n ? step : 1) {
        double *v = probe < n ? &xd[probe] : probe < n + C ? &gd[probe - n] : &bd[probe - n - C];
        double keep = *v, l[2];
        for (int side = 0; side < 2; side++) {
            *v = keep + (side ? h : -h);
            ref_bn(N, C, HW, xd, gd, bd, eps, y2, mean, var);
            l[side] = 0;
            for (size_t i = 0; i < n; i++)
                l[side] += dy[i] * y2[i];
        }
        *v = keep;
        double fd = (l[1] - l[0]) / (2 * h);
        double an = probe < n ? dx[probe] : probe < n + C ? dg[probe - n] : db[probe - n - C];
        /* float32 against a double difference quotient: dx seen up to 9e-8, 1e-6 allowed;
         * dgamma and dbeta are sums of M terms, allowed 8x the scale of their rounding (about
         * 14 spreads; 41 seeds showed up to 2.9; a bound growing with sqrt(M) failed at M =
         * 630 on an error of 1e-5, one spread) */
        double bound = probe < n ? 1e-6 * (1 + fabs(fd)) : 8 * rounding[probe - n] + 1e-7;
        if (fabs(fd - an) > bound)
            fail_msg("%zux%zux%zux%zu: gradient %zu: finite difference %.8g, backward %.8g", N, C,
                     H, W, probe, fd, an);
    }
    /* Inference uses the running statistics. */
    CLG_ASSERT_STATUS(clg_batchnorm_forward_infer(ctx, tx, tg, tb, trm, trv, eps, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(trm, rm, C), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(trv, rv, C), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, out, n), CLG_OK);
    for (size_t i = 0; i < n; i++) {
        size_t c = (i / HW) % C;
        double want = gamma[c] * (x[i] - rm[c]) / sqrt((double)rv[c] + eps) + beta[c];
        assert_true(fabs(out[i] - want) < 1e-5 * (1 + fabs(want)));
    }
    clg_tensor *wrong = make((clg_shape){C + 1, 1, 1, 1}, NULL);
    CLG_ASSERT_STATUS(clg_batchnorm_forward_infer(ctx, tx, wrong, tb, trm, trv, eps, ty), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_batchnorm_forward_train(ctx, tx, tg, tb, momentum, -1.0f, NULL, NULL, tsm, tsi, ty),
                      CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_batchnorm_backward(ctx, tx, tg, tg, tsm, tsi, tdx, tdg, tdb), CLG_ERR_SHAPE);
    clg_tensor *all[] = {tx, ty, tg, tb, trm, trv, tsm, tsi, tdy, tdx, tdg, tdb, wrong};
    for (int i = 0; i < 13; i++)
        clg_tensor_destroy(all[i]);
    free(x), free(dy), free(out), free(dx), free(ch), free(xd), free(y), free(y2), free(cd);
    free(rounding);
}

/* Shapes for both kernel forms' paths: planes shorter than a vector, of 49 (32 + 16 + 1) and
 * 323 floats (many vectors and a tail), more images than a reduction's work-group has items. */
static void batchnorm_matches_the_reference_and_finite_differences(void **state)
{
    (void)state;
    batchnorm_case(5, 3, 7, 2);
    batchnorm_case(3, 2, 7, 7);
    batchnorm_case(2, 3, 17, 19);
    batchnorm_case(70, 2, 3, 3);
}

/* A batch norm with its ReLU fused (a network's conv-bn-relu): the backward pass recomputes
 * the ReLU's mask from x, and must find the forward pass's own: bit for bit the plain
 * backward pass of dy masked on the host where the forward pass's output is not positive. */
static void batchnorm_relu_backward_masks_as_the_forward_pass(void **state)
{
    (void)state;
    const size_t shapes[3][4] = {{5, 3, 7, 2}, {4, 6, 28, 28}, {70, 2, 3, 3}};
    for (int si = 0; si < 3; si++) {
        const size_t *d = shapes[si], n = d[0] * d[1] * d[2] * d[3], C = d[1];
        clg_shape xs = {d[0], d[1], d[2], d[3]}, cs = {C, 1, 1, 1};
        float *x = malloc(n * sizeof *x), *dy = malloc(n * sizeof *dy), *y = malloc(n * sizeof *y);
        float *got[2][3], ch[2][64];
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 3; j++)
                got[k][j] = malloc((j ? C : n) * sizeof(float));
        clg_test_fill_uniform(&rng, x, n, -2, 3);
        clg_test_fill_uniform(&rng, dy, n, -1, 1);
        clg_test_fill_uniform(&rng, ch[0], C, 0.5f, 1.5f); /* gamma */
        clg_test_fill_uniform(&rng, ch[1], C, -1, 1);      /* beta: about half masked */
        clg_tensor *tx = make(xs, x), *tdy = make(xs, dy), *ty = make(xs, NULL);
        clg_tensor *tg = make(cs, ch[0]), *tb = make(cs, ch[1]), *tsm = make(cs, NULL);
        clg_tensor *tsi = make(cs, NULL), *tdx = make(xs, NULL), *tdg = make(cs, NULL);
        clg_tensor *tdb = make(cs, NULL);
        CLG_ASSERT_STATUS(clg__batchnorm_train_sum(ctx, tx, tg, tb, 0.1f, 1e-5f, NULL, NULL, tsm,
                                                   tsi, NULL, 1, ty),
                          CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(ty, y, n), CLG_OK);
        size_t masked = 0;
        for (size_t i = 0; i < n; i++)
            masked += !(y[i] > 0.0f);
        assert_true(masked > n / 10 && masked < n - n / 10);
        for (int way = 0; way < 2; way++) {
            if (way == 0) {
                CLG_ASSERT_STATUS(clg__batchnorm_backward_relu(ctx, tx, tdy, tb, tg, tsm, tsi,
                                                               tdx, tdg, tdb),
                                  CLG_OK);
            } else {
                float *dm = malloc(n * sizeof *dm);
                for (size_t i = 0; i < n; i++)
                    dm[i] = y[i] > 0.0f ? dy[i] : 0.0f;
                clg_tensor *tdm = make(xs, dm);
                CLG_ASSERT_STATUS(clg_batchnorm_backward(ctx, tx, tdm, tg, tsm, tsi, tdx, tdg,
                                                         tdb),
                                  CLG_OK);
                clg_tensor_destroy(tdm);
                free(dm);
            }
            CLG_ASSERT_STATUS(clg_tensor_download(tdx, got[way][0], n), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tdg, got[way][1], C), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tdb, got[way][2], C), CLG_OK);
        }
        for (int j = 0; j < 3; j++)
            if (memcmp(got[0][j], got[1][j], (j ? C : n) * sizeof(float)) != 0)
                fail_msg("%zux%zux%zux%zu: %s differs from the host-masked pass's", d[0], d[1],
                         d[2], d[3], j == 0 ? "dx" : j == 1 ? "dgamma" : "dbeta");
        clg_tensor *all[] = {tx, tdy, ty, tg, tb, tsm, tsi, tdx, tdg, tdb};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++)
            clg_tensor_destroy(all[k]);
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 3; j++)
                free(got[k][j]);
        free(x), free(dy), free(y);
    }
}

static int setup(void **state)
{
    (void)state;
    clg_test_fixture_setup(&ctx, &rng);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_fixture_teardown(ctx);
    return 0;
}

/* The same with at most 3 work-groups per grid dimension: on GPUs the per-plane kernels loop
 * over the planes past the grid. */
static void batchnorm_loops_past_a_small_grid(void **state)
{
    clg__testing_set_max_groups(3);
    batchnorm_matches_the_reference_and_finite_differences(state);
    clg__testing_set_max_groups(0);
}

/* A profiled context names the loss kernels as they are (the launch once kept a pointer to
 * a name built on the stack, and profiles showed garbage names). */
static void xent_kernels_are_profiled_by_name(void **state)
{
    (void)state;
    clg_ctx *pc = clg_test_profiled_ctx();
    const size_t N = 3, C = 10;
    float z[30];
    int32_t lab[3] = {0, 4, 9};
    clg_test_fill_uniform(&rng, z, N * C, -2, 2);
    clg_tensor *tz, *tl, *tdz; /* not the guarded helpers: their checks run on the fixture's context */
    CLG_ASSERT_STATUS(clg_tensor_create(pc, (clg_shape){N, C, 1, 1}, &tz), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(pc, (clg_shape){N, 1, 1, 1}, &tl), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(pc, (clg_shape){N, C, 1, 1}, &tdz), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tz, z, N * C), CLG_OK);
    double mean;
    size_t correct;
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(pc, NULL, 0, NULL, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_softmax_xent_forward(pc, tz, lab, N, tl, &mean, &correct), CLG_OK);
    CLG_ASSERT_STATUS(clg_softmax_xent_backward(pc, tz, lab, N, 1.0f / (float)N, tdz), CLG_OK);
    clg_kernel_time kt[8];
    size_t n;
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(pc, kt, 8, &n, 0), CLG_OK);
    int gpu = clg_ctx_decides_as_gpu(pc);
    const char *fwd = gpu ? "clg_xent_fwd_group" : "clg_xent_fwd";
    const char *bwd = gpu ? "clg_xent_bwd_group" : "clg_xent_bwd";
    int seen_fwd = 0, seen_bwd = 0;
    for (size_t i = 0; i < n && i < 8; i++) {
        seen_fwd += strcmp(kt[i].name, fwd) == 0 && kt[i].calls == 1;
        seen_bwd += strcmp(kt[i].name, bwd) == 0 && kt[i].calls == 1;
    }
    assert_int_equal(seen_fwd, 1);
    assert_int_equal(seen_bwd, 1);
    clg_tensor_destroy(tz);
    clg_tensor_destroy(tl);
    clg_tensor_destroy(tdz);
    clg_ctx_destroy(pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(xent_matches_the_reference),
        cmocka_unit_test(xent_backward_matches_finite_differences),
        cmocka_unit_test(xent_kernels_are_profiled_by_name),
        cmocka_unit_test(batchnorm_matches_the_reference_and_finite_differences),
        cmocka_unit_test(batchnorm_loops_past_a_small_grid),
        cmocka_unit_test(batchnorm_relu_backward_masks_as_the_forward_pass),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
