/* Pooling against a double-precision reference: max, average with padding counted or not,
 * floor and ceil sizes, odd shapes, windows larger than strides and the reverse, 1x1 images;
 * ties go to the first element; backward against finite differences of the reference forward;
 * global average pooling; invalid descriptors. Spatial padding (constant, reflect, edge, and
 * negative constant pads that crop) and up-sampling (nearest, bilinear) against the same kind
 * of reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"

static clg_ctx *ctx;
static clg_test_rng rng;

typedef struct pool_case {
    size_t N, C, H, W;
    clg_pool2d_desc d;
} pool_case;

#define D(mode, r, s, sh, sw, pt, pb, pl, pr, ceil) {mode, r, s, sh, sw, pt, pb, pl, pr, ceil, 0}
static const pool_case cases[] = {
    {3, 4, 28, 28, D(CLG_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    {2, 3, 7, 5, D(CLG_POOL_MAX, 3, 3, 2, 2, 1, 1, 1, 1, 1)},
    {2, 3, 7, 5, D(CLG_POOL_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 1)},
    {2, 3, 7, 5, D(CLG_POOL_AVG_EXCLUDE, 3, 3, 2, 2, 1, 1, 1, 1, 1)},
    {1, 2, 9, 8, D(CLG_POOL_MAX, 3, 2, 1, 1, 1, 0, 0, 1, 0)},
    {1, 2, 9, 8, D(CLG_POOL_AVG_EXCLUDE, 3, 2, 1, 1, 1, 0, 0, 1, 0)},
    {2, 1, 10, 10, D(CLG_POOL_MAX, 2, 2, 3, 3, 0, 0, 0, 0, 1)}, /* stride > window */
    {2, 2, 1, 1, D(CLG_POOL_AVG, 1, 1, 1, 1, 0, 0, 0, 0, 0)},   /* 1x1 image */
    {1, 3, 5, 5, D(CLG_POOL_MAX, 5, 5, 1, 1, 0, 0, 0, 0, 0)},   /* window = input */
    {3, 2, 6, 7, D(CLG_POOL_AVG, 2, 3, 2, 2, 1, 1, 2, 0, 1)},
    {2, 3, 9, 11, D(CLG_POOL_MAX, 2, 3, 2, 3, 0, 0, 0, 0, 0)},  /* tiled, with leftover rows/cols */
    {2, 3, 9, 11, D(CLG_POOL_AVG, 3, 2, 3, 2, 0, 0, 0, 0, 0)},  /* tiled average */
    /* 2x2 tiles go four windows at a time, the last four overlapping those before: rows of
     * 2, 3 (one by one), 4, 5, 33 windows, leftover rows and columns */
    {2, 3, 7, 9, D(CLG_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    {1, 2, 5, 11, D(CLG_POOL_AVG, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    {3, 1, 4, 6, D(CLG_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    {2, 2, 8, 8, D(CLG_POOL_AVG, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    {2, 2, 3, 66, D(CLG_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    {1, 1, 2, 4, D(CLG_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0)},
    /* max on CPUs by planes padded in local memory (strides 1 and 2 across): ResNet's 3x3
     * stride 2 on rows of 16 + 3 outputs, stride 1 on rows of 35, strides 1 x 2 with uneven
     * padding, and a plane past local memory (value by value) */
    {2, 3, 40, 37, D(CLG_POOL_MAX, 3, 3, 2, 2, 1, 1, 1, 1, 0)},
    {1, 2, 5, 35, D(CLG_POOL_MAX, 3, 3, 1, 1, 1, 1, 1, 1, 0)},
    {2, 2, 9, 21, D(CLG_POOL_MAX, 3, 2, 1, 2, 0, 1, 1, 0, 0)},
    {1, 1, 131, 131, D(CLG_POOL_MAX, 3, 3, 2, 2, 1, 1, 1, 1, 0)},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* Reference forward; the argmax of each window (first largest) in *arg when non-NULL. */
static void ref_pool(const pool_case *c, size_t P, size_t Q, const double *x, double *y, long *arg)
{
    const clg_pool2d_desc *d = &c->d;
    for (size_t nc = 0; nc < c->N * c->C; nc++)
        for (size_t p = 0; p < P; p++)
            for (size_t q = 0; q < Q; q++) {
                long h0 = (long)(p * (size_t)d->stride_h) - d->pad_top;
                long w0 = (long)(q * (size_t)d->stride_w) - d->pad_left;
                double best = -INFINITY, sum = 0;
                long at = -1, inside = 0, padded = 0;
                for (long h = h0; h < h0 + d->window_h; h++)
                    for (long w = w0; w < w0 + d->window_w; w++) {
                        if (h >= -d->pad_top && h < (long)c->H + d->pad_bottom &&
                            w >= -d->pad_left && w < (long)c->W + d->pad_right)
                            padded++;
                        if (h < 0 || w < 0 || h >= (long)c->H || w >= (long)c->W)
                            continue;
                        double v = x[(nc * c->H + (size_t)h) * c->W + (size_t)w];
                        inside++;
                        sum += v;
                        if (at < 0 || v > best) {
                            best = v;
                            at = h * (long)c->W + w;
                        }
                    }
                double out = d->mode == CLG_POOL_MAX ? best
                             : d->mode == CLG_POOL_AVG ? sum / (double)padded
                                                       : sum / (double)inside;
                y[(nc * P + p) * Q + q] = out;
                if (arg)
                    arg[(nc * P + p) * Q + q] = at;
            }
}

/* Reference backward, by the definition: each window hands its gradient to its argmax, or
 * spreads it evenly over its divisor. */
static void ref_pool_backward(const pool_case *c, size_t P, size_t Q, const double *x,
                              const float *dy, double *dx)
{
    const clg_pool2d_desc *d = &c->d;
    size_t ny = c->N * c->C * P * Q;
    double *y = malloc(ny * sizeof *y);
    long *arg = malloc(ny * sizeof *arg);
    ref_pool(c, P, Q, x, y, arg);
    memset(dx, 0, c->N * c->C * c->H * c->W * sizeof *dx);
    for (size_t nc = 0; nc < c->N * c->C; nc++)
        for (size_t p = 0; p < P; p++)
            for (size_t q = 0; q < Q; q++) {
                size_t o = (nc * P + p) * Q + q;
                if (d->mode == CLG_POOL_MAX) {
                    dx[nc * c->H * c->W + (size_t)arg[o]] += dy[o];
                    continue;
                }
                long h0 = (long)(p * (size_t)d->stride_h) - d->pad_top;
                long w0 = (long)(q * (size_t)d->stride_w) - d->pad_left;
                long inside = 0, padded = 0;
                for (long h = h0; h < h0 + d->window_h; h++)
                    for (long w = w0; w < w0 + d->window_w; w++) {
                        padded += h >= -d->pad_top && h < (long)c->H + d->pad_bottom &&
                                  w >= -d->pad_left && w < (long)c->W + d->pad_right;
                        inside += h >= 0 && w >= 0 && h < (long)c->H && w < (long)c->W;
                    }
                double share = dy[o] / (double)(d->mode == CLG_POOL_AVG ? padded : inside);
                for (long h = h0 > 0 ? h0 : 0; h < h0 + d->window_h && h < (long)c->H; h++)
                    for (long w = w0 > 0 ? w0 : 0; w < w0 + d->window_w && w < (long)c->W; w++)
                        dx[(nc * c->H + (size_t)h) * c->W + (size_t)w] += share;
            }
    free(y);
    free(arg);
}

static clg_tensor *make(clg_shape s, const float *host)
{
    return clg_test_tensor(ctx, s, host);
}

static int check_close(const float *got, const double *ref, size_t n, int exact, const char *what)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i]) || (exact && got[i] != (float)ref[i])) {
            print_error("%s: element %zu is %g, expected %g\n", what, i, got[i], ref[i]);
            return 1;
        }
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    /* Sums of at most a window's values: 1e-6 is ample. */
    if (den > 0 && sqrt(num / den) > 1e-6) {
        print_error("%s: relative error %g\n", what, sqrt(num / den));
        return 1;
    }
    return 0;
}

static void every_case_matches_the_reference(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t ci = 0; ci < N_CASES; ci++)
        for (int variant = 0; variant < 4; variant++) {
            /* relu: x is a ReLU's output (many zeros) and the ReLU's backward is folded in */
            int integer = variant & 1, relu = variant >> 1;
            const pool_case *c = &cases[ci];
            clg_pool2d_desc d = c->d;
            d.relu_input = relu;
            clg_shape xs = {c->N, c->C, c->H, c->W}, ys;
            CLG_ASSERT_STATUS(clg_pool2d_output_shape(&c->d, xs, &ys), CLG_OK);
            size_t nx = clg_shape_numel(xs), ny = clg_shape_numel(ys);
            float *x = malloc(nx * sizeof *x), *dy = malloc(ny * sizeof *dy);
            float *y = malloc(ny * sizeof *y), *dx = malloc(nx * sizeof *dx);
            double *xd = malloc(nx * sizeof *xd), *yr = malloc(ny * sizeof *yr), *dxr = malloc(nx * sizeof *dxr);
            if (integer) { /* many ties: the first largest must win */
                clg_test_fill_int(&rng, x, nx, -2, 2);
                clg_test_fill_int(&rng, dy, ny, -3, 3);
            } else {
                clg_test_fill_uniform(&rng, x, nx, -1, 1);
                clg_test_fill_uniform(&rng, dy, ny, -1, 1);
            }
            for (size_t i = 0; i < nx; i++)
                xd[i] = x[i] = relu && x[i] < 0 ? 0.0f : x[i];
            ref_pool(c, ys.h, ys.w, xd, yr, NULL);
            ref_pool_backward(c, ys.h, ys.w, xd, dy, dxr);
            for (size_t i = 0; relu && i < nx; i++)
                dxr[i] = xd[i] > 0 ? dxr[i] : 0.0;
            /* Outputs are views of one image less than their NaN-filled tensors: the image
             * after them must stay NaN. */
            clg_shape ys1 = ys, xs1 = xs;
            ys1.n++;
            xs1.n++;
            clg_tensor *tx = make(xs, x), *tyg = make(ys1, NULL), *tdy = make(ys, dy), *tdxg = make(xs1, NULL);
            clg_tensor *ty, *tdx;
            CLG_ASSERT_STATUS(clg_tensor_view_batch(tyg, 0, c->N, &ty), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_view_batch(tdxg, 0, c->N, &tdx), CLG_OK);
            CLG_ASSERT_STATUS(clg_pool2d_forward(ctx, &d, tx, ty), CLG_OK);
            CLG_ASSERT_STATUS(clg_pool2d_backward(ctx, &d, tx, tdy, tdx), CLG_OK);
            float *gy = malloc(clg_shape_numel(ys1) * sizeof *gy), *gx = malloc(clg_shape_numel(xs1) * sizeof *gx);
            CLG_ASSERT_STATUS(clg_tensor_download(tyg, gy, clg_shape_numel(ys1)), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tdxg, gx, clg_shape_numel(xs1)), CLG_OK);
            for (size_t i = ny; i < clg_shape_numel(ys1); i++)
                if (!isnan(gy[i]))
                    fail_msg("case %zu: forward wrote past its output (element %zu)", ci, i);
            for (size_t i = nx; i < clg_shape_numel(xs1); i++)
                if (!isnan(gx[i]))
                    fail_msg("case %zu: backward wrote past its output (element %zu)", ci, i);
            memcpy(y, gy, ny * sizeof *y);
            memcpy(dx, gx, nx * sizeof *dx);
            free(gy);
            free(gx);
            char what[64];
            snprintf(what, sizeof what, "case %zu%s%s forward", ci, integer ? " integer" : "",
                     relu ? " relu" : "");
            int exact_fwd = c->d.mode == CLG_POOL_MAX, exact_bwd = c->d.mode == CLG_POOL_MAX && integer;
            failures += check_close(y, yr, ny, exact_fwd, what);
            snprintf(what, sizeof what, "case %zu%s%s backward", ci, integer ? " integer" : "",
                     relu ? " relu" : "");
            failures += check_close(dx, dxr, nx, exact_bwd, what);
            clg_tensor_destroy(tx);
            clg_tensor_destroy(ty);
            clg_tensor_destroy(tdy);
            clg_tensor_destroy(tdx);
            clg_tensor_destroy(tyg);
            clg_tensor_destroy(tdxg);
            free(x);
            free(dy);
            free(y);
            free(dx);
            free(xd);
            free(yr);
            free(dxr);
        }
    assert_int_equal(failures, 0);
}

/* The reference backward is the derivative of the reference forward (distinct values keep
 * max windows away from ties, where the derivative does not exist). */
static void reference_backward_is_the_forward_derivative(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < N_CASES; ci++) {
        const pool_case *c = &cases[ci];
        clg_shape xs = {c->N, c->C, c->H, c->W}, ys;
        CLG_ASSERT_STATUS(clg_pool2d_output_shape(&c->d, xs, &ys), CLG_OK);
        size_t nx = clg_shape_numel(xs), ny = clg_shape_numel(ys);
        double *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y), *dx = malloc(nx * sizeof *dx);
        float *dy = malloc(ny * sizeof *dy);
        for (size_t i = 0; i < nx; i++)
            x[i] = (double)i / (double)nx + 1e-3 * clg_test_uniform(&rng, 0, 1); /* distinct */
        clg_test_fill_uniform(&rng, dy, ny, -1, 1);
        ref_pool_backward(c, ys.h, ys.w, x, dy, dx);
        for (int probe = 0; probe < 5; probe++) {
            size_t i = (size_t)(clg_test_rng_next(&rng) % nx);
            double keep = x[i], l[2], eps = 1e-7;
            for (int side = 0; side < 2; side++) {
                x[i] = keep + (side ? eps : -eps);
                ref_pool(c, ys.h, ys.w, x, y, NULL);
                l[side] = 0;
                for (size_t j = 0; j < ny; j++)
                    l[side] += dy[j] * y[j];
            }
            x[i] = keep;
            double fd = (l[1] - l[0]) / (2 * eps);
            if (fabs(fd - dx[i]) > 1e-6 * (1 + fabs(dx[i])))
                fail_msg("case %zu: d/dx[%zu]: finite difference %.9g, backward %.9g", ci, i, fd, dx[i]);
        }
        free(x);
        free(y);
        free(dx);
        free(dy);
    }
}

static void ties_go_to_the_first_element(void **state)
{
    (void)state;
    clg_pool2d_desc d = clg_pool2d_desc_default();
    float x[16], dy[4] = {1, 2, 3, 4}, dx[16];
    for (int i = 0; i < 16; i++)
        x[i] = 5.0f;
    clg_tensor *tx = make((clg_shape){1, 1, 4, 4}, x), *tdy = make((clg_shape){1, 1, 2, 2}, dy);
    clg_tensor *tdx = make((clg_shape){1, 1, 4, 4}, NULL);
    CLG_ASSERT_STATUS(clg_pool2d_backward(ctx, &d, tx, tdy, tdx), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, 16), CLG_OK);
    const float want[16] = {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0};
    assert_memory_equal(dx, want, sizeof want);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(tdy);
    clg_tensor_destroy(tdx);
    /* One row of 5 windows, taken four at a time: each window ties in a different pair. */
    float xr[20] = {7, 7, 1, 1, 2, 3, 0, 0, 4, 0, /* top row */
                    7, 7, 1, 1, 3, 1, 0, 4, 0, 4},
          dyr[5] = {1, 2, 3, 4, 5}, dxr[20];
    tx = make((clg_shape){1, 1, 2, 10}, xr);
    tdy = make((clg_shape){1, 1, 1, 5}, dyr);
    tdx = make((clg_shape){1, 1, 2, 10}, NULL);
    CLG_ASSERT_STATUS(clg_pool2d_backward(ctx, &d, tx, tdy, tdx), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tdx, dxr, 20), CLG_OK);
    const float want_row[20] = {1, 0, 2, 0, 0, 3, 0, 0, 5, 0, /* 3,3 and 4,4 ties: the first */
                                0, 0, 0, 0, 0, 0, 0, 4, 0, 0};
    assert_memory_equal(dxr, want_row, sizeof want_row);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(tdy);
    clg_tensor_destroy(tdx);
}

