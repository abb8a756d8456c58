/* Persistent workers for the device group's steps (see crew.h): one mutex and condition per
 * worker, so that starting one wakes only it. */
#include <pthread.h>
#include <stdlib.h>

#include "parallel/crew.h"
#include "runtime/runtime_internal.h"

typedef struct worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    void *(*fn)(void *); /* the job, queued or running (NULL: none) */
    void *arg;
    int running;         /* the thread exists */
    int quit;
} worker;

struct clg__crew {
    size_t n;
    worker *w;
};

static void *loop(void *p)
{
    worker *w = p;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->fn && !w->quit)
            pthread_cond_wait(&w->changed, &w->lock);
        if (!w->fn)
            break;
        void *(*fn)(void *) = w->fn;
        void *arg = w->arg;
        pthread_mutex_unlock(&w->lock);
        fn(arg);
        pthread_mutex_lock(&w->lock);
        w->fn = NULL;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

clg__crew *clg__crew_create(size_t n)
{
    clg__crew *c = clg__calloc(1, sizeof *c);
    worker *w = c ? clg__calloc(n ? n : 1, sizeof *w) : NULL;
    if (!w) {
        free(c);
        return NULL;
    }
    c->n = n;
    c->w = w;
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_init(&w[i].lock, NULL);
        pthread_cond_init(&w[i].changed, NULL);
    }
    return c;
}

void clg__crew_destroy(clg__crew *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        worker *w = &c->w[i];
        pthread_mutex_lock(&w->lock);
        w->quit = 1; /* a queued job still runs first */
        pthread_cond_broadcast(&w->changed);
        pthread_mutex_unlock(&w->lock);
        if (w->running)
            pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->changed);
    }
    free(c->w);
    free(c);
}

int clg__crew_start(clg__crew *c, size_t i, void *(*fn)(void *), void *arg)
{
    if (!c || i >= c->n)
        return 0;
    worker *w = &c->w[i];
    pthread_mutex_lock(&w->lock);
    int ok = !w->fn && !w->quit;
    if (ok && !w->running)
        ok = w->running = pthread_create(&w->thread, NULL, loop, w) == 0;
    if (ok) {
        w->fn = fn;
        w->arg = arg;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    return ok;
}

void clg__crew_wait(clg__crew *c, size_t i)
{
    if (!c || i >= c->n)
        return;
    worker *w = &c->w[i];
    pthread_mutex_lock(&w->lock);
    while (w->fn)
        pthread_cond_wait(&w->changed, &w->lock);
    pthread_mutex_unlock(&w->lock);
}
