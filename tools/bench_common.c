/* Shared pieces of clgrad-bench. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

clg_ctx *bench_ctx(const bench_opts *o, const char *cache_dir)
{
    clg_device_info *all;
    size_t n, *idx, count;
    clg_ctx *ctx = NULL;
    clg_ctx_options co = clg_ctx_options_default();
    co.cache_dir = cache_dir;
    co.profiling = o->profile;
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK) {
        st = clg_devices_select(all, n, CLG_ENV_AUTO, o->filter, &idx, &count);
        if (st == CLG_OK) {
            st = clg_ctx_create(&all[idx[0]], &co, &ctx);
            free(idx);
        }
        clg_devices_free(all, n);
    }
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-bench: %s: %s\n", clg_status_name(st), clg_last_error());
    return ctx;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_min(const double *v, size_t n)
{
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

double bench_max(const double *v, size_t n)
{
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}
