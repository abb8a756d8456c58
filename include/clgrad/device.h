/* OpenCL device discovery, execution environments, device filters and CPU sub-devices. */
#ifndef CLGRAD_DEVICE_H
#define CLGRAD_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "clgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_device_type {
    CLG_DEVICE_CPU = 1,
    CLG_DEVICE_GPU = 2,
    CLG_DEVICE_ACCELERATOR = 3,
    CLG_DEVICE_OTHER = 4
} clg_device_type;

#define CLG_INFO_TEXT 128

/* One OpenCL device, as seen once at discovery. Plain data; the two handles are the raw
 * cl_platform_id / cl_device_id, for interoperation and for clg_ctx_create. */
typedef struct clg_device_info {
    size_t index;                     /* position in the flat list (stable for a machine) */
    size_t platform_index;            /* position of its platform in clGetPlatformIDs */
    char platform[CLG_INFO_TEXT];     /* platform name */
    char platform_version[CLG_INFO_TEXT];
    char vendor[CLG_INFO_TEXT];
    char name[CLG_INFO_TEXT];
    char version[CLG_INFO_TEXT];      /* CL_DEVICE_VERSION */
    char driver_version[CLG_INFO_TEXT];
    clg_device_type type;
    unsigned compute_units;
    unsigned clock_mhz;
    uint64_t global_mem_bytes;
    uint64_t local_mem_bytes;
    uint64_t max_alloc_bytes;
    size_t max_work_group_size;
    int fp16;                         /* 1 when cl_khr_fp16 is supported */
    int fp64;                         /* 1 when cl_khr_fp64 (or a double fp config) is supported */
    unsigned vec_width_float;         /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT */
    unsigned vec_width_half;
    unsigned vec_width_double;
    int is_subdevice;                 /* 1 for a device made by clg_device_split */
    size_t parent_index;              /* for sub-devices: index of the parent device */
    void *cl_platform;                /* cl_platform_id (borrowed) */
    void *cl_device;                  /* cl_device_id (retained by the list that holds it) */
    unsigned native_vec_width_float;  /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: the SIMD width
                                         (Intel's CPU runtime prefers 1 above, as it vectorises
                                         across work-items, but is 16 wide on AVX-512) */
} clg_device_info;

/** Lists every device of every OpenCL platform as one flat array, platforms in ICD order and
 *  devices in platform order, so indices are stable on a machine.
 *  @param out receives a new array; free it with clg_devices_free. *out = NULL on failure.
 *  @param n receives the number of devices (>= 1 on success).
 *  @return CLG_OK; CLG_ERR_NO_DEVICE when no platform or no device exists (message says why
 *          and how to install one); CLG_ERR_INVALID_ARG for NULL pointers;
 *          CLG_ERR_OUT_OF_HOST_MEMORY. Thread-safe. */
CLG_API clg_status clg_devices_list(clg_device_info **out, size_t *n);

/** Frees an array from clg_devices_list or clg_device_split and releases the sub-devices in
 *  it. NULL is a no-op. */
CLG_API void clg_devices_free(clg_device_info *devices, size_t n);

/* Where to train, as MATLAB's ExecutionEnvironment. */
typedef enum clg_exec_env {
    CLG_ENV_AUTO = 0,      /* every GPU if there is one, else the CPU, else what is left
                              (accelerators) */
    CLG_ENV_CPU = 1,       /* the CPU: the CPU devices of the first platform that has any */
    CLG_ENV_GPU = 2,       /* one GPU: the fastest (compute units x clock), or the one filtered */
    CLG_ENV_MULTI_GPU = 3, /* every GPU */
    CLG_ENV_PARALLEL = 4   /* MPI ranks, each with the devices auto would pick locally */
} clg_exec_env;

/** Parses "auto", "cpu", "gpu", "multi-gpu" or "parallel" (case-insensitive).
 *  @return CLG_OK or CLG_ERR_INVALID_ARG naming the accepted values. */
CLG_API clg_status clg_exec_env_parse(const char *text, clg_exec_env *out);

/** Name of an environment ("auto", ...); "unknown" for other values. */
CLG_API const char *clg_exec_env_name(clg_exec_env env);

