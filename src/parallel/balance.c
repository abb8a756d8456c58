/* Auto split: shares such that all devices finish a step together.
 *
 * A device's time at its shard is the second shortest of its last steps there, leaving out
 * the first (which grows buffers, and at the start builds kernels): a machine's other work
 * only lengthens steps, one core at a time, so a device's own speed shows in its short steps
 * (the second, so that one odd step does not decide; of three, their median). Its model is
 * that time in proportion to the shard, or, once it has run a shard at least FIT_SPAN apart,
 * the line through both points: per-step costs that do not shrink with the shard (launches,
 * weights streamed whatever the shard; a slowed device repeats them) make the proportional
 * guess move too little, and one re-split with the line lands where several would.
 *
 * How soon a new split is taken depends on what it is predicted to gain. A clear imbalance (a
 * step at least CLEAR sooner, e.g. a device 3x slower than the others) is acted on once every
 * working device has MEASURED steps. A smaller one waits until every device has a full window
 * of CLG__TIMED_STEPS, and then, taken or not, the windows start afresh: judged on a window
 * that slides by one step, each step's verdict is nearly the last one's, and noise on two
 * equal devices crosses any threshold sooner or later. A gain of at least SURE is then taken;
 * below it, one of at least GAIN (or half a sample of the slowest device's shard where that
 * is less, so that a large shard, where one sample is less than GAIN, still gets to its
 * balance) must be proposed by VERDICTS verdicts in a row that move every shard the same way
 * (the last one is taken): a slow phase of one core for ten steps or so is then outlasted.
 * Measured on two one-core sub-devices: a fixed equal split ran 3-5% faster than the auto
 * split before these rules (a median over a sliding window, 2% or half a sample), which kept
 * moving a sample back and forth; with them the two are within 2.3% either way. No share
 * falls below MIN_SHARE of the whole, so every device keeps being measured. */
#include <math.h>

#include "parallel/group_internal.h"

enum { MEASURED = 3, VERDICTS = 3, MAX_DEVICES = CLG__GROUP_MAX_DEVICES };
#define GAIN 0.02
#define SURE 0.05
#define CLEAR 0.2
#define FIT_SPAN 0.2
#define MIN_SHARE 0.05

/* A step at shard c is predicted to take a + b * c seconds. */
typedef struct model {
    double a, b;
} model;

/* The second shortest of n >= 2 times. */
static double second_shortest(const double *v, unsigned n)
{
    double a = v[0] < v[1] ? v[0] : v[1], b = v[0] < v[1] ? v[1] : v[0];
    for (unsigned i = 2; i < n; i++) {
        if (v[i] < a) {
            b = a;
            a = v[i];
        } else if (v[i] < b) {
            b = v[i];
        }
    }
    return b;
}

/* Accounts the last step's time; returns the device's time at its shard once it has enough
 * steps there, else 0. A new shard keeps the last one's time as the model's second point. */
static double measure(replica *r)
{
    unsigned n = r->ntimed < CLG__TIMED_STEPS ? r->ntimed : CLG__TIMED_STEPS;
    if (r->count != r->timed_count) { /* a new shard: this step is left out */
        if (n >= MEASURED) {
            r->fit_count = r->timed_count;
            r->fit_seconds = second_shortest(r->timed, n);
        }
        r->timed_count = r->count;
        r->ntimed = 0;
        return 0.0;
    }
    r->timed[r->ntimed % CLG__TIMED_STEPS] = r->seconds;
    r->ntimed++;
    n = r->ntimed < CLG__TIMED_STEPS ? r->ntimed : CLG__TIMED_STEPS;
    return n >= MEASURED ? second_shortest(r->timed, n) : 0.0;
}

/* The line through the device's two points where they are FIT_SPAN apart and it rises from
 * a per-step cost of at least 0 below t; else time in proportion to the shard. */
