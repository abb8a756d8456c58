/* Status names, the thread-local last error and the helpers that record failures. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "runtime_internal.h"

static _Thread_local char tls_last_error[CLG__ERR_TEXT];

const char *clg_status_name(clg_status status)
{
    switch (status) {
    case CLG_OK: return "CLG_OK";
    case CLG_ERR_INVALID_ARG: return "CLG_ERR_INVALID_ARG";
    case CLG_ERR_SHAPE: return "CLG_ERR_SHAPE";
    case CLG_ERR_NO_DEVICE: return "CLG_ERR_NO_DEVICE";
    case CLG_ERR_OUT_OF_DEVICE_MEMORY: return "CLG_ERR_OUT_OF_DEVICE_MEMORY";
    case CLG_ERR_OUT_OF_HOST_MEMORY: return "CLG_ERR_OUT_OF_HOST_MEMORY";
    case CLG_ERR_BUILD: return "CLG_ERR_BUILD";
    case CLG_ERR_OPENCL: return "CLG_ERR_OPENCL";
    case CLG_ERR_IO: return "CLG_ERR_IO";
    case CLG_ERR_CORRUPT: return "CLG_ERR_CORRUPT";
    case CLG_ERR_UNSUPPORTED: return "CLG_ERR_UNSUPPORTED";
    case CLG_ERR_DEVICE_LOST: return "CLG_ERR_DEVICE_LOST";
    case CLG_ERR_INTERNAL: return "CLG_ERR_INTERNAL";
    case CLG_ERR_NUMERICS: return "CLG_ERR_NUMERICS";
    }
    return "CLG_ERR_UNKNOWN";
}

const char *clg_last_error(void)
{
    return tls_last_error;
}

const char *clg_version(void)
{
    return CLGRAD_VERSION_STRING;
}

static void record(clg_ctx *ctx, const char *text)
{
    snprintf(tls_last_error, sizeof tls_last_error, "%s", text);
    if (ctx)
        snprintf(ctx->last_error, sizeof ctx->last_error, "%s", text);
}

clg_status clg__fail(clg_ctx *ctx, clg_status status, const char *fmt, ...)
{
    char text[CLG__ERR_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    record(ctx, text);
    return status;
}

clg_status clg__oom(clg_ctx *ctx, const char *call)
{
    return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", call);
}

clg_status clg__fail_cl(clg_ctx *ctx, cl_int err, const char *fmt, ...)
{
    char text[CLG__ERR_TEXT];
    va_list ap;
    va_start(ap, fmt);
    int used = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (used >= 0 && (size_t)used < sizeof text)
        snprintf(text + used, sizeof text - (size_t)used, " (%s, %d)", clg__cl_error_name(err),
                 (int)err);
    record(ctx, text);
    switch (err) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_INVALID_BUFFER_SIZE:
        return CLG_ERR_OUT_OF_DEVICE_MEMORY;
    case CL_OUT_OF_HOST_MEMORY:
        return CLG_ERR_OUT_OF_HOST_MEMORY;
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
        return CLG_ERR_DEVICE_LOST;
    default:
        return CLG_ERR_OPENCL;
    }
}

double clg__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
