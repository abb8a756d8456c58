/* The library's test hooks: fault injection into device groups and cluster ranks, crash points
 * in the atomic file writer, failing host and device allocations. Compiled in only with
 * CLGRAD_TESTING (the CMake option of the same name, on in builds with tests); without it each
 * hook below is a constant and src/runtime/testing.c is not built, so a production library
 * never prints or exits and carries no hook. Tests drive the hooks through the setters. */
#ifndef CLGRAD_RUNTIME_TESTING_H
#define CLGRAD_RUNTIME_TESTING_H

#include <stdint.h>

#ifdef CLGRAD_TESTING

/* --- called by the library --- */

/* The fault specification for a device group and cluster ranks: the one set on this thread,
 * else $CLGRAD_FAULT; NULL when none. "1:fail@5" makes device 1 fail at step 5, "1:slow=3"
 * computes everything 3 times on it ("1:slow=3@5": at step 5 only); "rank1:exit@5" ends rank
 * 1 at step 5, "rank1:skew@5" moves one of its weights by one ulp (comma-separated). */
const char *clg__testing_faults(void);
/* The atomic writer reached `point` (1: the temporary file is complete, the rename not done;
 * 2: renamed, nothing after it done): calls this thread's hook, if any. */
void clg__testing_atomic_point(int point);
/* An injected rank death: says so on stderr and ends the process with status 3, as a crash
 * would (the point of the test is that the other ranks notice). */
void clg__testing_rank_exit(int rank, uint64_t step);
/* 1 when this host allocation (or device buffer) is the one set to fail. */
int clg__testing_host_alloc_fails(void);
int clg__testing_device_alloc_fails(void);
/* Work-groups per grid dimension at most for the kernels that loop past their grid (65535,
 * or what a test set, to make them loop on small problems). */
unsigned long clg__testing_max_groups(void);
/* Compute units to plan work for in place of the device's (0: the device's), so that a small
 * CPU device plans like a large GPU (weight-gradient slices; see clg__compute_units). */
unsigned clg__testing_compute_units(void);

/* --- set by tests (per thread) --- */

void clg__testing_set_faults(const char *spec); /* NULL: $CLGRAD_FAULT again */
void clg__testing_set_atomic_hook(void (*hook)(int point));
/* Makes the host_n-th host allocation and the device_n-th device buffer from now fail (0:
 * none) and resets the counts. */
void clg__fault_inject(long host_n, long device_n);
void clg__fault_counts(long *host, long *device);
void clg__testing_set_max_groups(unsigned long n); /* 0: 65535 again */
void clg__testing_set_compute_units(unsigned n);    /* 0: the device's again */
/* 1: contexts made from now on this thread keep program binaries even where the driver caches
 * its kernels itself (clg__driver_caches), so that the binary cache is tested on POCL. */
int clg__testing_bincache_always(void);
void clg__testing_set_bincache_always(int on);

#else

#define clg__testing_faults() ((const char *)0)
#define clg__testing_atomic_point(point) ((void)(point))
#define clg__testing_rank_exit(rank, step) ((void)(rank), (void)(step))
#define clg__testing_host_alloc_fails() 0
#define clg__testing_device_alloc_fails() 0
#define clg__testing_max_groups() 65535ul
#define clg__testing_compute_units() 0u
#define clg__testing_bincache_always() 0

#endif
#endif
