/* clgrad-bench conv / pool: per layer, pass and algorithm, ms and GFLOP/s (2*N*K*C*R*S*P*Q /
 * time), beside CLBlast's convgemm forward on the same device; max-pool GB/s. A transposed
 * convolution's passes are the passes of the convolution it mirrors (its forward pass that
 * convolution's data gradient, and back): its rows name both. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "tool_error.h"
#ifdef CLGRAD_BENCH_CLBLAST
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#endif

typedef struct layer {
    const char *name;
    size_t N, C, H, W, K, R, pad, stride;
    int transposed; /* the rows are a transposed convolution's (from K to C channels) */
} layer;

static const layer layers[] = {
    {"c1", 64, 1, 28, 28, 32, 5, 2, 1, 0},
    {"c2", 64, 32, 14, 14, 64, 5, 2, 1, 0},
    {"r3", 32, 64, 56, 56, 64, 3, 1, 1, 0},
    /* the three stages of tools/nets/fashion-resnet20.net, batch 64, and the stride-2
     * transitions between them with their 1x1 projection shortcuts */
    {"res16", 64, 16, 28, 28, 16, 3, 1, 1, 0},
    {"res32", 64, 32, 14, 14, 32, 3, 1, 1, 0},
    {"res64", 64, 64, 7, 7, 64, 3, 1, 1, 0},
    {"res32s2", 64, 16, 28, 28, 32, 3, 1, 2, 0},
    {"res64s2", 64, 32, 14, 14, 64, 3, 1, 2, 0},
    {"proj32", 64, 16, 28, 28, 32, 1, 0, 2, 0},
    {"proj64", 64, 32, 14, 14, 64, 1, 0, 2, 0},
    /* tools/nets/unet.net at batch 32: its two 2x2 stride-2 up-samplings (convt 2x2x32 from
     * 64 channels at 16x16, convt 2x2x16 from 32 at 32x32), as the convolutions they mirror,
     * and its 3x3 convolutions at full and half size */
    {"up32", 32, 32, 32, 32, 64, 2, 0, 2, 1},
    {"up16", 32, 16, 64, 64, 32, 2, 0, 2, 1},
    {"unet16", 32, 16, 64, 64, 16, 3, 1, 1, 0},
    {"unet32", 32, 32, 32, 32, 32, 3, 1, 1, 0},
};

static const char *const pass_names[] = {"fwd", "bwd_data", "bwd_weights"};
/* a transposed convolution's pass computed by each pass of the convolution it mirrors */
static const char *const transposed_names[] = {"convt.bwd_data", "convt.fwd",
                                               "convt.bwd_weights"};

typedef clg_status (*op_fn)(clg_ctx *, const clg_conv2d_desc *, clg_tensor *const t[4], int pass);

static clg_status run_pass(clg_ctx *ctx, const clg_conv2d_desc *d, clg_tensor *const t[4], int pass)
{
    /* t: x, w, y(dy), scratch of x's shape */
    if (pass == 0)
        return clg_conv2d_forward(ctx, d, t[0], t[1], NULL, t[2]);
    if (pass == 1)
        return clg_conv2d_backward_data(ctx, d, t[2], t[1], t[3]);
    return clg_conv2d_backward_weights(ctx, d, t[0], t[2], t[1]);
}

/* Median seconds of `runs` timed calls after one warm-up; < 0 on failure. */
static double time_runs(clg_ctx *ctx, int runs, const clg_conv2d_desc *d, clg_tensor *const t[4], int pass)
{
    double s[64];
    runs = runs > 64 ? 64 : runs;
    for (int r = -1; r < runs; r++) {
        double t0 = tool_now();
        clg_status st = run_pass(ctx, d, t, pass);
        if (st == CLG_OK)
            st = clg_ctx_finish(ctx);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-bench: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
            return -1;
        }
        if (r >= 0)
            s[r] = tool_now() - t0;
    }
    return bench_median(s, (size_t)runs);
}

static void report(const bench_opts *o, const clg_ctx *ctx, const char *layer_name,
                   const char *pass, const char *algo, int chosen, double sec, double flops)
{
    if (o->json)
        bench_json_row(ctx, "conv", "\"layer\":\"%s\",\"pass\":\"%s\",\"algo\":\"%s\",\"chosen\":%s,"
                       "\"ms\":%.3f,\"gflops\":%.1f", layer_name, pass, algo,
                       chosen ? "true" : "false", 1e3 * sec, 1e-9 * flops / sec);
    else
        printf("%-7s %-17s %-17s %9.3f %9.1f%s\n", layer_name, pass, algo, 1e3 * sec,
               1e-9 * flops / sec, chosen ? "  (chosen)" : "");
    fflush(stdout);
}

#ifdef CLGRAD_BENCH_CLBLAST
static double time_clblast(clg_ctx *ctx, int runs, const layer *L, clg_tensor *const t[4])
{
    size_t xo, wo, yo;
    cl_mem x = clg_tensor_cl_buffer(t[0], &xo), w = clg_tensor_cl_buffer(t[1], &wo);
    cl_mem y = clg_tensor_cl_buffer(t[2], &yo);
    cl_command_queue q = clg_ctx_cl_queue(ctx);
    double s[64];
    runs = runs > 64 ? 64 : runs;
    for (int r = -1; r < runs; r++) {
        double t0 = tool_now();
        CLBlastStatusCode rc = CLBlastSconvgemm(CLBlastKernelModeCrossCorrelation, L->C, L->H, L->W,
                                                L->R, L->R, L->pad, L->pad, L->stride, L->stride, 1, 1, L->K, L->N,
                                                x, xo, w, wo, y, yo, &q, NULL);
        if (rc != CLBlastSuccess || clg_ctx_finish(ctx) != CLG_OK) {
            fprintf(stderr, "clgrad-bench: CLBlastSconvgemm returned %d\n", (int)rc);
            return -1;
        }
        if (r >= 0)
            s[r] = tool_now() - t0;
    }
    return bench_median(s, (size_t)runs);
}
#endif

