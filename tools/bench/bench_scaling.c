/* clgrad-bench train --scaling: multi-device training images/s on one-core sub-devices, the
 * whole CPU, two POCL devices and a fast+slow pair. Every configuration runs once per round,
 * the rounds one after the other: this machine's speed drifts over seconds, so each ratio
 * (2 sub-devices over 1, the pair over its two devices alone) is taken within a round, and
 * the median over the rounds is reported. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_run.h"
#include "tool_error.h"

enum { MAX_ROUNDS = 32, TIMED_STEPS = 15 };

/* A configuration: its name, overlap, zero copy (-1: the default, in host memory on CPUs; 0:
 * weights sent and gradients read back), injected faults (e.g. "1:slow=3") and fixed shares
 * (NULL: auto); the contexts it trains on; its rate and read-back time in each round. */
typedef struct rate_job {
    const char *name;
    int overlap, zero_copy;
    const char *faults;
    const float *load;
    clg_ctx *const *ctxs;
    size_t n;
    double rate[MAX_ROUNDS], readback[MAX_ROUNDS];
} rate_job;

/* Training images/s of the default network (median step after 10); a single context trains
 * through a device group too when faults are injected. 0 on failure (reported). */
static double train_rate(const rate_job *j, size_t batch, double *readback_ms)
{
    bench_run r;
    double rate = 0;
    clg_status s = bench_run_setup(&r, j->ctxs[0], batch, 10 + TIMED_STEPS, NULL);
    clg_train_options opt = r.opt;
    clg_exec_options x = clg_exec_options_default();
    if (j->n > 1 || j->faults) {
        x.contexts = j->ctxs;
        x.context_count = j->n;
    }
    x.overlap = j->overlap < 0 ? CLG_SWITCH_AUTO : j->overlap ? CLG_SWITCH_ON : CLG_SWITCH_OFF;
    x.zero_copy = j->zero_copy < 0 ? CLG_SWITCH_AUTO : j->zero_copy ? CLG_SWITCH_ON : CLG_SWITCH_OFF;
    x.worker_load = j->load;
    x.worker_load_count = j->load ? j->n : 0;
    opt.execution = &x;
    /* injected faults (a slow device) reach only a library built with its test hooks
     * (CLGRAD_TESTING, as in the build with tests) */
    if (j->faults)
        setenv("CLGRAD_FAULT", j->faults, 1);
    clg_train_report rep;
    if (s == CLG_OK)
        s = clg_train(r.net, r.ds, NULL, &opt, &rep);
    if (j->faults)
        unsetenv("CLGRAD_FAULT");
    if (s == CLG_OK) {
        size_t k;
        rate = (double)batch / bench_median_step(&r.st, &k);
        *readback_ms = rep.readback_ms;
    } else {
        fprintf(stderr, "clgrad-bench train: %s: %s\n", j->name, tool_message(s, clg_ctx_last_error(j->ctxs[0])));
    }
    bench_run_free(&r);
    return rate;
}

static double median_of(const double *v, int n)
{
    double c[MAX_ROUNDS];
    memcpy(c, v, (size_t)n * sizeof *c);
    return bench_median(c, (size_t)n);
}

static void report(const rate_job *j, size_t batch, int rounds, int json)
{
    double rate = median_of(j->rate, rounds);
    if (json) {
        printf("{\"bench\":\"train\",\"net\":\"default\",\"devices\":\"%s\",\"config\":\"%s\","
               "\"split\":\"%s\",\"overlap\":%s,\"zero_copy\":%s,\"batch\":%zu,"
               "\"images_per_s\":%.1f,\"rounds\":%d}\n", clg_ctx_device(j->ctxs[0])->name,
               j->name, j->n < 2 ? "none" : j->load ? "weights" : "auto",
               j->n > 1 && j->overlap > 0 ? "true" : "false",
               (j->n > 1 || j->faults) && j->zero_copy ? "true" : "false", batch, rate, rounds);
        return;
    }
    printf("%-17s %zu device%s %10.1f images/s%s%s (rounds:", j->name, j->n, j->n > 1 ? "s" : " ",
           rate, j->n < 2 ? "" : j->zero_copy ? " (in host memory)" : j->overlap > 0
               ? " (copies, overlapped read-back)" : " (copies, read-back after backward)",
           j->n > 1 ? (j->load ? ", fixed split" : ", auto split") : "");
    for (int k = 0; k < rounds; k++)
        printf(" %.0f", j->rate[k]);
    printf(")\n");
}

