/* clgrad-bench peak: the device's FMA peak as OpenCL reaches it, a plain loop of independent
 * fused multiply-adds (12 chains per work-item: enough to cover the latency of two FMA ports)
 * on 16-wide and on 8-wide vectors, the faster counting: 12 chains of 16 floats are 24 of
 * AVX2's 16 registers, so on AVX2 CPUs the 16-wide loop spills (a Zen 3 measured 64 GFLOP/s
 * with it, while OpenBLAS ran at 135), and 8 wide fills half of an AVX-512 register. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench_common.h"

/* A benchmark's own micro kernel (not the library's): built here from source, W = 16 or 8. */
static const char *peak_source =
    "#define CAT(a, b) a##b\n"
    "#define VEC(w) CAT(float, w)\n"
    "#define VSTORE(w) CAT(vstore, w)\n"
    "__kernel void fma_peak(__global float *out, uint iters, float m)\n"
    "{\n"
    "    VEC(W) a = (VEC(W))(get_global_id(0) * 1e-7f), c = (VEC(W))(1e-7f);\n"
    "    VEC(W) x0 = a, x1 = a + 1, x2 = a + 2, x3 = a + 3, x4 = a + 4, x5 = a + 5;\n"
    "    VEC(W) x6 = a + 6, x7 = a + 7, x8 = a + 8, x9 = a + 9, x10 = a + 10, x11 = a + 11;\n"
    "    for (uint i = 0; i < iters; i++) {\n"
    "        x0 = fma(x0, m, c); x1 = fma(x1, m, c); x2 = fma(x2, m, c); x3 = fma(x3, m, c);\n"
    "        x4 = fma(x4, m, c); x5 = fma(x5, m, c); x6 = fma(x6, m, c); x7 = fma(x7, m, c);\n"
    "        x8 = fma(x8, m, c); x9 = fma(x9, m, c); x10 = fma(x10, m, c); x11 = fma(x11, m, c);\n"
    "    }\n"
    "    VEC(W) s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;\n"
    "    float t[W], r = 0.0f;\n"
    "    VSTORE(W)(s, 0, t);\n"
    "    for (int i = 0; i < W; i++)\n"
    "        r += t[i];\n"
    "    out[get_global_id(0)] = r;\n"
    "}\n";

/* Median GFLOP/s of the loop on `width`-float vectors, or 0 on an error. */
static double peak_of_width(clg_ctx *ctx, int runs, int width)
{
    cl_command_queue q = clg_ctx_cl_queue(ctx);
    const clg_device_info *dev = clg_ctx_device(ctx);
    cl_context c = NULL;
    cl_device_id d = dev->cl_device;
    clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
    cl_int err;
    char options[16];
    snprintf(options, sizeof options, "-DW=%d", width);
    cl_program prog = clCreateProgramWithSource(c, 1, &peak_source, NULL, &err);
    if (err == CL_SUCCESS)
        err = clBuildProgram(prog, 1, &d, options, NULL, NULL);
    cl_kernel k = err == CL_SUCCESS ? clCreateKernel(prog, "fma_peak", &err) : NULL;
    /* CPUs: a few work-items per core (each is a thread's loop); GPUs: many per unit */
    size_t units = dev->compute_units ? dev->compute_units : 1;
    size_t global = units * (dev->type == CLG_DEVICE_CPU ? 4 : 2048), local = dev->type == CLG_DEVICE_CPU ? 1 : 64;
    cl_mem out = err == CL_SUCCESS ? clCreateBuffer(c, CL_MEM_WRITE_ONLY, global * sizeof(float), NULL, &err) : NULL;
    cl_uint iters = (dev->type == CLG_DEVICE_CPU ? 1u << 20 : 1u << 16) * (16u / (cl_uint)width);
    float m = 0.999999f;
    if (err == CL_SUCCESS) {
        clSetKernelArg(k, 0, sizeof out, &out);
        clSetKernelArg(k, 1, sizeof iters, &iters);
        clSetKernelArg(k, 2, sizeof m, &m);
    }
    double best = 0, *g = malloc((size_t)(runs + 1) * sizeof *g);
    for (int r = -1; err == CL_SUCCESS && g && r < runs; r++) {
        double t0 = tool_now();
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clFinish(q);
        double flops = 2.0 * width * 12 * (double)iters * (double)global;
        if (r >= 0)
            g[r] = 1e-9 * flops / (tool_now() - t0);
    }
    if (err == CL_SUCCESS && g)
        best = bench_median(g, (size_t)runs);
    else
        fprintf(stderr, "clgrad-bench peak: OpenCL error %d\n", (int)err);
    free(g);
    if (out)
        clReleaseMemObject(out);
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    return best;
}

static double fma_peak_width(clg_ctx *ctx, int runs, int *width)
{
    double wide = peak_of_width(ctx, runs, 16), narrow = peak_of_width(ctx, runs, 8);
    *width = narrow > wide ? 8 : 16;
    return narrow > wide ? narrow : wide;
}

double bench_fma_peak(clg_ctx *ctx, int runs)
{
    int width;
    return fma_peak_width(ctx, runs, &width);
}

int bench_peak(const bench_opts *o)
{
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    int width;
    double g = fma_peak_width(ctx, o->runs, &width);
    if (g > 0 && o->json)
        bench_json_row(ctx, "peak", "\"gflops\":%.1f,\"width\":%d", g, width);
    else if (g > 0)
        printf("device: %s\nFMA peak: %.1f GFLOP/s (12 chains of %d-wide FMAs per work-item, "
               "the faster of 16 and 8 wide, median of %d runs)\n", clg_ctx_device(ctx)->name, g,
               width, o->runs);
    clg_ctx_destroy(ctx);
    return g > 0 ? 0 : 1;
}
