/* Ranges of gradients handed from device threads to the stepping thread (see ranges.h). */
#include "parallel/ranges.h"

#include <stdlib.h>
#include <time.h>

int clg__ranges_init(clg__ranges *r, size_t cap)
{
    r->cap = cap;
    r->lo = calloc(cap ? cap : 1, sizeof *r->lo);
    r->hi = calloc(cap ? cap : 1, sizeof *r->hi);
    r->count = calloc(cap ? cap : 1, sizeof *r->count);
    if (!r->lo || !r->hi || !r->count || pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r->lo), free(r->hi), free(r->count);
        return 0;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int ok = pthread_cond_init(&r->changed, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (!ok) {
        pthread_mutex_destroy(&r->lock);
        free(r->lo), free(r->hi), free(r->count);
    }
    return ok;
}

void clg__ranges_destroy(clg__ranges *r)
{
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r->lo), free(r->hi), free(r->count);
}

void clg__ranges_reset(clg__ranges *r, unsigned running)
{
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->cap; i++)
        r->count[i] = 0;
    r->running = running;
    pthread_mutex_unlock(&r->lock);
}

void clg__ranges_publish(clg__ranges *r, size_t index, size_t lo, size_t hi)
{
    if (index >= r->cap)
        return; /* past the table (not a layer's): summed at the end with the rest */
    pthread_mutex_lock(&r->lock);
    if (r->count[index]++ == 0) { /* every device reads the same layers in the same order */
        r->lo[index] = lo;
        r->hi[index] = hi;
    }
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

void clg__ranges_finished(clg__ranges *r)
{
    pthread_mutex_lock(&r->lock);
    r->running--;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

size_t clg__ranges_drain(clg__ranges *r, unsigned devices,
                         void (*take)(void *user, size_t lo, size_t hi),
                         void (*idle)(void *user), void *user)
{
    size_t next = 0, covered = 0;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (next < r->cap && r->count[next] == devices) {
            size_t lo = r->lo[next], hi = r->hi[next];
            next++;
            pthread_mutex_unlock(&r->lock);
            take(user, lo, hi);
            covered += hi - lo;
            pthread_mutex_lock(&r->lock);
        }
        if (!r->running) { /* nothing more will come, but what came since the check above */
            if (next < r->cap && r->count[next] == devices)
                continue;
            break;
        }
        pthread_mutex_unlock(&r->lock);
        if (idle)
            idle(user);
        pthread_mutex_lock(&r->lock);
        if (r->running && !(next < r->cap && r->count[next] == devices)) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += 1000000;
            if (until.tv_nsec >= 1000000000)
                until.tv_sec++, until.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&r->changed, &r->lock, &until);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return covered;
}