static void global_average_pooling(void **state)
{
    (void)state;
    /* planes below, above and at one GPU work-group (64), and a single pixel; 297 planes of
     * 7x7, which CPUs sum and fill in runs of planes a work-item (the last run shorter);
     * planes of whole vectors (16x16) */
    const size_t shapes[][4] = {{3, 5, 7, 6}, {2, 3, 13, 11}, {2, 2, 1, 1}, {9, 33, 7, 7},
                                {5, 7, 16, 16}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        size_t N = shapes[si][0], C = shapes[si][1], H = shapes[si][2], W = shapes[si][3];
        size_t nx = N * C * H * W, hw = H * W;
        float *x = malloc(nx * sizeof *x), *dx = malloc(nx * sizeof *dx);
        float *y = malloc(N * C * sizeof *y), *dy = malloc(N * C * sizeof *dy);
        clg_test_fill_uniform(&rng, x, nx, -1, 1);
        clg_test_fill_uniform(&rng, dy, N * C, -1, 1);
        clg_tensor *tx = make((clg_shape){N, C, H, W}, x), *ty = make((clg_shape){N, C, 1, 1}, NULL);
        clg_tensor *tdy = make((clg_shape){N, C, 1, 1}, dy), *tdx = make((clg_shape){N, C, H, W}, NULL);
        CLG_ASSERT_STATUS(clg_tensor_fill(ty, NAN), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_fill(tdx, NAN), CLG_OK);
        CLG_ASSERT_STATUS(clg_global_avg_pool_forward(ctx, tx, ty), CLG_OK);
        CLG_ASSERT_STATUS(clg_global_avg_pool_backward(ctx, tdy, tdx), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(ty, y, N * C), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, nx), CLG_OK);
        for (size_t nc = 0; nc < N * C; nc++) {
            double s = 0;
            for (size_t i = 0; i < hw; i++) {
                s += x[nc * hw + i];
                assert_true(fabs(dx[nc * hw + i] - dy[nc] / (double)hw) < 1e-7);
            }
            /* a float sum of hw terms of at most 1 */
            assert_true(fabs(y[nc] - s / (double)hw) < 1e-6 * sqrt((double)hw / 42 + 1));
        }
        clg_tensor_destroy(tx);
        clg_tensor_destroy(ty);
        clg_tensor_destroy(tdy);
        clg_tensor_destroy(tdx);
        free(x), free(dx), free(y), free(dy);
    }
    size_t N = 3, C = 5, H = 7, W = 6;
    clg_tensor *tx = make((clg_shape){N, C, H, W}, NULL), *ty = make((clg_shape){N, C, 1, 1}, NULL);
    clg_tensor *tdy = make((clg_shape){N, C, 1, 1}, NULL), *tdx = make((clg_shape){N, C, H, W}, NULL);
    clg_tensor *bad = make((clg_shape){N, C, 2, 1}, NULL);
    CLG_ASSERT_STATUS(clg_global_avg_pool_forward(ctx, tx, bad), CLG_ERR_SHAPE);
    clg_tensor *all[] = {tx, ty, tdy, tdx, bad};
    for (int i = 0; i < 5; i++)
        clg_tensor_destroy(all[i]);
}

