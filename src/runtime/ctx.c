/* clg_ctx: context and in-order queue on one device, with its program cache. */
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

clg_ctx_options clg_ctx_options_default(void)
{
    clg_ctx_options o = {0, NULL};
    return o;
}

clg_status clg_ctx_create(const clg_device_info *dev, const clg_ctx_options *opts, clg_ctx **out)
{
    if (!out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: out must not be NULL");
    *out = NULL;
    if (!dev || !dev->cl_device)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: dev must be a listed device");
    clg_ctx_options o = opts ? *opts : clg_ctx_options_default();
    clg_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_ctx_create: out of memory");
    ctx->device = *dev;
    cl_device_id d = (cl_device_id)dev->cl_device;
    cl_int err = clRetainDevice(d);
    if (err != CL_SUCCESS) {
        free(ctx);
        return clg__fail_cl(NULL, err, "clg_ctx_create: device %zu (%s) is not valid", dev->index,
                            dev->name);
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)dev->cl_platform, 0};
    ctx->context = clCreateContext(props, 1, &d, NULL, NULL, &err);
    if (err == CL_SUCCESS)
        ctx->queue = clCreateCommandQueue(ctx->context, d,
                                          o.profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS) {
        clg_status st = clg__fail_cl(NULL, err, "clg_ctx_create: cannot create a context on device "
                                     "%zu (%s)", dev->index, dev->name);
        clg_ctx_destroy(ctx);
        return st;
    }
    ctx->cache_dir = clg__cache_dir_resolve(o.cache_dir);
    *out = ctx;
    return CLG_OK;
}

void clg_ctx_destroy(clg_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->queue) {
        clFinish(ctx->queue);
        clReleaseCommandQueue(ctx->queue);
    }
    for (size_t i = 0; i < ctx->kernel_count; i++)
        clReleaseKernel(ctx->kernels[i].kernel);
    free(ctx->kernels);
    for (size_t i = 0; i < ctx->program_count; i++) {
        clReleaseProgram(ctx->programs[i].program);
        free(ctx->programs[i].options);
    }
    free(ctx->programs);
    if (ctx->context)
        clReleaseContext(ctx->context);
    clReleaseDevice((cl_device_id)ctx->device.cl_device);
    free(ctx->cache_dir);
    free(ctx);
}

const char *clg_ctx_last_error(const clg_ctx *ctx)
{
    return ctx ? ctx->last_error : "clg_ctx_last_error: ctx is NULL";
}

const clg_device_info *clg_ctx_device(const clg_ctx *ctx)
{
    return ctx ? &ctx->device : NULL;
}

const char *clg_ctx_cache_dir(const clg_ctx *ctx)
{
    return ctx ? ctx->cache_dir : NULL;
}

clg_status clg_ctx_finish(clg_ctx *ctx)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_finish: ctx is NULL");
    cl_int err = clFinish(ctx->queue);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "clg_ctx_finish on %s", ctx->device.name);
    return CLG_OK;
}

clg_status clg_ctx_get_stats(const clg_ctx *ctx, clg_ctx_stats *out)
{
    if (!ctx || !out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_get_stats: NULL argument");
    *out = ctx->stats;
    return CLG_OK;
}
