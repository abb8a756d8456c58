/* Convolution: every algorithm and pass against a double-precision reference on a table of
 * shapes (1x1 images, odd sizes, stride > kernel, padding >= kernel/2, dilation 2, groups 2,
 * depthwise, batch 1 and 3, real layers), exact on small integers, NaN-poisoned outputs with a
 * guard image after them; the reference's backward passes against finite differences of its
 * forward; a coarse finite-difference check of the device ops; algorithm choice (find mode,
 * stored results, override, workspace fallback) and invalid descriptors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "runtime/testing.h"
#include "ops/conv/conv_keep.h"
#include "ref/ref_conv.h"

static clg_ctx *ctx;
static clg_test_rng rng;
static size_t workspace_limit; /* for desc_of: 0 is the default */
static int keep_forward;       /* weight gradients after a forward pass that keeps its V
                                  (or its padded copy of x) */
static int keep_backward;      /* data gradients after a weight gradient that keeps dy's copy
                                  (2: with a keep that no weight gradient filled) */
static int dy_shared_runs;     /* of those, the runs whose weight gradient kept it */
static int kept_grid_runs, kept_v_runs; /* keep_forward runs whose forward pass kept x's
                                         * padded copy (its products fused), or V */
static size_t keep_backward_limit; /* the workspace limit of that weight gradient */
static int fuse_relu;          /* for desc_of and the forward reference */
static int cap_relu;           /* and with it, a cap at half the largest reference output */
static int fuse_silu;          /* the forward pass's SiLU epilogue (inference's) instead */
static int fuse_sum;           /* a residual added before the activation (a residual block's) */
static int applied[CLG_CONV_ALGOS + 1];
static size_t left_out, runs_asked; /* CLG_TEST_SMALL: cases left out, of all asked for */

typedef struct conv_case {
    size_t N, C, H, W, K, R, S, sh, sw, pt, pb, pl, pr, dh, dw, G;
    int bias;
} conv_case;