/* Runs every job once per round, `rounds` times, and reports each job's median. */
static void run_rounds(rate_job *jobs, size_t count, size_t batch, int rounds, int json)
{
    for (int k = 0; k < rounds; k++)
        for (size_t i = 0; i < count; i++)
            jobs[i].rate[k] = train_rate(&jobs[i], batch, &jobs[i].readback[k]);
    for (size_t i = 0; i < count; i++)
        report(&jobs[i], batch, rounds, json);
}

/* Median over the rounds of a's rate over the sum of the rates of b (and c, when given). */
static double ratio(const rate_job *a, const rate_job *b, const rate_job *c, int rounds)
{
    double q[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++) {
        double d = b->rate[k] + (c ? c->rate[k] : 0.0);
        q[k] = d > 0 ? a->rate[k] / d : 0.0;
    }
    return median_of(q, rounds);
}

/* The child run of "pocl2" (POCL reads POCL_DEVICES once per process). */
static int pocl2(const clg_device_info *chosen, size_t count, size_t batch,
                 int rounds, int json)
{
    clg_ctx_options co = clg_ctx_options_default();
    clg_ctx *two[2] = {NULL, NULL};
    clg_status st = count >= 2 ? CLG_OK : CLG_ERR_NO_DEVICE;
    for (int i = 0; st == CLG_OK && i < 2; i++)
        st = clg_ctx_create(&chosen[i], &co, &two[i]);
    if (st == CLG_OK) {
        rate_job job = {"pocl2", -1, -1, NULL, NULL, two, 2, {0}, {0}};
        run_rounds(&job, 1, batch, rounds, json);
    }
    clg_ctx_destroy(two[0]);
    clg_ctx_destroy(two[1]);
    return st == CLG_OK ? 0 : 1;
}

static void summarise(const rate_job *jobs, int rounds, int json)
{
    const rate_job *sub1 = &jobs[0], *sub2 = &jobs[1], *on = &jobs[2], *off = &jobs[3];
    const rate_job *fast = &jobs[5], *slow = &jobs[6], *equal = &jobs[7], *au = &jobs[8];
    double scale = ratio(sub2, sub1, NULL, rounds), pair = ratio(au, fast, slow, rounds);
    double over_equal = ratio(au, equal, NULL, rounds);
    double exposed_on = median_of(on->readback, rounds), exposed_off = median_of(off->readback, rounds);
    double hidden = exposed_off > 0 ? 1.0 - exposed_on / exposed_off : 0.0;
    double r_on = median_of(on->rate, rounds), r_off = median_of(off->rate, rounds);
    if (json) {
        printf("{\"bench\":\"scaling\",\"sub2_over_sub1\":%.3f,\"rounds\":%d}\n", scale, rounds);
        printf("{\"bench\":\"mixed\",\"auto_of_sum\":%.3f,\"auto_over_equal\":%.3f}\n", pair,
               over_equal);
        printf("{\"bench\":\"overlap\",\"readback_ms\":%.3f,\"exposed_ms\":%.3f,"
               "\"hidden_fraction\":%.3f,\"images_per_s_on\":%.1f,\"images_per_s_off\":%.1f}\n",
               exposed_off, exposed_on, hidden, r_on, r_off);
        return;
    }
    printf("2 one-core sub-devices / 1: %.2fx (median over %d rounds of the ratio within each)\n",
           scale, rounds);
    printf("fast+slow pair: auto %.0f%% of the two alone, %.2fx the equal split\n", 100 * pair,
           over_equal);
    printf("with copies, gradient read-back %.2f ms per step, %.2f ms of it exposed with overlap "
           "(%.0f%% hidden; %.1f vs %.1f images/s)\n", exposed_off, exposed_on, 100 * hidden,
           r_on, r_off);
}

