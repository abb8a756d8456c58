/* clgrad-bench train: training and inference images/s of the default Fashion-MNIST network (or
 * --net FILE) on synthetic data, with a per-layer forward/backward breakdown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_run.h"
#include "tool_error.h"

static const char default_net[] =
    "input 28x28x1\nconv 5x5x32 pad=2\nrelu\nmaxpool 2x2\nconv 5x5x64 pad=2\nrelu\nmaxpool 2x2\n"
    "fc 1024\nrelu\ndropout 0.4\nfc 10\nsoftmax\n";

static int record(const clg_train_progress *p, void *user)
{
    step_times *s = user;
    if (p->kind == CLG_PROGRESS_ITERATION && s->n < s->cap)
        s->t[s->n++] = p->elapsed_s;
    return 0;
}

/* Uniform inputs, and targets of the net's task: a class per sample or per pixel in turn, or
 * values (the input's own, for an image-to-image net). tper: targets per sample. */
static void fill_synthetic(float *x, int32_t *y, size_t n, size_t per, size_t tper,
                           size_t classes)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < n * per; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)(s >> 40) / (float)(1 << 24);
    }
    for (size_t i = 0; i < n * tper; i++) {
        if (classes)
            y[i] = (int32_t)((tper == 1 ? i : i * 7 + i / tper) % classes);
        else
            memcpy(&y[i], &x[i % (n * per)], sizeof *x); /* floats in the targets' bytes */
    }
}