static model fit(const replica *r, double t)
{
    double c = (double)r->count, c0 = (double)r->fit_count;
    if (r->fit_seconds > 0.0 && fabs(c - c0) >= FIT_SPAN * (c > c0 ? c : c0)) {
        double b = (t - r->fit_seconds) / (c - c0), a = t - b * c;
        if (b > 0.0 && a >= 0.0 && a < t)
            return (model){a, b};
    }
    return (model){0.0, t / c};
}

/* The step time a split predicts: the slowest device's (*samples: its shard). Devices
 * without a model (b = 0) are left out. */
static double predicted(const size_t *counts, const model *m, size_t n, size_t *samples)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = m[i].a + m[i].b * (double)counts[i];
        if (m[i].b > 0.0 && counts[i] && t > worst) {
            worst = t;
            *samples = counts[i];
        }
    }
    return worst;
}

/* Starts every device's window afresh at its current shard (no step left out). */
static void restart_windows(clg__group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g->r[i].ntimed = 0;
}

/* Whether to take the split `next`, predicted to end the step `gain` sooner, keeping the
 * verdict for the next; `full`: every device has a full window; `slowest`: the shard of the
 * device that ends the step now. */
static int take(clg__group *g, size_t n, const size_t *next, double gain, int full,
                size_t slowest)
{
    if (gain >= CLEAR)
        return 1;
    if (!full)
        return 0;
    restart_windows(g, n); /* the next verdict on steps of its own */
    int again = g->verdicts > 0; /* the last verdict moved every shard the same way */
    for (size_t i = 0; i < n; i++) {
        size_t c = g->r[i].count, p = g->r[i].proposed;
        again &= (next[i] > c) == (p > c) && (next[i] < c) == (p < c);
        g->r[i].proposed = next[i];
    }
    double least = 0.5 / (double)slowest < GAIN ? 0.5 / (double)slowest : GAIN;
    g->verdicts = gain < least ? 0 : again ? g->verdicts + 1 : 1;
    return g->verdicts && (gain >= SURE || g->verdicts >= VERDICTS);
}

void clg__group_rebalance(clg__group *g)
{
    size_t n = g->n < MAX_DEVICES ? g->n : MAX_DEVICES, batch = 0, working = 0;
    model m[MAX_DEVICES];
    double old = 0.0, inv = 0.0, off = 0.0;
    int ready = 1, full = 1;
    for (size_t i = 0; i < n; i++) {
        replica *r = &g->r[i];
        m[i] = (model){0.0, 0.0};
        batch += r->count;
        if (r->dropped || !r->count)
            continue;
        double t = measure(r);
        ready &= t > 0.0;
        full &= r->ntimed >= CLG__TIMED_STEPS;
        if (t > 0.0) {
            m[i] = fit(r, t);
            inv += 1.0 / m[i].b;
            off += m[i].a / m[i].b;
        }
        old += g->weights[i];
        working++;
    }
    if (!g->auto_split || !ready || working < 2)
        return;
    /* shards where every working device's line ends at the same time T; the others keep
     * their share of the batch */
    double T = ((double)batch + off) / inv, sum = 0.0;
    float w[MAX_DEVICES];
    for (size_t i = 0; i < n; i++) {
        double s = m[i].b > 0.0 ? (T - m[i].a) / m[i].b : g->weights[i] * (double)batch / old;
        w[i] = g->r[i].dropped ? 0.0f : (float)(s > 0.0 ? s : 0.0);
        sum += w[i];
    }
    for (size_t i = 0; i < n; i++)
        if (!g->r[i].dropped && w[i] < MIN_SHARE * sum)
            w[i] = (float)(MIN_SHARE * sum);
    size_t next[MAX_DEVICES], slowest = 1, unused;
    double now = predicted(g->counts, m, n, &slowest);
    if (clg_split_batch(batch, w, n, next) != CLG_OK || !(now > 0.0))
        return;
    double gain = 1.0 - predicted(next, m, n, &unused) / now;
    if (!take(g, n, next, gain, full, slowest))
        return;
    g->verdicts = 0;
    for (size_t i = 0; i < n; i++)
        g->weights[i] = w[i];
}
