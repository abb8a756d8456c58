/* clgrad-train --evaluate's report: what a model gets right and wrong, class by class. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "train_plot.h"
#include "train_report.h"
#include "tool_error.h"

/* Per class k of K: its samples, precision (of the predictions k, the share right), recall
 * (of the samples of k, the share predicted k) and accuracy (of all samples, the share the
 * question "k or not?" gets right). NAN where a share has no samples. */
typedef struct class_figures {
    size_t images;
    double precision, recall, accuracy;
} class_figures;

static class_figures figures(const size_t *counts, size_t K, size_t k, size_t total)
{
    size_t tp = counts[k * K + k], row = 0, col = 0;
    for (size_t j = 0; j < K; j++) {
        row += counts[k * K + j];
        col += counts[j * K + k];
    }
    size_t tn = total - row - col + tp;
    class_figures f = {row, col ? (double)tp / (double)col : NAN,
                       row ? (double)tp / (double)row : NAN,
                       total ? (double)(tp + tn) / (double)total : NAN};
    return f;
}

void report_accuracy(double accuracy, size_t images, double loss)
{
    printf("Test accuracy: %.2f%% (%zu images), test loss %.4f\n", 100 * accuracy, images, loss);
}

static void print_share(double v)
{
    if (v != v)
        printf(" %9s", "-");
    else
        printf(" %8.2f%%", 100 * v);
}

static void print_text(clg_net *net, const size_t *counts, size_t K, size_t total, double acc,
                       double loss)
{
    report_accuracy(acc, total, loss);
    printf("\nConfusion matrix (rows: true class, columns: predicted class, by number):\n");
    size_t width = 5; /* the widest count, at least a column number's */
    for (size_t i = 0; i < K * K; i++) {
        char n[32];
        size_t len = (size_t)snprintf(n, sizeof n, "%zu", counts[i]);
        width = len > width ? len : width;
    }
    printf("%-18s", "");
    for (size_t p = 0; p < K; p++)
        printf(" %*zu", (int)width, p);
    printf("\n");
    for (size_t t = 0; t < K; t++) {
        printf("%2zu %-15.15s", t, clg_net_class_name(net, t));
        for (size_t p = 0; p < K; p++)
            printf(" %*zu", (int)width, counts[t * K + p]);
        printf("\n");
    }
    printf("\n%-18s %9s %9s %9s %9s\n", "class", "images", "precision", "recall", "accuracy");
    for (size_t k = 0; k < K; k++) {
        class_figures f = figures(counts, K, k, total);
        printf("%2zu %-15.15s %9zu", k, clg_net_class_name(net, k), f.images);
        print_share(f.precision);
        print_share(f.recall);
        print_share(f.accuracy);
        printf("\n");
    }
}

static void json_share(const char *key, double v)
{
    if (v != v)
        printf(",\"%s\":null", key);
    else
        printf(",\"%s\":%.6f", key, v);
}

static void print_json(clg_net *net, const size_t *counts, size_t K, size_t total, double acc,
                       double loss)
{
    printf("{\"images\":%zu,\"accuracy\":%.6f,\"loss\":%.6f,\"classes\":[", total, acc, loss);
    for (size_t k = 0; k < K; k++) {
        printf(k ? "," : "");
        json_string(clg_net_class_name(net, k));
    }
    printf("],\"confusion\":[");
    for (size_t t = 0; t < K; t++) {
        printf("%s[", t ? "," : "");
        for (size_t p = 0; p < K; p++)
            printf("%s%zu", p ? "," : "", counts[t * K + p]);
        printf("]");
    }
    printf("],\"per_class\":[");
    for (size_t k = 0; k < K; k++) {
        class_figures f = figures(counts, K, k, total);
        printf("%s{\"class\":%zu,\"name\":", k ? "," : "", k);
        json_string(clg_net_class_name(net, k));
        printf(",\"images\":%zu", f.images);
        json_share("precision", f.precision);
        json_share("recall", f.recall);
        json_share("accuracy", f.accuracy);
        printf("}");
    }
    printf("]}\n");
}

int report_evaluation(clg_net *net, clg_datastore *test, int json, const char *plot_path,
                      display *d)
{
    size_t K = clg_net_class_count(net), total = clg_datastore_size(test);
    size_t *counts = calloc(K ? K * K : 1, sizeof *counts);
    if (!counts) {
        fprintf(stderr, "clgrad-train: out of memory\n");
        return 1;
    }
    double loss = 0, acc = 0;
    clg_status st = clg_net_evaluate_confusion(net, test, 256, &loss, &acc, counts);
    display_close_builds(d); /* a first run's "Building OpenCL kernels" line */
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-train: evaluating: %s\n", tool_message(st, clg_ctx_last_error(clg_net_ctx(net))));
        free(counts);
        return 1;
    }
    if (json)
        print_json(net, counts, K, total, acc, loss);
    else
        print_text(net, counts, K, total, acc, loss);
    int rc = 0;
    if (plot_path) {
        const char **names = calloc(K ? K : 1, sizeof *names);
        char err[512], title[128];
        snprintf(title, sizeof title, "Confusion matrix: %.2f%% of %zu images", 100 * acc, total);
        for (size_t k = 0; names && k < K; k++)
            names[k] = clg_net_class_name(net, k);
        if (!names || !plot_confusion_png(names, K, counts, plot_path, title, err, sizeof err)) {
            fprintf(stderr, "clgrad-train: --plot %s: %s\n", plot_path,
                    names ? err : "out of memory");
            rc = 1;
        } else if (!json) {
            printf("Confusion matrix drawn in %s\n", plot_path);
        }
        free(names);
    }
    free(counts);
    return rc;
}
