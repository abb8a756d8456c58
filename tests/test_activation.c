/* Activations (forward and backward against double references and finite differences of the
 * device forward), channel bias, and fully connected layers against double references. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"

static clg_ctx *ctx;
static clg_test_rng rng;
/* 4133: CPUs' 16-wide work-items in groups of 64, the last group past the end */
static const size_t sizes[] = {1, 3, 7, 33, 1000, 4133};

/* Settings of each kind for the tests: leaky's and ELU's alpha; clip's bounds [-1, 2]
 * (ReLU6's are tried in test_nn's networks); a hard sigmoid of slope 0.3 around 0.4. */
static clg_activation_desc desc_of(int f)
{
    return (clg_activation_desc){(clg_activation)f, f == CLG_ACT_CLIP ? -1.0f : 0.3f,
                                 f == CLG_ACT_CLIP ? 2.0f : 0.4f};
}

static double ref_sigmoid(double x)
{
    return 1 / (1 + exp(-x));
}

static double ref_act(clg_activation_desc d, double x)
{
    double a = d.alpha, b = d.beta;
    switch (d.f) {
    case CLG_ACT_RELU: return x > 0 ? x : 0;
    case CLG_ACT_LEAKY_RELU: return x > 0 ? x : a * x;
    case CLG_ACT_ELU: return x > 0 ? x : a * expm1(x);
    case CLG_ACT_SIGMOID: return ref_sigmoid(x);
    case CLG_ACT_TANH: return tanh(x);
    case CLG_ACT_CLIP: return fmin(fmax(x, a), b);
    case CLG_ACT_HARD_SIGMOID: return fmin(fmax(a * x + b, 0), 1);
    case CLG_ACT_HARD_SWISH: return x * fmin(fmax(x / 6 + 0.5, 0), 1);
    default: return x * ref_sigmoid(x);
    }
}

static double ref_grad(clg_activation_desc d, double x)
{
    double a = d.alpha, b = d.beta, s = ref_sigmoid(x), t = tanh(x);
    switch (d.f) {
    case CLG_ACT_RELU: return x > 0;
    case CLG_ACT_LEAKY_RELU: return x > 0 ? 1 : a;
    case CLG_ACT_ELU: return x > 0 ? 1 : a * exp(x);
    case CLG_ACT_SIGMOID: return s * (1 - s);
    case CLG_ACT_TANH: return 1 - t * t;
    case CLG_ACT_CLIP: return x > a && x < b;
    case CLG_ACT_HARD_SIGMOID: return a * x + b > 0 && a * x + b < 1 ? a : 0;
    case CLG_ACT_HARD_SWISH: return x <= -3 ? 0 : x >= 3 ? 1 : 2 * x / 6 + 0.5;
    default: return s + x * s * (1 - s);
    }
}

/* Whether x lies within tol of a kink of d: where a difference quotient straddles two slopes,
 * or (tol 1e-5) float's rounding of alpha x + beta may land on the other side. */
static int near_kink(clg_activation_desc d, float x, double tol)
{
    double k[2] = {0, 0};
    if (d.f == CLG_ACT_CLIP)
        k[0] = d.alpha, k[1] = d.beta;
    else if (d.f == CLG_ACT_HARD_SIGMOID)
        k[0] = -d.beta / d.alpha, k[1] = (1 - d.beta) / d.alpha;
    else if (d.f == CLG_ACT_HARD_SWISH)
        k[0] = -3, k[1] = 3;
    return fabs(x - k[0]) < tol || fabs(x - k[1]) < tol;
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
    for (int f = CLG_ACT_RELU; f <= CLG_ACT_SILU; f++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            clg_activation_desc d = desc_of(f);
            float *x = malloc(n * sizeof *x), *dy = malloc(n * sizeof *dy);
            float *y = malloc(n * sizeof *y), *dx = malloc(n * sizeof *dx);
            double *ry = malloc(n * sizeof *ry), *rdx = malloc(n * sizeof *rdx);
            clg_test_fill_uniform(&rng, x, n, -4, 4);
            clg_test_fill_uniform(&rng, dy, n, -1, 1);
            if (n > 3)
                x[0] = -30.0f, x[1] = 30.0f; /* saturation must stay finite */
            for (size_t i = 2; i < n; i++)
                while (near_kink(d, x[i], 1e-5))
                    x[i] = clg_test_uniform(&rng, -4, 4);
            for (size_t i = 0; i < n; i++) {
                ry[i] = ref_act(d, x[i]);
                rdx[i] = dy[i] * ref_grad(d, x[i]);
            }
            clg_tensor *tx = make(n, x), *ty = make(n, NULL), *tdy = make(n, dy), *tdx = make(n, NULL);
            CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &d, tx, ty), CLG_OK);
            CLG_ASSERT_STATUS(clg_activation_backward_desc(ctx, &d, tx, ty, tdy, tdx), CLG_OK);
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
            CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &d, tx, tx), CLG_OK);
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

