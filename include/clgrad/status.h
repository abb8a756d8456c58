/* Status codes returned by every fallible clgrad call, and the per-thread last-error text. */
#ifndef CLGRAD_STATUS_H
#define CLGRAD_STATUS_H

#include "clgrad/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values are pinned: a code is never renumbered or reused. */
typedef enum clg_status {
    CLG_OK = 0,
    CLG_ERR_INVALID_ARG = -1,          /* NULL pointer, bad size, bad option value */
    CLG_ERR_SHAPE = -2,                /* tensor shapes do not fit together */
    CLG_ERR_NO_DEVICE = -3,            /* no OpenCL platform/device, or a filter matched none */
    CLG_ERR_OUT_OF_DEVICE_MEMORY = -4, /* a device allocation was too large or failed */
    CLG_ERR_OUT_OF_HOST_MEMORY = -5,   /* malloc failed */
    CLG_ERR_BUILD = -6,                /* an OpenCL program failed to compile */
    CLG_ERR_OPENCL = -7,               /* any other OpenCL error (the cl_int is in the message) */
    CLG_ERR_IO = -8,                   /* a file could not be read or written */
    CLG_ERR_CORRUPT = -9,              /* a file's contents are invalid */
    CLG_ERR_UNSUPPORTED = -10,         /* the device or build lacks a needed feature */
    CLG_ERR_DEVICE_LOST = -11,         /* a device stopped answering */
    CLG_ERR_INTERNAL = -12,            /* a bug in clgrad: please report it */
    CLG_ERR_NUMERICS = -13             /* NaN or infinity found (CLGRAD_CHECK_NUMERICS) */
} clg_status;

/* Lowest (most negative) status value defined; iterate CLG_OK down to it to see every code. */
#define CLG_STATUS_MIN CLG_ERR_NUMERICS

/** Name of a status, e.g. "CLG_ERR_SHAPE"; "CLG_ERR_UNKNOWN" for values not defined.
 *  @return a static string; thread-safe. */
CLG_API const char *clg_status_name(clg_status status);

/** Text of the last failure of a clgrad call made on this thread (calls on a handle also
 *  store it in the handle: see clg_ctx_last_error). "" when nothing has failed yet.
 *  @return a thread-local string, valid until the next failing call on this thread. */
CLG_API const char *clg_last_error(void);

/** Library version as "MAJOR.MINOR.PATCH". */
CLG_API const char *clg_version(void);

#ifdef __cplusplus
}
#endif
#endif