static void invalid_descriptors_are_rejected(void **state)
{
    (void)state;
    clg_shape xs = {1, 1, 4, 4}, ys;
    clg_pool2d_desc d = clg_pool2d_desc_default();
    d.pad_left = -1;
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, xs, &ys), CLG_ERR_INVALID_ARG);
    d = clg_pool2d_desc_default();
    d.pad_top = 2; /* not smaller than the 2x2 window */
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, xs, &ys), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "smaller than the window"));
    d = clg_pool2d_desc_default();
    d.stride_w = 0;
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, xs, &ys), CLG_ERR_INVALID_ARG);
    d = clg_pool2d_desc_default();
    d.window_h = 5;
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, xs, &ys), CLG_ERR_SHAPE);
    d = clg_pool2d_desc_default();
    d.mode = (clg_pool_mode)9;
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, xs, &ys), CLG_ERR_INVALID_ARG);
    d = clg_pool2d_desc_default();
    clg_tensor *x = make(xs, NULL), *y = make((clg_shape){1, 1, 3, 2}, NULL);
    CLG_ASSERT_STATUS(clg_pool2d_forward(ctx, &d, x, y), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_pool2d_forward(ctx, &d, NULL, y), CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(x);
    clg_tensor_destroy(y);
    /* Ceil mode: 7 wide, window 2 stride 2 gives 4 (a last partial window), floor gives 3. */
    d.ceil_mode = 1;
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, (clg_shape){1, 1, 7, 7}, &ys), CLG_OK);
    assert_int_equal(ys.w, 4);
    d.ceil_mode = 0;
    CLG_ASSERT_STATUS(clg_pool2d_output_shape(&d, (clg_shape){1, 1, 7, 7}, &ys), CLG_OK);
    assert_int_equal(ys.w, 3);
}

