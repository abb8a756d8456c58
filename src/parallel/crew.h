/* A crew of worker threads that stay for the life of a device group: worker i runs job i of a
 * step and waits for the next, so that a step creates no thread. On a GPU a step of a small
 * network takes a few milliseconds, and creating and joining a thread per device and step
 * costs tens of microseconds each, a wake-up a fraction of that. */
#ifndef CLGRAD_PARALLEL_CREW_H
#define CLGRAD_PARALLEL_CREW_H

#include <stddef.h>

typedef struct clg__crew clg__crew;

/* n workers, each started on its first job; NULL when out of memory. */
clg__crew *clg__crew_create(size_t n);
/* Waits for every started job, then ends the workers. NULL is ignored. */
void clg__crew_destroy(clg__crew *c);
/* Runs fn(arg) on worker i; returns 0 (nothing started) where the worker cannot be had (no
 * such worker, no thread to be had, or it is busy): the caller then runs the job itself. */
int clg__crew_start(clg__crew *c, size_t i, void *(*fn)(void *), void *arg);
/* Waits until worker i's job is done (at once if none was started). */
void clg__crew_wait(clg__crew *c, size_t i);

#endif
