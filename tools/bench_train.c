/* clgrad-bench train: training and inference images/s of the default Fashion-MNIST network on
 * synthetic data, with a per-layer forward/backward breakdown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"

static const char default_net[] =
    "input 28x28x1\nconv 5x5x32 pad=2\nrelu\nmaxpool 2x2\nconv 5x5x64 pad=2\nrelu\nmaxpool 2x2\n"
    "fc 1024\nrelu\ndropout 0.4\nfc 10\nsoftmax\n";

typedef struct step_times {
    double *t;
    size_t n, cap;
} step_times;

static int record(const clg_train_progress *p, void *user)
{
    step_times *s = user;
    if (p->kind == CLG_PROGRESS_ITERATION && s->n < s->cap)
        s->t[s->n++] = p->elapsed_s;
    return 0;
}

static void fill_synthetic(float *x, int32_t *y, size_t n, size_t per)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < n * per; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)(s >> 40) / (float)(1 << 24);
    }
    for (size_t i = 0; i < n; i++)
        y[i] = (int32_t)(i % 10);
}

/* A training run of the default network on synthetic data in memory, `iters` steps of
 * `batch`, recording the time of every step. */
typedef struct bench_run {
    float *x;
    int32_t *y;
    step_times st;
    clg_net *net;
    clg_datastore *ds;
    clg_train_options opt;
} bench_run;

static clg_status run_setup(bench_run *r, clg_ctx *ctx, size_t batch, size_t iters)
{
    const size_t per = 28 * 28, n = batch * iters;
    memset(r, 0, sizeof *r);
    r->x = malloc(n * per * sizeof *r->x);
    r->y = malloc(n * sizeof *r->y);
    r->st = (step_times){calloc(iters, sizeof(double)), 0, iters};
    if (!r->x || !r->y || !r->st.t)
        return CLG_ERR_OUT_OF_HOST_MEMORY;
    fill_synthetic(r->x, r->y, n, per);
    clg_status s = clg_datastore_from_memory(r->x, r->y, n, (clg_shape){1, 1, 28, 28}, 10, &r->ds);
    if (s == CLG_OK)
        s = clg_net_parse(ctx, default_net, &r->net);
    if (s == CLG_OK)
        s = clg_net_init(r->net, 1);
    r->opt = clg_train_options_default();
    r->opt.solver = CLG_SOLVER_ADAM;
    r->opt.initial_learn_rate = 1e-3f;
    r->opt.mini_batch_size = batch;
    r->opt.max_epochs = 1;
    r->opt.shuffle = CLG_SHUFFLE_NEVER;
    r->opt.verbose_frequency = 1;
    r->opt.progress = record;
    r->opt.progress_user = &r->st;
    return s;
}

static void run_free(bench_run *r)
{
    clg_net_destroy(r->net);
    clg_datastore_destroy(r->ds);
    free(r->x);
    free(r->y);
    free(r->st.t);
}

/* Median step time after 10 warm-up steps (kernel builds, first touch of buffers); *steps
 * receives how many were timed. */
static double median_step(const step_times *st, size_t *steps)
{
    double *dt = malloc((st->n ? st->n : 1) * sizeof *dt);
    size_t k = 0;
    for (size_t i = 10; dt && i < st->n; i++)
        dt[k++] = st->t[i] - st->t[i - 1];
    double m = k ? bench_median(dt, k) : 0.0;
    free(dt);
    *steps = k;
    return m;
}

