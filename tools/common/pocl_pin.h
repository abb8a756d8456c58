/* Pinning POCL's worker threads, one per core, when the process has the machine to itself. */
#ifndef CLGRAD_POCL_PIN_H
#define CLGRAD_POCL_PIN_H

/* Whether to set POCL_AFFINITY=1, given the cpu_set_t the process may run on (allowed): the
 * user has not chosen (affinity NULL), the process is not an MPI rank (mpi_size NULL: ranks on
 * one host would pin their threads to the same cores), POCL's thread count is not capped
 * (max_threads NULL), POCL gives one device (pocl_devices names at most one: two pinned pools
 * ran 2 POCL devices at 1,653 against 2,333 images/s unpinned), and the process may run on
 * exactly CPUs 0..online-1 (POCL pins its thread i to CPU i and aborts when that CPU is not
 * allowed: taskset, cpusets). */
int pocl_pin_wanted(const void *allowed, long online, const char *affinity,
                    const char *mpi_size, const char *max_threads, const char *pocl_devices);

/* Sets POCL_AFFINITY=1 when the tool runs on one device (one_device: not CPU sub-devices or
 * several devices at once, which ran slower pinned), the ICD loader knows one OpenCL
 * implementation, and pocl_pin_wanted says so for this process. Call before the first
 * OpenCL call: POCL reads it once, when it starts its threads. Returns 1 if it set it. */
int pocl_pin_threads(int one_device);

/* Whether POCL's threads are pinned in this process (POCL_AFFINITY is 1). */
int pocl_pinned(void);

#endif
