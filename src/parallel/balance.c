/* Auto split: shares in proportion to each device's measured speed, so that all finish a step
 * together. A device's speed is its shard over the median time of its last steps at that shard,
 * leaving out the first (which grows buffers, and at the start builds kernels): the median,
 * because a machine's other work lands on one core at a time and makes single steps long, which
 * a mean passes on to the split and the next steps pay for. Once every working device has
 * MEASURED such steps, the shares follow the speeds at once (undamped: where a device's
 * per-step costs do not shrink with its shard, the next re-split corrects what is left; two or
 * three re-splits settle). A new split is taken only when it is predicted to end the step at
 * least GAIN sooner, or half a sample of the slowest device's shard sooner where that is less
 * (noise would otherwise move a sample back and forth, each move costing a step unmeasured; a
 * large shard, where one sample is less than GAIN, still gets to its balance). No share falls
 * below MIN_SHARE of the whole, so every device keeps being measured. */
#include "parallel/group_internal.h"

enum { MEASURED = 3, MAX_DEVICES = 64 };
#define GAIN 0.02
#define MIN_SHARE 0.05

static double median(const double *v, unsigned n)
{
    double s[CLG__TIMED_STEPS];
    for (unsigned i = 0; i < n; i++) { /* insertion sort of at most 5 */
        unsigned k = i;
        for (; k > 0 && s[k - 1] > v[i]; k--)
            s[k] = s[k - 1];
        s[k] = v[i];
    }
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Accounts the last step's time; returns the device's speed (samples per second) once it
 * has enough steps at its shard, else 0. */
static double measure(replica *r)
{
    if (r->count != r->timed_count) { /* a new shard: this step is left out */
        r->timed_count = r->count;
        r->ntimed = 0;
        return 0.0;
    }
    r->timed[r->ntimed % CLG__TIMED_STEPS] = r->seconds;
    r->ntimed++;
    unsigned n = r->ntimed < CLG__TIMED_STEPS ? r->ntimed : CLG__TIMED_STEPS;
    double t = n >= MEASURED ? median(r->timed, n) : 0.0;
    return t > 0.0 ? (double)r->count / t : 0.0;
}

/* The step time a split predicts: the slowest device's (*samples: its shard). */
static double predicted(const size_t *counts, const double *speed, size_t n, size_t *samples)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++)
        if (speed[i] > 0.0 && counts[i] / speed[i] > worst) {
            worst = counts[i] / speed[i];
            *samples = counts[i];
        }
    return worst;
}

void clg__group_rebalance(clg__group *g)
{
    size_t n = g->n < MAX_DEVICES ? g->n : MAX_DEVICES, batch = 0, working = 0;
    double speed[MAX_DEVICES], speeds = 0.0, old = 0.0;
    int ready = 1;
    for (size_t i = 0; i < n; i++) {
        replica *r = &g->r[i];
        speed[i] = 0.0;
        batch += r->count;
        if (r->dropped || !r->count)
            continue;
        speed[i] = measure(r);
        ready &= speed[i] > 0.0;
        speeds += speed[i];
        old += g->weights[i];
        working++;
    }
    if (!g->auto_split || !ready || working < 2)
        return;
    /* devices not measured keep their share, on the speeds' scale */
    float w[MAX_DEVICES];
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        w[i] = g->r[i].dropped ? 0.0f
                               : (float)(speed[i] > 0.0 ? speed[i] : g->weights[i] * speeds / old);
        sum += w[i];
    }
    for (size_t i = 0; i < n; i++)
        if (!g->r[i].dropped && w[i] < MIN_SHARE * sum)
            w[i] = (float)(MIN_SHARE * sum);
    size_t next[MAX_DEVICES], slowest = 1, unused;
    double now = predicted(g->counts, speed, n, &slowest);
    double gain = 0.5 / (double)slowest < GAIN ? 0.5 / (double)slowest : GAIN;
    if (clg_split_batch(batch, w, n, next) != CLG_OK ||
        predicted(next, speed, n, &unused) > (1.0 - gain) * now)
        return;
    for (size_t i = 0; i < n; i++)
        g->weights[i] = w[i];
}
