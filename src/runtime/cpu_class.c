/* CPU classes: which default GEMM and convolution register blocks suit a CPU device. */
#define _GNU_SOURCE /* strcasestr */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "runtime_internal.h"

static const char *const class_names[] = {"none", "generic", "avx2", "avx512-1fma", "avx512-2fma"};

const char *clg_cpu_class_name(clg_cpu_class c)
{
    return (unsigned)c < sizeof class_names / sizeof class_names[0] ? class_names[c] : "unknown";
}

clg_status clg_cpu_class_parse(const char *text, clg_cpu_class *out)
{
    if (!text || !out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_cpu_class_parse: NULL argument");
    for (unsigned i = CLG_CPU_CLASS_GENERIC; i < sizeof class_names / sizeof class_names[0]; i++)
        if (strcasecmp(text, class_names[i]) == 0) {
            *out = (clg_cpu_class)i;
            return CLG_OK;
        }
    return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                     "unknown CPU class \"%s\": expected generic, avx2, avx512-1fma or avx512-2fma",
                     text);
}

/* 512-bit parts with one FMA port, or two 256-bit halves: AMD's Zen 4 and 5 issue one 512-bit
 * FMA per cycle; Intel's Xeon Silver and Bronze and its client Core parts have one port.
 * The rest of Intel's AVX-512 line (Xeon Scalable Gold, Platinum, Max, W) has two. POCL names
 * a device "pthread-<LLVM target>-<brand>" with the vendor AuthenticAMD or GenuineIntel;
 * Intel's runtime names it by its brand string. */
static clg_cpu_class avx512_class(const clg_device_info *d)
{
    static const char *const one_port[] = {"AMD", "EPYC", "Ryzen", "Threadripper", "Silver",
                                           "Bronze", "Core(TM)", "Core "};
    for (size_t i = 0; i < sizeof one_port / sizeof one_port[0]; i++)
        if (strcasestr(d->name, one_port[i]) || strcasestr(d->vendor, one_port[i]))
            return CLG_CPU_CLASS_AVX512_1FMA;
    return CLG_CPU_CLASS_AVX512_2FMA;
}

clg_status clg_device_cpu_class(const clg_device_info *dev, clg_cpu_class *out)
{
    if (!dev || !out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_device_cpu_class: NULL argument");
    if (dev->type != CLG_DEVICE_CPU) {
        *out = CLG_CPU_CLASS_NONE;
        return CLG_OK;
    }
    /* Intel's CPU runtime prefers width 1 (it vectorises across work-items): the native
     * width is the SIMD width there. */
    unsigned width = dev->vec_width_float > dev->native_vec_width_float ? dev->vec_width_float
                                                                         : dev->native_vec_width_float;
    *out = width >= 16 ? avx512_class(dev) : width >= 8 ? CLG_CPU_CLASS_AVX2 : CLG_CPU_CLASS_GENERIC;
    const char *env = getenv("CLGRAD_CPU_CLASS");
    if (!env || !*env)
        return CLG_OK;
    clg_cpu_class forced;
    if (clg_cpu_class_parse(env, &forced) != CLG_OK)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                         "CLGRAD_CPU_CLASS=%s: expected generic, avx2, avx512-1fma or avx512-2fma",
                         env);
    *out = forced;
    return CLG_OK;
}