int bench_conv(const bench_opts *o, const char *only)
{
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    if (!o->json)
        printf("convolution on %s, median of %d\n%-7s %-17s %-17s %9s %9s\n", clg_ctx_device(ctx)->name,
               o->runs, "layer", "pass", "algorithm", "ms", "GFLOP/s");
    int rc = 0;
    for (size_t li = 0; li < sizeof layers / sizeof layers[0] && rc == 0; li++) {
        const layer *L = &layers[li];
        if (only && strcmp(only, L->name) != 0)
            continue;
        clg_conv2d_desc d = clg_conv2d_desc_default();
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = (int)L->pad;
        d.stride_h = d.stride_w = (int)L->stride;
        clg_shape xs = {L->N, L->C, L->H, L->W}, ws = {L->K, L->C, L->R, L->R}, ys;
        clg_conv2d_output_shape(&d, xs, ws, &ys);
        double flops = 2.0 * L->N * L->K * L->C * L->R * L->R * ys.h * ys.w;
        clg_tensor *t[4] = {NULL, NULL, NULL, NULL};
        clg_shape shapes[4] = {xs, ws, ys, xs};
        for (int i = 0; i < 4 && rc == 0; i++)
            if (clg_tensor_create(ctx, shapes[i], &t[i]) != CLG_OK || clg_tensor_fill(t[i], 0.01f * (float)(i + 1)) != CLG_OK)
                rc = 1;
        for (int pass = 0; pass < 3 && rc == 0; pass++) {
            clg_conv_algo chosen;
            d.algo = CLG_CONV_ALGO_AUTO;
            clg_conv2d_choose(ctx, &d, (clg_conv_pass)pass, xs, ws, &chosen);
            for (int a = CLG_CONV_ALGO_IM2COL; a <= CLG_CONV_ALGO_DEPTHWISE && rc == 0; a++) {
                size_t lo, hi;
                d.algo = (clg_conv_algo)a;
                if (clg_conv2d_workspace(ctx, &d, (clg_conv_pass)pass, d.algo, xs, ws, &lo, &hi) != CLG_OK)
                    continue;
                double sec = time_runs(ctx, o->runs, &d, t, pass);
                if (sec < 0)
                    rc = 1;
                else
                    report(o, ctx, L->name, (L->transposed ? transposed_names : pass_names)[pass],
                           clg_conv_algo_name(d.algo), a == (int)chosen, sec, flops);
            }
        }
#ifdef CLGRAD_BENCH_CLBLAST
        if (rc == 0) {
            double sec = time_clblast(ctx, o->runs, L, t);
            if (sec > 0)
                report(o, ctx, L->name, "fwd", "clblast_convgemm", 0, sec, flops);
        }
#endif
        for (int i = 0; i < 4; i++)
            clg_tensor_destroy(t[i]);
    }
    clg_ctx_destroy(ctx);
    return rc;
}

int bench_pool(const bench_opts *o)
{
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    clg_pool2d_desc d = clg_pool2d_desc_default();
    clg_shape xs = {64, 32, 28, 28}, ys = {64, 32, 14, 14};
    clg_tensor *x = NULL, *y = NULL, *dx = NULL;
    int rc = clg_tensor_create(ctx, xs, &x) != CLG_OK || clg_tensor_create(ctx, ys, &y) != CLG_OK ||
             clg_tensor_create(ctx, xs, &dx) != CLG_OK || clg_tensor_fill(x, 1.0f) != CLG_OK ||
             clg_tensor_fill(y, 1.0f) != CLG_OK;
    double bytes_x = 4.0 * clg_shape_numel(xs), bytes_y = 4.0 * clg_shape_numel(ys);
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        double s[64];
        int runs = o->runs > 64 ? 64 : o->runs;
        for (int r = -1; r < runs && rc == 0; r++) {
            double t0 = tool_now();
            clg_status st = pass == 0 ? clg_pool2d_forward(ctx, &d, x, y) : clg_pool2d_backward(ctx, &d, x, y, dx);
            if (st != CLG_OK || clg_ctx_finish(ctx) != CLG_OK) {
                fprintf(stderr, "clgrad-bench: %s\n", clg_ctx_last_error(ctx));
                rc = 1;
            }
            if (r >= 0)
                s[r] = tool_now() - t0;
        }
        if (rc)
            break;
        double sec = bench_median(s, (size_t)runs);
        double bytes = pass == 0 ? bytes_x + bytes_y : 2 * bytes_x + bytes_y; /* bwd reads x, dy; writes dx */
        if (o->json)
            bench_json_row(ctx, "pool", "\"kind\":\"max\",\"pass\":\"%s\",\"ms\":%.3f,\"gbps\":%.1f",
                           pass ? "bwd" : "fwd", 1e3 * sec, 1e-9 * bytes / sec);
        else
            printf("max pool 2x2, N64 C32 28x28, %s: %.3f ms, %.1f GB/s\n", pass ? "backward" : "forward",
                   1e3 * sec, 1e-9 * bytes / sec);
    }
    clg_tensor_destroy(x);
    clg_tensor_destroy(y);
    clg_tensor_destroy(dx);
    clg_ctx_destroy(ctx);
    return rc;
}
