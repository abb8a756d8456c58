/* Training runs of the default Fashion-MNIST network on synthetic data in memory, shared by
 * the single-device, scaling and cluster benchmarks. */
#ifndef CLGRAD_BENCH_RUN_H
#define CLGRAD_BENCH_RUN_H

#include "bench_common.h"

typedef struct step_times {
    double *t;
    size_t n, cap;
} step_times;

/* `iters` steps of `batch` (Adam, no shuffling), recording the time of every step. */
typedef struct bench_run {
    float *x;
    int32_t *y;                /* targets: labels (per sample or pixel), or values */
    step_times st;
    clg_net *net;
    clg_datastore *ds;
    clg_train_options opt;
} bench_run;

/* A net (net_text, or NULL: the default Fashion-MNIST network), initialised, and synthetic
 * data of its input shape and classes for `iters` steps of `batch`, with training options
 * that record every step's time. */
clg_status bench_run_setup(bench_run *r, clg_ctx *ctx, size_t batch, size_t iters,
                           const char *net_text);
void bench_run_free(bench_run *r);
/* Median step time after 10 warm-up steps (kernel builds, first touch of buffers); *steps
 * receives how many were timed. */
double bench_median_step(const step_times *st, size_t *steps);

#endif
