/* CPU classes: which default GEMM and convolution register blocks suit a CPU device. */
#define _GNU_SOURCE /* strcasestr */
#include <stdio.h>
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

static int mentions(const clg_device_info *d, const char *what)
{
    return strcasestr(d->name, what) || strcasestr(d->vendor, what);
}

/* Whether the host CPU's flags (Linux) include one; 0 where they cannot be read. */
static int host_cpu_flag(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            char *at = strstr(line, flag);
            size_t n = strlen(flag);
            found = at && (at[n] == ' ' || at[n] == '\n' || at[n] == '\0');
            break;
        }
    if (f)
        fclose(f);
    return found;
}

/* AMD: Zen 4 runs 512-bit FMAs on two 256-bit halves (one per cycle), Zen 5 has two full
 * 512-bit FMA pipes. Model numbers tell them apart (EPYC 9xx4 / 9xx5, Ryzen 7000 and 8000 /
 * 9000); a VM that hides the model ("AMD EPYC") still shows Zen 5's flag avx512_vp2intersect,
 * which Zen 4 lacks. Measured: 387 GFLOP/s from 2 cores of such a VM (clgrad-bench peak), two
 * FMAs a cycle. */
static clg_cpu_class amd_class(const clg_device_info *d)
{
    const char *epyc = strcasestr(d->name, "EPYC ");
    if (epyc && strlen(epyc) >= 9 && epyc[5] >= '0' && epyc[5] <= '9' && epyc[8] >= '0' && epyc[8] <= '9')
        return epyc[8] >= '5' ? CLG_CPU_CLASS_AVX512_2FMA : CLG_CPU_CLASS_AVX512_1FMA;
    if (strcasestr(d->name, "Ryzen"))
        return strstr(d->name, " 9") && !strstr(d->name, " 9 7") && !strstr(d->name, " 9 8")
                   ? CLG_CPU_CLASS_AVX512_2FMA : CLG_CPU_CLASS_AVX512_1FMA;
    return host_cpu_flag("avx512_vp2intersect") ? CLG_CPU_CLASS_AVX512_2FMA : CLG_CPU_CLASS_AVX512_1FMA;
}

/* 512-bit parts: AMD as above; Intel's Xeon Silver and Bronze and its client Core parts have
 * one FMA port, the rest of its AVX-512 line (Xeon Scalable Gold, Platinum, Max, W) two. POCL
 * names a device "pthread-<LLVM target>-<brand>" with the vendor AuthenticAMD or GenuineIntel;
 * Intel's runtime names it by its brand string. */
static clg_cpu_class avx512_class(const clg_device_info *d)
{
    if (mentions(d, "AMD") || mentions(d, "EPYC") || mentions(d, "Ryzen") || mentions(d, "Threadripper"))
        return amd_class(d);
    static const char *const one_port[] = {"Silver", "Bronze", "Core(TM)", "Core "};
    for (size_t i = 0; i < sizeof one_port / sizeof one_port[0]; i++)
        if (mentions(d, one_port[i]))
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
