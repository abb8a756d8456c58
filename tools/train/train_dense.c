/* clgrad-train for image-to-image networks (train_dense.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "tool_error.h"
#include "train_dense.h"
#include "train_network.h"
#include "train_paths.h"

/* Whether DATA/subset/name is a folder (want_dir) or a file. */
static int in_subset(const cli *c, const char *subset, const char *name, int want_dir)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s", subset, name);
    return path_exists(c->data, rel, want_dir);
}

data_layout data_layout_of(const cli *c)
{
    const char *subset = path_exists(c->data, "train", 1) ? "train" : "test";
    if (in_subset(c, subset, "images", 1) && in_subset(c, subset, "labels", 1))
        return LAYOUT_PIXELS;
    if (in_subset(c, subset, "inputs", 1) && in_subset(c, subset, "targets", 1))
        return LAYOUT_PAIRS;
    if (in_subset(c, subset, "images", 1) && in_subset(c, subset, "values.csv", 0))
        return LAYOUT_VALUES;
    return LAYOUT_CLASSES;
}

clg_status open_dense_data(const cli *c, data_layout layout, const char *subset,
                           clg_datastore **out)
{
    char a[4352], b[4352], list[4352];
    const char *first = layout == LAYOUT_PAIRS ? "inputs" : "images";
    const char *second = layout == LAYOUT_PIXELS ? "labels" : "targets";
    snprintf(a, sizeof a, "%s/%s/%s", c->data, subset, first);
    snprintf(b, sizeof b, "%s/%s/%s", c->data, subset, second);
    if (layout == LAYOUT_PIXELS) {
        clg_pixel_label_options o = clg_pixel_label_options_default();
        o.images = c->images;
        snprintf(list, sizeof list, "%s/classes.txt", c->data);
        return clg_datastore_open_pixel_labels(a, b, list, &o, out);
    }
    if (layout == LAYOUT_PAIRS)
        return clg_datastore_open_paired_images(a, b, &c->images, 0, out);
    snprintf(list, sizeof list, "%s/%s/values.csv", c->data, subset);
    return clg_datastore_open_image_values(a, list, &c->images, out);
}

clg_status denoise_view(const cli *c, int test, clg_datastore **ds, clg_datastore **base)
{
    clg_denoise_options o = c->denoise;
    o.seed = c->o.seed + (test ? 0x7E57ull : 0);
    if (test)
        o.patch_h = o.patch_w = 0, o.patches_per_image = 1;
    clg_datastore *view = NULL;
    clg_status st = clg_datastore_denoising(*ds, &o, &view);
    if (st == CLG_OK) {
        *base = *ds;
        *ds = view;
    }
    return st;
}

int net_fits_task(const cli *c, clg_net *net, clg_datastore *train)
{
    static const char *const wants[] = {"", "class labels (IDX files or class folders)",
                                        "label images (train/images and train/labels)",
                                        "images with targets (--denoise, paired images or "
                                        "values)"};
    static const clg_target_kind kinds[] = {CLG_TARGET_CLASS, CLG_TARGET_CLASS,
                                            CLG_TARGET_PIXELS, CLG_TARGET_VALUES};
    clg_task task = clg_net_task(net);
    clg_target_kind kind = clg_datastore_target(train, NULL);
    const char *name = c->net_file ? c->net_file : "the default network";
    if (task != CLG_TASK_NONE && kind == kinds[task])
        return 1;
    static const char *const tasks[] = {"has no output layer", "classifies images",
                                        "segments images (pixelsoftmax)",
                                        "regresses (regression)"};
    fprintf(stderr, "clgrad-train: %s %s, so it trains on %s; the data in %s%s is %s%s\n", name,
            tasks[task], wants[task], c->data, c->denoising ? " with --denoise" : "",
            kind == CLG_TARGET_CLASS    ? "labelled by class"
            : kind == CLG_TARGET_PIXELS ? "labelled by pixel"
                                        : "paired with target values",
            kind == CLG_TARGET_CLASS ? ""
            : kind == CLG_TARGET_PIXELS ? ": give --net with a pixelsoftmax output (e.g. "
                                          "tools/nets/unet.net)"
                                        : ": give --net with a regression output (e.g. "
                                          "tools/nets/dncnn.net)");
    return 0;
}

