/* Image-to-image tasks: the regression and per-pixel softmax losses against double references
 * and finite differences, their output layers (text, shapes, whole-network gradients), the
 * stores of targets (in memory, augmented with their images, denoising patches, label and
 * target folders, CSV values) with their errors, and training and evaluating such nets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/testutil.h"
#include "nn/nn_internal.h"
#include "runtime/testing.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

static clg_ctx *ctx;
static clg_test_rng rng;
static char *dir;

/* --- losses --- */

static double ref_regression(const float *y, const float *t, size_t R, int l1, double *grad)
{
    double s = 0;
    for (size_t r = 0; r < R; r++) {
        double d = (double)y[r] - t[r];
        s += l1 ? fabs(d) : d * d;
        if (grad)
            grad[r] = (l1 ? (double)((d > 0) - (d < 0)) : d) / (double)R;
    }
    return (l1 ? s : 0.5 * s) / (double)R;
}

static void regression_matches_the_reference(void **state)
{
    (void)state;
    /* one value; 7 of 3 samples; 33; more values than a work-group's 64 items take at once */
    const size_t Ns[] = {1, 3, 2, 5}, Rs[] = {1, 7, 33, 1000};
    for (int l1 = 0; l1 < 2; l1++)
        for (size_t k = 0; k < 4; k++) {
            size_t N = Ns[k], R = Rs[k], n = N * R;
            float *y = malloc(n * sizeof *y), *t = malloc(n * sizeof *t), *dy = malloc(n * 4);
            double *g = malloc(R * sizeof *g), mean = 0, got;
            clg_test_fill_uniform(&rng, y, n, -2, 2);
            clg_test_fill_uniform(&rng, t, n, -2, 2);
            clg_tensor *ty = clg_test_tensor(ctx, (clg_shape){N, R, 1, 1}, y);
            clg_test_poison_nan(dy, n);
            clg_tensor *tdy = clg_test_tensor(ctx, (clg_shape){N, R, 1, 1}, dy);
            clg_regression_loss loss = l1 ? CLG_REGRESSION_L1 : CLG_REGRESSION_MSE;
            CLG_ASSERT_STATUS(clg_regression_forward(ctx, loss, ty, t, n, &got), CLG_OK);
            CLG_ASSERT_STATUS(clg_regression_backward(ctx, loss, ty, t, n, 1.0f / (float)N, tdy),
                              CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tdy, dy, n), CLG_OK);
            for (size_t i = 0; i < N; i++) {
                mean += ref_regression(y + i * R, t + i * R, R, l1, g) / (double)N;
                for (size_t r = 0; r < R; r++)
                    if (!(fabs(dy[i * R + r] - g[r] / (double)N) <= 1e-6 * fabs(g[r]) + 1e-12))
                        fail_msg("%s N=%zu R=%zu dy[%zu][%zu] = %.8g, expected %.8g",
                                 l1 ? "L1" : "MSE", N, R, i, r, dy[i * R + r], g[r] / (double)N);
            }
            /* sums of R terms in float, in a tree of 64: the bound grows with log R */
            if (fabs(got - mean) > 1e-6 * (1 + log2((double)R)) * fabs(mean))
                fail_msg("%s N=%zu R=%zu: loss %.9g, expected %.9g", l1 ? "L1" : "MSE", N, R, got,
                         mean);
            /* dy may be y */
            CLG_ASSERT_STATUS(clg_regression_backward(ctx, loss, ty, t, n, 1.0f / (float)N, ty),
                              CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(ty, y, n), CLG_OK);
            assert_true(clg_test_max_abs_diff(y, dy, n) == 0.0);
            clg_tensor_destroy(ty);
            clg_tensor_destroy(tdy);
            free(y), free(t), free(dy), free(g);
        }
}

/* The loss of logits zs (K x HW) at pixel p against label l, its softmax into q. */
static double ref_pixel(const float *zs, size_t K, size_t HW, size_t p, int l, double *q)
{
    double m = zs[p], s = 0;
    for (size_t k = 1; k < K; k++)
        m = fmax(m, zs[k * HW + p]);
    for (size_t k = 0; k < K; k++)
        s += exp(zs[k * HW + p] - m);
    for (size_t k = 0; k < K; k++)
        q[k] = exp(zs[k * HW + p] - m) / s;
    return log(s) + m - zs[(size_t)l * HW + p];
}

static void pixel_xent_matches_the_reference(void **state)
{
    (void)state;
    const struct { size_t N, K, H, W; } cases[] = {{1, 2, 1, 1}, {2, 3, 7, 5}, {3, 11, 33, 3},
                                                  {1, 4, 16, 16}};
    for (size_t c = 0; c < 4; c++)
        for (int weighted = 0; weighted < 2; weighted++) {
            size_t N = cases[c].N, K = cases[c].K, HW = cases[c].H * cases[c].W, n = N * K * HW;
            float *z = malloc(n * 4), *dz = malloc(n * 4), w[16];
            int32_t *lab = malloc(N * HW * sizeof *lab);
            double q[16], mean = 0, got;
            size_t correct = 0, labelled = 0, got_c, got_l;
            clg_test_fill_uniform(&rng, z, n, -4, 4);
            clg_test_fill_uniform(&rng, w, K, 0.2f, 3.0f);
            for (size_t i = 0; i < N * HW; i++) /* about one pixel in 5 unlabelled */
                lab[i] = clg_test_rng_next(&rng) % 5 == 0 && HW > 1
                             ? CLG_LABEL_IGNORE
                             : (int32_t)(clg_test_rng_next(&rng) % K);
            clg_tensor *tz = clg_test_tensor(ctx, (clg_shape){N, K, cases[c].H, cases[c].W}, z);
            clg_test_poison_nan(dz, n);
            clg_tensor *tdz = clg_test_tensor(ctx, tz->shape, dz);
            const float *wp = weighted ? w : NULL;
            CLG_ASSERT_STATUS(clg_pixel_xent_forward(ctx, tz, lab, N * HW, wp, &got, &got_c,
                                                     &got_l), CLG_OK);
            CLG_ASSERT_STATUS(clg_pixel_xent_backward(ctx, tz, lab, N * HW, wp, 1.0f / (float)N,
                                                      tdz), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(tdz, dz, n), CLG_OK);
            for (size_t i = 0; i < N; i++)
                for (size_t p = 0; p < HW; p++) {
                    int l = lab[i * HW + p];
                    const float *zs = z + i * K * HW;
                    double lw = l < 0 ? 0 : weighted ? w[l] : 1.0, loss = 0;
                    if (l >= 0) {
                        loss = ref_pixel(zs, K, HW, p, l, q);
                        size_t arg = 0;
                        for (size_t k = 1; k < K; k++)
                            arg = zs[k * HW + p] > zs[arg * HW + p] ? k : arg;
                        correct += arg == (size_t)l;
                        labelled++;
                    }
                    mean += lw * loss / (double)HW / (double)N;
                    for (size_t k = 0; k < K; k++) {
                        double want = l < 0 ? 0 : lw * (q[k] - (k == (size_t)l)) / HW / N;
                        float have = dz[(i * K + k) * HW + p];
                        /* q - 1 cancels: float's rounding of terms of size 1, scaled */
                        if (!(fabs(have - want) <= 1e-6 * fabs(want) + 2e-7 * lw / HW / N))
                            fail_msg("N=%zu K=%zu HW=%zu w=%d: dz[%zu][%zu][%zu] = %.8g, "
                                     "expected %.8g", N, K, HW, weighted, i, k, p, have, want);
                    }
                }
            assert_int_equal(got_c, correct);
            assert_int_equal(got_l, labelled);
            /* each pixel's loss to a few roundings, summed over HW pixels in a tree */
            if (fabs(got - mean) > 1e-5 * (1 + log2((double)HW)) * fabs(mean))
                fail_msg("N=%zu K=%zu HW=%zu: loss %.9g, expected %.9g", N, K, HW, got, mean);
            clg_tensor_destroy(tz);
            clg_tensor_destroy(tdz);
            free(z), free(dz), free(lab);
        }
}