/** Chooses the devices an environment trains on.
 *  A filter narrows the candidates first: comma-separated terms, a device matching any term is
 *  kept. A term is an index ("2"), an index range ("0-3"), a type ("cpu", "gpu",
 *  "accelerator"), or else a case-insensitive substring of the vendor, name or platform.
 *  filter NULL means the CLGRAD_DEVICES environment variable (unset or empty: no filter).
 *  Devices named by index are the user's choice: "auto" and "parallel" keep every one of
 *  them (GPUs and CPUs, of any platforms), "cpu" every CPU among them; without an index
 *  term, "cpu" (and "auto" without GPUs) keeps one platform's CPUs, since two runtimes of one
 *  CPU would share its cores.
 *  @param all, n the list from clg_devices_list (borrowed).
 *  @param out receives a new array of the chosen devices (copies of entries of all, in list
 *         order; their index fields say which); free it with clg_devices_free, like the list
 *         (sub-devices in it are retained). *out = NULL on failure.
 *  @param count receives the number of chosen devices (>= 1 on success).
 *  @return CLG_OK; CLG_ERR_NO_DEVICE when nothing is left (the message lists every device);
 *          CLG_ERR_INVALID_ARG for a malformed filter or an index past the list. */
CLG_API clg_status clg_devices_select(const clg_device_info *all, size_t n, clg_exec_env env,
                                      const char *filter, clg_device_info **out,
                                      size_t *count);

/** Splits a device into `parts` sub-devices (clCreateSubDevices by counts) of
 *  `units_each` compute units each (0: the units divided equally, at least 1 each), so that
 *  several devices exist on any machine. Mostly for CPUs.
 *  @param out receives a new array of `parts` infos with is_subdevice = 1; free it with
 *         clg_devices_free (which releases the sub-devices).
 *  @return CLG_OK; CLG_ERR_INVALID_ARG when parts is 0 or parts*units exceed the device;
 *          CLG_ERR_UNSUPPORTED when the device cannot be partitioned by counts. */
CLG_API clg_status clg_device_split(const clg_device_info *dev, unsigned parts,
                                    unsigned units_each, clg_device_info **out);

/* What decides a CPU's best register blocks: its SIMD width and how many vector FMAs it
 * issues per cycle. */
typedef enum clg_cpu_class {
    CLG_CPU_CLASS_NONE = 0,        /* not a CPU */
    CLG_CPU_CLASS_GENERIC = 1,     /* narrower than AVX2, or unknown */
    CLG_CPU_CLASS_AVX2 = 2,        /* 256-bit (older Intel, AMD Zen 2/3) */
    CLG_CPU_CLASS_AVX512_1FMA = 3, /* 512-bit, one FMA per cycle or double-pumped (AMD Zen 4/5,
                                      Intel Xeon Silver/Bronze, Core) */
    CLG_CPU_CLASS_AVX512_2FMA = 4  /* 512-bit with two FMA ports (Intel Xeon Scalable Gold and
                                      Platinum, Xeon W) */
} clg_cpu_class;

/** A device's CPU class, from what OpenCL reports: the SIMD width (the larger of the preferred
 *  and native float vector widths) and, for 512-bit CPUs, the vendor and model in its name.
 *  The environment variable CLGRAD_CPU_CLASS (generic, avx2, avx512-1fma, avx512-2fma)
 *  overrides it for CPUs.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for a NULL argument or an unknown CLGRAD_CPU_CLASS
 *          (the message names the accepted values; *out is then the detected class). */
CLG_API clg_status clg_device_cpu_class(const clg_device_info *dev, clg_cpu_class *out);

/** Parses a class name as CLGRAD_CPU_CLASS takes it (case-insensitive).
 *  @return CLG_OK or CLG_ERR_INVALID_ARG naming the accepted values. */
CLG_API clg_status clg_cpu_class_parse(const char *text, clg_cpu_class *out);

/** Name of a class: "none", "generic", "avx2", "avx512-1fma", "avx512-2fma". */
CLG_API const char *clg_cpu_class_name(clg_cpu_class c);

/** Name of a device type: "cpu", "gpu", "accelerator" or "other". */
CLG_API const char *clg_device_type_name(clg_device_type type);

#ifdef __cplusplus
}
#endif
#endif
