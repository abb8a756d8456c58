/* Gradient ranges that the devices of a group finish reading one after another (streaming to
 * MPI while backward goes on): device threads publish the i-th range they have read; the
 * stepping thread takes each range once every device has published it, in order. */
#ifndef CLGRAD_PARALLEL_RANGES_H
#define CLGRAD_PARALLEL_RANGES_H

#include <pthread.h>
#include <stddef.h>

typedef struct clg__ranges {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t cap;                       /* ranges a step can have: the layers with parameters */
    size_t *lo, *hi;
    unsigned *count;                  /* devices that have published range i */
    unsigned running;                 /* device threads still working */
} clg__ranges;

/* Room for cap ranges (every layer with parameters its own); 0 when it cannot be made. */
int clg__ranges_init(clg__ranges *r, size_t cap);
void clg__ranges_destroy(clg__ranges *r);
/* A new step with `running` device threads. */
void clg__ranges_reset(clg__ranges *r, unsigned running);
/* A device thread has read its index-th range [lo, hi) of the parameters. */
void clg__ranges_publish(clg__ranges *r, size_t index, size_t lo, size_t hi);
/* A device thread has ended (after its last publish, or failing). */
void clg__ranges_finished(clg__ranges *r);
/* The stepping thread: take(user, lo, hi) for each range every one of `devices` has
 * published, in order, until every device thread has ended; idle(user) between waits of at
 * most a millisecond. Returns the parameters covered (the sum of hi - lo). */
size_t clg__ranges_drain(clg__ranges *r, unsigned devices,
                         void (*take)(void *user, size_t lo, size_t hi),
                         void (*idle)(void *user), void *user);

#endif
