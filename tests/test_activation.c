/* Activations (forward and backward against double references and finite differences of the
 * device forward), channel bias, and fully connected layers against double references. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"

static clg_ctx *ctx;
static clg_test_rng rng;
static const size_t sizes[] = {1, 3, 7, 33, 1000};

static double ref_act(clg_activation f, double a, double x)
{
    switch (f) {
    case CLG_ACT_RELU: return x > 0 ? x : 0;
    case CLG_ACT_LEAKY_RELU: return x > 0 ? x : a * x;
    case CLG_ACT_ELU: return x > 0 ? x : a * expm1(x);
    case CLG_ACT_SIGMOID: return 1 / (1 + exp(-x));
    default: return tanh(x);
    }
}

static double ref_grad(clg_activation f, double a, double x)
{
    switch (f) {
    case CLG_ACT_RELU: return x > 0;
    case CLG_ACT_LEAKY_RELU: return x > 0 ? 1 : a;
    case CLG_ACT_ELU: return x > 0 ? 1 : a * exp(x);
    case CLG_ACT_SIGMOID: { double s = 1 / (1 + exp(-x)); return s * (1 - s); }
    default: { double t = tanh(x); return 1 - t * t; }
    }
}

static clg_tensor *make(size_t n, const float *host)
{
    clg_tensor *t;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){n, 1, 1, 1}, &t), CLG_OK);
    if (host)
        CLG_ASSERT_STATUS(clg_tensor_upload(t, host, n), CLG_OK);
    else
        CLG_ASSERT_STATUS(clg_tensor_fill(t, NAN), CLG_OK);
    return t;
}

/* Elementwise: within 4 ulp-ish of the double result (OpenCL's exp, expm1, tanh allow a few
 * ulp), relative to max(1, |ref|). */
static void expect_close(const float *got, const double *ref, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(got[i]) || fabs(got[i] - ref[i]) > 1e-6 * fmax(1, fabs(ref[i])))
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, got[i], ref[i]);
}

static void activations_match_the_reference(void **state)
{
    (void)state;
    for (int f = CLG_ACT_RELU; f <= CLG_ACT_TANH; f++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            float alpha = 0.3f, *x = malloc(n * sizeof *x), *dy = malloc(n * sizeof *dy);
            float *y = malloc(n * sizeof *y), *dx = malloc(n * sizeof *dx);
            double *ry = malloc(n * sizeof *ry), *rdx = malloc(n * sizeof *rdx);
            clg_test_fill_uniform(&rng, x, n, -4, 4);
            clg_test_fill_uniform(&rng, dy, n, -1, 1);
            if (n > 3)
                x[0] = -30.0f, x[1] = 30.0f; /* saturation must stay finite */
            for (size_t i = 0; i < n; i++) {
                ry[i] = ref_act((clg_activation)f, alpha, x[i]);
                rdx[i] = dy[i] * ref_grad((clg_activation)f, alpha, x[i]);
            }
            clg_tensor *tx = make(n, x), *ty = make(n, NULL), *tdy = make(n, dy), *tdx = make(n, NULL);
            CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)f, alpha, tx, ty), CLG_OK);
            CLG_ASSERT_STATUS(clg_activation_backward(ctx, (clg_activation)f, alpha, tx, ty, tdy, tdx), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(ty, y, n), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, n), CLG_OK);
            char what[64];
            snprintf(what, sizeof what, "activation %d forward, n=%zu", f, n);
            expect_close(y, ry, n, what);
            snprintf(what, sizeof what, "activation %d backward, n=%zu", f, n);
            for (size_t i = 0; i < n; i++) /* through y: a little looser */
                if (isnan(dx[i]) || fabs(dx[i] - rdx[i]) > 1e-5 * fmax(1, fabs(rdx[i])))
                    fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, dx[i], rdx[i]);
            /* In place: x becomes y. */
            CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)f, alpha, tx, tx), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tx, y, n), CLG_OK);
            expect_close(y, ry, n, "in place");
            clg_tensor_destroy(tx);
            clg_tensor_destroy(ty);
            clg_tensor_destroy(tdy);
            clg_tensor_destroy(tdx);
            free(x);
            free(dy);
            free(y);
            free(dx);
            free(ry);
            free(rdx);
        }
}