clg_status bench_run_setup(bench_run *r, clg_ctx *ctx, size_t batch, size_t iters,
                           const char *net_text)
{
    memset(r, 0, sizeof *r);
    clg_status s = clg_net_parse(ctx, net_text ? net_text : default_net, &r->net);
    if (s != CLG_OK)
        return s;
    clg_shape in = clg_net_input_shape(r->net);
    const size_t per = clg_shape_numel(in), n = batch * iters;
    size_t classes = clg_net_class_count(r->net);
    clg_task task = clg_net_task(r->net);
    clg_shape out = clg_net_output_shape(r->net), ts = {1, 1, 1, 1};
    if (task == CLG_TASK_SEGMENTATION)
        ts = (clg_shape){1, 1, out.h, out.w};
    else if (task == CLG_TASK_REGRESSION)
        ts = out;
    size_t tper = clg_shape_numel(ts);
    r->x = malloc(n * per * sizeof *r->x);
    r->y = malloc(n * tper * sizeof *r->y);
    r->st = (step_times){calloc(iters, sizeof(double)), 0, iters};
    if (!r->x || !r->y || !r->st.t)
        return CLG_ERR_OUT_OF_HOST_MEMORY;
    fill_synthetic(r->x, r->y, n, per, tper, classes);
    clg_target_kind kind = task == CLG_TASK_SEGMENTATION ? CLG_TARGET_PIXELS
                           : task == CLG_TASK_REGRESSION ? CLG_TARGET_VALUES
                                                         : CLG_TARGET_CLASS;
    s = clg_datastore_from_memory_targets(r->x, r->y, n, in, kind, ts, classes, &r->ds);
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

void bench_run_free(bench_run *r)
{
    clg_net_destroy(r->net);
    clg_datastore_destroy(r->ds);
    free(r->x);
    free(r->y);
    free(r->st.t);
}

double bench_median_step(const step_times *st, size_t *steps)
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
    clg_status s = bench_run_setup(&r, ctx, batch, iters, o->net_text);
    clg_net *net = r.net;
    if (s == CLG_OK)
        s = clg_train(net, r.ds, NULL, &r.opt, NULL);
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench train: %s\n", tool_message(s, clg_ctx_last_error(ctx)));
        goto done;
    }
    if (o->profile) { /* kernels of the training steps after the first 10 (builds, first touch) */
        clg_ctx_kernel_times(ctx, NULL, 0, NULL, 1);
        s = clg_train(net, r.ds, NULL, &r.opt, NULL);
        bench_print_kernel_times(ctx, "step", iters);
        r.st.n = 0;
        s = clg_train(net, r.ds, NULL, &r.opt, NULL); /* timed again below */
    }
    size_t k;
    double step = bench_median_step(&r.st, &k), train_ips = (double)batch / step;
    /* inference, batch 256 */
    size_t ni = infer_batch < batch * iters ? infer_batch : batch * iters; /* of r.x's */
    float *probs = malloc(ni * clg_net_output_count(net) * sizeof *probs), *xi = r.x;
    double *it = malloc((size_t)o->runs * sizeof *it);
    s = clg_net_predict(net, xi, ni, probs); /* warm-up: buffers grow to 256 */
    for (int r = 0; s == CLG_OK && r < o->runs; r++) {
        double t0 = tool_now();
        s = clg_net_predict(net, xi, ni, probs);
        it[r] = tool_now() - t0;
    }
    double infer_ips = s == CLG_OK ? (double)ni / bench_median(it, (size_t)o->runs) : 0;
    free(probs);
    free(it);
    size_t layers = clg_net_layer_count(net);
    clg_layer_time *lt = calloc(layers, sizeof *lt);
    if (s == CLG_OK)
        s = clg_net_profile(net, batch, o->runs, lt);
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench train: %s\n", tool_message(s, clg_ctx_last_error(ctx)));
        free(lt);
        goto done;
    }
    /* What the step computes, against what the device can: its forward FLOPs x 3 (forward,
     * the gradients of the data and of the weights), and the FMA loop's peak on this run. */
    double fwd_flops = 0;
    for (size_t i = 0; i < clg_net_layer_count(net); i++) {
        clg_layer_info info;
        if (clg_net_layer_info(net, i, &info) == CLG_OK)
            fwd_flops += info.flops;
    }
    double train_gflops = 3 * fwd_flops * train_ips * 1e-9, peak = bench_fma_peak(ctx, 3);
    if (o->json) {
        bench_json_row(ctx, "train", "\"net\":\"%s\",\"devices\":\"%s\",\"batch\":%zu,"
                       "\"images_per_s\":%.1f,\"step_ms\":%.3f,\"mflop_per_image\":%.1f,"
                       "\"gflops\":%.1f,\"fma_peak_gflops\":%.1f", o->net_name, dev->name, batch,
                       train_ips, step * 1e3, 3 * fwd_flops * 1e-6, train_gflops, peak);
        bench_json_row(ctx, "infer", "\"net\":\"%s\",\"devices\":\"%s\",\"batch\":%zu,"
                       "\"images_per_s\":%.1f", o->net_name, dev->name, ni, infer_ips);
    } else {
        printf("device: %s, network: %s\n", dev->name, o->net_name);
        printf("train  batch %3zu: %8.1f images/s (median step %.2f ms over %zu steps)\n", batch,
               train_ips, step * 1e3, k);
        printf("infer  batch %3zu: %8.1f images/s\n", ni, infer_ips);
        printf("training computes %.1f MFLOP per image (3x the forward pass): %.1f GFLOP/s, %.0f%% "
               "of the device's FMA peak (%.1f GFLOP/s, clgrad-bench peak)\n", 3 * fwd_flops * 1e-6,
               train_gflops, peak > 0 ? 100 * train_gflops / peak : 0, peak);
        /* The peer is measured on the machine at hand: a figure from another CPU misleads. */
        printf("peer: tools/peers/bench_pytorch.py %s (the same network in PyTorch)\n",
               o->net_text ? o->net_name : "tools/nets/fashion-tutorial.net");
        printf("\n");
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
            bench_json_row(ctx, "train_layer", "\"layer\":%zu,\"text\":\"%s\",\"forward_ms\":%.3f,"
                           "\"backward_ms\":%.3f", i + 1, info.text, lt[i].forward_ms,
                           lt[i].backward_ms);
        else
            printf("%-24s %10.3f %10.3f %7.1f%%\n", info.text, lt[i].forward_ms,
                   lt[i].backward_ms, 100 * share);
    }
    if (!o->json)
        printf("%-24s %21.3f ms (layers alone, queue drained between them)\n", "sum", total);
    free(lt);
    rc = 0;
done:
    bench_run_free(&r);
    clg_ctx_destroy(ctx);
    return rc;
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
    s = ctx ? bench_run_setup(&r, ctx, batch, 10 + 10 * (size_t)o->runs, o->net_text)
            : CLG_ERR_NO_DEVICE;
    clg_train_report rep;
    if (s == CLG_OK) {
        clg_exec_options x = clg_exec_options_default();
        x.environment = CLG_ENV_PARALLEL;
        r.opt.execution = &x;
        s = clg_train(r.net, r.ds, NULL, &r.opt, &rep);
    }
    if (s != CLG_OK) {
        fprintf(stderr, "clgrad-bench cluster: rank %d: %s\n", rank, tool_message(s, ctx ? clg_ctx_last_error(ctx) : clg_last_error()));
    } else if (rank == 0) {
        size_t k;
        double step = bench_median_step(&r.st, &k);
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
        bench_run_free(&r);
    clg_ctx_destroy(ctx);
    if (rc != 0)
        clg_cluster_abort(rc);
    clg_cluster_finalize();
    return rc;
}