int apply_class_weights(const cli *c, clg_net *net, clg_datastore *fit)
{
    if (!c->class_weights)
        return 1;
    size_t K = clg_net_class_count(net);
    float w[CLG_CLASS_WEIGHTS_MAX];
    clg_status st;
    if (clg_net_task(net) != CLG_TASK_SEGMENTATION) {
        fprintf(stderr, "clgrad-train: --class-weights is for segmentation networks (a "
                "pixelsoftmax output)\n");
        return 0;
    }
    if (!strcmp(c->class_weights, "inverse") || !strcmp(c->class_weights, "median")) {
        st = clg_datastore_class_weights(fit, c->class_weights[0] == 'm', w, K);
        if (st != CLG_OK)
            return !train_fail("counting the labels", st, clg_last_error());
    } else {
        size_t n = 0;
        const char *s = c->class_weights;
        for (char *end; *s && n < CLG_CLASS_WEIGHTS_MAX; s = end + (*end == ',')) {
            w[n++] = strtof(s, &end);
            if (end == s || (*end && *end != ','))
                break;
        }
        if (*s || n != K) {
            fprintf(stderr, "clgrad-train: --class-weights %s: expected inverse, median or %zu "
                    "numbers separated by commas\n", c->class_weights, K);
            return 0;
        }
    }
    st = clg_net_set_class_weights(net, w, K);
    if (st != CLG_OK)
        return !train_fail("--class-weights", st, clg_ctx_last_error(clg_net_ctx(net)));
    if (!c->quiet) {
        printf("Class weights:");
        for (size_t k = 0; k < K; k++)
            printf(" %s %.3g", clg_net_class_name(net, k), (double)w[k]);
        printf("\n");
    }
    return 1;
}

/* The segmentation report: MATLAB's evaluateSemanticSegmentation figures. */
static int report_segmentation(clg_net *net, clg_datastore *test, int json)
{
    size_t K = clg_net_class_count(net), *counts = calloc(K * K, sizeof *counts);
    double loss, acc, *cacc = calloc(K, sizeof *cacc), *ciou = calloc(K, sizeof *ciou);
    clg_segmentation_metrics m;
    clg_status st = counts && cacc && ciou ? CLG_OK : CLG_ERR_OUT_OF_HOST_MEMORY;
    if (st == CLG_OK)
        st = clg_net_evaluate_confusion(net, test, 32, &loss, &acc, counts);
    if (st == CLG_OK)
        st = clg_segmentation_metrics_from(counts, K, &m, cacc, ciou);
    if (st != CLG_OK) {
        free(counts), free(cacc), free(ciou);
        return train_fail("evaluating", st, clg_ctx_last_error(clg_net_ctx(net)));
    }
    size_t n = clg_datastore_size(test);
    if (json) {
        printf("{\"task\":\"segmentation\",\"images\":%zu,\"loss\":%.6g,\"global_accuracy\":"
               "%.6g,\"mean_accuracy\":%.6g,\"mean_iou\":%.6g,\"weighted_iou\":%.6g,\"classes\":[",
               n, loss, m.global_accuracy, m.mean_accuracy, m.mean_iou, m.weighted_iou);
        for (size_t k = 0; k < K; k++) {
            printf("%s{\"name\":", k ? "," : "");
            json_string(clg_net_class_name(net, k));
            printf(isnan(cacc[k]) ? ",\"accuracy\":null,\"iou\":null}"
                                  : ",\"accuracy\":%.6g,\"iou\":%.6g}", cacc[k], ciou[k]);
        }
        printf("],\"confusion\":[");
        for (size_t i = 0; i < K * K; i++)
            printf("%s%zu", i ? "," : "", counts[i]);
        printf("]}\n");
    } else {
        printf("Test pixel accuracy: %.2f%% (%zu images), test loss %.4f\n", 100 * acc, n, loss);
        printf("Global accuracy %.2f%%, mean accuracy %.2f%%, mean IoU %.4f, weighted IoU "
               "%.4f\n", 100 * m.global_accuracy, 100 * m.mean_accuracy, m.mean_iou,
               m.weighted_iou);
        printf("\n%-20s %12s %10s %8s\n", "class", "pixels", "accuracy", "IoU");
        for (size_t k = 0; k < K; k++) {
            size_t pixels = 0;
            for (size_t p = 0; p < K; p++)
                pixels += counts[k * K + p];
            if (isnan(cacc[k]))
                printf("%-20s %12zu %10s %8s\n", clg_net_class_name(net, k), pixels, "-", "-");
            else
                printf("%-20s %12zu %9.2f%% %8.4f\n", clg_net_class_name(net, k), pixels,
                       100 * cacc[k], ciou[k]);
        }
    }
    free(counts), free(cacc), free(ciou);
    return 0;
}