/* Central differences of the device forward, in float, at points kept 0.05 away from the kink
 * of the ReLU family. */
static void backward_matches_finite_differences(void **state)
{
    (void)state;
    enum { N = 64 };
    for (int f = CLG_ACT_RELU; f <= CLG_ACT_TANH; f++) {
        float x[N], xp[N], xm[N], yp[N], ym[N], y[N], ones[N], dx[N];
        clg_test_fill_uniform(&rng, x, N, -3, 3);
        for (int i = 0; i < N; i++) {
            if (fabsf(x[i]) < 0.05f)
                x[i] = 0.5f;
            ones[i] = 1.0f;
            xp[i] = x[i] + 1e-2f;
            xm[i] = x[i] - 1e-2f;
        }
        clg_tensor *tx = make(N, x), *ty = make(N, NULL), *t1 = make(N, ones), *tdx = make(N, NULL);
        clg_tensor *tp = make(N, xp), *tm = make(N, xm);
        CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)f, 0.2f, tx, ty), CLG_OK);
        CLG_ASSERT_STATUS(clg_activation_backward(ctx, (clg_activation)f, 0.2f, tx, ty, t1, tdx), CLG_OK);
        CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)f, 0.2f, tp, tp), CLG_OK);
        CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)f, 0.2f, tm, tm), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, N), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tp, yp, N), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tm, ym, N), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(ty, y, N), CLG_OK);
        for (int i = 0; i < N; i++) {
            double fd = ((double)yp[i] - ym[i]) / 2e-2;
            if (fabs(fd - dx[i]) > 2e-3 * (1 + fabs(dx[i])))
                fail_msg("activation %d at x=%g: finite difference %g, backward %g", f, x[i], fd, dx[i]);
        }
        clg_tensor *all[] = {tx, ty, t1, tdx, tp, tm};
        for (int i = 0; i < 6; i++)
            clg_tensor_destroy(all[i]);
    }
}