/* d(mean loss)/dz from the backward pass against central differences of the forward pass. */
static void losses_match_finite_differences(void **state)
{
    (void)state;
    enum { N = 2, K = 3, H = 3, W = 4, HW = H * W, n = N * K * HW };
    float z[n], g[n], t[n], w[K] = {0.5f, 2.0f, 1.0f};
    int32_t lab[N * HW];
    clg_test_fill_uniform(&rng, z, n, -2, 2);
    clg_test_fill_uniform(&rng, t, n, -2, 2);
    for (size_t i = 0; i < N * HW; i++)
        lab[i] = i % 7 == 3 ? CLG_LABEL_IGNORE : (int32_t)(clg_test_rng_next(&rng) % K);
    clg_tensor *tz = clg_test_tensor(ctx, (clg_shape){N, K, H, W}, z);
    clg_tensor *tg = clg_test_tensor(ctx, tz->shape, NULL);
    for (int kind = 0; kind < 3; kind++) { /* pixels, MSE, L1 */
        if (kind == 0)
            CLG_ASSERT_STATUS(clg_pixel_xent_backward(ctx, tz, lab, N * HW, w, 1.0f / N, tg), CLG_OK);
        else
            CLG_ASSERT_STATUS(clg_regression_backward(ctx, (clg_regression_loss)(kind - 1), tz, t,
                                                      n, 1.0f / N, tg), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(tg, g, n), CLG_OK);
        for (int probe = 0; probe < 8; probe++) {
            size_t i = (size_t)(clg_test_rng_next(&rng) % n);
            double f[2];
            const float eps = 2e-3f, keep = z[i];
            if (kind == 2 && fabs(z[i] - t[i]) < 4 * eps)
                continue; /* L1's kink */
            for (int s = 0; s < 2; s++) {
                z[i] = keep + (s ? -eps : eps);
                CLG_ASSERT_STATUS(clg_tensor_upload(tz, z, n), CLG_OK);
                if (kind == 0)
                    CLG_ASSERT_STATUS(clg_pixel_xent_forward(ctx, tz, lab, N * HW, w, &f[s], NULL,
                                                             NULL), CLG_OK);
                else
                    CLG_ASSERT_STATUS(clg_regression_forward(ctx, (clg_regression_loss)(kind - 1),
                                                             tz, t, n, &f[s]), CLG_OK);
            }
            z[i] = keep;
            CLG_ASSERT_STATUS(clg_tensor_upload(tz, z, n), CLG_OK);
            double fd = (f[0] - f[1]) / (2.0 * eps);
            /* float losses of ~1: ~1e-7 / eps of noise in the quotient, and curvature */
            if (fabs(fd - g[i]) > 2e-4 + 0.01 * fabs(fd))
                fail_msg("loss %d element %zu: backward %g, finite differences %g", kind, i,
                         (double)g[i], fd);
        }
    }
    clg_tensor_destroy(tz);
    clg_tensor_destroy(tg);
}

static void bad_targets_are_refused(void **state)
{
    (void)state;
    float z[2 * 3 * 4] = {0}, w[3] = {1, -1, 1};
    int32_t lab[8] = {0, 1, 2, 3, 0, 1, 2, 0};
    double loss;
    clg_tensor *tz = clg_test_tensor(ctx, (clg_shape){2, 3, 2, 2}, z);
    CLG_ASSERT_STATUS(clg_pixel_xent_forward(ctx, tz, lab, 8, NULL, &loss, NULL, NULL),
                      CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "label 3 at pixel 3"));
    lab[3] = CLG_LABEL_IGNORE;
    CLG_ASSERT_STATUS(clg_pixel_xent_forward(ctx, tz, lab, 7, NULL, &loss, NULL, NULL),
                      CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_pixel_xent_forward(ctx, tz, lab, 8, w, &loss, NULL, NULL),
                      CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_pixel_xent_forward(ctx, tz, lab, 8, NULL, &loss, NULL, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_regression_forward(ctx, CLG_REGRESSION_MSE, tz, z, 23, &loss),
                      CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_regression_forward(ctx, (clg_regression_loss)7, tz, z, 24, &loss),
                      CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(tz);
}

/* --- output layers in networks --- */

static clg_net *parse_ok(const char *text)
{
    clg_net *net = NULL;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, text, &net), CLG_OK);
    return net;
}

