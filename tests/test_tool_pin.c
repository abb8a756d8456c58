/* The tools' choice to pin POCL's threads (tools/pocl_pin.c): only when the process may use
 * exactly CPUs 0..n-1 and nobody else chose: an MPI launcher, the user, a thread cap. */
#define _GNU_SOURCE /* the CPU_ macros, sched_setaffinity, setenv */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/testutil.h"
#include "pocl_pin.h"

static cpu_set_t first(int n)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int i = 0; i < n; i++)
        CPU_SET(i, &s);
    return s;
}

static void pins_only_a_whole_machine(void **state)
{
    (void)state;
    cpu_set_t all = first(4);
    assert_int_equal(pocl_pin_wanted(&all, 4, NULL, NULL, NULL, NULL), 1);
    assert_int_equal(pocl_pin_wanted(&all, 8, NULL, NULL, NULL, NULL), 0); /* half the machine */
    cpu_set_t gap = first(4);
    CPU_CLR(1, &gap);
    CPU_SET(5, &gap); /* four CPUs, but thread 1 would be pinned to a forbidden one */
    assert_int_equal(pocl_pin_wanted(&gap, 4, NULL, NULL, NULL, NULL), 0);
    cpu_set_t one = first(1);
    assert_int_equal(pocl_pin_wanted(&one, 1, NULL, NULL, NULL, NULL), 0); /* nothing to part */
}

static void leaves_others_choices(void **state)
{
    (void)state;
    cpu_set_t all = first(2);
    assert_int_equal(pocl_pin_wanted(&all, 2, "0", NULL, NULL, NULL), 0);  /* the user's setting */
    assert_int_equal(pocl_pin_wanted(&all, 2, NULL, "2", NULL, NULL), 0);  /* an MPI rank */
    assert_int_equal(pocl_pin_wanted(&all, 2, NULL, NULL, "1", NULL), 0); /* a thread cap */
    assert_int_equal(pocl_pin_wanted(&all, 2, NULL, NULL, NULL, "pthread pthread"), 0);
    assert_int_equal(pocl_pin_wanted(&all, 2, NULL, NULL, NULL, "pthread"), 1);
}

/* The process-level call: a user's POCL_AFFINITY stays; a tool on several devices, a second
 * OpenCL implementation, or a process confined to one CPU of several is not pinned. */
static void the_process_call(void **state)
{
    (void)state;
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    unsetenv("POCL_MAX_PTHREAD_COUNT");
    setenv("POCL_AFFINITY", "0", 1);
    assert_int_equal(pocl_pin_threads(1), 0);
    assert_string_equal(getenv("POCL_AFFINITY"), "0");
    unsetenv("POCL_AFFINITY");
    assert_int_equal(pocl_pin_threads(0), 0); /* the tool runs several devices */
    assert_null(getenv("POCL_AFFINITY"));
    cpu_set_t before;
    assert_int_equal(sched_getaffinity(0, sizeof before, &before), 0);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 2 || !CPU_ISSET(0, &before))
        skip(); /* needs two CPUs, of which this process may use CPU 0 */
    /* two OpenCL implementations registered: another runtime's devices may join */
    char dir[] = "/tmp/clgrad-test-pin-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%d.icd", dir, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    setenv("OCL_ICD_VENDORS", dir, 1);
    assert_int_equal(pocl_pin_threads(1), 0);
    assert_null(getenv("POCL_AFFINITY"));
    /* the whole machine and one implementation: pinned */
    if (pocl_pin_wanted(&before, online, NULL, NULL, NULL, NULL)) {
        setenv("OCL_ICD_VENDORS", path, 1);
        assert_int_equal(pocl_pin_threads(1), 1);
        assert_string_equal(getenv("POCL_AFFINITY"), "1");
        unsetenv("POCL_AFFINITY");
    }
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%d.icd", dir, i);
        unlink(path);
    }
    rmdir(dir);
    unsetenv("OCL_ICD_VENDORS");
    cpu_set_t only0 = first(1);
    assert_int_equal(sched_setaffinity(0, sizeof only0, &only0), 0);
    assert_int_equal(pocl_pin_threads(1), 0);
    assert_null(getenv("POCL_AFFINITY"));
    assert_int_equal(sched_setaffinity(0, sizeof before, &before), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pins_only_a_whole_machine),
        cmocka_unit_test(leaves_others_choices),
        cmocka_unit_test(the_process_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
