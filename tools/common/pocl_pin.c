/* Why: on a 2-core VM, Linux often left both of POCL's worker threads on one core for a whole
 * run (both are woken by the host thread and the balancer is slow to part them), halving the
 * speed run by run (AMD EPYC Zen 4 VM: 256^3 SGEMM 105-124 or 175-200 GFLOP/s by process,
 * 156-190 in every process pinned; docs/PERFORMANCE.md). */
#define _GNU_SOURCE /* sched_getaffinity, the CPU_ macros */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pocl_pin.h"

/* More than one word: "pthread pthread" */
static int several(const char *words)
{
    char first[64], second[64];
    return words && sscanf(words, "%63s %63s", first, second) == 2;
}

int pocl_pin_wanted(const void *allowed_set, long online, const char *affinity,
                    const char *mpi_size, const char *max_threads, const char *pocl_devices)
{
    const cpu_set_t *allowed = allowed_set;
    if (affinity || mpi_size || max_threads || several(pocl_devices) || online < 2 ||
        online > CPU_SETSIZE)
        return 0;
    if (CPU_COUNT(allowed) != online)
        return 0;
    for (long i = 0; i < online; i++)
        if (!CPU_ISSET((int)i, allowed))
            return 0;
    return 1;
}

/* OpenCL implementations the ICD loader will load: ocl-icd reads OCL_ICD_VENDORS (a folder,
 * or one .icd file) or else /etc/OpenCL/vendors. Another runtime's devices beside POCL's
 * (Intel's, a GPU's) may join an "auto" run. */
static int is_icd(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".icd");
}

static int icd_count(void)
{
    const char *dir = getenv("OCL_ICD_VENDORS");
    if (dir && is_icd(dir))
        return 1;
    DIR *d = opendir(dir ? dir : "/etc/OpenCL/vendors");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += is_icd(e->d_name);
    if (d)
        closedir(d);
    return n;
}

int pocl_pin_threads(int one_device)
{
    cpu_set_t allowed;
    if (!one_device || icd_count() > 1)
        return 0;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return 0;
    const char *mpi = getenv("OMPI_COMM_WORLD_SIZE"); /* Open MPI, then MPICH and PMIx launchers */
    if (!mpi)
        mpi = getenv("PMI_SIZE");
    if (!mpi)
        mpi = getenv("PMIX_RANK");
    if (!pocl_pin_wanted(&allowed, sysconf(_SC_NPROCESSORS_ONLN), getenv("POCL_AFFINITY"), mpi,
                         getenv("POCL_MAX_PTHREAD_COUNT"), getenv("POCL_DEVICES")))
        return 0;
    return setenv("POCL_AFFINITY", "1", 0) == 0;
}

int pocl_pinned(void)
{
    const char *a = getenv("POCL_AFFINITY");
    return a && !strcmp(a, "1");
}