int bench_scaling(const bench_opts *o, size_t batch, const char *self)
{
    static const float equal[2] = {1.0f, 1.0f};
    clg_device_info *all = NULL, *subs = NULL;
    size_t n = 0, count = 0;
    clg_device_info *chosen = NULL;
    clg_ctx *whole = NULL, *sub[2] = {NULL, NULL};
    clg_ctx_options co = clg_ctx_options_default();
    int rounds = o->runs < 1 ? 1 : o->runs > MAX_ROUNDS ? MAX_ROUNDS : o->runs;
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK)
        st = clg_devices_select(all, n, CLG_ENV_CPU, o->filter, &chosen, &count);
    if (st == CLG_OK && getenv("CLGRAD_BENCH_POCL2")) {
        int rc = pocl2(chosen, count, batch, rounds, o->json);
        clg_devices_free(chosen, count);
        clg_devices_free(all, n);
        return rc;
    }
    if (st == CLG_OK)
        st = clg_ctx_create(&chosen[0], &co, &whole);
    if (st == CLG_OK)
        st = clg_device_split(&chosen[0], 2, 1, &subs);
    for (int i = 0; st == CLG_OK && i < 2; i++)
        st = clg_ctx_create(&subs[i], &co, &sub[i]);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-bench train --scaling: %s\n", tool_message(st, clg_last_error()));
    } else {
        /* The pair: the two one-core sub-devices, the second doing all its work 3 times (on
         * its own core); each alone, then together split equally and by auto. Overlap is
         * measured where there is a read-back to hide: with copies. */
        rate_job jobs[] = {
            {"sub1", -1, -1, NULL, NULL, sub, 1, {0}, {0}},
            {"sub2", -1, -1, NULL, NULL, sub, 2, {0}, {0}},
            {"sub2", 1, 0, NULL, NULL, sub, 2, {0}, {0}},
            {"sub2", 0, 0, NULL, NULL, sub, 2, {0}, {0}},
            {"whole", -1, -1, NULL, NULL, &whole, 1, {0}, {0}},
            {"mixed-fast-alone", -1, -1, NULL, NULL, sub, 1, {0}, {0}},
            {"mixed-slow-alone", -1, -1, "0:slow=3", NULL, sub + 1, 1, {0}, {0}},
            {"mixed-equal", -1, -1, "1:slow=3", equal, sub, 2, {0}, {0}},
            {"mixed-auto", -1, -1, "1:slow=3", NULL, sub, 2, {0}, {0}},
        };
        run_rounds(jobs, sizeof jobs / sizeof jobs[0], batch, rounds, o->json);
        summarise(jobs, rounds, o->json);
        fflush(stdout);
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "POCL_DEVICES='pthread pthread' CLGRAD_BENCH_POCL2=1 '%s' train "
                 "--scaling --runs %d --batch %zu%s", self, o->runs, batch, o->json ? " --json" : "");
        if (system(cmd) != 0)
            fprintf(stderr, "clgrad-bench train --scaling: the pocl2 run failed\n");
    }
    for (int i = 0; i < 2; i++)
        clg_ctx_destroy(sub[i]);
    clg_ctx_destroy(whole);
    if (subs)
        clg_devices_free(subs, 2);
    clg_devices_free(chosen, count);
    clg_devices_free(all, n);
    return st == CLG_OK ? 0 : 1;
}