static void output_layers_parse_and_round_trip(void **state)
{
    (void)state;
    const char *seg = "input 8x8x1\nconv 3x3x3 pad=1\npixelsoftmax weights=1,2.5,0.25\n";
    clg_net *net = parse_ok(seg);
    char text[1024];
    CLG_ASSERT_STATUS(clg_net_text(net, text, sizeof text, NULL), CLG_OK);
    assert_non_null(strstr(text, "pixelsoftmax weights=1,2.5,0.25"));
    assert_int_equal(clg_net_task(net), CLG_TASK_SEGMENTATION);
    assert_int_equal(clg_net_class_count(net), 3);
    assert_int_equal(clg_net_output_count(net), 3 * 64);
    const float w2[3] = {0.5f, 0.5f, 4.0f}, w4[2] = {1, 1};
    CLG_ASSERT_STATUS(clg_net_set_class_weights(net, w2, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_text(net, text, sizeof text, NULL), CLG_OK);
    assert_non_null(strstr(text, "pixelsoftmax weights=0.5,0.5,4"));
    CLG_ASSERT_STATUS(clg_net_set_class_weights(net, w4, 2), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_set_class_weights(net, NULL, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_text(net, text, sizeof text, NULL), CLG_OK);
    assert_null(strstr(text, "weights="));
    clg_net_destroy(net);
    net = parse_ok("input 8x8x1\nconv 3x3x2 pad=1\nregression loss=l1\n");
    CLG_ASSERT_STATUS(clg_net_text(net, text, sizeof text, NULL), CLG_OK);
    assert_non_null(strstr(text, "regression loss=l1"));
    assert_int_equal(clg_net_task(net), CLG_TASK_REGRESSION);
    assert_int_equal(clg_net_class_count(net), 0);
    clg_net_destroy(net);
    /* both export to ONNX (their outputs against ONNX Runtime's: tools/peers/dense_quality.py;
     * here: written, of a sane size) */
    char onnx[600];
    snprintf(onnx, sizeof onnx, "%s/reg.onnx", dir);
    net = parse_ok("input 8x8x1\nconv 3x3x2 pad=1\nregression\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, onnx), CLG_OK);
    struct stat sb;
    assert_true(stat(onnx, &sb) == 0 && sb.st_size > 100);
    clg_net_destroy(net);
    net = parse_ok(seg);
    CLG_ASSERT_STATUS(clg_net_init(net, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, onnx), CLG_OK);
    clg_net_destroy(net);
    clg_net *bad = NULL;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nconv 3x3x4 pad=1\npixelsoftmax weights=1,2\n",
                                    &bad), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_last_error(), "2 class weights for 4 classes"));
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nconv 3x3x1 pad=1\npixelsoftmax\n", &bad),
                      CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nregression loss=l3\n", &bad),
                      CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nconv 1x1x2\npixelsoftmax weights=1,-2\n",
                                    &bad), CLG_ERR_INVALID_ARG);
}

