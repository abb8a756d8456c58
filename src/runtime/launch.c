/* Kernel launches: arguments set in order, errors kept until the launch reports them once. */
#include <string.h>
#include "runtime_internal.h"
#include "testing.h"

clg_status clg__launch_begin(clg_ctx *ctx, const char *family, const char *options,
                             const char *kernel, clg__launch *l)
{
    l->ctx = ctx;
    l->name = kernel;
    l->next = 0;
    l->err = CL_SUCCESS;
    return clg__kernel_get(ctx, family, options, kernel, &l->kernel);
}

static void arg(clg__launch *l, size_t size, const void *value)
{
    if (l->err == CL_SUCCESS)
        l->err = clSetKernelArg(l->kernel, l->next, size, value);
    l->next++;
}

void clg__arg_mem(clg__launch *l, cl_mem m)
{
    arg(l, sizeof m, &m);
}

void clg__arg_u32(clg__launch *l, size_t v)
{
    cl_uint x = (cl_uint)v;
    arg(l, sizeof x, &x);
}

void clg__arg_u64(clg__launch *l, size_t v)
{
    cl_ulong x = v;
    arg(l, sizeof x, &x);
}

void clg__arg_f32(clg__launch *l, float v)
{
    arg(l, sizeof v, &v);
}

void clg__arg_local(clg__launch *l, size_t bytes)
{
    arg(l, bytes, NULL);
}

/* Profiling: waits for the kernel and adds its device time to its name's total (so profiled
 * runs serialise the queue: they measure, they do not race). */
static void record(clg_ctx *ctx, const char *name, cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clWaitForEvents(1, &ev) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return;
    size_t i = 0;
    while (i < ctx->profile_count && ctx->profile[i].name != name && strcmp(ctx->profile[i].name, name))
        i++;
    if (i == ctx->profile_count) {
        if (i == CLG__PROFILE_KERNELS)
            return;
        ctx->profile[ctx->profile_count++] = (clg__kernel_profile){name, 0, 0.0};
    }
    ctx->profile[i].calls++;
    ctx->profile[i].seconds += (double)(t1 - t0) * 1e-9;
}

clg_status clg__launch_run(clg__launch *l, const size_t global[3], const size_t local[3])
{
    size_t g[3];
    for (int i = 0; i < 3; i++) /* whole work-groups: kernels bound-check the padding */
        g[i] = (global[i] + local[i] - 1) / local[i] * local[i];
    if (g[0] == 0 || g[1] == 0 || g[2] == 0)
        return CLG_OK;
    cl_event done = NULL;
    if (l->err == CL_SUCCESS)
        l->err = clEnqueueNDRangeKernel(l->ctx->queue, l->kernel, 3, NULL, g, local, 0, NULL,
                                        l->ctx->profiling ? &done : NULL);
    if (done) {
        record(l->ctx, l->name, done);
        clReleaseEvent(done);
    }
    if (l->err != CL_SUCCESS)
        return clg__fail_cl(l->ctx, l->err, "launching %s (global %zux%zux%zu, local %zux%zux%zu)",
                            l->name, g[0], g[1], g[2], local[0], local[1], local[2]);
    return CLG_OK;
}

size_t clg__grid_groups(size_t wanted)
{
    size_t most = (size_t)clg__testing_max_groups();
    return wanted < most ? wanted : most;
}

size_t clg__local_fit(size_t want, size_t count)
{
    if (want <= count)
        return want;
    size_t l = 1;
    while (2 * l <= count)
        l *= 2;
    return l;
}

size_t clg__local_pow2(size_t n, size_t cap)
{
    size_t p = 1;
    while (p < n && p < cap)
        p *= 2;
    return p < cap ? p : cap;
}

size_t clg__compute_units(const clg_ctx *ctx)
{
    size_t units = clg__testing_compute_units();
    if (!units)
        units = ctx->device.compute_units;
    return units ? units : 1;
}

size_t clg__runs_per_item(const clg_ctx *ctx, size_t runs, size_t run_len, size_t min_len)
{
    size_t per = (min_len + run_len - 1) / run_len, items = 4 * clg__compute_units(ctx);
    size_t most = (runs + items - 1) / items;
    return per < most ? per : most > 0 ? most : 1;
}

clg_status clg__launch_runs(clg__launch *l, size_t runs, size_t per)
{
    size_t global[3] = {(runs + per - 1) / per, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(l, global, local);
}

clg_status clg__launch_elementwise(clg__launch *l, size_t n)
{
    size_t local = 64, most = clg_ctx_device(l->ctx)->max_work_group_size;
    if (!clg_ctx_decides_as_gpu(l->ctx) && n >= 1024 && most >= 1024)
        local = 1024;
    size_t global[3] = {n, 1, 1}, loc[3] = {local, 1, 1};
    return clg__launch_run(l, global, loc);
}
