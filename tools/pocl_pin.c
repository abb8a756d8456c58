/* Why: on a 2-core VM, Linux often left both of POCL's worker threads on one core for a whole
 * run (both are woken by the host thread and the balancer is slow to part them), halving the
 * speed run by run (AMD EPYC Zen 4 VM: 256^3 SGEMM 105-124 or 175-200 GFLOP/s by process,
 * 175-190 in every run pinned; docs/PERFORMANCE.md). */
#define _GNU_SOURCE /* sched_getaffinity, the CPU_ macros */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include "pocl_pin.h"

int pocl_pin_wanted(const void *allowed_set, long online, const char *affinity,
                    const char *mpi_size, const char *max_threads)
{
    const cpu_set_t *allowed = allowed_set;
    if (affinity || mpi_size || max_threads || online < 2 || online > CPU_SETSIZE)
        return 0;
    if (CPU_COUNT(allowed) != online)
        return 0;
    for (long i = 0; i < online; i++)
        if (!CPU_ISSET((int)i, allowed))
            return 0;
    return 1;
}

int pocl_pin_threads(void)
{
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return 0;
    const char *mpi = getenv("OMPI_COMM_WORLD_SIZE"); /* Open MPI, then MPICH and PMIx launchers */
    if (!mpi)
        mpi = getenv("PMI_SIZE");
    if (!mpi)
        mpi = getenv("PMIX_RANK");
    if (!pocl_pin_wanted(&allowed, sysconf(_SC_NPROCESSORS_ONLN), getenv("POCL_AFFINITY"), mpi,
                         getenv("POCL_MAX_PTHREAD_COUNT")))
        return 0;
    return setenv("POCL_AFFINITY", "1", 0) == 0;
}