/* Every parameter's gradient through the net's loss against finite differences. */
static void check_net_gradients(const char *name, const char *text, const void *targets)
{
    enum { N = 3 };
    clg_net *net = parse_ok(text);
    CLG_ASSERT_STATUS(clg_net_init(net, clg_test_rng_next(&rng)), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_reserve(net, N), CLG_OK);
    size_t in = clg_shape_numel(clg_net_input_shape(net));
    float *x = malloc(N * in * sizeof *x);
    clg_test_fill_uniform(&rng, x, N * in, -1, 1);
    CLG_ASSERT_STATUS(clg__net_upload(net, x, N), CLG_OK);
    double base;
    CLG_ASSERT_STATUS(clg__net_forward(net, 1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_loss(net, targets, &base, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_backward(net, targets, 1.0f / N, 1), CLG_OK);
    clg__param_ref refs[16];
    size_t nrefs = clg__net_params(net, refs, 16);
    for (size_t r = 0; r < nrefs; r++) {
        size_t n = clg_tensor_numel(refs[r].param);
        float *w = malloc(n * sizeof *w), *g = malloc(n * sizeof *g);
        CLG_ASSERT_STATUS(clg_tensor_download(refs[r].param, w, n), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(refs[r].grad, g, n), CLG_OK);
        for (int k = 0; k < 3; k++) {
            size_t i = (size_t)(clg_test_rng_next(&rng) % n);
            double f[2];
            const float eps = 2e-3f, keep = w[i];
            for (int s = 0; s < 2; s++) {
                w[i] = keep + (s ? -eps : eps);
                CLG_ASSERT_STATUS(clg_tensor_upload(refs[r].param, w, n), CLG_OK);
                CLG_ASSERT_STATUS(clg__net_forward(net, 1, 1), CLG_OK);
                CLG_ASSERT_STATUS(clg__net_loss(net, targets, &f[s], NULL), CLG_OK);
            }
            w[i] = keep;
            CLG_ASSERT_STATUS(clg_tensor_upload(refs[r].param, w, n), CLG_OK);
            double fd = (f[0] - f[1]) / (2.0 * eps);
            if (fabs(fd - g[i]) > 1e-3 + 0.02 * fabs(fd)) /* as test_nn's bound */
                fail_msg("%s: param %zu element %zu: backward %g, finite differences %g", name,
                         r, i, (double)g[i], fd);
        }
        free(w);
        free(g);
    }
    free(x);
    clg_net_destroy(net);
}

static void output_layers_gradient_matches_finite_differences(void **state)
{
    (void)state;
    enum { N = 3, HW = 36 };
    int32_t lab[N * HW];
    float t[N * 2 * HW], far[N * 2 * HW];
    for (size_t i = 0; i < N * HW; i++)
        lab[i] = i % 11 == 5 ? CLG_LABEL_IGNORE : (int32_t)(clg_test_rng_next(&rng) % 3);
    clg_test_fill_uniform(&rng, t, N * 2 * HW, -1, 1);
    for (size_t i = 0; i < N * 2 * HW; i++) /* L1: no output crosses its target (a kink) */
        far[i] = t[i] + 20.0f;
    /* encoder-decoder: down by a strided conv, up by a transposed one and by upsampling */
    check_net_gradients("segmenter", "input 6x6x2\nconv 3x3x4 pad=1 stride=2\ntanh\n"
                        "convt 2x2x4 stride=2\nelu\nconv 3x3x3 pad=1\n"
                        "pixelsoftmax weights=0.5,1,2\n", lab);
    check_net_gradients("U-Net-like regression", "input 6x6x2\nconv 3x3x4 pad=1 name=a\navgpool 2x2\n"
                        "upsample 2 mode=bilinear\nconcat a\nconv 3x3x2 pad=1\nregression\n", t);
    check_net_gradients("L1 regression", "input 6x6x2\nconv 3x3x2 pad=1\nregression loss=l1\n", far);
}

/* --- stores --- */

static void memory_targets_and_augmentation_move_together(void **state)
{
    (void)state;
    enum { N = 4, H = 5, W = 7 };
    float x[N * H * W], back[N * H * W], vt[N * H * W];
    int32_t lab[N * H * W], got[N * H * W];
    for (size_t i = 0; i < N * H * W; i++) { /* the label is the pixel's value, coded */
        lab[i] = (int32_t)(i % 5);
        x[i] = (float)lab[i];
    }
    clg_datastore *ds, *aug, *vals, *vaug;
    clg_shape sample = {1, 1, H, W};
    CLG_ASSERT_STATUS(clg_datastore_from_memory_targets(x, lab, N, sample, CLG_TARGET_PIXELS,
                                                        sample, 5, &ds), CLG_OK);
    clg_shape ts;
    assert_int_equal(clg_datastore_target(ds, &ts), CLG_TARGET_PIXELS);
    assert_int_equal(ts.h * ts.w, H * W);
    clg_augment_options o = clg_augment_options_default();
    o.reflection_x = o.reflection_y = 1;
    o.crop = CLG_CROP_RANDOM;
    o.height = 4, o.width = 6;
    o.translation_x[0] = -1, o.translation_x[1] = 1;
    o.rotation[0] = -30, o.rotation[1] = 30;
    o.seed = 3;
    CLG_ASSERT_STATUS(clg_datastore_augment(ds, &o, &aug), CLG_OK);
    assert_int_equal(clg_datastore_target(aug, &ts), CLG_TARGET_PIXELS);
    assert_int_equal(ts.h, 4);
    size_t idx[N] = {0, 1, 2, 3};
    CLG_ASSERT_STATUS(clg_datastore_read(aug, idx, N, back, got), CLG_OK);
    /* where a label is not ignored, it is the nearest input pixel's: the image's bilinear
     * value there is within one label step of it (rotations blend neighbours) */
    size_t kept = 0;
    for (size_t i = 0; i < N * 4 * 6; i++) {
        if (got[i] == CLG_LABEL_IGNORE)
            continue;
        kept++;
        if (fabs(back[i] - (float)got[i]) > 4.0f)
            fail_msg("pixel %zu: label %d beside value %g", i, got[i], (double)back[i]);
    }
    assert_true(kept > N * 4 * 6 / 2);
    /* whole-pixel moves only (mirrors, crops): labels and values agree exactly */
    o.rotation[0] = o.rotation[1] = 0;
    o.translation_x[0] = o.translation_x[1] = 0;
    clg_datastore_destroy(aug);
    CLG_ASSERT_STATUS(clg_datastore_augment(ds, &o, &aug), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(aug, idx, N, back, got), CLG_OK);
    for (size_t i = 0; i < N * 4 * 6; i++)
        assert_true(back[i] == (float)got[i]);
    /* a target image moves with its image the same way */
    for (size_t i = 0; i < N * H * W; i++)
        vt[i] = 2.0f * x[i] + 1.0f;
    CLG_ASSERT_STATUS(clg_datastore_from_memory_targets(x, vt, N, sample, CLG_TARGET_VALUES,
                                                        sample, 0, &vals), CLG_OK);
    o.rotation[0] = -20, o.rotation[1] = 20;
    CLG_ASSERT_STATUS(clg_datastore_augment(vals, &o, &vaug), CLG_OK);
    float moved[N * 4 * 6];
    CLG_ASSERT_STATUS(clg_datastore_read(vaug, idx, N, back, moved), CLG_OK);
    for (size_t i = 0; i < N * 4 * 6; i++)
        if (fabs(moved[i] - (2.0f * back[i] + 1.0f)) > 1e-5f &&
            o.fill == 0.0f && fabs(moved[i] - 2.0f * back[i]) > 1.0f + 1e-5f)
            fail_msg("value %zu: target %g, image %g", i, (double)moved[i], (double)back[i]);
    /* bad labels are refused with the sample named */
    lab[40] = 9;
    clg_datastore *bad = NULL;
    CLG_ASSERT_STATUS(clg_datastore_from_memory_targets(x, lab, N, sample, CLG_TARGET_PIXELS,
                                                        sample, 5, &bad), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "label 9 of sample 1"));
    clg_datastore_destroy(vaug);
    clg_datastore_destroy(vals);
    clg_datastore_destroy(aug);
    clg_datastore_destroy(ds);
}

static void denoising_patches_are_noisy_and_reproducible(void **state)
{
    (void)state;
    enum { N = 6, H = 12, W = 10 };
    float x[N * H * W];
    int32_t lab[N] = {0, 1, 0, 1, 0, 1};
    clg_test_fill_uniform(&rng, x, N * H * W, 0, 1);
    clg_datastore *ds, *dn, *dc;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(x, lab, N, (clg_shape){1, 1, H, W}, 2, &ds), CLG_OK);
    clg_denoise_options o = clg_denoise_options_default();
    o.patch_h = 5, o.patch_w = 4, o.patches_per_image = 3;
    o.sigma[0] = 0.05f, o.sigma[1] = 0.2f;
    o.seed = 11;
    CLG_ASSERT_STATUS(clg_datastore_denoising(ds, &o, &dn), CLG_OK);
    o.target = CLG_DENOISE_CLEAN;
    CLG_ASSERT_STATUS(clg_datastore_denoising(ds, &o, &dc), CLG_OK);
    assert_int_equal(clg_datastore_size(dn), 3 * N);
    clg_shape ts;
    assert_int_equal(clg_datastore_target(dn, &ts), CLG_TARGET_VALUES);
    assert_int_equal(ts.h * 10 + ts.w, 54);
    enum { P = 20 };
    float img[P], noise[P], img2[P], clean[P];
    double sq = 0;
    size_t count = 0;
    for (size_t i = 0; i < 3 * N; i++) {
        CLG_ASSERT_STATUS(clg_datastore_read(dn, &i, 1, img, noise), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_read(dc, &i, 1, img2, clean), CLG_OK);
        assert_memory_equal(img, img2, sizeof img); /* the same draws, another target */
        /* noisy = clean + noise, and the clean patch is a window of image i / 3 */
        const float *src = x + (i / 3) * H * W;
        int found = 0;
        for (size_t top = 0; top + 5 <= H && !found; top++)
            for (size_t left = 0; left + 4 <= W && !found; left++) {
                int same = 1;
                for (size_t p = 0; p < P && same; p++)
                    same = src[(top + p / 4) * W + left + p % 4] == clean[p];
                found = same;
            }
        assert_true(found);
        for (size_t p = 0; p < P; p++) {
            assert_true(fabs(img[p] - (clean[p] + noise[p])) < 1e-6f);
            sq += (double)noise[p] * noise[p];
            count++;
        }
    }
    double sd = sqrt(sq / (double)count); /* levels uniform in [0.05, 0.2] */
    assert_true(sd > 0.08 && sd < 0.19);
    /* another epoch, other draws; the same epoch again, the same ones */
    size_t i0 = 0;
    float again[P];
    CLG_ASSERT_STATUS(clg_datastore_read(dn, &i0, 1, img, noise), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_set_epoch(dn, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(dn, &i0, 1, again, noise), CLG_OK);
    assert_true(memcmp(img, again, sizeof img) != 0);
    CLG_ASSERT_STATUS(clg_datastore_set_epoch(dn, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(dn, &i0, 1, again, noise), CLG_OK);
    assert_memory_equal(img, again, sizeof img);
    /* a patch larger than the images */
    clg_datastore *bad = NULL;
    o.patch_h = 13;
    CLG_ASSERT_STATUS(clg_datastore_denoising(ds, &o, &bad), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "13x4 do not fit the images' 12x10"));
    clg_datastore_destroy(dc);
    clg_datastore_destroy(dn);
    clg_datastore_destroy(ds);
}

static void write_gray(const char *path, int w, int h, const unsigned char *px)
{
    assert_true(stbi_write_png(path, w, h, 1, px, w) != 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void label_and_target_folders(void **state)
{
    (void)state;
    char img[512], lab[512], tgt[512], p[600], classes[512], csv[512];
    snprintf(img, sizeof img, "%s/images", dir);
    snprintf(lab, sizeof lab, "%s/labels", dir);
    snprintf(tgt, sizeof tgt, "%s/targets", dir);
    mkdir(img, 0755), mkdir(lab, 0755), mkdir(tgt, 0755);
    snprintf(p, sizeof p, "%s/sub", img);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sub", lab);
    mkdir(p, 0755);
    unsigned char px[6 * 4], lx[6 * 4];
    const char *names[3] = {"a.png", "b.png", "sub/c.png"};
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < 24; i++) {
            px[i] = (unsigned char)(10 * i + f);
            lx[i] = (unsigned char)(i % 3 == 0 ? 0 : i % 3 == 1 ? 128 : 255);
        }
        if (f == 2)
            lx[5] = 77; /* not in the list */
        snprintf(p, sizeof p, "%s/%s", img, names[f]);
        write_gray(p, 6, 4, px);
        snprintf(p, sizeof p, "%s/%s", lab, names[f]);
        write_gray(p, 6, 4, lx);
        if (f < 2) {
            snprintf(p, sizeof p, "%s/%s", tgt, names[f]);
            write_gray(p, 6, 4, lx);
        }
    }
    snprintf(classes, sizeof classes, "%s/classes.txt", dir);
    write_text(classes, "# name value\nsky 0\nroad 128\ncar 255\n");
    clg_pixel_label_options o = clg_pixel_label_options_default();
    clg_datastore *ds = NULL;
    CLG_ASSERT_STATUS(clg_datastore_open_pixel_labels(img, lab, classes, &o, &ds), CLG_OK);
    assert_int_equal(clg_datastore_size(ds), 3);
    assert_int_equal(clg_datastore_class_count(ds), 3);
    assert_string_equal(clg_datastore_class_name(ds, 1), "road");
    float x[24];
    int32_t l[24];
    size_t i = 0;
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, x, l), CLG_OK);
    for (int k = 0; k < 24; k++) {
        assert_int_equal(l[k], k % 3);
        assert_true(fabs(x[k] - (10 * k) / 255.0f) < 1e-6f);
    }
    i = 2; /* an unlisted value fails, naming the file and pixel, or is ignored */
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, x, l), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_last_error(), "sub/c.png: pixel (0, 5) has value 77"));
    clg_datastore_destroy(ds);
    o.ignore_unlisted = 1;
    o.images.height = 8, o.images.width = 12; /* doubled: labels by nearest pixel */
    CLG_ASSERT_STATUS(clg_datastore_open_pixel_labels(img, lab, classes, &o, &ds), CLG_OK);
    int32_t big[96];
    float bx[96];
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, bx, big), CLG_OK);
    assert_int_equal(big[0], 0);
    assert_int_equal(big[10], CLG_LABEL_IGNORE); /* (0, 10) comes from (0, 5) */
    assert_int_equal(big[12 * 2 + 3], 1);        /* (2, 3) from (1, 1): 7 % 3 */
    float wts[3];
    CLG_ASSERT_STATUS(clg_datastore_class_weights(ds, 1, wts, 3), CLG_OK);
    assert_true(wts[0] > 0 && fabs(wts[1] - 1.0f) < 0.2f);
    clg_datastore_destroy(ds);
    /* a label image of another size, a missing label file, a bad class list */
    snprintf(p, sizeof p, "%s/b.png", lab);
    write_gray(p, 5, 4, lx);
    o.images.height = o.images.width = 0;
    CLG_ASSERT_STATUS(clg_datastore_open_pixel_labels(img, lab, classes, &o, &ds), CLG_OK);
    i = 1;
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, x, l), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_last_error(), "is 4x5, its image"));
    clg_datastore_destroy(ds);
    snprintf(p, sizeof p, "%s/sub/c.png", lab);
    remove(p);
    ds = NULL;
    CLG_ASSERT_STATUS(clg_datastore_open_pixel_labels(img, lab, classes, &o, &ds),
                      CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "has no file for"));
    assert_null(ds);
    write_text(classes, "sky 0\nroad 0\n");
    CLG_ASSERT_STATUS(clg_datastore_open_pixel_labels(img, tgt, classes, &o, &ds),
                      CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "another class's too"));
    /* paired images: the target folder lacks sub/c */
    clg_image_folder_options fo = clg_image_folder_options_default();
    CLG_ASSERT_STATUS(clg_datastore_open_paired_images(img, tgt, &fo, 0, &ds),
                      CLG_ERR_INVALID_ARG);
    snprintf(p, sizeof p, "%s/sub", tgt);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sub/c.jpg", tgt); /* another extension still pairs */
    write_gray(p, 6, 4, lx); /* PNG bytes behind the name: the decoder goes by content */
    CLG_ASSERT_STATUS(clg_datastore_open_paired_images(img, tgt, &fo, 0, &ds), CLG_OK);
    float tv[24];
    i = 1;
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, x, tv), CLG_OK);
    assert_true(fabs(tv[1] - 128 / 255.0f) < 1e-6f);
    clg_datastore_destroy(ds);
    /* values from a CSV, with a header; a bad row is named */
    snprintf(csv, sizeof csv, "%s/values.csv", dir);
    write_text(csv, "file,x,y\na.png,1.5,-2\nsub/c.png,3,4e-1\n");
    CLG_ASSERT_STATUS(clg_datastore_open_image_values(img, csv, &fo, &ds), CLG_OK);
    clg_shape ts;
    assert_int_equal(clg_datastore_target(ds, &ts), CLG_TARGET_VALUES);
    assert_int_equal(ts.c, 2);
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, x, tv), CLG_OK);
    assert_true(tv[0] == 3.0f && tv[1] == 0.4f);
    clg_datastore_destroy(ds);
    write_text(csv, "a.png,1\nb.png,1,2\n");
    CLG_ASSERT_STATUS(clg_datastore_open_image_values(img, csv, &fo, &ds), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_last_error(), "line 2: 2 values"));
}