static const conv_case cases[] = {
    {2, 3, 1, 1, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1},   /* 1x1 image */
    {3, 2, 7, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},   /* odd sizes, batch 3 */
    {1, 2, 9, 9, 2, 2, 2, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1},   /* stride > kernel */
    {2, 1, 5, 6, 2, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0},   /* padding 2 on a 3x3 kernel */
    {1, 3, 9, 8, 2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1},   /* dilation 2 */
    {2, 4, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1},   /* groups 2 */
    {2, 5, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, 0},   /* depthwise */
    {1, 2, 6, 5, 3, 3, 3, 2, 1, 0, 2, 1, 0, 1, 1, 1, 1},   /* asymmetric padding, stride 2x1 */
    {3, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1}, /* c1 layer */
    {2, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1}, /* c2 layer */
    {2, 16, 9, 11, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, /* 3x3 with many channels */
    {3, 4, 5, 3, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 1},   /* 1x1, groups 2 */
    {1, 2, 4, 4, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0},   /* kernel as large as the input */
    {2, 3, 8, 8, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0},   /* 3x3 without padding */
    {2, 3, 6, 7, 4, 3, 3, 1, 1, 3, 1, 0, 3, 1, 1, 1, 1},   /* padding beyond the kernel, uneven */
    {2, 40, 6, 6, 36, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 2, 1}, /* 5x5, groups of 20 and 18 channels */
    {2, 3, 7, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1},   /* stride 2, padding 1, odd sizes */
    {2, 5, 8, 7, 3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0},   /* 1x1 stride 2 (a projection) */
    {1, 2, 9, 10, 3, 3, 3, 2, 3, 2, 0, 1, 2, 1, 1, 1, 1},  /* uneven strides and padding */
    {2, 17, 5, 19, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* rows of 16 and more, 17 channels */
    {3, 2, 36, 28, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* 189 tiles of 4x4, few channels */
    {2, 3, 3, 2, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* rows under 4 wide */
    {2, 20, 9, 8, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}, /* stride 2, over 16 and 32 lanes */
    {1, 3, 11, 10, 4, 3, 3, 2, 2, 2, 1, 2, 1, 2, 2, 1, 1}, /* stride 2 with dilation 2 */
    {3, 20, 9, 7, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* 2 vectors in and out, 18 tiles */
    {3, 50, 3, 9, 63, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, /* 4 vectors in and out, 9 tiles */
    {2, 33, 17, 13, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 33, 1}, /* depthwise, stride 2 (MobileNet) */
    {3, 7, 9, 11, 7, 5, 5, 1, 1, 2, 1, 2, 0, 1, 1, 7, 0},  /* depthwise 5x5, uneven padding */
    {1, 4, 8, 9, 4, 3, 3, 2, 1, 2, 2, 2, 2, 2, 2, 4, 1},   /* depthwise, dilation 2, stride 2x1 */
    {2, 6, 5, 37, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 1},  /* depthwise rows of 16 + 16 + 5 */
    {2, 6, 4, 70, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, 0},  /* depthwise stride 2, rows of 35 */
    {2, 3, 6, 10, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3, 1}, /* depthwise flat (stride 1, same
                                                            size), dilation 2 */
    {3, 4, 7, 7, 4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 4, 0},   /* depthwise flat 5x5 on 7x7 */
    {2, 3, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1},   /* depthwise flat on 1x1 planes */
    {2, 5, 3, 18, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, 0},  /* depthwise flat, rows of 18 */
    {2, 3, 14, 14, 3, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 3, 1}, /* depthwise stride 2 by phase
                                                             planes: 5x5 (EfficientNet's) */
    {1, 2, 9, 112, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 0},  /* rows of 112 -> 56 */
    {2, 2, 3, 1, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1},    /* one column */
    {1, 2, 7, 14, 2, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 2, 0},   /* padding 2: taps past the input */
    {1, 3, 9, 14, 3, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 3, 1},   /* no padding: 2 Q < W, by rows */
    {1, 2, 130, 131, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1}, /* depthwise, a plane past local
                                                                memory: by rows */
    {2, 24, 23, 23, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, /* 1x1 past the small product:
                                                               the register kernel's epilogue */
    {3, 40, 7, 7, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1},  /* 1x1 on 7x7: images side by side */
    {2, 64, 32, 32, 72, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, /* 1x1 on rows 4 KiB apart: B
                                                               packed image by image */
    /* first layers (the implicit algorithm's own kernel on CPUs: 16 channels x 16 columns a
     * block, edge blocks through lane shifts, the last block shifted left) */
    {2, 3, 37, 45, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1}, /* RGB, stride 2, 33 channels */
    {1, 3, 20, 50, 20, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0}, /* ResNet's 7x7 stride 2 */
    {2, 4, 9, 40, 16, 5, 5, 1, 1, 2, 1, 2, 0, 1, 1, 1, 1},  /* 4 channels, stride 1, uneven */
    {2, 1, 7, 28, 17, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1},  /* the default network's: both
                                                               blocks of a row at the padding */
    /* first layers of 64 taps and more (the channel-vector form on AVX-512 CPUs: 32 channels
     * x 8 columns a block, zero weights past K) */
    {2, 3, 6, 5, 40, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1},  /* 3x3 outputs: one block of 8,
                                                              2 channel blocks, the second 8 */
    {1, 3, 17, 30, 64, 5, 5, 2, 1, 2, 2, 2, 2, 2, 1, 1, 0}, /* dilation 2 down, stride 2x1 */
    /* 1x1 on small planes: the images' columns side by side in one product (on CPUs) */
    {3, 20, 7, 7, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1},  /* 7x7 planes, 20 -> 40 channels */
    {2, 8, 5, 5, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0},   /* 5x5 planes */
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* A first layer's shape, whose forward pass has a CPU kernel of its own (stem.c): at most 4
 * channels in, one group, stride 1 or 2 across, no dilation across, at most 17 taps across. */
static int first_layer(const conv_case *c)
{
    return c->C <= 4 && c->G == 1 && c->sw <= 2 && c->dw == 1 && c->S <= 17;
}

static clg_conv2d_desc desc_of(const conv_case *c, clg_conv_algo algo)
{
    clg_conv2d_desc d = clg_conv2d_desc_default();
    d.stride_h = (int)c->sh;
    d.stride_w = (int)c->sw;
    d.pad_top = (int)c->pt;
    d.pad_bottom = (int)c->pb;
    d.pad_left = (int)c->pl;
    d.pad_right = (int)c->pr;
    d.dilation_h = (int)c->dh;
    d.dilation_w = (int)c->dw;
    d.groups = (int)c->G;
    d.algo = algo;
    d.workspace_limit = workspace_limit;
    d.relu = fuse_relu;
    return d;
}

static ref_conv ref_of(const conv_case *c)
{
    ref_conv g = {c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->sh, c->sw, c->pt, c->pb, c->pl,
                  c->pr, c->dh, c->dw, c->G, 0, 0};
    assert_true(ref_conv_init(&g));
    return g;
}

static clg_tensor *make(clg_shape s, const float *host)
{
    clg_tensor *t;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, s, &t), CLG_OK);
    if (host)
        CLG_ASSERT_STATUS(clg_tensor_upload(t, host, clg_shape_numel(s)), CLG_OK);
    return t;
}

/* An output tensor of one image more than `s`, all NaN; *view is the first s.n images. */
static clg_tensor *make_guarded(clg_shape s, clg_tensor **view)
{
    clg_shape big = s;
    big.n += 1;
    clg_tensor *t = make(big, NULL);
    CLG_ASSERT_STATUS(clg_tensor_fill(t, NAN), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(t, 0, s.n, view), CLG_OK);
    return t;
}

/* Compares the first n values of the guarded tensor with ref and checks the guard image is
 * still NaN. The error's norm is taken relative to mag's, the same sums over the terms'
 * magnitudes: a float sum's rounding error scales with those, and a sum that cancels (a 1x1
 * image's few outputs, half of them zeroed by a fused ReLU) would otherwise fail on rounding
 * alone (seen: 2.6e-5 against ||ref|| with seed 14628595391). Where no term cancels, mag is
 * ref, but for the outputs a fused ReLU zeroes, which count in mag alone. Returns 0 when
 * fine. */
static int compare(clg_tensor *guarded, size_t n, size_t guard, const double *ref,
                   const double *mag, int exact, double tol, const char *what)
{
    float *out = malloc((n + guard) * sizeof *out);
    CLG_ASSERT_STATUS(clg_tensor_download(guarded, out, n + guard), CLG_OK);
    int bad = 0;
    double num = 0, den = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        if (isnan(out[i]) || (exact && out[i] != ref[i])) {
            print_error("%s: element %zu is %g, expected %g\n", what, i, out[i], ref[i]);
            bad = 1;
        }
        num += (out[i] - ref[i]) * (out[i] - ref[i]);
        den += mag[i] * mag[i];
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    if (!bad && rel > tol) {
        print_error("%s: relative L2 error %.3g above %.3g\n", what, rel, tol);
        bad = 1;
    }
    for (size_t i = n; i < n + guard && !bad; i++)
        if (!isnan(out[i])) {
            print_error("%s: guard element %zu was written\n", what, i - n);
            bad = 1;
        }
    free(out);
    return bad;
}

/* float32 sums of `len` products: error grows like sqrt(len) * eps; Winograd's transforms
 * add a few roundings per element (a factor of 4 covers them). */
static double tolerance(size_t len, clg_conv_algo algo)
{
    double t = len <= 100 ? 1e-5 : 1e-5 * sqrt((double)len / 100.0);
    return algo == CLG_CONV_ALGO_WINOGRAD ? 4 * t : t;
}

static int run_case(const conv_case *c, clg_conv_algo algo, clg_conv_pass pass, int integer)
{
    runs_asked++;
    ref_conv g = ref_of(c);
    if (clg_test_too_big((double)c->N * c->K * g.P * g.Q * (c->C / c->G) * c->R * c->S, &left_out))
        return 0;
    clg_conv2d_desc d = desc_of(c, algo);
    clg_shape xs = {c->N, c->C, c->H, c->W}, ws = {c->K, c->C / c->G, c->R, c->S};
    clg_shape ys = {c->N, c->K, g.P, g.Q}, bs = {c->K, 1, 1, 1};
    size_t nx = clg_shape_numel(xs), nw = clg_shape_numel(ws), ny = clg_shape_numel(ys);
    size_t min_b, max_b;
    clg_status fit = clg_conv2d_workspace(ctx, &d, pass, algo, xs, ws, &min_b, &max_b);
    if (fit == CLG_ERR_UNSUPPORTED && workspace_limit == 0)
        return 0; /* does not apply to this shape */
    if (workspace_limit == 0)
        CLG_ASSERT_STATUS(fit, CLG_OK);
    applied[algo]++;
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
    float *b = malloc(c->K * sizeof *b);
    if (integer) {
        clg_test_fill_int(&rng, x, nx, -3, 3);
        clg_test_fill_int(&rng, w, nw, -2, 2);
        clg_test_fill_int(&rng, dy, ny, -3, 3);
        clg_test_fill_int(&rng, b, c->K, -4, 4);
    } else {
        clg_test_fill_uniform(&rng, x, nx, -1, 1);
        clg_test_fill_uniform(&rng, w, nw, -1, 1);
        clg_test_fill_uniform(&rng, dy, ny, -1, 1);
        clg_test_fill_uniform(&rng, b, c->K, -1, 1);
    }
    clg_tensor *tx = make(xs, x), *tw = make(ws, w), *tdy = make(ys, dy), *tb = make(bs, b), *out, *view;
    clg_tensor *db = NULL, *db_view = NULL;
    /* Small integers make every algorithm exact but Winograd, whose transforms (F(4x4, 3x3)
     * and F(2x2, 5x5)) hold 1/6 and 1/24, not binary fractions: it gets the float tolerance. */
    int exact = integer && algo != CLG_CONV_ALGO_WINOGRAD && !fuse_silu;
    double *ref, *mag;
    size_t n_out, len;
    float *ax = clg_test_abs_copy(x, nx), *aw = clg_test_abs_copy(w, nw);
    float *ady = clg_test_abs_copy(dy, ny), *ab = clg_test_abs_copy(b, c->K);
    char what[160];
    snprintf(what, sizeof what, "case %zu %s %s%s", (size_t)(c - cases), clg_conv_algo_name(algo),
             pass == CLG_CONV_FWD ? "fwd" : pass == CLG_CONV_BWD_DATA ? "bwd_data" : "bwd_weights",
             integer ? " integer" : "");
    clg_status st;
    if (pass == CLG_CONV_FWD) {
        n_out = ny;
        len = (c->C / c->G) * c->R * c->S;
        ref = malloc(n_out * sizeof *ref);
        mag = malloc(n_out * sizeof *mag);
        ref_conv_forward(&g, x, w, c->bias ? b : NULL, ref);
        ref_conv_forward(&g, ax, aw, c->bias ? ab : NULL, mag);
        float *res = fuse_sum ? malloc(n_out * sizeof *res) : NULL;
        if (res && integer)
            clg_test_fill_int(&rng, res, n_out, -3, 3);
        else if (res)
            clg_test_fill_uniform(&rng, res, n_out, -1, 1);
        for (size_t i = 0; res && i < n_out; i++)
            ref[i] += res[i], mag[i] += fabs(res[i]);
        clg_tensor *tres = res ? make(ys, res) : NULL;
        free(res);
        double top = 0;
        for (size_t i = 0; fuse_relu && i < n_out; i++) {
            ref[i] = ref[i] > 0 ? ref[i] : 0;
            top = ref[i] > top ? ref[i] : top;
        }
        /* a cap that clips some outputs (half the largest: a whole or half number on small
         * integers, so exact there too) */
        d.relu_max = cap_relu && top > 0 ? (float)(0.5 * top) : 0.0f;
        for (size_t i = 0; d.relu_max > 0 && i < n_out; i++)
            ref[i] = ref[i] < d.relu_max ? ref[i] : d.relu_max;
        /* SiLU's slope stays within [-0.1, 1.1], so the sums' error bound (mag) still holds */
        for (size_t i = 0; fuse_silu && i < n_out; i++)
            ref[i] = ref[i] / (1.0 + exp(-ref[i]));
        out = make_guarded(ys, &view);
        st = clg__conv2d_forward_keep(ctx, &d, fuse_silu, tx, tw, c->bias ? tb : NULL, tres,
                                      view, NULL);
        clg_tensor_destroy(tres);
    } else if (pass == CLG_CONV_BWD_DATA) {
        n_out = nx;
        len = (c->K / c->G) * c->R * c->S;
        ref = malloc(n_out * sizeof *ref);
        mag = malloc(n_out * sizeof *mag);
        ref_conv_backward_data(&g, dy, w, ref);
        ref_conv_backward_data(&g, ady, aw, mag);
        out = make_guarded(xs, &view);
        /* With keep_backward, a network layer's way: the weight gradient first, keeping dy's
         * channels-last copy, which the data gradient then reads instead of copying dy. */
        clg__conv_keep keep = {0};
        st = CLG_OK;
        if (keep_backward == 1) { /* (the weight gradient with a limit of its own: the data
                                 gradient's could turn it away from Winograd) */
            clg_tensor *tdw = make(ws, NULL);
            clg_conv2d_desc wd = d;
            wd.workspace_limit = keep_backward_limit;
            st = clg__conv2d_backward_weights_keep(ctx, &wd, tx, tdy, tdw, NULL, &keep);
            dy_shared_runs += st == CLG_OK && keep.dyq_n == c->N;
            clg_tensor_destroy(tdw);
        }
        if (st == CLG_OK)
            st = clg__conv2d_backward_data_keep(ctx, &d, tdy, tw, view,
                                                keep_backward ? &keep : NULL);
        if (keep_backward && keep.dyq_n != 0)
            fail_msg("%s: the data gradient left dy's copy valid for another", what);
        clg__conv_keep_free(&keep);
    } else {
        n_out = nw;
        len = c->N * g.P * g.Q;
        ref = malloc(n_out * sizeof *ref);
        mag = malloc(n_out * sizeof *mag);
        ref_conv_backward_weights(&g, x, dy, ref);
        ref_conv_backward_weights(&g, ax, ady, mag);
        out = make_guarded(ws, &view);
        /* Cases with a bias take dw and db in one call (the implicit algorithm sums db in
         * the same pass). With keep_forward, a network layer's way: the forward pass first,
         * keeping Winograd's transform of x, which the weight gradient then reads. */
        clg__conv_keep keep = {0};
        st = CLG_OK;
        if (keep_forward) {
            clg_tensor *ty = make(ys, NULL);
            st = clg__conv2d_forward_keep(ctx, &d, 0, tx, tw, NULL, NULL, ty, &keep);
            /* (a limit may turn the forward pass to another algorithm; GPUs' form keeps
             * nothing: its weight gradient reads the transform in slices) */
            if (st == CLG_OK && algo == CLG_CONV_ALGO_WINOGRAD && c->G == 1 && !workspace_limit &&
                !clg_ctx_decides_as_gpu(ctx) && keep.n != c->N)
                fail_msg("%s: the forward pass kept no transform", what);
            kept_grid_runs += st == CLG_OK && keep.n == c->N && keep.grid;
            kept_v_runs += st == CLG_OK && keep.n == c->N && !keep.grid;
            clg_tensor_destroy(ty);
        }
        if (c->bias)
            db = make_guarded(bs, &db_view);
        if (st == CLG_OK)
            st = clg__conv2d_backward_weights_keep(ctx, &d, tx, tdy, view, db_view,
                                                   keep_forward ? &keep : NULL);
        clg__conv_keep_free(&keep);
    }
    int bad = st != CLG_OK;
    if (bad)
        print_error("%s: %s: %s\n", what, clg_status_name(st), clg_ctx_last_error(ctx));
    else
        bad = compare(out, n_out, n_out / (pass == CLG_CONV_BWD_WEIGHTS ? c->K : c->N), ref,
                      mag, exact, tolerance(len, algo), what);
    if (!bad && db) { /* sums of N*P*Q values of dy */
        double *ref_db = malloc(2 * c->K * sizeof *ref_db);
        ref_conv_backward_bias(&g, dy, ref_db);
        ref_conv_backward_bias(&g, ady, ref_db + c->K);
        strncat(what, " bias", sizeof what - strlen(what) - 1);
        bad = compare(db, c->K, 1, ref_db, ref_db + c->K, integer, tolerance(len, algo), what);
        free(ref_db);
    }
    clg_tensor_destroy(db_view);
    clg_tensor_destroy(db);
    /* The weight view's guard is one filter (n_out / K values); others one image. */
    clg_tensor_destroy(view);
    clg_tensor_destroy(out);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(tw);
    clg_tensor_destroy(tdy);
    clg_tensor_destroy(tb);
    free(ref);
    free(mag);
    free(x);
    free(w);
    free(dy);
    free(b);
    free(ax);
    free(aw);
    free(ady);
    free(ab);
    return bad;
}

static void every_algorithm_and_pass_matches_the_reference(void **state)
{
    (void)state;
    int failures = 0, runs = 0;
    for (size_t i = 0; i < N_CASES; i++)
        for (int a = CLG_CONV_ALGO_IM2COL; a <= CLG_CONV_ALGO_DEPTHWISE; a++)
            for (int pass = 0; pass < 3 && a != CLG_CONV_ALGO_FIND; pass++)
                for (int integer = 0; integer < 2; integer++) {
                    failures += run_case(&cases[i], (clg_conv_algo)a, (clg_conv_pass)pass, integer);
                    runs++;
                }
    print_message("%d runs: im2col %d, implicit %d, winograd %d, gemm %d, depthwise %d applied\n",
                  runs, applied[CLG_CONV_ALGO_IM2COL], applied[CLG_CONV_ALGO_IMPLICIT],
                  applied[CLG_CONV_ALGO_WINOGRAD], applied[CLG_CONV_ALGO_GEMM],
                  applied[CLG_CONV_ALGO_DEPTHWISE]);
    assert_int_equal(failures, 0);
    /* Every algorithm met several shapes (a table change must not quietly drop one; with
     * CLG_TEST_SMALL, at least one). */
    for (int a = CLG_CONV_ALGO_IM2COL; a <= CLG_CONV_ALGO_DEPTHWISE; a++)
        assert_true(a == CLG_CONV_ALGO_FIND || applied[a] >= (clg_test_small_limit() ? 1 : 8));
}

static void backward_bias_matches_the_reference(void **state)
{
    (void)state;
    /* the c2 layer (196 pixels a plane) and the c1 layer (784: more than a GPU work-group's
     * 256 items take at once) */
    const size_t picks[] = {9, 8};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        const conv_case *c = &cases[picks[i]];
        ref_conv g = ref_of(c);
        clg_shape ys = {c->N, c->K, g.P, g.Q};
        size_t ny = clg_shape_numel(ys);
        float *dy = malloc(ny * sizeof *dy);
        double *ref = malloc(2 * c->K * sizeof *ref);
        clg_test_fill_uniform(&rng, dy, ny, -1, 1);
        float *ady = clg_test_abs_copy(dy, ny);
        ref_conv_backward_bias(&g, dy, ref);
        ref_conv_backward_bias(&g, ady, ref + c->K);
        free(ady);
        clg_tensor *tdy = make(ys, dy), *view, *db = make_guarded((clg_shape){c->K, 1, 1, 1}, &view);
        CLG_ASSERT_STATUS(clg_conv2d_backward_bias(ctx, tdy, view), CLG_OK);
        /* Sums of N*P*Q values (392 and 2352). */
        assert_int_equal(compare(db, c->K, 1, ref, ref + c->K, 0,
                                 tolerance(ny / c->K, CLG_CONV_ALGO_IM2COL), "bias"), 0);
        clg_tensor *small = make((clg_shape){c->K - 1, 1, 1, 1}, NULL);
        CLG_ASSERT_STATUS(clg_conv2d_backward_bias(ctx, tdy, small), CLG_ERR_SHAPE);
        clg_tensor_destroy(small);
        clg_tensor_destroy(view);
        clg_tensor_destroy(db);
        clg_tensor_destroy(tdy);
        free(dy);
        free(ref);
    }
}

/* The reference's backward passes are the derivatives of its forward: central differences in
 * double on L = sum(dy * y) agree to ~1e-9. */
static void reference_backward_is_the_forward_derivative(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < N_CASES; ci++) {
        const conv_case *c = &cases[ci];
        if (c->C * c->H * c->W * c->K > 20000)
            continue; /* the big layers add nothing here and cost time */
        ref_conv g = ref_of(c);
        size_t nx = c->N * c->C * c->H * c->W, nw = c->K * (c->C / c->G) * c->R * c->S;
        size_t ny = c->N * c->K * g.P * g.Q;
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
        clg_test_fill_uniform(&rng, x, nx, -1, 1);
        clg_test_fill_uniform(&rng, w, nw, -1, 1);
        clg_test_fill_uniform(&rng, dy, ny, -1, 1);
        double *xd = malloc(nx * sizeof *xd), *wd = malloc(nw * sizeof *wd), *y = malloc(ny * sizeof *y);
        double *gx = malloc(nx * sizeof *gx), *gw = malloc(nw * sizeof *gw);
        for (size_t i = 0; i < nx; i++)
            xd[i] = x[i];
        for (size_t i = 0; i < nw; i++)
            wd[i] = w[i];
        ref_conv_backward_data(&g, dy, w, gx);
        ref_conv_backward_weights(&g, x, dy, gw);
        const double eps = 1e-4;
        for (int probe = 0; probe < 6; probe++) {
            int on_w = probe & 1;
            size_t i = (size_t)(clg_test_rng_next(&rng) % (on_w ? nw : nx));
            double *v = on_w ? &wd[i] : &xd[i], keep = *v, l[2];
            for (int side = 0; side < 2; side++) {
                *v = keep + (side ? eps : -eps);
                ref_conv_forward_d(&g, xd, wd, y);
                l[side] = 0;
                for (size_t j = 0; j < ny; j++)
                    l[side] += dy[j] * y[j];
            }
            *v = keep;
            double fd = (l[1] - l[0]) / (2 * eps), an = on_w ? gw[i] : gx[i];
            if (fabs(fd - an) > 1e-7 * (1 + fabs(an)))
                fail_msg("case %zu: d/d%s[%zu]: finite difference %.10g, backward %.10g", ci,
                         on_w ? "w" : "x", i, fd, an);
        }
        free(x);
        free(w);
        free(dy);
        free(xd);
        free(wd);
        free(y);
        free(gx);
        free(gw);
    }
}

/* The device ops themselves, coarsely, in float: a tiny layer, steps of 1e-2, inputs drawn
 * anywhere (convolution is linear: no kinks to avoid). */
static void device_backward_matches_device_finite_differences(void **state)
{
    (void)state;
    const conv_case c = {1, 2, 5, 4, 2, 3, 2, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0};
    ref_conv g = ref_of(&c);
    clg_conv2d_desc d = desc_of(&c, CLG_CONV_ALGO_AUTO);
    size_t nx = 2 * 5 * 4, nw = 2 * 2 * 3 * 2, ny = 2 * g.P * g.Q;
    float x[40], w[24], dy[64], y[64], gx[40], gw[24];
    clg_test_fill_uniform(&rng, x, nx, -1, 1);
    clg_test_fill_uniform(&rng, w, nw, -1, 1);
    clg_test_fill_uniform(&rng, dy, ny, -1, 1);
    clg_shape xs = {1, 2, 5, 4}, ws = {2, 2, 3, 2}, ys = {1, 2, g.P, g.Q};
    clg_tensor *tx = make(xs, x), *tw = make(ws, w), *tdy = make(ys, dy), *ty = make(ys, NULL);
    clg_tensor *tgx = make(xs, NULL), *tgw = make(ws, NULL);
    CLG_ASSERT_STATUS(clg_conv2d_backward_data(ctx, &d, tdy, tw, tgx), CLG_OK);
    CLG_ASSERT_STATUS(clg_conv2d_backward_weights(ctx, &d, tx, tdy, tgw), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tgx, gx, nx), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tgw, gw, nw), CLG_OK);
    const float eps = 1e-2f;
    for (size_t i = 0; i < nx + nw; i++) {
        int on_w = i >= nx;
        float *v = on_w ? &w[i - nx] : &x[i], keep = *v;
        double l[2];
        for (int side = 0; side < 2; side++) {
            *v = keep + (side ? eps : -eps);
            CLG_ASSERT_STATUS(clg_tensor_upload(on_w ? tw : tx, on_w ? w : x, on_w ? nw : nx), CLG_OK);
            CLG_ASSERT_STATUS(clg_conv2d_forward(ctx, &d, tx, tw, NULL, ty), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(ty, y, ny), CLG_OK);
            l[side] = 0;
            for (size_t j = 0; j < ny; j++)
                l[side] += (double)dy[j] * y[j];
        }
        *v = keep;
        CLG_ASSERT_STATUS(clg_tensor_upload(on_w ? tw : tx, on_w ? w : x, on_w ? nw : nx), CLG_OK);
        double fd = (l[1] - l[0]) / (2 * eps), an = on_w ? gw[i - nx] : gx[i];
        if (fabs(fd - an) > 2e-3 * (1 + fabs(an)))
            fail_msg("d/d%s[%zu]: finite difference %.6g, backward %.6g", on_w ? "w" : "x",
                     on_w ? i - nx : i, fd, an);
    }
    clg_tensor *all[] = {tx, tw, tdy, ty, tgx, tgw};
    for (size_t i = 0; i < 6; i++)
        clg_tensor_destroy(all[i]);
}

static void invalid_descriptors_are_rejected(void **state)
{
    (void)state;
    clg_shape xs = {2, 4, 6, 6}, ws = {6, 2, 3, 3}, ys;
    clg_conv2d_desc d = clg_conv2d_desc_default();
    d.groups = 2;
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, xs, ws, &ys), CLG_OK);
    assert_true(ys.n == 2 && ys.c == 6 && ys.h == 4 && ys.w == 4);
    d.pad_left = -1;
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, xs, ws, &ys), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "padding"));
    d = clg_conv2d_desc_default();
    d.stride_h = 0;
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, xs, ws, &ys), CLG_ERR_INVALID_ARG);
    d = clg_conv2d_desc_default();
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, xs, ws, &ys), CLG_ERR_SHAPE); /* 2 != 4 channels */
    d.groups = 3;
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, xs, ws, &ys), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "groups"));
    d = clg_conv2d_desc_default();
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, (clg_shape){1, 2, 2, 2}, (clg_shape){1, 2, 3, 3}, &ys),
                      CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_last_error(), "larger than the padded"));
    d.dilation_w = 0;
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(&d, xs, ws, &ys), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_conv2d_output_shape(NULL, xs, ws, &ys), CLG_ERR_INVALID_ARG);

    /* Tensors that do not match. */
    d = clg_conv2d_desc_default();
    d.groups = 2;
    clg_tensor *x = make(xs, NULL), *w = make(ws, NULL), *y = make((clg_shape){2, 6, 4, 5}, NULL);
    CLG_ASSERT_STATUS(clg_conv2d_forward(ctx, &d, x, w, NULL, y), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "y is 2x6x4x5"));
    clg_tensor *bias = make((clg_shape){5, 1, 1, 1}, NULL);
    clg_tensor_destroy(y);
    y = make((clg_shape){2, 6, 4, 4}, NULL);
    CLG_ASSERT_STATUS(clg_conv2d_forward(ctx, &d, x, w, bias, y), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_conv2d_forward(ctx, &d, NULL, w, NULL, y), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_conv2d_backward_data(ctx, &d, x, w, y), CLG_ERR_SHAPE);
    d.algo = CLG_CONV_ALGO_GEMM; /* a 3x3 kernel is not a 1x1 */
    CLG_ASSERT_STATUS(clg_conv2d_forward(ctx, &d, x, w, NULL, y), CLG_ERR_UNSUPPORTED);
    d.algo = (clg_conv_algo)17;
    CLG_ASSERT_STATUS(clg_conv2d_forward(ctx, &d, x, w, NULL, y), CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(x);
    clg_tensor_destroy(w);
    clg_tensor_destroy(y);
    clg_tensor_destroy(bias);
}

