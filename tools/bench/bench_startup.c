/* clgrad-bench startup: time to get every kernel family ready on a device, built from source
 * (empty clgrad cache) and loaded from the program-binary cache. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "tool_error.h"

/* Creates a context, builds every family and runs one kernel, so that runtimes which finish
 * compiling at the first launch (POCL) are counted too. Returns seconds, or -1. */
static double one_start(const bench_opts *o, const char *dir, clg_ctx_stats *stats)
{
    double t0 = tool_now();
    clg_ctx *ctx = bench_ctx(o, dir);
    if (!ctx)
        return -1;
    clg_tensor *t = NULL;
    clg_status st = clg_ctx_warm_up(ctx);
    if (st == CLG_OK)
        st = clg_tensor_create(ctx, (clg_shape){1, 1, 1, 64}, &t);
    if (st == CLG_OK)
        st = clg_tensor_fill(t, 1.0f);
    if (st == CLG_OK)
        st = clg_ctx_finish(ctx);
    double dt = tool_now() - t0;
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-bench: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
    clg_ctx_get_stats(ctx, stats);
    clg_tensor_destroy(t);
    clg_ctx_destroy(ctx);
    return st == CLG_OK ? dt : -1;
}

int bench_startup(const bench_opts *o)
{
    double cold[64], warm[64];
    int runs = o->runs > 64 ? 64 : o->runs;
    clg_ctx_stats cs = {0}, ws = {0};
    for (int r = 0; r < runs; r++) {
        char dir[] = "/tmp/clgrad-bench-startup-XXXXXX";
        if (!mkdtemp(dir))
            return 1;
        cold[r] = one_start(o, dir, &cs);
        warm[r] = one_start(o, dir, &ws);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0 || cold[r] < 0 || warm[r] < 0)
            return 1;
    }
    double cm = bench_median(cold, (size_t)runs), wm = bench_median(warm, (size_t)runs);
    const char *poc = getenv("POCL_KERNEL_CACHE");
    if (o->json) {
        printf("{\"bench\":\"startup\",\"programs\":%u,\"cold_s\":%.4f,\"cached_s\":%.4f,"
               "\"pocl_kernel_cache\":\"%s\",\"runs\":%d}\n",
               cs.programs_from_source, cm, wm, poc ? poc : "default", runs);
    } else {
        printf("start-up, every kernel family (%u programs), median of %d (POCL_KERNEL_CACHE=%s):\n",
               cs.programs_from_source, runs, poc ? poc : "default");
        printf("  built from source   %8.1f ms\n", 1e3 * cm);
        printf("  from binary cache   %8.1f ms  (%u programs from cache, %u from source)\n",
               1e3 * wm, ws.programs_from_cache, ws.programs_from_source);
    }
    return 0;
}