/* --- measures --- */

static void measures_match_hand_computed_values(void **state)
{
    (void)state;
    /* 3 classes: rows true, columns predicted; class 2 never occurs */
    const size_t counts[9] = {8, 2, 0, 1, 4, 5, 0, 0, 0};
    clg_segmentation_metrics m;
    double acc[3], iou[3];
    CLG_ASSERT_STATUS(clg_segmentation_metrics_from(counts, 3, &m, acc, iou), CLG_OK);
    assert_true(fabs(m.global_accuracy - 12.0 / 20) < 1e-12);
    assert_true(fabs(acc[0] - 0.8) < 1e-12 && fabs(acc[1] - 0.4) < 1e-12 && isnan(acc[2]));
    assert_true(fabs(iou[0] - 8.0 / 11) < 1e-12 && fabs(iou[1] - 4.0 / 12) < 1e-12);
    assert_true(fabs(m.mean_iou - (8.0 / 11 + 4.0 / 12) / 2) < 1e-12);
    assert_true(fabs(m.weighted_iou - (10 * 8.0 / 11 + 10 * 4.0 / 12) / 20) < 1e-12);
    assert_int_equal(m.classes_present, 2);
    float a[121], b[121];
    for (int i = 0; i < 121; i++)
        a[i] = 0.5f, b[i] = 0.6f;
    assert_true(fabs(clg_psnr(a, b, 121, 1.0) - 20.0) < 1e-5); /* MSE 0.01 */
    assert_true(isinf(clg_psnr(a, a, 121, 1.0)));
    /* flat images: only the means' term, (2 ab + c1) / (a^2 + b^2 + c1) */
    double c1 = 1e-4, want = (2 * 0.5 * 0.6 + c1) / (0.25 + 0.36 + c1);
    assert_true(fabs(clg_ssim(a, b, 1, 11, 11, 1.0) - want) < 1e-6);
    clg_test_fill_uniform(&rng, a, 121, 0, 1);
    assert_true(fabs(clg_ssim(a, a, 1, 11, 11, 1.0) - 1.0) < 1e-9);
    for (int i = 0; i < 121; i++)
        b[i] = 1.0f - a[i]; /* anticorrelated: negative */
    assert_true(clg_ssim(a, b, 1, 11, 11, 1.0) < 0);
}

