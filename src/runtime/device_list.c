/* Discovery: every device of every OpenCL platform as one flat, stably ordered list. */
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

#define NO_DEVICE_HINT                                                                      \
    "install an OpenCL driver (on Debian: apt-get install pocl-opencl-icd for the CPU, or "  \
    "your GPU vendor's ICD) and check the .icd files in /etc/OpenCL/vendors (or "           \
    "$OCL_ICD_VENDORS) name libraries that exist"

static void text_info(cl_device_id d, cl_device_info what, char *out)
{
    out[0] = '\0';
    if (clGetDeviceInfo(d, what, CLG_INFO_TEXT, out, NULL) != CL_SUCCESS) {
        /* Too long for the field or unsupported: fall back to a truncated copy. */
        size_t size = 0;
        if (clGetDeviceInfo(d, what, 0, NULL, &size) == CL_SUCCESS && size > 0) {
            char *tmp = clg__malloc(size);
            if (tmp && clGetDeviceInfo(d, what, size, tmp, NULL) == CL_SUCCESS) {
                memcpy(out, tmp, CLG_INFO_TEXT - 1);
                out[CLG_INFO_TEXT - 1] = '\0';
            }
            free(tmp);
        }
    }
}

static cl_ulong ulong_info(cl_device_id d, cl_device_info what)
{
    cl_ulong v = 0;
    clGetDeviceInfo(d, what, sizeof v, &v, NULL);
    return v;
}

static cl_uint uint_info(cl_device_id d, cl_device_info what)
{
    cl_uint v = 0;
    clGetDeviceInfo(d, what, sizeof v, &v, NULL);
    return v;
}

static int has_extension(cl_device_id d, const char *ext)
{
    size_t size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS || size == 0)
        return 0;
    char *all = clg__malloc(size + 1);
    if (!all)
        return 0;
    int found = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, all, NULL) == CL_SUCCESS) {
        all[size] = '\0';
        size_t n = strlen(ext);
        for (const char *p = strstr(all, ext); p && !found; p = strstr(p + 1, ext))
            found = (p == all || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
    }
    free(all);
    return found;
}

static clg_device_type type_of(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return CLG_DEVICE_GPU;
    if (t & CL_DEVICE_TYPE_CPU)
        return CLG_DEVICE_CPU;
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return CLG_DEVICE_ACCELERATOR;
    return CLG_DEVICE_OTHER;
}

/* Fills every field that comes from the device itself (not index or parentage). */
void clg__device_describe(cl_platform_id p, cl_device_id d, clg_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->cl_platform = p;
    info->cl_device = d;
    clGetPlatformInfo(p, CL_PLATFORM_NAME, CLG_INFO_TEXT, info->platform, NULL);
    clGetPlatformInfo(p, CL_PLATFORM_VERSION, CLG_INFO_TEXT, info->platform_version, NULL);
    info->platform[CLG_INFO_TEXT - 1] = info->platform_version[CLG_INFO_TEXT - 1] = '\0';
    text_info(d, CL_DEVICE_VENDOR, info->vendor);
    text_info(d, CL_DEVICE_NAME, info->name);
    text_info(d, CL_DEVICE_VERSION, info->version);
    text_info(d, CL_DRIVER_VERSION, info->driver_version);
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    info->type = type_of(t);
    info->compute_units = uint_info(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    info->clock_mhz = uint_info(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    info->global_mem_bytes = ulong_info(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    info->local_mem_bytes = ulong_info(d, CL_DEVICE_LOCAL_MEM_SIZE);
    info->max_alloc_bytes = ulong_info(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info->max_work_group_size,
                    &info->max_work_group_size, NULL);
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    info->fp64 = fp64 != 0 || has_extension(d, "cl_khr_fp64");
    info->fp16 = has_extension(d, "cl_khr_fp16");
    info->vec_width_float = uint_info(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
    info->vec_width_half = uint_info(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF);
    info->vec_width_double = uint_info(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE);
    info->native_vec_width_float = uint_info(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
}

static clg_status platform_devices(cl_platform_id p, cl_device_id **ids, cl_uint *count)
{
    *ids = NULL;
    *count = 0;
    cl_int err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, count);
    if (err == CL_DEVICE_NOT_FOUND || *count == 0) {
        *count = 0;
        return CLG_OK; /* a platform without devices is not an error */
    }
    if (err != CL_SUCCESS)
        return clg__fail_cl(NULL, err, "clg_devices_list: clGetDeviceIDs failed");
    *ids = clg__malloc(*count * sizeof **ids);
    if (!*ids)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_devices_list: out of memory");
    err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, *count, *ids, NULL);
    if (err != CL_SUCCESS) {
        free(*ids);
        *ids = NULL;
        return clg__fail_cl(NULL, err, "clg_devices_list: clGetDeviceIDs failed");
    }
    return CLG_OK;
}

clg_status clg_devices_list(clg_device_info **out, size_t *n)
{
    if (!out || !n)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_devices_list: out and n must not be NULL");
    *out = NULL;
    *n = 0;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && np == 0))
        return clg__fail(NULL, CLG_ERR_NO_DEVICE, "no OpenCL platform found: %s", NO_DEVICE_HINT);
    if (err != CL_SUCCESS)
        return clg__fail_cl(NULL, err, "clg_devices_list: clGetPlatformIDs failed; %s",
                            NO_DEVICE_HINT);
    cl_platform_id *platforms = clg__malloc(np * sizeof *platforms);
    if (!platforms)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_devices_list: out of memory");
    clGetPlatformIDs(np, platforms, NULL);

    clg_status st = CLG_OK;
    clg_device_info *list = NULL;
    size_t total = 0;
    for (cl_uint pi = 0; pi < np && st == CLG_OK; pi++) {
        cl_device_id *ids;
        cl_uint nd;
        st = platform_devices(platforms[pi], &ids, &nd);
        if (st != CLG_OK || nd == 0)
            continue;
        clg_device_info *grown = clg__realloc(list, (total + nd) * sizeof *list);
        if (!grown) {
            st = clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_devices_list: out of memory");
        } else {
            list = grown;
            for (cl_uint di = 0; di < nd; di++, total++) {
                clg__device_describe(platforms[pi], ids[di], &list[total]);
                list[total].index = total;
                list[total].platform_index = pi;
            }
        }
        free(ids);
    }
    free(platforms);
    if (st == CLG_OK && total == 0)
        st = clg__fail(NULL, CLG_ERR_NO_DEVICE, "%u OpenCL platform(s) found but no device: %s",
                       (unsigned)np, NO_DEVICE_HINT);
    if (st != CLG_OK) {
        free(list);
        return st;
    }
    *out = list;
    *n = total;
    return CLG_OK;
}

void clg_devices_free(clg_device_info *devices, size_t n)
{
    if (!devices)
        return;
    for (size_t i = 0; i < n; i++)
        if (devices[i].is_subdevice && devices[i].cl_device)
            clReleaseDevice((cl_device_id)devices[i].cl_device);
    free(devices);
}

const char *clg_device_type_name(clg_device_type type)
{
    switch (type) {
    case CLG_DEVICE_CPU: return "cpu";
    case CLG_DEVICE_GPU: return "gpu";
    case CLG_DEVICE_ACCELERATOR: return "accelerator";
    case CLG_DEVICE_OTHER: break;
    }
    return "other";
}