static void choice_follows_find_results_overrides_and_workspace(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("conv-find");
    clg_ctx *c1 = clg_test_ctx(dir);
    const conv_case *cc = &cases[10];
    clg_conv2d_desc d = desc_of(cc, CLG_CONV_ALGO_FIND);
    clg_shape xs = {cc->N, cc->C, cc->H, cc->W}, ws = {cc->K, cc->C, cc->R, cc->S};
    clg_conv_algo found, again;
    CLG_ASSERT_STATUS(clg_conv2d_choose(c1, &d, CLG_CONV_FWD, xs, ws, &found), CLG_OK);
    assert_true(found >= CLG_CONV_ALGO_IM2COL && found <= CLG_CONV_ALGO_GEMM);
    clg_ctx_destroy(c1);
    /* A new context reads the stored result: AUTO now gives the found algorithm. */
    clg_ctx *c2 = clg_test_ctx(dir);
    d.algo = CLG_CONV_ALGO_AUTO;
    CLG_ASSERT_STATUS(clg_conv2d_choose(c2, &d, CLG_CONV_FWD, xs, ws, &again), CLG_OK);
    assert_int_equal(again, found);
    clg_ctx_destroy(c2);
    /* Rewrite the stored entry by hand: the next context believes the file (no new search). */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "sed -i 's/^[a-z0-9]*\\t/implicit\\t/' '%s'/conv-*.find", dir);
    assert_int_equal(system(cmd), 0);
    clg_ctx *c3 = clg_test_ctx(dir);
    CLG_ASSERT_STATUS(clg_conv2d_choose(c3, &d, CLG_CONV_FWD, xs, ws, &again), CLG_OK);
    assert_int_equal(again, CLG_CONV_ALGO_IMPLICIT);
    /* The environment, as a context finds it when created, overrides AUTO. */
    setenv("CLGRAD_CONV_ALGO", "im2col", 1);
    CLG_ASSERT_STATUS(clg_conv2d_choose(c3, &d, CLG_CONV_FWD, xs, ws, &again), CLG_OK);
    assert_int_equal(again, CLG_CONV_ALGO_IMPLICIT); /* c3 was made before: read once */
    clg_ctx_destroy(c3);
    c3 = clg_test_ctx(dir);
    CLG_ASSERT_STATUS(clg_conv2d_choose(c3, &d, CLG_CONV_FWD, xs, ws, &again), CLG_OK);
    assert_int_equal(again, CLG_CONV_ALGO_IM2COL);
    clg_ctx_destroy(c3);
    setenv("CLGRAD_CONV_ALGO", "fastest", 1);
    c3 = clg_test_ctx(dir);
    CLG_ASSERT_STATUS(clg_conv2d_choose(c3, &d, CLG_CONV_FWD, xs, ws, &again), CLG_ERR_INVALID_ARG);
    unsetenv("CLGRAD_CONV_ALGO");
    clg_ctx_destroy(c3);
    /* A workspace too small for im2col falls back to an algorithm that needs none. */
    d.algo = CLG_CONV_ALGO_IM2COL;
    d.workspace_limit = 64;
    CLG_ASSERT_STATUS(clg_conv2d_choose(ctx, &d, CLG_CONV_FWD, xs, ws, &again), CLG_OK);
    assert_int_equal(again, CLG_CONV_ALGO_IMPLICIT);
    size_t lo, hi;
    d.workspace_limit = 0;
    CLG_ASSERT_STATUS(clg_conv2d_workspace(ctx, &d, CLG_CONV_FWD, CLG_CONV_ALGO_IM2COL, xs, ws, &lo, &hi), CLG_OK);
    assert_true(lo > 0 && hi == lo * cc->N);
    /* Winograd covers every pass of 3x3 and 5x5 stride-1 layers, and nothing else. */
    CLG_ASSERT_STATUS(clg_conv2d_workspace(ctx, &d, CLG_CONV_BWD_WEIGHTS, CLG_CONV_ALGO_WINOGRAD, xs, ws, &lo, &hi),
                      CLG_OK);
    d.stride_h = 2;
    CLG_ASSERT_STATUS(clg_conv2d_workspace(ctx, &d, CLG_CONV_FWD, CLG_CONV_ALGO_WINOGRAD, xs, ws, &lo, &hi),
                      CLG_ERR_UNSUPPORTED);
    clg_test_rmtree(dir);
    free(dir);
    /* Without measurements on a CPU: a 3x3 stride-2 forward pass by the shifted rows while
     * its weights stay well inside a core's L2 (96 channels: 324 KiB), by im2col from 512 KiB
     * (128 channels: 576 KiB); the other passes of the larger keep the shifted rows. */
    if (!clg_ctx_decides_as_gpu(ctx)) {
        const conv_case r50[2] = {{2, 96, 28, 28, 96, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0},
                                  {2, 128, 28, 28, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}};
        const clg_conv_algo want[2] = {CLG_CONV_ALGO_IMPLICIT, CLG_CONV_ALGO_IM2COL};
        for (int i = 0; i < 2; i++) {
            clg_conv2d_desc a = desc_of(&r50[i], CLG_CONV_ALGO_AUTO);
            clg_shape rx = {2, r50[i].C, 28, 28}, rw = {r50[i].K, r50[i].C, 3, 3};
            CLG_ASSERT_STATUS(clg_conv2d_choose(ctx, &a, CLG_CONV_FWD, rx, rw, &again), CLG_OK);
            assert_int_equal(again, want[i]);
            CLG_ASSERT_STATUS(clg_conv2d_choose(ctx, &a, CLG_CONV_BWD_WEIGHTS, rx, rw, &again),
                              CLG_OK);
            assert_int_equal(again, CLG_CONV_ALGO_IMPLICIT);
        }
    }
}

