/* clg_ctx: context and in-order queue on one device, with its program cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime_internal.h"
#include "testing.h"

clg_ctx_options clg_ctx_options_default(void)
{
    clg_ctx_options o = {sizeof o, 0, NULL, CLG_DECIDE_AUTO, NULL, NULL, -1};
    return o;
}

/* Whether a context on dev decides as for a GPU; *forced: only because of the GPU profile. */
static clg_status decide_as_gpu(const clg_device_info *dev, clg_decisions d, int *as_gpu,
                                int *forced)
{
    int gpu = dev->type != CLG_DEVICE_CPU;
    if (d == CLG_DECIDE_AUTO) {
        const char *env = getenv("CLGRAD_GPU_PROFILE");
        if (env && *env && strcmp(env, "0") != 0 && strcmp(env, "1") != 0)
            return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: CLGRAD_GPU_PROFILE=%s "
                             "(from the environment) must be 1 (the GPU profile) or 0", env);
        d = env && strcmp(env, "1") == 0 ? CLG_DECIDE_AS_GPU : CLG_DECIDE_BY_TYPE;
    } else if (d != CLG_DECIDE_BY_TYPE && d != CLG_DECIDE_AS_GPU) {
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: decisions %d must be "
                         "CLG_DECIDE_AUTO, CLG_DECIDE_BY_TYPE or CLG_DECIDE_AS_GPU", (int)d);
    }
    *as_gpu = gpu || d == CLG_DECIDE_AS_GPU;
    *forced = !gpu && *as_gpu;
    return CLG_OK;
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* The environment a context works under, once (clg__ctx_env). */
static void read_env(clg__ctx_env *e)
{
    const char *v = getenv("CLGRAD_CONV_ALGO");
    snprintf(e->conv_algo, sizeof e->conv_algo, "%s", v ? v : "");
    v = getenv("CLGRAD_GEMM");
    snprintf(e->gemm, sizeof e->gemm, "%s", v ? v : "");
    e->build_log = env_on("CLGRAD_BUILD_LOG");
    e->check_numerics = env_on("CLGRAD_CHECK_NUMERICS");
}

/* Whether a context may tune the GEMM when asked (clg_ctx_options.tune). */
static clg_status tune_wanted(int option, int *out)
{
    if (option == 0 || option == 1) {
        *out = option;
        return CLG_OK;
    }
    if (option != -1)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: tune %d must be -1, 0 or 1", option);
    const char *env = getenv("CLGRAD_TUNE");
    *out = env && strcmp(env, "quick") == 0;
    if (env && *env && !*out && strcmp(env, "off") != 0)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: CLGRAD_TUNE=%s (from the "
                         "environment) must be quick or off", env);
    return CLG_OK;
}

clg_status clg_ctx_create(const clg_device_info *dev, const clg_ctx_options *opts, clg_ctx **out)
{
    if (!out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: out must not be NULL");
    *out = NULL;
    if (!dev || !dev->cl_device)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_create: dev must be a listed device");
    clg_ctx_options o = clg_ctx_options_default();
    if (opts && clg__options_read(&o, opts, sizeof o, "clg_ctx_create") != CLG_OK)
        return CLG_ERR_INVALID_ARG;
    int as_gpu, forced, tune;
    clg_status decided = decide_as_gpu(dev, o.decisions, &as_gpu, &forced);
    if (decided == CLG_OK)
        decided = tune_wanted(o.tune, &tune);
    clg_cpu_class cpu_class;
    if (decided == CLG_OK) /* an unknown CLGRAD_CPU_CLASS: said now, not at the first GEMM */
        decided = clg_device_cpu_class(dev, &cpu_class);
    if (decided != CLG_OK)
        return decided;
    clg_ctx *ctx = clg__calloc(1, sizeof *ctx);
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_ctx_create: out of memory");
    ctx->device = *dev;
    read_env(&ctx->env);
    ctx->as_gpu = as_gpu;
    ctx->gpu_profile = forced;
    ctx->cpu_class = cpu_class;
    ctx->tune_asked = tune;
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
    char version[128] = "";
    if (clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_VERSION, sizeof version - 1, version, NULL) != CL_SUCCESS)
        version[0] = '\0';
    snprintf(ctx->cl_std, sizeof ctx->cl_std, "%s", clg__cl_std_option(version));
    ctx->cache_dir = clg__cache_dir_resolve(o.cache_dir);
    ctx->driver_caches = clg__driver_caches(dev) && !clg__testing_bincache_always();
    ctx->on_build = o.on_build;
    ctx->on_build_user = o.on_build_user;
    ctx->profiling = o.profiling != 0;
    *out = ctx;
    return CLG_OK;
}

/* POCL 3.1's CPU driver releases a finished kernel's objects on its worker thread a moment
 * after the queue reports the kernel done, and its contexts do not hold their sub-devices: a
 * sub-device released in that moment (clg_devices_free right after clg_ctx_destroy) is freed
 * under the worker, which then crashes (seen under load, a few runs in a hundred). So a
 * sub-device's context is released only once ours is its last reference (bounded: 2 s). */