/* The input index output index o of an axis reads, or -1 (the constant), by the definition
 * of each mode (reflect: numpy's "reflect"; edge: numpy's "edge"). */
static long pad_source(long o, long n, long lo, clg_pad_mode mode)
{
    long s = o - lo;
    if (mode == CLG_PAD_REFLECT) {
        while (s < 0 || s >= n)
            s = s < 0 ? -s : 2 * (n - 1) - s;
        return s;
    }
    if (mode == CLG_PAD_EDGE)
        return s < 0 ? 0 : s >= n ? n - 1 : s;
    return s >= 0 && s < n ? s : -1;
}

/* Forward: each output exactly the element it copies (or the value); backward: the sum, in
 * double, of the outputs that copy each input, within float rounding of a few terms, and
 * <pad(x), dy> = <x, pad'(dy)> (the pass is linear: its finite differences are exact). */
static void padding_matches_the_reference(void **state)
{
    (void)state;
    typedef struct { size_t N, C, H, W; clg_pad2d_desc d; } pad_case;
    const pad_case cases[] = {
        {2, 3, 7, 5, {CLG_PAD_CONSTANT, 1, 2, 3, 0, 0.5f}},
        {1, 2, 1, 1, {CLG_PAD_CONSTANT, 2, 2, 2, 2, -1.0f}},
        {2, 1, 9, 33, {CLG_PAD_CONSTANT, -2, -1, 3, -4, 0.0f}},  /* crops and pads */
        {2, 3, 7, 5, {CLG_PAD_REFLECT, 1, 2, 3, 4, 0.0f}},
        {1, 2, 3, 33, {CLG_PAD_REFLECT, 2, 2, 1, 32, 0.0f}},
        {1, 1, 2, 2, {CLG_PAD_REFLECT, 1, 1, 1, 1, 0.0f}},
        {2, 3, 7, 5, {CLG_PAD_EDGE, 3, 1, 0, 6, 0.0f}},
        {1, 2, 1, 1, {CLG_PAD_EDGE, 2, 3, 4, 1, 0.0f}},
        {3, 2, 28, 28, {CLG_PAD_EDGE, 1, 1, 1, 1, 0.0f}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const pad_case *c = &cases[k];
        clg_shape xs = {c->N, c->C, c->H, c->W}, ys;
        CLG_ASSERT_STATUS(clg_pad2d_output_shape(&c->d, xs, &ys), CLG_OK);
        size_t nx = clg_shape_numel(xs), ny = clg_shape_numel(ys);
        float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
        float *dy = malloc(ny * sizeof *dy), *dx = malloc(nx * sizeof *dx);
        double *ref_dx = calloc(nx, sizeof *ref_dx);
        clg_test_fill_uniform(&rng, x, nx, -1, 1);
        clg_test_fill_uniform(&rng, dy, ny, -1, 1);
        clg_tensor *tx = make(xs, x), *ty = make(ys, NULL), *tdy = make(ys, dy), *tdx = make(xs, NULL);
        CLG_ASSERT_STATUS(clg_tensor_fill(ty, NAN), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_fill(tdx, NAN), CLG_OK);
        CLG_ASSERT_STATUS(clg_pad2d_forward(ctx, &c->d, tx, ty), CLG_OK);
        CLG_ASSERT_STATUS(clg_pad2d_backward(ctx, &c->d, tdy, tdx), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(ty, y, ny), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, nx), CLG_OK);
        double lhs = 0, rhs = 0;
        for (size_t p = 0; p < c->N * c->C; p++)
            for (size_t i = 0; i < ys.h; i++)
                for (size_t j = 0; j < ys.w; j++) {
                    long sy = pad_source((long)i, (long)c->H, c->d.top, c->d.mode);
                    long sx = pad_source((long)j, (long)c->W, c->d.left, c->d.mode);
                    size_t at = (p * ys.h + i) * ys.w + j, from = (p * c->H + (size_t)sy) * c->W + (size_t)sx;
                    float want = sy < 0 || sx < 0 ? c->d.value : x[from];
                    assert_true(y[at] == want);
                    if (sy >= 0 && sx >= 0)
                        ref_dx[from] += dy[at];
                    lhs += (double)y[at] * dy[at];
                }
        for (size_t i = 0; i < nx; i++) {
            assert_true(fabs(dx[i] - ref_dx[i]) < 1e-5); /* sums of at most 12 terms of <= 1 */
            rhs += (double)x[i] * dx[i];
        }
        if (c->d.value == 0.0f) /* the constant adds nothing to the input's gradient */
            assert_true(fabs(lhs - rhs) < 1e-5 * (fabs(lhs) + 1));
        clg_tensor *all[] = {tx, ty, tdy, tdx};
        for (int i = 0; i < 4; i++)
            clg_tensor_destroy(all[i]);
        free(x), free(y), free(dy), free(dx), free(ref_dx);
    }
    /* refused: reflection as wide as the side, a crop past the whole image, a bad mode,
     * negative pads outside the constant mode, a y of another shape */
    clg_shape xs = {1, 1, 3, 4}, ys;
    clg_pad2d_desc d = clg_pad2d_desc_default();
    d.mode = CLG_PAD_REFLECT, d.left = 4;
    CLG_ASSERT_STATUS(clg_pad2d_output_shape(&d, xs, &ys), CLG_ERR_SHAPE);
    d = clg_pad2d_desc_default();
    d.top = -2, d.bottom = -1;
    CLG_ASSERT_STATUS(clg_pad2d_output_shape(&d, xs, &ys), CLG_ERR_SHAPE);
    d = clg_pad2d_desc_default();
    d.mode = (clg_pad_mode)5;
    CLG_ASSERT_STATUS(clg_pad2d_output_shape(&d, xs, &ys), CLG_ERR_INVALID_ARG);
    d = clg_pad2d_desc_default();
    d.mode = CLG_PAD_EDGE, d.top = -1;
    CLG_ASSERT_STATUS(clg_pad2d_output_shape(&d, xs, &ys), CLG_ERR_INVALID_ARG);
    d = clg_pad2d_desc_default();
    d.top = 1;
    clg_tensor *x = make(xs, NULL), *y = make(xs, NULL);
    CLG_ASSERT_STATUS(clg_pad2d_forward(ctx, &d, x, y), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_pad2d_backward(ctx, &d, y, x), CLG_ERR_SHAPE);
    clg_tensor_destroy(x);
    clg_tensor_destroy(y);
}