/* A workspace limit of what one image needs (each algorithm's least workspace) makes im2col,
 * Winograd and the implicit shifted form run image by image: the results still match. */
/* Winograd's passes give the same bits every time: 48 channels are 3 blocks of 16 in groups
 * of 4 items, whose fourth item wrote the next tile's first channels, racing that tile's own
 * item (about one pass in a hundred differed, where a group boundary fell between the two);
 * its data gradient's transform of dy had the same launch. Reproducibility of 60 passes each
 * (not a proof: the race was timing's). */
static void winograd_passes_are_reproducible(void **state)
{
    (void)state;
    if (clg_test_small_limit()) { /* oclgrind: 120 passes of 65 MFLOP; it checks races itself */
        print_message("left out under CLG_TEST_SMALL\n");
        return;
    }
    const conv_case c = {8, 48, 14, 14, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
    clg_conv2d_desc d = desc_of(&c, CLG_CONV_ALGO_WINOGRAD);
    clg_shape xs = {c.N, c.C, c.H, c.W}, ws = {c.K, c.C, 3, 3};
    size_t n = c.N * c.C * c.H * c.W, nw = c.K * c.C * 9;
    float *x = malloc(n * sizeof *x), *w = malloc(nw * sizeof *w);
    float *first = malloc(n * sizeof *first), *again = malloc(n * sizeof *again);
    clg_test_fill_uniform(&rng, x, n, -1, 1);
    clg_test_fill_uniform(&rng, w, nw, -1, 1);
    clg_tensor *tx = make(xs, x), *tw = make(ws, w), *ty = make(xs, NULL);
    int differ = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < 60; r++) {
            CLG_ASSERT_STATUS(pass ? clg_conv2d_backward_data(ctx, &d, tx, tw, ty)
                                   : clg_conv2d_forward(ctx, &d, tx, tw, NULL, ty),
                              CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(ty, r ? again : first, n), CLG_OK);
            differ += r && memcmp(first, again, n * sizeof *first) != 0;
        }
    assert_int_equal(differ, 0);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(tw);
    clg_tensor_destroy(ty);
    free(x), free(w), free(first), free(again);
}