static void await_last_reference(cl_context c)
{
    for (int i = 0; i < 20000; i++) {
        cl_uint refs = 0;
        if (clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL) != CL_SUCCESS ||
            refs <= 1)
            return;
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
}

void clg_ctx_destroy(clg_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->queue) {
        clFinish(ctx->queue);
        clReleaseCommandQueue(ctx->queue);
    }
    if (ctx->transfer_queue) {
        clFinish(ctx->transfer_queue);
        clReleaseCommandQueue(ctx->transfer_queue);
    }
    for (int i = 0; i < CLG__EXT_COUNT; i++)
        if (ctx->ext[i].destroy)
            ctx->ext[i].destroy(ctx->ext[i].data);
    for (int i = 0; i < CLG__SCRATCH_SLOTS; i++)
        if (ctx->scratch[i].mem)
            clReleaseMemObject(ctx->scratch[i].mem);
    for (size_t i = 0; i < ctx->kernel_count; i++)
        clReleaseKernel(ctx->kernels[i].kernel);
    free(ctx->kernels);
    for (size_t i = 0; i < ctx->program_count; i++) {
        clReleaseProgram(ctx->programs[i].program);
        free(ctx->programs[i].options);
    }
    free(ctx->programs);
    if (ctx->context && ctx->device.is_subdevice)
        await_last_reference(ctx->context);
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

int clg__ctx_thread_unsafe(const clg_ctx *ctx)
{
    return strstr(ctx->device.platform, "Oclgrind") != NULL;
}

clg_cpu_class clg__ctx_cpu_class(const clg_ctx *ctx)
{
    return ctx->cpu_class;
}

int clg_ctx_decides_as_gpu(const clg_ctx *ctx)
{
    return ctx ? ctx->as_gpu : 0;
}

const char *clg_ctx_cache_dir(const clg_ctx *ctx)
{
    return ctx ? ctx->cache_dir : NULL;
}

void *clg_ctx_cl_queue(const clg_ctx *ctx)
{
    return ctx ? (void *)ctx->queue : NULL;
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

clg_status clg__scratch_get(clg_ctx *ctx, clg__scratch_slot slot, size_t bytes, cl_mem *out)
{
    if ((unsigned)slot >= CLG__SCRATCH_SLOTS)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "scratch slot %d out of range", (int)slot);
    clg__scratch *s = &ctx->scratch[slot];
    if (s->mem && s->bytes >= bytes) {
        *out = s->mem;
        return CLG_OK;
    }
    if (bytes > ctx->device.max_alloc_bytes)
        return clg__fail(ctx, CLG_ERR_OUT_OF_DEVICE_MEMORY,
                         "scratch buffer of %zu bytes exceeds %s's limit of %llu per buffer", bytes,
                         ctx->device.name, (unsigned long long)ctx->device.max_alloc_bytes);
    /* Grow by half again so that slowly growing requests do not reallocate every time. */
    size_t want = bytes + bytes / 2;
    if (want > ctx->device.max_alloc_bytes)
        want = bytes;
    if (s->mem) {
        clReleaseMemObject(s->mem);
        s->mem = NULL;
        s->bytes = 0;
    }
    cl_int err;
    s->mem = clg__create_buffer(ctx, want, &err);
    if (err != CL_SUCCESS) {
        s->mem = NULL;
        return clg__fail_cl(ctx, err, "allocating a %zu-byte scratch buffer on %s", want,
                            ctx->device.name);
    }
    s->bytes = want;
    *out = s->mem;
    return CLG_OK;
}

clg_status clg_ctx_kernel_times(clg_ctx *ctx, clg_kernel_time *out, size_t cap, size_t *count,
                                int reset)
{
    if (!ctx || (cap && !out))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_ctx_kernel_times: ctx must not be NULL (out NULL needs cap 0)");
    if (count)
        *count = ctx->profile_count;
    for (size_t i = 0; i < ctx->profile_count && i < cap; i++) {
        snprintf(out[i].name, sizeof out[i].name, "%s", ctx->profile[i].name);
        out[i].calls = ctx->profile[i].calls;
        out[i].seconds = ctx->profile[i].seconds;
    }
    if (reset)
        ctx->profile_count = 0;
    return CLG_OK;
}

clg_status clg__ctx_transfer_queue(clg_ctx *ctx, cl_command_queue *out)
{
    if (!ctx->transfer_queue) {
        cl_int err;
        ctx->transfer_queue = clCreateCommandQueue(ctx->context, (cl_device_id)ctx->device.cl_device,
                                                   0, &err);
        if (err != CL_SUCCESS) {
            ctx->transfer_queue = NULL;
            return clg__fail_cl(ctx, err, "creating a transfer queue on %s", ctx->device.name);
        }
    }
    *out = ctx->transfer_queue;
    return CLG_OK;
}

int clg__ctx_check_numerics(const clg_ctx *ctx)
{
    return ctx->env.check_numerics;
}