/* --- training and evaluation --- */

static void nets_learn_label_maps_and_images(void **state)
{
    (void)state;
    enum { N = 32, S = 8 };
    /* segmentation: class 1 where a pixel is bright, 2 where it is dark, 0 between; the
     * borders unlabelled */
    float x[N * S * S];
    int32_t lab[N * S * S];
    clg_test_fill_uniform(&rng, x, N * S * S, 0, 1);
    for (size_t i = 0; i < N * S * S; i++) {
        size_t r = i / S % S, c = i % S;
        lab[i] = r == 0 || c == 0 ? CLG_LABEL_IGNORE : x[i] > 0.66f ? 1 : x[i] < 0.33f ? 2 : 0;
    }
    clg_shape sample = {1, 1, S, S};
    clg_datastore *seg;
    CLG_ASSERT_STATUS(clg_datastore_from_memory_targets(x, lab, N, sample, CLG_TARGET_PIXELS,
                                                        sample, 3, &seg), CLG_OK);
    clg_net *net = parse_ok("input 8x8x1\nconv 1x1x8\nrelu\nconv 1x1x3\npixelsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 4), CLG_OK);
    double loss0, acc0, loss1, acc1;
    CLG_ASSERT_STATUS(clg_net_evaluate(net, seg, 8, &loss0, &acc0), CLG_OK);
    clg_train_options o = clg_train_options_default();
    o.mini_batch_size = 8;
    o.max_epochs = 30;
    o.solver = CLG_SOLVER_ADAM;
    o.initial_learn_rate = 0.05f;
    clg_train_report rep;
    CLG_ASSERT_STATUS(clg_train(net, seg, NULL, &o, &rep), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_evaluate(net, seg, 8, &loss1, &acc1), CLG_OK);
    print_message("segmentation: loss %.4f -> %.4f, pixel accuracy %.3f -> %.3f\n", loss0, loss1,
                  acc0, acc1);
    assert_true(loss1 < 0.5 * loss0 && acc1 > 0.9);
    size_t counts[9];
    CLG_ASSERT_STATUS(clg_net_evaluate_confusion(net, seg, 5, NULL, NULL, counts), CLG_OK);
    size_t total = 0, labelled = 0;
    for (int k = 0; k < 9; k++)
        total += counts[k];
    for (size_t i = 0; i < N * S * S; i++)
        labelled += lab[i] != CLG_LABEL_IGNORE;
    assert_int_equal(total, labelled); /* a count per labelled pixel */
    float *probs = malloc(2 * 3 * S * S * sizeof *probs);
    CLG_ASSERT_STATUS(clg_net_predict(net, x, 2, probs), CLG_OK);
    for (size_t p = 0; p < S * S; p++) /* a distribution over the classes at every pixel */
        assert_true(fabs(probs[p] + probs[S * S + p] + probs[2 * S * S + p] - 1.0) < 1e-5);
    /* the same net on whole images of another size (its convolutions are 1x1: a tiled image
     * gives the tiles' probabilities) */
    clg_net *big = NULL;
    CLG_ASSERT_STATUS(clg_net_resized(net, 16, 8, &big), CLG_OK); /* two samples, one on top */
    float *pbig = malloc(3 * 16 * S * sizeof *pbig);
    CLG_ASSERT_STATUS(clg_net_predict(big, x, 1, pbig), CLG_OK);
    for (size_t k = 0; k < 3; k++)
        for (size_t p = 0; p < 2 * S * S; p++)
            assert_true(fabs(pbig[k * 2 * S * S + p] - probs[(p / (S * S)) * 3 * S * S +
                                                              k * S * S + p % (S * S)]) < 1e-6);
    assert_string_equal(clg_net_class_name(big, 2), clg_net_class_name(net, 2));
    clg_net_destroy(big);
    free(pbig);
    free(probs);
    clg_net *fc = parse_ok("input 8x8x1\nconv 1x1x3\nfc 2\nsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_resized(fc, 16, 16, &big), CLG_ERR_SHAPE);
    clg_net_destroy(fc);
    /* segmentation metrics from the confusion matrix */
    clg_segmentation_metrics sm;
    double cacc[3], ciou[3];
    CLG_ASSERT_STATUS(clg_segmentation_metrics_from(counts, 3, &sm, cacc, ciou), CLG_OK);
    assert_true(fabs(sm.global_accuracy - acc1) < 1e-12); /* evaluate's pixel accuracy */
    assert_true(sm.mean_iou > 0.8 && sm.mean_iou <= sm.mean_accuracy + 1e-12);
    /* the wrong kind of data is refused, naming both */
    clg_net *reg = parse_ok("input 8x8x1\nconv 3x3x1 pad=1\nregression\n");
    CLG_ASSERT_STATUS(clg_train(reg, seg, NULL, &o, NULL), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "targets are a class per pixel"));
    /* denoising by residual learning: the net predicts the noise */
    clg_datastore *clean, *noisy;
    int32_t none[N] = {0};
    CLG_ASSERT_STATUS(clg_datastore_from_memory(x, none, N, sample, 2, &clean), CLG_OK);
    clg_denoise_options d = clg_denoise_options_default();
    d.sigma[0] = d.sigma[1] = 0.2f;
    CLG_ASSERT_STATUS(clg_datastore_denoising(clean, &d, &noisy), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(reg, 2), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_evaluate(reg, noisy, 8, &loss0, &acc0), CLG_OK);
    o.max_epochs = 20;
    o.initial_learn_rate = 0.01f;
    CLG_ASSERT_STATUS(clg_train(reg, noisy, NULL, &o, &rep), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_evaluate(reg, noisy, 8, &loss1, &acc1), CLG_OK);
    print_message("denoising: loss %.5f -> %.5f, RMSE %.4f -> %.4f (noise 0.2)\n", loss0, loss1,
                  acc0, acc1);
    assert_true(fabs(acc1 - sqrt(2 * loss1)) < 1e-9); /* the RMSE of half the MSE */
    assert_true(acc1 < 0.2 && loss1 < 0.8 * loss0);
    assert_true(rep.accuracy > 0 && rep.accuracy < 0.25); /* the last batch's RMSE */
    clg_restoration_quality q;
    CLG_ASSERT_STATUS(clg_net_evaluate_restoration(reg, noisy, 7, 1, &q), CLG_OK);
    print_message("denoised PSNR %.2f dB SSIM %.3f; noisy %.2f dB %.3f\n", q.psnr, q.ssim,
                  q.input_psnr, q.input_ssim);
    assert_int_equal(q.images, N);
    assert_true(q.psnr > q.input_psnr + 1.0 && fabs(q.input_psnr - 14.0) < 0.5); /* sigma 0.2 */
    clg_datastore_destroy(noisy);
    clg_datastore_destroy(clean);
    clg_net_destroy(reg);
    clg_net_destroy(net);
    clg_datastore_destroy(seg);
}

/* A denoiser stopped after an epoch and resumed from its checkpoint ends with the weights of
 * one run through, bit for bit (the noise of each epoch drawn again as it was), validating on
 * held-out noisy images (the RMSE as its figure). */
static void denoisers_resume_exactly(void **state)
{
    (void)state;
    enum { N = 48, S = 8 };
    float x[N * S * S];
    int32_t none[N] = {0};
    clg_test_fill_uniform(&rng, x, N * S * S, 0, 1);
    clg_datastore *clean, *noisy, *fit, *val;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(x, none, N, (clg_shape){1, 1, S, S}, 2, &clean),
                      CLG_OK);
    clg_denoise_options d = clg_denoise_options_default();
    d.patch_h = d.patch_w = 6, d.patches_per_image = 2;
    CLG_ASSERT_STATUS(clg_datastore_denoising(clean, &d, &noisy), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_subset(noisy, 0, 80, &fit), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_subset(noisy, 80, 16, &val), CLG_OK);
    const char *text = "input 6x6x1\nconv 3x3x4 pad=1\nbatchnorm\nrelu\nconv 3x3x1 pad=1\n"
                       "regression\n";
    clg_train_options o = clg_train_options_default();
    o.mini_batch_size = 16;
    o.max_epochs = 3;
    o.solver = CLG_SOLVER_ADAM;
    o.initial_learn_rate = 0.01f;
    o.validation_frequency = 2;
    clg_net *whole = parse_ok(text);
    CLG_ASSERT_STATUS(clg_net_init(whole, 5), CLG_OK);
    clg_train_report rep;
    CLG_ASSERT_STATUS(clg_train(whole, fit, val, &o, &rep), CLG_OK);
    assert_true(rep.has_validation && rep.val_accuracy > 0 && rep.val_accuracy < 1);
    size_t n, m;
    float *ref = clg_test_learnables(whole, &n);
    char ckdir[600];
    snprintf(ckdir, sizeof ckdir, "%s/ck", dir);
    clg_train_options first = o;
    first.max_epochs = 1;
    first.checkpoint_path = ckdir;
    clg_net *part = parse_ok(text), *resumed = NULL;
    CLG_ASSERT_STATUS(clg_net_init(part, 5), CLG_OK);
    CLG_ASSERT_STATUS(clg_train(part, fit, val, &first, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_train_resume(ctx, ckdir, fit, val, &o, &resumed, &rep), CLG_OK);
    float *got = clg_test_learnables(resumed, &m);
    assert_int_equal(n, m);
    if (memcmp(got, ref, n * sizeof *got))
        fail_msg("resumed weights differ (max |diff| %g)", clg_test_max_abs_diff(got, ref, n));
    free(got), free(ref);
    clg_net_destroy(resumed);
    clg_net_destroy(part);
    clg_net_destroy(whole);
    clg_datastore_destroy(val);
    clg_datastore_destroy(fit);
    clg_datastore_destroy(noisy);
    clg_datastore_destroy(clean);
}

/* Two segmenters trained at once (clg_experiments_run) on one shared view of label maps:
 * each as alone, bit for bit. */
static void segmenters_in_experiments(void **state)
{
    (void)state;
    enum { N = 32, S = 8 };
    float x[N * S * S];
    int32_t lab[N * S * S];
    clg_test_fill_uniform(&rng, x, N * S * S, 0, 1);
    for (size_t i = 0; i < N * S * S; i++)
        lab[i] = i % 9 == 4 ? CLG_LABEL_IGNORE : x[i] > 0.5f;
    clg_shape plane = {1, 1, S, S};
    clg_datastore *seg, *shared;
    CLG_ASSERT_STATUS(clg_datastore_from_memory_targets(x, lab, N, plane, CLG_TARGET_PIXELS, plane,
                                                        2, &seg), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_shared(seg, 2, 0, &shared), CLG_OK);
    clg_experiment e[2];
    for (int i = 0; i < 2; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].name = i ? "b" : "a";
        e[i].net_text = "input 8x8x1\nconv 3x3x4 pad=1\nrelu\nconv 1x1x2\npixelsoftmax\n";
        e[i].init_seed = 3 + (uint64_t)i;
        e[i].options = clg_train_options_default();
        e[i].options.mini_batch_size = 8;
        e[i].options.max_epochs = 2;
        e[i].options.initial_learn_rate = i ? 0.02f : 0.01f;
        e[i].train = shared;
    }
    clg_experiment_result res[2];
    CLG_ASSERT_STATUS(clg_experiments_run(&ctx, 1, e, 2, NULL, NULL, res), CLG_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(res[i].status, CLG_OK);
        clg_net *alone = parse_ok(e[i].net_text);
        CLG_ASSERT_STATUS(clg_net_init(alone, e[i].init_seed), CLG_OK);
        CLG_ASSERT_STATUS(clg_train(alone, seg, NULL, &e[i].options, NULL), CLG_OK);
        size_t n, m;
        float *a = clg_test_learnables(res[i].net, &n), *b = clg_test_learnables(alone, &m);
        assert_int_equal(n, m);
        assert_memory_equal(a, b, n * sizeof *a);
        print_message("%s: last batch pixel accuracy %.3f\n", e[i].name, res[i].report.accuracy);
        assert_true(res[i].report.accuracy > 0.3 && res[i].report.accuracy <= 1.0);
        free(a), free(b);
        clg_net_destroy(alone);
        clg_net_destroy(res[i].net);
    }
    clg_datastore_destroy(shared);
    clg_datastore_destroy(seg);
}

