/* The test hooks of src/runtime/testing.h, built only with CLGRAD_TESTING. Their state is per
 * thread: tests on one thread do not disturb another's work. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/testing.h"

static _Thread_local const char *faults;
static _Thread_local void (*atomic_hook)(int point);
static _Thread_local long host_fail_at, device_fail_at, host_count, device_count;
static _Thread_local unsigned long max_groups;
static _Thread_local unsigned compute_units;
static _Thread_local int bincache_always;

const char *clg__testing_faults(void)
{
    const char *spec = faults ? faults : getenv("CLGRAD_FAULT");
    return spec && *spec ? spec : NULL;
}

void clg__testing_set_faults(const char *spec)
{
    faults = spec;
}

void clg__testing_atomic_point(int point)
{
    if (atomic_hook)
        atomic_hook(point);
}

void clg__testing_set_atomic_hook(void (*hook)(int point))
{
    atomic_hook = hook;
}

void clg__testing_rank_exit(int rank, uint64_t step)
{
    fprintf(stderr, "clg_train: rank %d: injected exit at step %llu\n", rank,
            (unsigned long long)step);
    _exit(3);
}

int clg__testing_host_alloc_fails(void)
{
    return ++host_count == host_fail_at;
}

int clg__testing_device_alloc_fails(void)
{
    return ++device_count == device_fail_at;
}

void clg__fault_inject(long host_n, long device_n)
{
    host_fail_at = host_n;
    device_fail_at = device_n;
    host_count = device_count = 0;
}

void clg__fault_counts(long *host, long *device)
{
    *host = host_count;
    *device = device_count;
}

unsigned long clg__testing_max_groups(void)
{
    return max_groups ? max_groups : 65535ul;
}

void clg__testing_set_max_groups(unsigned long n)
{
    max_groups = n;
}

unsigned clg__testing_compute_units(void)
{
    return compute_units;
}

void clg__testing_set_compute_units(unsigned n)
{
    compute_units = n;
}

int clg__testing_bincache_always(void)
{
    return bincache_always;
}

void clg__testing_set_bincache_always(int on)
{
    bincache_always = on;
}
