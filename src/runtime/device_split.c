/* CPU sub-devices (clCreateSubDevices by counts), so several devices exist on any machine. */
#include <stdlib.h>
#include "runtime_internal.h"

static int supports_by_counts(cl_device_id d)
{
    cl_device_partition_property props[8] = {0};
    size_t size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_PARTITION_PROPERTIES, sizeof props, props, &size) != CL_SUCCESS)
        return 0;
    for (size_t i = 0; i < size / sizeof props[0]; i++)
        if (props[i] == CL_DEVICE_PARTITION_BY_COUNTS)
            return 1;
    return 0;
}

clg_status clg_device_split(const clg_device_info *dev, unsigned parts, unsigned units_each,
                            clg_device_info **out)
{
    if (!out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_device_split: out must not be NULL");
    *out = NULL;
    if (!dev || !dev->cl_device)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_device_split: dev must be a listed device");
    if (parts == 0)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_device_split: parts must be >= 1");
    cl_device_id d = (cl_device_id)dev->cl_device;
    if (!supports_by_counts(d))
        return clg__fail(NULL, CLG_ERR_UNSUPPORTED,
                         "clg_device_split: device %zu (%s) cannot be partitioned by counts",
                         dev->index, dev->name);
    unsigned units = units_each ? units_each : dev->compute_units / parts;
    if (units == 0 || (unsigned long long)units * parts > dev->compute_units)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                         "clg_device_split: %u parts of %u compute units do not fit device %zu "
                         "(%s), which has %u",
                         parts, units_each ? units_each : 1, dev->index, dev->name,
                         dev->compute_units);

    cl_device_partition_property *props = clg__malloc((parts + 3) * sizeof *props);
    cl_device_id *ids = clg__malloc(parts * sizeof *ids);
    clg_device_info *infos = clg__calloc(parts, sizeof *infos);
    clg_status st = CLG_OK;
    if (!props || !ids || !infos) {
        st = clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_device_split: out of memory");
        goto done;
    }
    props[0] = CL_DEVICE_PARTITION_BY_COUNTS;
    for (unsigned i = 0; i < parts; i++)
        props[1 + i] = (cl_device_partition_property)units;
    props[1 + parts] = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    props[2 + parts] = 0;
    cl_uint made = 0;
    cl_int err = clCreateSubDevices(d, props, parts, ids, &made);
    if (err != CL_SUCCESS || made != parts) {
        for (cl_uint i = 0; err == CL_SUCCESS && i < made; i++)
            clReleaseDevice(ids[i]);
        st = clg__fail_cl(NULL, err == CL_SUCCESS ? CL_DEVICE_PARTITION_FAILED : err,
                          "clg_device_split: clCreateSubDevices(%u x %u units) on %s failed",
                          parts, units, dev->name);
        if (st == CLG_ERR_OPENCL)
            st = CLG_ERR_UNSUPPORTED;
        goto done;
    }
    for (unsigned i = 0; i < parts; i++) {
        clg__device_describe((cl_platform_id)dev->cl_platform, ids[i], &infos[i]);
        infos[i].index = i;
        infos[i].platform_index = dev->platform_index;
        infos[i].is_subdevice = 1;
        infos[i].parent_index = dev->index;
    }
    *out = infos;
    infos = NULL;
done:
    free(props);
    free(ids);
    free(infos);
    return st;
}
