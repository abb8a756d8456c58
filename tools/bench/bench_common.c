/* Shared pieces of clgrad-bench. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"
#include "json_out.h"
#include "pocl_pin.h"
#include "tool_error.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host CPU's model name from /proc/cpuinfo ("" where there is none). */
static void cpu_model(char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, cap, "%s", colon + 1 + (colon[1] == ' '));
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

void bench_json_row(const clg_ctx *ctx, const char *bench, const char *fmt, ...)
{
    const clg_device_info *d = clg_ctx_device(ctx);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    printf("{\"bench\":");
    json_string(bench);
    printf(",\"platform\":");
    json_string(d ? d->platform : "");
    printf(",\"device\":");
    json_string(d ? d->name : "");
    printf(",\"cpu\":");
    json_string(cpu);
    printf(",\"gpu_profile\":%s", clg_ctx_decides_as_gpu(ctx) && d && d->type == CLG_DEVICE_CPU
                                     ? "true" : "false");
    printf(",\"pocl_affinity\":%s,", pocl_pinned() ? "true" : "false");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("}\n");
}

clg_ctx *bench_ctx(const bench_opts *o, const char *cache_dir)
{
    clg_device_info *all;
    size_t n, count;
    clg_device_info *chosen;
    clg_ctx *ctx = NULL;
    clg_ctx_options co = clg_ctx_options_default();
    co.cache_dir = cache_dir;
    co.profiling = o->profile;
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK) {
        st = clg_devices_select(all, n, CLG_ENV_AUTO, o->filter, &chosen, &count);
        if (st == CLG_OK) {
            st = clg_ctx_create(&chosen[0], &co, &ctx);
            clg_devices_free(chosen, count);
        }
        clg_devices_free(all, n);
    }
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-bench: %s\n", tool_message(st, clg_last_error()));
    return ctx;
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

void bench_print_kernel_times(clg_ctx *ctx, const char *per, size_t count)
{
    clg_kernel_time kt[64];
    size_t nk = 0;
    clg_ctx_kernel_times(ctx, kt, 64, &nk, 1);
    nk = nk < 64 ? nk : 64;
    double total = 0;
    for (size_t i = 0; i < nk; i++)
        total += kt[i].seconds;
    for (size_t i = 1; i < nk; i++) /* longest first */
        for (size_t j = i; j > 0 && kt[j].seconds > kt[j - 1].seconds; j--) {
            clg_kernel_time t = kt[j];
            kt[j] = kt[j - 1], kt[j - 1] = t;
        }
    char head[16];
    snprintf(head, sizeof head, "ms/%s", per);
    printf("%-28s %8s %10s %7s\n", "kernel", "calls", head, "share");
    for (size_t i = 0; i < nk; i++)
        printf("%-28s %8lu %10.3f %6.1f%%\n", kt[i].name, kt[i].calls / count,
               kt[i].seconds * 1e3 / (double)count, 100 * kt[i].seconds / total);
    printf("%-28s %8s %10.3f\n\n", "sum", "", total * 1e3 / (double)count);
}