/* Central differences of the device forward, in float, at points kept 0.05 away from the
 * kinks (the ReLU family's 0, the clipped forms' ends). */
static void backward_matches_finite_differences(void **state)
{
    (void)state;
    enum { N = 64 };
    for (int f = CLG_ACT_RELU; f <= CLG_ACT_SILU; f++) {
        clg_activation_desc d = desc_of(f);
        d.alpha = f == CLG_ACT_CLIP ? d.alpha : 0.2f;
        float x[N], xp[N], xm[N], yp[N], ym[N], y[N], ones[N], dx[N];
        clg_test_fill_uniform(&rng, x, N, -4, 4);
        for (int i = 0; i < N; i++) {
            while (fabsf(x[i]) < 0.05f || near_kink(d, x[i], 0.05))
                x[i] = clg_test_uniform(&rng, -4, 4);
            ones[i] = 1.0f;
            xp[i] = x[i] + 1e-2f;
            xm[i] = x[i] - 1e-2f;
        }
        clg_tensor *tx = make(N, x), *ty = make(N, NULL), *t1 = make(N, ones), *tdx = make(N, NULL);
        clg_tensor *tp = make(N, xp), *tm = make(N, xm);
        CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &d, tx, ty), CLG_OK);
        CLG_ASSERT_STATUS(clg_activation_backward_desc(ctx, &d, tx, ty, t1, tdx), CLG_OK);
        CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &d, tp, tp), CLG_OK);
        CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &d, tm, tm), CLG_OK);
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

/* Clip and hard sigmoid take two settings: the one-setting calls refuse them (they would
 * leave the second unset), and an empty clip range is refused; nothing is written. */
static void bad_settings_are_refused(void **state)
{
    (void)state;
    float x[3] = {-1, 0.5f, 7}, y[3];
    clg_tensor *tx = make(3, x), *ty = make(3, NULL);
    CLG_ASSERT_STATUS(clg_activation_forward(ctx, CLG_ACT_CLIP, 0.0f, tx, ty), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "clip takes two settings"));
    CLG_ASSERT_STATUS(clg_activation_backward(ctx, CLG_ACT_HARD_SIGMOID, 0.2f, tx, ty, tx, ty),
                      CLG_ERR_INVALID_ARG);
    clg_activation_desc empty = {CLG_ACT_CLIP, 2.0f, 1.0f}, unknown = {(clg_activation)9, 0, 0};
    CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &empty, tx, ty), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "an empty range"));
    CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &unknown, tx, ty), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, NULL, tx, ty), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y, 3), CLG_OK);
    for (int i = 0; i < 3; i++)
        assert_true(isnan(y[i]));
    /* ReLU6 through the one-setting-free form */
    clg_activation_desc relu6 = {CLG_ACT_CLIP, 0.0f, 6.0f};
    CLG_ASSERT_STATUS(clg_activation_forward_desc(ctx, &relu6, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y, 3), CLG_OK);
    assert_true(y[0] == 0.0f && y[1] == 0.5f && y[2] == 6.0f);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(ty);
}

/* y = a * b and its gradients against double references, b of a's shape and a gate
 * (N x C x 1 x 1) on awkward sizes; outputs poisoned first. */