/* The regression report: RMSE, and for image-to-image nets PSNR and SSIM. */
static int report_regression(const cli *c, clg_net *net, clg_datastore *test, int json)
{
    double loss, rmse;
    clg_status st = clg_net_evaluate(net, test, 32, &loss, &rmse);
    clg_restoration_quality q = {0};
    clg_shape in = clg_datastore_sample_shape(test), t;
    clg_datastore_target(test, &t);
    int images = t.c == in.c && t.h == in.h && t.w == in.w && in.h * in.w > 1;
    int residual = c->denoising && c->denoise.target == CLG_DENOISE_NOISE;
    if (st == CLG_OK && images)
        st = clg_net_evaluate_restoration(net, test, 32, residual, &q);
    if (st != CLG_OK)
        return train_fail("evaluating", st, clg_ctx_last_error(clg_net_ctx(net)));
    size_t n = clg_datastore_size(test);
    clg_layer_info last; /* an L1 loss's figure is the mean absolute error */
    int l1 = clg_net_layer_info(net, clg_net_layer_count(net) - 1, &last) == CLG_OK &&
             strstr(last.text, "loss=l1");
    const char *what = l1 ? "mean absolute error" : "RMSE";
    if (json) {
        printf("{\"task\":\"regression\",\"images\":%zu,\"loss\":%.6g,\"%s\":%.6g", n, loss,
               l1 ? "mae" : "rmse", rmse);
        if (images)
            printf(",\"psnr\":%.6g,\"ssim\":%.6g,\"input_psnr\":%.6g,\"input_ssim\":%.6g",
                   q.psnr, q.ssim, q.input_psnr, q.input_ssim);
        printf("}\n");
        return 0;
    }
    printf("Test %s: %.5f (%zu images), test loss %.6f\n", what, rmse, n, loss);
    if (images)
        printf("%s PSNR %.2f dB, SSIM %.4f; the %s inputs: %.2f dB, %.4f\n",
               c->denoising ? "Denoised" : "Output", q.psnr, q.ssim,
               c->denoising ? "noisy" : "degraded", q.input_psnr, q.input_ssim);
    return 0;
}

int report_dense(clg_net *net, clg_datastore *test, const cli *c, display *d)
{
    clg_shape in = clg_net_input_shape(net), s = clg_datastore_sample_shape(test);
    clg_net *whole = NULL;
    if (in.h != s.h || in.w != s.w) { /* trained on patches: the whole images */
        clg_status st = clg_net_resized(net, s.h, s.w, &whole);
        if (st != CLG_OK)
            return train_fail("running the network on the test images", st,
                              clg_ctx_last_error(clg_net_ctx(net)));
        net = whole;
    }
    int rc = clg_net_task(net) == CLG_TASK_SEGMENTATION
                 ? report_segmentation(net, test, c->json)
                 : report_regression(c, net, test, c->json);
    display_close_builds(d);
    clg_net_destroy(whole);
    return rc;
}