/* im2col's forward pass with a long sum (2,088 = 232 channels x 3 x 3) over small planes: on
 * CPUs the images' columns side by side in one product whose stores go back image by image,
 * blocks crossing from one image into the next (5 x 5 outputs, three images); with its bias,
 * a residual sum and ReLU in the stores, and in chunks of images. */
static void long_sums_over_small_planes_match_the_reference(void **state)
{
    (void)state;
    static const conv_case c = {3, 232, 9, 9, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
    int failures = run_case(&c, CLG_CONV_ALGO_IM2COL, CLG_CONV_FWD, 0);
    failures += run_case(&c, CLG_CONV_ALGO_IM2COL, CLG_CONV_FWD, 1);
    fuse_sum = fuse_relu = 1;
    failures += run_case(&c, CLG_CONV_ALGO_IM2COL, CLG_CONV_FWD, 0);
    clg_conv2d_desc d = desc_of(&c, CLG_CONV_ALGO_IM2COL);
    size_t lo, hi;
    CLG_ASSERT_STATUS(clg_conv2d_workspace(ctx, &d, CLG_CONV_FWD, CLG_CONV_ALGO_IM2COL,
                                           (clg_shape){c.N, c.C, c.H, c.W},
                                           (clg_shape){c.K, c.C, c.R, c.S}, &lo, &hi),
                      CLG_OK);
    workspace_limit = lo; /* one image a chunk */
    failures += run_case(&c, CLG_CONV_ALGO_IM2COL, CLG_CONV_FWD, 0);
    workspace_limit = 0;
    fuse_sum = fuse_relu = 0;
    assert_int_equal(failures, 0);
}

static void chunked_algorithms_match_the_reference(void **state)
{
    (void)state;
    int failures = 0, chunked = 0;
    const size_t picks[] = {1, 5, 9, 10, 14, 15};
    const clg_conv_algo algos[] = {CLG_CONV_ALGO_IM2COL, CLG_CONV_ALGO_WINOGRAD};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        const conv_case *c = &cases[picks[i]];
        clg_shape xs = {c->N, c->C, c->H, c->W}, ws = {c->K, c->C / c->G, c->R, c->S};
        for (int pass = 0; pass < 3; pass++)
            for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
                clg_conv2d_desc d = desc_of(c, algos[a]);
                size_t lo, hi;
                if (clg_conv2d_workspace(ctx, &d, (clg_conv_pass)pass, algos[a], xs, ws, &lo, &hi) != CLG_OK)
                    continue; /* does not apply */
                assert_true(c->N == 1 || hi > lo); /* several images need more */
                workspace_limit = lo;
                failures += run_case(c, algos[a], (clg_conv_pass)pass, 0);
                failures += run_case(c, algos[a], (clg_conv_pass)pass, 1);
                if (pass == CLG_CONV_FWD) { /* each chunk's residual sum and ReLU */
                    fuse_sum = fuse_relu = 1;
                    failures += run_case(c, algos[a], CLG_CONV_FWD, 0);
                    fuse_sum = fuse_relu = 0;
                }
                workspace_limit = 0;
                chunked++;
            }
    }
    assert_int_equal(failures, 0);
    assert_true(chunked >= 16);
}