static void product_case(size_t N, size_t C, size_t H, size_t W, int gate)
{
    size_t n = N * C * H * W, hw = gate ? H * W : 1, nb = n / hw;
    float *a = malloc(n * sizeof *a), *b = malloc(nb * sizeof *b), *dy = malloc(n * sizeof *dy);
    float *y = malloc(n * sizeof *y), *da = malloc(n * sizeof *da), *db = malloc(nb * sizeof *db);
    clg_test_fill_uniform(&rng, a, n, -2, 2);
    clg_test_fill_uniform(&rng, b, nb, -1, 1);
    clg_test_fill_uniform(&rng, dy, n, -1, 1);
    clg_shape sa = {N, C, H, W}, sb = gate ? (clg_shape){N, C, 1, 1} : sa;
    clg_tensor *ta = clg_test_tensor(ctx, sa, a), *tb = clg_test_tensor(ctx, sb, b);
    clg_tensor *tdy = clg_test_tensor(ctx, sa, dy), *ty = clg_test_tensor(ctx, sa, NULL);
    clg_tensor *tda = clg_test_tensor(ctx, sa, NULL), *tdb = clg_test_tensor(ctx, sb, NULL);
    CLG_ASSERT_STATUS(clg_mul_forward(ctx, ta, tb, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_mul_backward(ctx, ta, tb, tdy, tda, tdb), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y, n), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tda, da, n), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdb, db, nb), CLG_OK);
    for (size_t i = 0; i < n; i++) { /* one rounding each: exact in float's terms */
        double want = (double)a[i] * b[i / hw], want_da = (double)dy[i] * b[i / hw];
        if (!(fabs(y[i] - want) <= 0x1p-24 * fabs(want)) ||
            !(fabs(da[i] - want_da) <= 0x1p-24 * fabs(want_da)))
            fail_msg("%zux%zux%zux%zu %s: element %zu: y %.9g (%.9g), da %.9g (%.9g)", N, C, H, W,
                     gate ? "gate" : "same", i, y[i], want, da[i], want_da);
    }
    for (size_t p = 0; p < nb; p++) {
        /* a sum of hw products in float: within hw roundings of the sum of their sizes (the
         * rigorous bound of recursive summation), 1 ulp for one product */
        double want = 0, size = 0;
        for (size_t j = 0; j < hw; j++)
            want += (double)dy[p * hw + j] * a[p * hw + j],
                size += fabs((double)dy[p * hw + j] * a[p * hw + j]);
        if (!(fabs(db[p] - want) <= (double)(hw + 1) * 0x1p-24 * size))
            fail_msg("%zux%zux%zux%zu %s: db[%zu] %.9g, expected %.9g", N, C, H, W,
                     gate ? "gate" : "same", p, db[p], want);
    }
    clg_tensor *all[] = {ta, tb, tdy, ty, tda, tdb};
    for (int i = 0; i < 6; i++)
        clg_tensor_destroy(all[i]);
    free(a), free(b), free(dy), free(y), free(da), free(db);
}

static void products_match_the_reference(void **state)
{
    (void)state;
    static const size_t shapes[][4] = {{1, 1, 1, 1}, {2, 3, 7, 5}, {3, 7, 33, 1}, {2, 5, 17, 19},
                                       {1, 33, 3, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int gate = 0; gate < 2; gate++)
            product_case(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], gate);
    /* a gate of another shape is refused, naming both; nothing written */
    clg_tensor *a = clg_test_tensor(ctx, (clg_shape){2, 3, 4, 4}, NULL);
    clg_tensor *g = clg_test_tensor(ctx, (clg_shape){2, 4, 1, 1}, NULL);
    clg_tensor *y = clg_test_tensor(ctx, (clg_shape){2, 3, 4, 4}, NULL);
    CLG_ASSERT_STATUS(clg_mul_forward(ctx, a, g, y), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "b must be a's shape or 2x3x1x1"));
    CLG_ASSERT_STATUS(clg_mul_backward(ctx, a, g, y, y, NULL), CLG_ERR_SHAPE);
    clg_tensor_destroy(a), clg_tensor_destroy(g), clg_tensor_destroy(y);
}

/* A profiled context names the activation kernels as they are (the CPU form's name was once
 * built on the stack, and profiles showed garbage). */
static void activation_kernels_are_profiled_by_name(void **state)
{
    (void)state;
    clg_ctx *pc = clg_test_profiled_ctx();
    float v[40];
    clg_test_fill_uniform(&rng, v, 40, -2, 2);
    clg_tensor *tx, *ty; /* not the guarded helpers: their checks run on the fixture's context */
    CLG_ASSERT_STATUS(clg_tensor_create(pc, (clg_shape){40, 1, 1, 1}, &tx), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(pc, (clg_shape){40, 1, 1, 1}, &ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tx, v, 40), CLG_OK);
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(pc, NULL, 0, NULL, 1), CLG_OK);
    clg_activation_desc silu = {CLG_ACT_SILU, 0, 0};
    CLG_ASSERT_STATUS(clg_activation_forward_desc(pc, &silu, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_activation_backward_desc(pc, &silu, tx, ty, ty, ty), CLG_OK);
    clg_kernel_time kt[8];
    size_t n;
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(pc, kt, 8, &n, 0), CLG_OK);
    int gpu = clg_ctx_decides_as_gpu(pc), seen = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        seen += !strcmp(kt[i].name, gpu ? "clg_act_fwd" : "clg_act_fwd16") ||
                !strcmp(kt[i].name, gpu ? "clg_act_bwd" : "clg_act_bwd16");
    assert_int_equal(seen, 2);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(ty);
    clg_ctx_destroy(pc);
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
    CLG_ASSERT_STATUS(clg_activation_forward(ctx, (clg_activation)99, 0, tx, tx), CLG_ERR_INVALID_ARG);
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
        cmocka_unit_test(bad_settings_are_refused),
        cmocka_unit_test(products_match_the_reference),
        cmocka_unit_test(activation_kernels_are_profiled_by_name),
        cmocka_unit_test(bias_and_fully_connected_match_the_reference),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