static void fully_connected_case(size_t N, size_t M)
{
    const size_t K = 33; /* x: N x (3 x 11 x 1), w: M x K */
    float *x = malloc(N * K * sizeof *x), *w = malloc(M * K * sizeof *w), *b = malloc(M * sizeof *b);
    size_t most = N * K > M * K ? N * K : M * K;
    most = most > N * M ? most : N * M;
    float *dy = malloc(N * M * sizeof *dy), *out = malloc(most * sizeof *out);
    clg_test_fill_uniform(&rng, x, N * K, -1, 1);
    clg_test_fill_uniform(&rng, w, M * K, -1, 1);
    clg_test_fill_uniform(&rng, b, M, -1, 1);
    clg_test_fill_uniform(&rng, dy, N * M, -1, 1);
    clg_tensor *tx, *ty, *tdx;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){N, 3, 11, 1}, &tx), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tx, x, N * K), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){N, M, 1, 1}, &ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){N, 3, 11, 1}, &tdx), CLG_OK);
    clg_tensor *tw, *tdw, *tb = make(M, b), *tdb = make(M, NULL), *tdy;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){M, K, 1, 1}, &tw), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tw, w, M * K), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){M, K, 1, 1}, &tdw), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){N, M, 1, 1}, &tdy), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tdy, dy, N * M), CLG_OK);
    clg_test_poison_nan(out, most); /* an element left unwritten fails below */
    CLG_ASSERT_STATUS(clg_tensor_upload(ty, out, N * M), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tdx, out, N * K), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tdw, out, M * K), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tdb, out, M), CLG_OK);
    CLG_ASSERT_STATUS(clg_fc_forward(ctx, tx, tw, tb, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_fc_backward_data(ctx, tdy, tw, tdx), CLG_OK);
    CLG_ASSERT_STATUS(clg_fc_backward_weights(ctx, tx, tdy, tdw), CLG_OK);
    CLG_ASSERT_STATUS(clg_bias_backward(ctx, tdy, tdb), CLG_OK);
    /* Sums of at most K = 33 products: 1e-5 relative is the float32 bound. */
    for (int with_bias = 1; with_bias >= 0; with_bias--) { /* and without a bias */
        if (!with_bias) {
            clg_test_poison_nan(out, N * M);
            CLG_ASSERT_STATUS(clg_tensor_upload(ty, out, N * M), CLG_OK);
            CLG_ASSERT_STATUS(clg_fc_forward(ctx, tx, tw, NULL, ty), CLG_OK);
        }
        CLG_ASSERT_STATUS(clg_tensor_download(ty, out, N * M), CLG_OK);
        for (size_t n = 0; n < N; n++)
            for (size_t m = 0; m < M; m++) {
                double s = with_bias ? b[m] : 0.0;
                for (size_t k = 0; k < K; k++)
                    s += (double)x[n * K + k] * w[m * K + k];
                assert_true(fabs(out[n * M + m] - s) < 1e-5 * (1 + fabs(s)));
            }
    }
    CLG_ASSERT_STATUS(clg_tensor_download(tdx, out, N * K), CLG_OK);
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++) {
            double s = 0;
            for (size_t m = 0; m < M; m++)
                s += (double)dy[n * M + m] * w[m * K + k];
            assert_true(fabs(out[n * K + k] - s) < 1e-5 * (1 + fabs(s)));
        }
    CLG_ASSERT_STATUS(clg_tensor_download(tdw, out, M * K), CLG_OK);
    for (size_t m = 0; m < M; m++)
        for (size_t k = 0; k < K; k++) {
            double s = 0;
            for (size_t n = 0; n < N; n++)
                s += (double)dy[n * M + m] * x[n * K + k];
            assert_true(fabs(out[m * K + k] - s) < 1e-5 * (1 + fabs(s)));
        }
    CLG_ASSERT_STATUS(clg_tensor_download(tdb, out, M), CLG_OK);
    for (size_t m = 0; m < M; m++) {
        double s = 0;
        for (size_t n = 0; n < N; n++)
            s += dy[n * M + m];
        assert_true(fabs(out[m] - s) < 1e-5 * (1 + fabs(s)));
    }
    /* Wrong sizes. */
    CLG_ASSERT_STATUS(clg_fc_forward(ctx, tx, tw, tdx, ty), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_fc_forward(ctx, tx, ty, NULL, ty), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_bias_add(ctx, tx, ty), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)8, 0, tx, tx), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_activation_forward(ctx, CLG_ACT_RELU, 0, tx, ty), CLG_ERR_SHAPE);
    clg_tensor *all[] = {tx, ty, tdx, tw, tdw, tb, tdb, tdy};
    for (int i = 0; i < 8; i++)
        clg_tensor_destroy(all[i]);
    free(x);
    free(w);
    free(b);
    free(dy);
    free(out);
}

/* Both ways of the forward product: a batch smaller than the layer (y^T = w . x^T, then
 * transposed with the bias added) and a larger one (y = x . w^T, then the bias by rows of 1,
 * 16 or 64 outputs a work-group). */
static void bias_and_fully_connected_match_the_reference(void **state)
{
    (void)state;
    fully_connected_case(7, 17);
    fully_connected_case(1, 70);
    fully_connected_case(19, 5);
    fully_connected_case(33, 31);
    fully_connected_case(100, 70);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(activations_match_the_reference),
        cmocka_unit_test(backward_matches_finite_differences),
        cmocka_unit_test(bias_and_fully_connected_match_the_reference),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