/* Whether Winograd runs case c's pass with one group, and the least workspace it needs. */
static int winograd_one_group(const conv_case *c, clg_conv_pass pass, size_t *lo)
{
    clg_shape xs = {c->N, c->C, c->H, c->W}, ws = {c->K, c->C / c->G, c->R, c->S};
    size_t saved = workspace_limit, hi;
    workspace_limit = 0;
    clg_conv2d_desc d = desc_of(c, CLG_CONV_ALGO_WINOGRAD);
    workspace_limit = saved;
    return c->G == 1 &&
           clg_conv2d_workspace(ctx, &d, pass, CLG_CONV_ALGO_WINOGRAD, xs, ws, lo, &hi) == CLG_OK;
}

/* The weight gradient from the transform a forward pass kept (Winograd, one group), whole
 * and with the forward pass and the weight gradient cut into chunks of their own sizes. */
static void weight_gradient_from_the_kept_transform(void **state)
{
    (void)state;
    int failures = 0, kept = 0;
    keep_forward = 1;
    kept_grid_runs = kept_v_runs = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const conv_case *c = &cases[i];
        size_t lo;
        if (!winograd_one_group(c, CLG_CONV_BWD_WEIGHTS, &lo))
            continue;
        for (int chunked = 0; chunked < 2; chunked++) {
            workspace_limit = chunked ? lo : 0;
            failures += run_case(c, CLG_CONV_ALGO_WINOGRAD, CLG_CONV_BWD_WEIGHTS, 0);
            failures += run_case(c, CLG_CONV_ALGO_WINOGRAD, CLG_CONV_BWD_WEIGHTS, 1);
        }
        kept++;
    }
    keep_forward = 0;
    workspace_limit = 0;
    assert_int_equal(failures, 0);
    assert_true(kept >= 6);
    /* both kinds of keep (the GPUs' form keeps neither) */
    assert_true(clg_ctx_decides_as_gpu(ctx) || (kept_grid_runs >= 2 && kept_v_runs >= 2));
    print_message("kept: x's padded copy %d runs, V %d\n", kept_grid_runs, kept_v_runs);
}

