/* The device group's crew (src/parallel/crew.c): persistent workers, one job each at a time.
 * Also run under ThreadSanitizer by CI. */
#include <stdatomic.h>
#include <time.h>
#include "common/testutil.h"
#include "parallel/crew.h"

typedef struct job {
    atomic_int started, release;
    int runs;
} job;

static void *count(void *arg)
{
    ((job *)arg)->runs++;
    return NULL;
}

/* Holds its worker until released. */
static void *hold(void *arg)
{
    job *j = arg;
    atomic_store(&j->started, 1);
    while (!atomic_load(&j->release)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    j->runs++;
    return NULL;
}

/* Many steps on every worker: each job runs once per start, and its effects are the caller's
 * after the wait. */
static void jobs_run_once_each_and_are_seen_after_the_wait(void **state)
{
    (void)state;
    clg__crew *c = clg__crew_create(3);
    assert_non_null(c);
    job j[3] = {{0}};
    for (int step = 0; step < 500; step++) {
        for (size_t i = 0; i < 3; i++)
            assert_true(clg__crew_start(c, i, count, &j[i]));
        for (size_t i = 0; i < 3; i++)
            clg__crew_wait(c, i);
        for (size_t i = 0; i < 3; i++)
            assert_int_equal(j[i].runs, step + 1);
    }
    clg__crew_wait(c, 1); /* nothing started: returns at once */
    clg__crew_destroy(c);
}

/* No such worker, or a busy one: nothing starts, and the caller runs the job itself. */
static void a_missing_or_busy_worker_starts_nothing(void **state)
{
    (void)state;
    clg__crew *c = clg__crew_create(1);
    job j = {0}, k = {0};
    assert_false(clg__crew_start(c, 1, count, &k));
    assert_false(clg__crew_start(NULL, 0, count, &k));
    assert_true(clg__crew_start(c, 0, hold, &j));
    while (!atomic_load(&j.started))
        ;
    assert_false(clg__crew_start(c, 0, count, &k));
    atomic_store(&j.release, 1);
    clg__crew_wait(c, 0);
    assert_int_equal(j.runs, 1);
    assert_int_equal(k.runs, 0);
    clg__crew_destroy(c);
    clg__crew_destroy(NULL);
}

/* A crew ended while its job may still run (released just before) waits for it; one never
 * used ends without threads. */
static void destroy_finishes_a_running_job(void **state)
{
    (void)state;
    clg__crew *c = clg__crew_create(2);
    job j = {0};
    assert_true(clg__crew_start(c, 1, hold, &j));
    while (!atomic_load(&j.started))
        ;
    atomic_store(&j.release, 1);
    clg__crew_destroy(c);
    assert_int_equal(j.runs, 1);
    clg__crew_destroy(clg__crew_create(4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobs_run_once_each_and_are_seen_after_the_wait),
        cmocka_unit_test(a_missing_or_busy_worker_starts_nothing),
        cmocka_unit_test(destroy_finishes_a_running_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