/* CLG_BN_POPULATION: the statistics after training are the mean of the training batches'
 * (here of a batch norm on the input, whose batches' mean and unbiased variance the host
 * computes), not the moving average of the last steps. */
static void population_statistics_after_training(void **state)
{
    (void)state;
    enum { N = 24, B = 8, C = 2, S = 3, HW = S * S };
    float x[N * C * HW], t[N * C * HW];
    clg_test_fill_uniform(&rng, x, N * C * HW, -1, 3);
    clg_test_fill_uniform(&rng, t, N * C * HW, 0, 1);
    clg_shape s = {1, C, S, S};
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_from_memory_targets(x, t, N, s, CLG_TARGET_VALUES, s, 0, &ds),
                      CLG_OK);
    clg_train_options o = clg_train_options_default();
    o.mini_batch_size = B;
    o.max_epochs = 2;
    o.shuffle = CLG_SHUFFLE_NEVER;
    o.batchnorm_statistics = CLG_BN_POPULATION;
    clg_net *net = parse_ok("input 3x3x2\nbatchnorm\nconv 1x1x2\nregression\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_train(net, ds, NULL, &o, NULL), CLG_OK);
    float st[2 * C];
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_STATE, st, 2 * C), CLG_OK);
    for (size_t c = 0; c < C; c++) {
        double mean = 0, var = 0;
        for (size_t b = 0; b < N / B; b++) {
            double m = 0, q = 0, M = B * HW;
            for (size_t i = b * B; i < (b + 1) * B; i++)
                for (size_t p = 0; p < HW; p++)
                    m += x[(i * C + c) * HW + p] / M;
            for (size_t i = b * B; i < (b + 1) * B; i++)
                for (size_t p = 0; p < HW; p++)
                    q += (x[(i * C + c) * HW + p] - m) * (x[(i * C + c) * HW + p] - m);
            mean += m / (N / B);
            var += q / (M - 1) / (N / B);
        }
        if (fabs(st[c] - mean) > 1e-5 || fabs(st[C + c] - var) > 1e-5 * var)
            fail_msg("channel %zu: mean %g var %g, want %g %g", c, (double)st[c],
                     (double)st[C + c], mean, var);
    }
    clg_net_destroy(net);
    clg_datastore_destroy(ds);
}

static int setup(void **state)
{
    (void)state;
    clg_test_fixture_setup_dir(&ctx, &rng, &dir, "dense");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_fixture_teardown_dir(ctx, dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regression_matches_the_reference),
        cmocka_unit_test(pixel_xent_matches_the_reference),
        cmocka_unit_test(losses_match_finite_differences),
        cmocka_unit_test(bad_targets_are_refused),
        cmocka_unit_test(output_layers_parse_and_round_trip),
        cmocka_unit_test(output_layers_gradient_matches_finite_differences),
        cmocka_unit_test(memory_targets_and_augmentation_move_together),
        cmocka_unit_test(denoising_patches_are_noisy_and_reproducible),
        cmocka_unit_test(label_and_target_folders),
        cmocka_unit_test(measures_match_hand_computed_values),
        cmocka_unit_test(nets_learn_label_maps_and_images),
        cmocka_unit_test(denoisers_resume_exactly),
        cmocka_unit_test(segmenters_in_experiments),
        cmocka_unit_test(population_statistics_after_training),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