int bench_train(const bench_opts *o, size_t batch)
{
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    const clg_device_info *dev = clg_ctx_device(ctx);
    const size_t iters = 10 + 10 * (size_t)o->runs, infer_batch = 256;
    bench_run r;
    int rc = 1;
    clg_status s = run_setup(&r, ctx, batch, iters);
    clg_net *net = r.net;
    if (s == CLG_OK)
        s = clg_train(net, r.ds, NULL, &r.opt, NULL);
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench train: %s: %s\n", clg_status_name(s), clg_ctx_last_error(ctx));
        goto done;
    }
    if (o->profile) { /* kernels of the training steps after the first 10 (builds, first touch) */
        clg_kernel_time kt[64];
        size_t nk = 0;
        clg_ctx_kernel_times(ctx, kt, 64, &nk, 1);
        s = clg_train(net, r.ds, NULL, &r.opt, NULL);
        clg_ctx_kernel_times(ctx, kt, 64, &nk, 1);
        double total = 0;
        for (size_t i = 0; i < nk && i < 64; i++)
            total += kt[i].seconds;
        printf("%-28s %8s %10s %7s\n", "kernel", "calls", "ms/step", "share");
        for (size_t i = 0; i < nk && i < 64; i++)
            printf("%-28s %8lu %10.3f %6.1f%%\n", kt[i].name, kt[i].calls / iters,
                   kt[i].seconds * 1e3 / (double)iters, 100 * kt[i].seconds / total);
        printf("%-28s %8s %10.3f\n\n", "sum", "", total * 1e3 / (double)iters);
        r.st.n = 0;
        s = clg_train(net, r.ds, NULL, &r.opt, NULL); /* timed again below */
    }
    size_t k;
    double step = median_step(&r.st, &k), train_ips = (double)batch / step;
    /* inference, batch 256 */
    size_t ni = infer_batch;
    float *probs = malloc(ni * 10 * sizeof *probs), *xi = r.x;
    double *it = malloc((size_t)o->runs * sizeof *it);
    s = clg_net_predict(net, xi, ni, probs); /* warm-up: buffers grow to 256 */
    for (int r = 0; s == CLG_OK && r < o->runs; r++) {
        double t0 = bench_now();
        s = clg_net_predict(net, xi, ni, probs);
        it[r] = bench_now() - t0;
    }
    double infer_ips = s == CLG_OK ? (double)ni / bench_median(it, (size_t)o->runs) : 0;
    free(probs);
    free(it);
    size_t layers = clg_net_layer_count(net);
    clg_layer_time *lt = calloc(layers, sizeof *lt);
    if (s == CLG_OK)
        s = clg_net_profile(net, batch, o->runs, lt);
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench train: %s: %s\n", clg_status_name(s), clg_ctx_last_error(ctx));
        free(lt);
        goto done;
    }
    if (o->json) {
        printf("{\"bench\":\"train\",\"net\":\"default\",\"devices\":\"%s\",\"batch\":%zu,"
               "\"images_per_s\":%.1f,\"step_ms\":%.3f}\n", dev->name, batch, train_ips, step * 1e3);
        printf("{\"bench\":\"infer\",\"net\":\"default\",\"devices\":\"%s\",\"batch\":%zu,"
               "\"images_per_s\":%.1f}\n", dev->name, ni, infer_ips);
    } else {
        printf("device: %s\n", dev->name);
        printf("train  batch %3zu: %8.1f images/s (median step %.2f ms over %zu steps)\n", batch,
               train_ips, step * 1e3, k);
        printf("infer  batch %3zu: %8.1f images/s\n", ni, infer_ips);
        printf("peer: PyTorch 1.13 on the CPU, 2 threads, this machine class: ~1850-2100 images/s "
               "training (issue 5)\n\n");
        printf("%-24s %10s %10s %8s\n", "layer", "fwd ms", "bwd ms", "share");
    }
    double total = 0;
    for (size_t i = 0; i < layers; i++)
        total += lt[i].forward_ms + lt[i].backward_ms;
    for (size_t i = 0; i < layers; i++) {
        clg_layer_info info;
        clg_net_layer_info(net, i, &info);
        double share = (lt[i].forward_ms + lt[i].backward_ms) / total;
        if (o->json)
            printf("{\"bench\":\"train_layer\",\"layer\":%zu,\"text\":\"%s\",\"forward_ms\":%.3f,"
                   "\"backward_ms\":%.3f}\n", i + 1, info.text, lt[i].forward_ms, lt[i].backward_ms);
        else
            printf("%-24s %10.3f %10.3f %7.1f%%\n", info.text, lt[i].forward_ms,
                   lt[i].backward_ms, 100 * share);
    }
    if (!o->json)
        printf("%-24s %21.3f ms (layers alone, queue drained between them)\n", "sum", total);
    free(lt);
    rc = 0;
done:
    run_free(&r);
    clg_ctx_destroy(ctx);
    return rc;
}

/* A configuration of the scaling runs: its name, overlap, zero copy (-1: the default, in
 * host memory on CPUs; 0: weights sent and gradients read back), injected faults (e.g.
 * "1:slow=3") and fixed shares (NULL: auto). */
typedef struct rate_config {
    const char *name;
    int overlap, zero_copy;
    const char *faults;
    const float *load;
} rate_config;

/* Training images/s of the default network on the given contexts (median step after 10). A
 * single context trains through a device group too when faults are injected. */
