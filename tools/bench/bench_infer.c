/* clgrad-bench infer: inference images/s and GFLOP/s of a network (text, model file or ONNX
 * model, e.g. torchvision's exported by tools/peers/bench_imported.py) at a batch, on
 * synthetic images in [0, 1); the peers (PyTorch, ONNX Runtime) run beside it in that script. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "bench_common.h"
#include "model_io.h"
#include "tool_error.h"

/* --profile: the layers taking most of the forward pass (inference: clg_net_profile_inference,
 * with its fusions). */
static int print_layers(clg_net *net, size_t batch, int runs)
{
    size_t n = clg_net_layer_count(net);
    clg_layer_time *lt = calloc(n ? n : 1, sizeof *lt);
    size_t *order = calloc(n ? n : 1, sizeof *order);
    clg_status s = lt && order ? clg_net_profile_inference(net, batch, runs, lt)
                               : CLG_ERR_OUT_OF_HOST_MEMORY;
    double total = 0;
    for (size_t i = 0; s == CLG_OK && i < n; i++)
        order[i] = i, total += lt[i].forward_ms;
    for (size_t i = 1; s == CLG_OK && i < n; i++) /* by forward time, longest first */
        for (size_t j = i; j > 0 && lt[order[j]].forward_ms > lt[order[j - 1]].forward_ms; j--) {
            size_t t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    if (s == CLG_OK)
        printf("forward %.1f ms in all (inference, each layer alone); the longest:\n", total);
    for (size_t k = 0; s == CLG_OK && k < n && k < (getenv("CLG_PROFILE_ALL") ? n : 15); k++) {
        clg_layer_info info;
        clg_net_layer_info(net, order[k], &info);
        double ms = lt[order[k]].forward_ms; /* info.flops: one sample's forward pass */
        char rate[24] = "        (fused)"; /* a layer fused into the one before takes no time */
        if (ms >= 0.01)
            snprintf(rate, sizeof rate, "%7.1f GFLOP/s", info.flops * (double)batch / ms * 1e-6);
        printf("%8.2f ms %5.1f%% %s  %-40.40s %zux%zux%zu\n", ms, 100 * ms / total, rate,
               info.text, info.output.c, info.output.h, info.output.w);
    }
    /* and by kind of layer: where a network's time goes */
    static const char *const kinds[] = {"grouped/depthwise conv", "1x1 conv", "other conv",
                                        "everything else"};
    double by_kind[4] = {0};
    for (size_t i = 0; s == CLG_OK && i < n; i++) {
        clg_layer_info info;
        clg_net_layer_info(net, i, &info);
        int conv = !strncmp(info.text, "conv ", 5);
        int k = !conv ? 3 : strstr(info.text, " groups=") ? 0 : !strncmp(info.text, "conv 1x1x", 9) ? 1 : 2;
        by_kind[k] += lt[i].forward_ms;
    }
    for (int k = 0; s == CLG_OK && k < 4; k++)
        printf("%8.2f ms %5.1f%%  %s\n", by_kind[k], 100 * by_kind[k] / total, kinds[k]);
    free(lt), free(order);
    return s != CLG_OK;
}

int bench_infer(const bench_opts *o, const char *path, size_t batch)
{
    if (!path) {
        fprintf(stderr, "clgrad-bench infer: give the network with --net FILE\n");
        return 2;
    }
    clg_ctx *ctx = bench_ctx(o, NULL);
    if (!ctx)
        return 1;
    clg_net *net = NULL;
    int trained = 0, rc = 1;
    clg_status s = make_net("clgrad-bench", ctx, path, NULL, &net, &trained);
    if (s == CLG_OK && !trained)
        s = clg_net_init(net, 1);
    size_t per = s == CLG_OK ? clg_shape_numel(clg_net_input_shape(net)) : 0;
    size_t classes = s == CLG_OK ? clg_net_output_count(net) : 0; /* values per sample */
    float *x = malloc(batch * per * sizeof *x + 1), *p = malloc(batch * classes * sizeof *p + 1);
    double *t = malloc((size_t)o->runs * sizeof *t), flops = 0;
    for (size_t i = 0; x && i < batch * per; i++)
        x[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    for (size_t i = 0; s == CLG_OK && i < clg_net_layer_count(net); i++) {
        clg_layer_info info;
        if (clg_net_layer_info(net, i, &info) == CLG_OK)
            flops += info.flops;
    }
    if (s == CLG_OK && (!x || !p || !t))
        s = CLG_ERR_OUT_OF_HOST_MEMORY;
    for (int w = 0; s == CLG_OK && w < 2; w++) /* builds, buffers, first touch */
        s = clg_net_predict(net, x, batch, p);
    if (o->profile)
        clg_ctx_kernel_times(ctx, NULL, 0, NULL, 1);
    for (int r = 0; s == CLG_OK && r < o->runs; r++) {
        double t0 = tool_now();
        s = clg_net_predict(net, x, batch, p);
        t[r] = tool_now() - t0;
    }
    if (s == CLG_OK) {
        double sec = bench_median(t, (size_t)o->runs), ips = (double)batch / sec;
        double gflops = flops * (double)batch / sec * 1e-9;
        if (o->json)
            bench_json_row(ctx, "infer", "\"net\":\"%s\",\"batch\":%zu,\"images_per_s\":%.2f,"
                           "\"gflops\":%.1f,\"flops_per_image\":%.0f", path, batch, ips, gflops,
                           flops);
        else
            printf("infer %s batch %zu: %.2f images/s, %.1f GFLOP/s (%.3g GFLOP an image "
                   "forward), median of %d\n", path, batch, ips, gflops, flops * 1e-9, o->runs);
        rc = 0;
        if (o->profile) { /* the timed batches' kernels, then each layer alone */
            bench_print_kernel_times(ctx, "batch", (size_t)o->runs);
            rc = print_layers(net, batch, o->runs);
        }
    } else if (net) {
        fprintf(stderr, "clgrad-bench infer: %s\n", tool_message(s, clg_ctx_last_error(ctx)));
    }
    free(x), free(p), free(t);
    clg_net_destroy(net);
    clg_ctx_destroy(ctx);
    return rc;
}
