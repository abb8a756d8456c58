/* What the views that transform samples share: sample-sized buffers kept between reads (one
 * or more per reader thread; fresh memory costs a page fault per 4 KiB), and the hash their
 * randomness comes from. */
#include <stdlib.h>

#include "data/data_internal.h"

int clg__pool_init(clg__buffer_pool *p, size_t floats)
{
    p->floats = floats;
    p->n = 0;
    return pthread_mutex_init(&p->lock, NULL) == 0;
}

float *clg__pool_take(clg__buffer_pool *p)
{
    float *b = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->n)
        b = p->spare[--p->n];
    pthread_mutex_unlock(&p->lock);
    return b ? b : clg__malloc(p->floats * sizeof *b);
}

void clg__pool_give(clg__buffer_pool *p, float *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->n < sizeof p->spare / sizeof *p->spare) {
        p->spare[p->n++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    free(b);
}

void clg__pool_free(clg__buffer_pool *p)
{
    while (p->n)
        free(p->spare[--p->n]);
    pthread_mutex_destroy(&p->lock);
}

uint64_t clg__mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