static double train_rate(clg_ctx *const *ctxs, size_t n, size_t batch, int runs,
                         const rate_config *cfg, int json, double *readback_ms)
{
    bench_run r;
    double rate = 0;
    const char *config = cfg->name;
    int overlap = cfg->overlap;
    clg_status s = run_setup(&r, ctxs[0], batch, 10 + 5 * (size_t)runs);
    clg_train_options opt = r.opt;
    if (n > 1 || cfg->faults) {
        opt.contexts = ctxs;
        opt.context_count = n;
    }
    opt.overlap = overlap;
    opt.zero_copy = cfg->zero_copy;
    opt.fault_injection = cfg->faults;
    opt.worker_load = cfg->load;
    opt.worker_load_count = cfg->load ? n : 0;
    clg_train_report rep;
    if (s == CLG_OK)
        s = clg_train(r.net, r.ds, NULL, &opt, &rep);
    if (s == CLG_OK && readback_ms)
        *readback_ms = rep.readback_ms;
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench train: %s: %s: %s\n", config, clg_status_name(s),
                clg_ctx_last_error(ctxs[0]));
        goto done;
    }
    size_t k;
    rate = (double)batch / median_step(&r.st, &k);
    if (json)
        printf("{\"bench\":\"train\",\"net\":\"default\",\"devices\":\"%s\",\"config\":\"%s\","
               "\"split\":\"%s\",\"overlap\":%s,\"zero_copy\":%s,\"batch\":%zu,"
               "\"images_per_s\":%.1f}\n", clg_ctx_device(ctxs[0])->name, config,
               n < 2 ? "none" : cfg->load ? "weights" : "auto",
               n > 1 && overlap > 0 ? "true" : "false", cfg->zero_copy ? "true" : "false", batch,
               rate);
    else
        printf("%-17s %zu device%s %10.1f images/s%s%s\n", config, n, n > 1 ? "s" : " ", rate,
               n < 2 ? "" : cfg->zero_copy ? " (in host memory)" : overlap > 0
                   ? " (copies, overlapped read-back)" : " (copies, read-back after backward)",
               n > 1 ? (cfg->load ? ", fixed split" : ", auto split") : "");
done:
    run_free(&r);
    return rate;
}

/* The fast+slow pair: the two one-core sub-devices, the second doing all its work 3 times
 * (on its own core), each alone, then together split equally and by auto. */
static void mixed_pair(clg_ctx *const *sub, size_t batch, const bench_opts *o)
{
    static const float equal[2] = {1.0f, 1.0f};
    double fast = train_rate(sub, 1, batch, o->runs,
                             &(rate_config){"mixed-fast-alone", -1, -1, NULL, NULL}, o->json, NULL);
    double slow = train_rate(sub + 1, 1, batch, o->runs,
                             &(rate_config){"mixed-slow-alone", -1, -1, "0:slow=3", NULL}, o->json,
                             NULL);
    double eq = train_rate(sub, 2, batch, o->runs,
                           &(rate_config){"mixed-equal", -1, -1, "1:slow=3", equal}, o->json, NULL);
    double au = train_rate(sub, 2, batch, o->runs,
                           &(rate_config){"mixed-auto", -1, -1, "1:slow=3", NULL}, o->json, NULL);
    double sum = fast + slow;
    if (o->json)
        printf("{\"bench\":\"mixed\",\"auto_of_sum\":%.3f,\"auto_over_equal\":%.3f}\n",
               sum > 0 ? au / sum : 0.0, eq > 0 ? au / eq : 0.0);
    else
        printf("fast+slow pair: auto %.0f%% of the two alone (%.1f + %.1f), %.2fx the equal split\n",
               sum > 0 ? 100 * au / sum : 0.0, fast, slow, eq > 0 ? au / eq : 0.0);
}