/* The data gradient from the copy of dy that the weight gradient before it kept (Winograd,
 * one group, where dy lies inside the data gradient's padded grid), whole and with both
 * passes cut into chunks of their own sizes. */
static void data_gradient_from_the_kept_dy(void **state)
{
    (void)state;
    int failures = 0, runs = 0;
    keep_backward = 1;
    dy_shared_runs = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const conv_case *c = &cases[i];
        size_t lo, w_lo;
        if (!winograd_one_group(c, CLG_CONV_BWD_DATA, &lo) ||
            !winograd_one_group(c, CLG_CONV_BWD_WEIGHTS, &w_lo))
            continue;
        for (int chunked = 0; chunked < 2; chunked++) {
            workspace_limit = chunked ? lo : 0;
            keep_backward_limit = chunked ? w_lo : 0;
            failures += run_case(c, CLG_CONV_ALGO_WINOGRAD, CLG_CONV_BWD_DATA, 0);
            failures += run_case(c, CLG_CONV_ALGO_WINOGRAD, CLG_CONV_BWD_DATA, 1);
            runs += 2;
        }
        /* a keep left empty: the copy the last case's weight gradient made is not this dy */
        keep_backward = 2;
        failures += run_case(c, CLG_CONV_ALGO_WINOGRAD, CLG_CONV_BWD_DATA, 0);
        keep_backward = 1;
    }
    keep_backward = 0;
    workspace_limit = keep_backward_limit = 0;
    assert_int_equal(failures, 0);
    /* GPUs' form keeps nothing; on CPUs every case but padding beyond the kernel shares */
    if (!clg_ctx_decides_as_gpu(ctx))
        assert_true(dy_shared_runs >= runs - 4 && runs >= 24);
}

/* Failures of the forward pass on every shape and algorithm, on random and integer inputs. */
static int forward_on_every_case(void)
{
    int failures = 0;
    for (size_t i = 0; i < N_CASES; i++)
        for (int a = CLG_CONV_ALGO_IM2COL; a <= CLG_CONV_ALGO_DEPTHWISE; a++) {
            if (a == CLG_CONV_ALGO_FIND)
                continue;
            failures += run_case(&cases[i], (clg_conv_algo)a, CLG_CONV_FWD, 0);
            failures += run_case(&cases[i], (clg_conv_algo)a, CLG_CONV_FWD, 1);
        }
    return failures;
}

/* The forward pass with the ReLU fused (in the algorithm's epilogue where it has one, else
 * after), and with a cap (ReLU6's form), on every shape and algorithm. */
static void fused_relu_forward_matches_the_reference(void **state)
{
    (void)state;
    int failures = 0;
    fuse_relu = 1;
    for (cap_relu = 0; cap_relu < 2; cap_relu++)
        failures += forward_on_every_case();
    fuse_relu = cap_relu = 0;
    assert_int_equal(failures, 0);
}

/* The forward pass with a residual block's sum (in the 1x1 products' epilogue, else a pass
 * after), alone (MobileNet-v2's) and with the ReLU after it (ResNet's), on every shape and
 * algorithm. */
static void residual_sum_forward_matches_the_reference(void **state)
{
    (void)state;
    int failures = 0;
    fuse_sum = 1;
    for (fuse_relu = 0; fuse_relu < 2; fuse_relu++)
        failures += forward_on_every_case();
    fuse_sum = fuse_relu = 0;
    assert_int_equal(failures, 0);
}

/* The forward pass with inference's SiLU epilogue (in the algorithm's epilogue where it has
 * one: every form's kernels take it; else a pass after), on every shape and algorithm. */
static void fused_silu_forward_matches_the_reference(void **state)
{
    (void)state;
    fuse_silu = 1;
    int failures = forward_on_every_case();
    fuse_silu = 0;
    assert_int_equal(failures, 0);
}

/* The implicit algorithm's shifted-row form in chunks of images (half its full workspace),
 * and its per-pixel form (a workspace too small for one padded image), on stride-1 and
 * strided shapes; on GPUs its tile form with and without weight-gradient slices. */