/* Bilinear sources by PyTorch's definition (align_corners=False): x = max((o + 0.5) / s - 0.5,
 * 0), lo = floor(x), hi = min(lo + 1, n - 1), weight x - lo on hi; nearest: o / s alone. */
static void up_sources(size_t o, size_t n, size_t s, int bilinear, size_t *lo, size_t *hi,
                       double *t)
{
    if (!bilinear) {
        *lo = *hi = o / s, *t = 0;
        return;
    }
    double x = ((double)o + 0.5) / (double)s - 0.5;
    x = x < 0 ? 0 : x;
    *lo = (size_t)x < n - 1 ? (size_t)x : n - 1;
    *hi = *lo + 1 < n ? *lo + 1 : n - 1;
    *t = x - (double)*lo;
}

/* Forward against the definition (nearest exact: a copy; bilinear within float rounding of a
 * 2x2 blend) and backward against the definition's scatter, in double, on awkward sizes and
 * factors; the adjoint identity <up(x), dy> = <x, up'(dy)>; refusals. */
static void upsampling_matches_the_reference(void **state)
{
    (void)state;
    const size_t shapes[][4] = {{2, 3, 1, 1}, {1, 2, 3, 7}, {2, 1, 5, 33}, {1, 1, 16, 16}};
    const int factors[][2] = {{1, 1}, {2, 2}, {3, 2}, {1, 4}};
    for (int mode = 0; mode < 2; mode++)
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 4; b++) {
                const size_t *sh = shapes[a];
                size_t fy = (size_t)factors[b][0], fx = (size_t)factors[b][1];
                clg_shape xs = {sh[0], sh[1], sh[2], sh[3]};
                clg_shape ys = {sh[0], sh[1], sh[2] * fy, sh[3] * fx};
                size_t nx = clg_shape_numel(xs), ny = clg_shape_numel(ys);
                float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
                float *dy = malloc(ny * sizeof *dy), *dx = malloc(nx * sizeof *dx);
                double *ref_dx = calloc(nx, sizeof *ref_dx), num = 0, den = 0, lhs = 0, rhs = 0;
                clg_test_fill_uniform(&rng, x, nx, -1, 1);
                clg_test_fill_uniform(&rng, dy, ny, -1, 1);
                clg_tensor *tx = make(xs, x), *ty = make(ys, NULL), *tdy = make(ys, dy);
                clg_tensor *tdx = make(xs, NULL);
                CLG_ASSERT_STATUS(clg_tensor_fill(ty, NAN), CLG_OK);
                CLG_ASSERT_STATUS(clg_tensor_fill(tdx, NAN), CLG_OK);
                clg_upsample_mode m = (clg_upsample_mode)mode;
                CLG_ASSERT_STATUS(clg_upsample_forward(ctx, m, (int)fy, (int)fx, tx, ty), CLG_OK);
                CLG_ASSERT_STATUS(clg_upsample_backward(ctx, m, (int)fy, (int)fx, tdy, tdx), CLG_OK);
                CLG_ASSERT_STATUS(clg_tensor_download(ty, y, ny), CLG_OK);
                CLG_ASSERT_STATUS(clg_tensor_download(tdx, dx, nx), CLG_OK);
                for (size_t p = 0; p < xs.n * xs.c; p++)
                    for (size_t i = 0; i < ys.h; i++)
                        for (size_t j = 0; j < ys.w; j++) {
                            size_t y0, y1, x0, x1;
                            double ty_, tx_;
                            up_sources(i, xs.h, fy, mode, &y0, &y1, &ty_);
                            up_sources(j, xs.w, fx, mode, &x0, &x1, &tx_);
                            const float *xp = x + p * xs.h * xs.w;
                            size_t at = (p * ys.h + i) * ys.w + j;
                            double v[2][2] = {{xp[y0 * xs.w + x0], xp[y0 * xs.w + x1]},
                                              {xp[y1 * xs.w + x0], xp[y1 * xs.w + x1]}};
                            double want = (1 - ty_) * ((1 - tx_) * v[0][0] + tx_ * v[0][1]) +
                                          ty_ * ((1 - tx_) * v[1][0] + tx_ * v[1][1]);
                            if (!mode)
                                assert_true(y[at] == (float)want);
                            num += (y[at] - want) * (y[at] - want), den += want * want;
                            double g = dy[at];
                            size_t ys_[2] = {y0, y1}, xs_[2] = {x0, x1};
                            double wy[2] = {1 - ty_, ty_}, wx[2] = {1 - tx_, tx_};
                            for (int r = 0; r < 2; r++)
                                for (int q = 0; q < 2; q++)
                                    ref_dx[p * xs.h * xs.w + ys_[r] * xs.w + xs_[q]] += g * wy[r] * wx[q];
                            lhs += (double)y[at] * dy[at];
                        }
                /* a 2x2 blend: relative error of a few float roundings */
                assert_true(sqrt(num / (den + 1e-30)) < 1e-6);
                for (size_t i = 0; i < nx; i++) {
                    /* sums of at most (3 f)^2 terms of |dy| <= 1: float rounding of each */
                    assert_true(fabs(dx[i] - ref_dx[i]) < 1e-5 * (double)(fy * fx + 1));
                    rhs += (double)x[i] * dx[i];
                }
                assert_true(fabs(lhs - rhs) < 1e-5 * (fabs(lhs) + 1));
                clg_tensor *all[] = {tx, ty, tdy, tdx};
                for (int k = 0; k < 4; k++)
                    clg_tensor_destroy(all[k]);
                free(x), free(y), free(dy), free(dx), free(ref_dx);
            }
    clg_tensor *x = make((clg_shape){1, 1, 2, 2}, NULL), *y = make((clg_shape){1, 1, 4, 3}, NULL);
    CLG_ASSERT_STATUS(clg_upsample_forward(ctx, CLG_UPSAMPLE_NEAREST, 2, 2, x, y), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_upsample_forward(ctx, CLG_UPSAMPLE_NEAREST, 0, 2, x, y), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_upsample_backward(ctx, (clg_upsample_mode)7, 2, 2, y, x), CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(x);
    clg_tensor_destroy(y);
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
        cmocka_unit_test(every_case_matches_the_reference),
        cmocka_unit_test(reference_backward_is_the_forward_derivative),
        cmocka_unit_test(ties_go_to_the_first_element),
        cmocka_unit_test(global_average_pooling),
        cmocka_unit_test(invalid_descriptors_are_rejected),
        cmocka_unit_test(padding_matches_the_reference),
        cmocka_unit_test(upsampling_matches_the_reference),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