int bench_scaling(const bench_opts *o, size_t batch, const char *self)
{
    clg_device_info *all = NULL, *subs = NULL;
    size_t n = 0, *idx = NULL, count = 0;
    clg_ctx *whole = NULL, *sub[2] = {NULL, NULL};
    clg_ctx_options co = clg_ctx_options_default();
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK)
        st = clg_devices_select(all, n, CLG_ENV_CPU, o->filter, &idx, &count);
    if (st == CLG_OK && getenv("CLGRAD_BENCH_POCL2")) { /* the child run: two POCL devices */
        clg_ctx *two[2] = {NULL, NULL};
        for (int i = 0; st == CLG_OK && i < 2 && (size_t)i < count; i++)
            st = clg_ctx_create(&all[idx[i]], &co, &two[i]);
        if (st == CLG_OK && count >= 2)
            train_rate(two, 2, batch, o->runs, &(rate_config){"pocl2", -1, -1, NULL, NULL}, o->json,
                       NULL);
        clg_ctx_destroy(two[0]);
        clg_ctx_destroy(two[1]);
        free(idx);
        clg_devices_free(all, n);
        return st == CLG_OK ? 0 : 1;
    }
    if (st == CLG_OK)
        st = clg_ctx_create(&all[idx[0]], &co, &whole);
    if (st == CLG_OK)
        st = clg_device_split(&all[idx[0]], 2, 1, &subs);
    for (int i = 0; st == CLG_OK && i < 2; i++)
        st = clg_ctx_create(&subs[i], &co, &sub[i]);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-bench train --scaling: %s: %s\n", clg_status_name(st), clg_last_error());
    } else {
        double r1 = train_rate(sub, 1, batch, o->runs,
                               &(rate_config){"sub1", -1, -1, NULL, NULL}, o->json, NULL);
        double r2 = train_rate(sub, 2, batch, o->runs,
                               &(rate_config){"sub2", -1, -1, NULL, NULL}, o->json, NULL);
        /* overlap measured where there is a read-back to hide: with copies */
        double exposed_on = 0, exposed_off = 0;
        double r2on = train_rate(sub, 2, batch, o->runs,
                                 &(rate_config){"sub2", 1, 0, NULL, NULL}, o->json, &exposed_on);
        double r2off = train_rate(sub, 2, batch, o->runs,
                                  &(rate_config){"sub2", 0, 0, NULL, NULL}, o->json, &exposed_off);
        train_rate(&whole, 1, batch, o->runs, &(rate_config){"whole", -1, -1, NULL, NULL}, o->json,
                   NULL);
        mixed_pair(sub, batch, o);
        double hidden = exposed_off > 0 ? 1.0 - exposed_on / exposed_off : 0.0;
        if (o->json)
            printf("{\"bench\":\"overlap\",\"readback_ms\":%.3f,\"exposed_ms\":%.3f,"
                   "\"hidden_fraction\":%.3f,\"images_per_s_on\":%.1f,\"images_per_s_off\":%.1f}\n",
                   exposed_off, exposed_on, hidden, r2on, r2off);
        else
            printf("2 one-core sub-devices / 1: %.2fx; with copies, gradient read-back %.2f ms "
                   "per step, %.2f ms of it exposed with overlap (%.0f%% hidden; %.1f vs %.1f "
                   "images/s)\n", r1 > 0 ? r2 / r1 : 0.0, exposed_off, exposed_on, 100 * hidden,
                   r2on, r2off);
        fflush(stdout);
        char cmd[4200]; /* POCL reads POCL_DEVICES once per process: a child for "pocl2" */
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
    free(idx);
    clg_devices_free(all, n);
    return st == CLG_OK ? 0 : 1;
}

int bench_cluster(const bench_opts *o, size_t batch, int *argc, char ***argv)
{
    int rank = 0, ranks = 1;
    clg_status s = clg_cluster_init(argc, argv, &rank, &ranks);
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench cluster: %s (run it under mpirun)\n", clg_last_error());
        return 1;
    }
    clg_ctx *ctx = bench_ctx(o, NULL);
    bench_run r;
    int rc = 1;
    s = ctx ? run_setup(&r, ctx, batch, 10 + 10 * (size_t)o->runs) : CLG_ERR_NO_DEVICE;
    clg_train_report rep;
    if (s == CLG_OK) {
        r.opt.execution_environment = "parallel";
        s = clg_train(r.net, r.ds, NULL, &r.opt, &rep);
    }
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench cluster: rank %d: %s: %s\n", rank, clg_status_name(s),
                ctx ? clg_ctx_last_error(ctx) : clg_last_error());
    } else if (rank == 0) {
        size_t k;
        double step = median_step(&r.st, &k);
        if (o->json)
            printf("{\"bench\":\"cluster\",\"ranks\":%d,\"batch\":%zu,\"images_per_s\":%.1f,"
                   "\"step_ms\":%.3f,\"bytes_per_step\":%.0f}\n", ranks, batch,
                   (double)batch / step, step * 1e3, rep.cluster_bytes_per_step);
        else
            printf("%d rank%s, global batch %zu: %.1f images/s (median step %.2f ms over %zu "
                   "steps); %.2f MB sent per step by each rank\n", ranks, ranks == 1 ? "" : "s",
                   batch, (double)batch / step, step * 1e3, k, rep.cluster_bytes_per_step / 1e6);
        rc = 0;
    } else {
        rc = 0;
    }
    if (ctx)
        run_free(&r);
    clg_ctx_destroy(ctx);
    if (rc != 0)
        clg_cluster_abort(rc);
    clg_cluster_finalize();
    return rc;
}