static void implicit_forms_match_the_reference_in_any_workspace(void **state)
{
    (void)state;
    int failures = 0;
    const size_t picks[] = {1, 4, 5, 8, 9, 10, 16, 18, 22};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        const conv_case *c = &cases[picks[i]];
        clg_shape xs = {c->N, c->C, c->H, c->W}, ws = {c->K, c->C / c->G, c->R, c->S};
        for (int pass = 0; pass < 3; pass++) {
            clg_conv2d_desc d = desc_of(c, CLG_CONV_ALGO_IMPLICIT);
            size_t lo, hi;
            CLG_ASSERT_STATUS(clg_conv2d_workspace(ctx, &d, (clg_conv_pass)pass,
                                                   CLG_CONV_ALGO_IMPLICIT, xs, ws, &lo, &hi), CLG_OK);
            assert_int_equal(lo, 0);
            if (clg_ctx_decides_as_gpu(ctx)) {
                /* the GPU form (implicit GEMM on tiles) asks for nothing: its weight gradient's
                 * k slices (the c1 layer: 8 here) shrink to what the limit holds, down to
                 * one slice written in place */
                assert_int_equal(hi, 0);
                failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 0);
                failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 1);
                workspace_limit = 1;
                failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 1);
                workspace_limit = 0;
                continue;
            }
            /* a first layer's forward pass has a kernel of its own that reads x in place */
            if (pass == CLG_CONV_FWD && first_layer(c)) {
                assert_int_equal(hi, 0);
                failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 0);
                failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 1);
                continue;
            }
            assert_true(hi > 0); /* the shifted form asks for its padded input */
            workspace_limit = hi / 2;
            failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 0);
            failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 1);
            workspace_limit = 1;
            failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 0);
            workspace_limit = 0;
        }
    }
    assert_int_equal(failures, 0);
}

/* A first layer's forward pass has two CPU forms (stem.c): the row form, and from 64 taps on
 * AVX-512 CPUs the channel-vector form. Contexts made with CLGRAD_CPU_CLASS avx2 and
 * avx512-2fma run every first-layer case through each, whatever this CPU is. */
static void first_layers_in_both_forms(void **state)
{
    (void)state;
    if (clg_ctx_decides_as_gpu(ctx)) {
        print_message("skipped: the first layers' kernels are the CPU forms (this context "
                      "decides as a GPU)\n");
        return;
    }
    const char *before = getenv("CLGRAD_CPU_CLASS");
    char *saved = before ? strdup(before) : NULL;
    static const char *const classes[] = {"avx2", "avx512-2fma"};
    clg_ctx *mine = ctx;
    int failures = 0, channel_vector_cases = 0;
    for (size_t k = 0; k < 2; k++) {
        setenv("CLGRAD_CPU_CLASS", classes[k], 1);
        ctx = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
        for (size_t i = 0; i < N_CASES; i++) {
            const conv_case *c = &cases[i];
            if (!first_layer(c))
                continue;
            channel_vector_cases += k == 1 && c->C * c->R * c->S >= 64;
            failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, CLG_CONV_FWD, 0);
            failures += run_case(c, CLG_CONV_ALGO_IMPLICIT, CLG_CONV_FWD, 1);
        }
        clg_ctx_destroy(ctx);
    }
    ctx = mine;
    if (saved)
        setenv("CLGRAD_CPU_CLASS", saved, 1);
    else
        unsetenv("CLGRAD_CPU_CLASS");
    free(saved);
    assert_true(channel_vector_cases >= 3);
    assert_int_equal(failures, 0);
}

/* The GPU form of the implicit algorithm on a grid of at most 2 work-groups per dimension:
 * its kernels loop over tiles and weight-gradient slices past the grid. */
static void tile_convolutions_loop_past_a_small_grid(void **state)
{
    (void)state;
    if (!clg_ctx_decides_as_gpu(ctx)) {
        print_message("skipped: the tile form runs where contexts decide as GPUs (the GPU profile, oclgrind)\n");
        return;
    }
    const size_t picks[] = {8, 16, 18}; /* the c1 layer (slices), stride 2, uneven strides */
    int failures = 0;
    clg__testing_set_max_groups(2);
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++)
        for (int pass = 0; pass < 3; pass++)
            failures += run_case(&cases[picks[i]], CLG_CONV_ALGO_IMPLICIT, (clg_conv_pass)pass, 1);
    clg__testing_set_max_groups(0);
    assert_int_equal(failures, 0);
}

/* The GPU form of Winograd planning for a large GPU (1000 compute units): the weight gradient
 * cut into slices of at least 64 tiles (the last one short), summed in order (the c1 layer:
 * 9 of its 588 tiles; 2 of case 20's 189, small enough for oclgrind); then on a grid of at
 * most 2 work-groups per dimension, so its transforms loop past it. */
static void winograd_gpu_form_slices_and_loops(void **state)
{
    (void)state;
    if (!clg_ctx_decides_as_gpu(ctx)) {
        print_message("skipped: the GPU form runs where contexts decide as GPUs (the GPU profile, oclgrind)\n");
        return;
    }
    const size_t picks[] = {8, 20, 19}; /* c1 (5x5), many 3x3 tiles, odd sizes and channels */
    int failures = 0;
    clg__testing_set_compute_units(1000);
    for (int small_grid = 0; small_grid < 2; small_grid++) {
        clg__testing_set_max_groups(small_grid ? 2 : 0);
        for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++)
            for (int pass = 0; pass < 3; pass++)
                failures += run_case(&cases[picks[i]], CLG_CONV_ALGO_WINOGRAD, (clg_conv_pass)pass,
                                     small_grid);
    }
    clg__testing_set_max_groups(0);
    clg__testing_set_compute_units(0);
    assert_int_equal(failures, 0);
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
    clg_test_report_left_out("convolution", left_out, runs_asked);
    clg_test_fixture_teardown(ctx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_algorithm_and_pass_matches_the_reference),
        cmocka_unit_test(backward_bias_matches_the_reference),
        cmocka_unit_test(reference_backward_is_the_forward_derivative),
        cmocka_unit_test(device_backward_matches_device_finite_differences),
        cmocka_unit_test(invalid_descriptors_are_rejected),
        cmocka_unit_test(choice_follows_find_results_overrides_and_workspace),
        cmocka_unit_test(implicit_forms_match_the_reference_in_any_workspace),
        cmocka_unit_test(first_layers_in_both_forms),
        cmocka_unit_test(tile_convolutions_loop_past_a_small_grid),
        cmocka_unit_test(fused_relu_forward_matches_the_reference),
        cmocka_unit_test(fused_silu_forward_matches_the_reference),
        cmocka_unit_test(residual_sum_forward_matches_the_reference),
        cmocka_unit_test(winograd_passes_are_reproducible),
        cmocka_unit_test(chunked_algorithms_match_the_reference),
        cmocka_unit_test(long_sums_over_small_planes_match_the_reference),
        cmocka_unit_test(weight_gradient_from_the_kept_transform),
        cmocka_unit_test(data_gradient_from_the_kept_dy),
        cmocka_unit_test(winograd_gpu_form_slices_and_loops),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
