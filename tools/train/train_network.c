/* The network a clgrad-train run trains, checked against its data and its other options
 * before any table: the default sized to the data's classes, an imported or saved model given
 * a new output, a resume's network, the test classes, --summary of whichever it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_io.h"
#include "tool_error.h"
#include "train_network.h"

int train_fail(const char *what, clg_status st, const char *detail)
{
    fprintf(stderr, "clgrad-train: %s: %s\n", what, tool_message(st, detail));
    return 1;
}

int data_folder(const cli *c, const char *subset, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", c->data, subset);
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A network's text form (malloc'd), or NULL. */
static char *net_text_of(clg_net *net)
{
    size_t len = 0;
    char *text = clg_net_text(net, NULL, 0, &len) == CLG_OK ? malloc(len + 1) : NULL;
    if (text && clg_net_text(net, text, len + 1, NULL) != CLG_OK) {
        free(text);
        text = NULL;
    }
    return text;
}

/* --resume with --net: resuming goes on with the checkpoint's own network, so --net may only
 * name that one (a run's command line repeated with --resume); another is refused. */
int resume_net_agrees(const cli *c, clg_ctx *ctx)
{
    char path[4096];
    clg_net *saved = NULL, *given = NULL;
    int trained;
    if (!c->resume || !c->net_file || !newest_checkpoint(c->resume, path, sizeof path))
        return 1; /* nothing to compare, or the resume's own error says what is wrong */
    if (clg_net_load(ctx, path, &saved) != CLG_OK)
        return 1;
    int same = 0;
    if (make_net("clgrad-train", ctx, c->net_file, default_net, &given, &trained) == CLG_OK) {
        /* a file without normalisation names a checkpoint whose run added one (--normalize) */
        size_t ch = clg_net_input_shape(given).c, k = 0;
        float *ms = calloc(2 * ch + 1, sizeof *ms);
        if (ms && clg_net_input_normalization(given, ms, ms + ch, ch, &k) == CLG_OK && !k &&
            clg_net_input_normalization(saved, ms, ms + ch, ch, &k) == CLG_OK && k)
            clg_net_set_input_normalization(given, ms, ms + ch, k);
        free(ms);
        char *a = net_text_of(saved), *b = net_text_of(given);
        same = a && b && !strcmp(a, b);
        free(a);
        free(b);
        if (!same)
            fprintf(stderr, "clgrad-train: --net %s is not the network of the checkpoint %s, "
                    "and resuming goes on with the checkpoint's: leave out --net\n",
                    c->net_file, path);
    }
    clg_net_destroy(saved);
    clg_net_destroy(given);
    return same;
}

/* The network a run trains, for the plot's title: its file, the default, or for a resume
 * without --net the checkpoint's (named by its size: the file it came from is not kept). */
void network_title(const cli *c, clg_ctx *ctx, char *out, size_t cap)
{
    char path[4096];
    clg_net *net = NULL;
    snprintf(out, cap, "%s", c->net_file ? c->net_file : "default network");
    if (c->net_file || !c->resume || !newest_checkpoint(c->resume, path, sizeof path) ||
        clg_net_load(ctx, path, &net) != CLG_OK)
        return;
    const char *base = strrchr(path, '/');
    snprintf(out, cap, "%zu-layer network of %zu parameters resumed from %.40s",
             clg_net_layer_count(net), clg_net_param_count(net, CLG_PARAMS_LEARNABLE),
             base ? base + 1 : path);
    clg_net_destroy(net);
}

/* --summary: the table of the network that training, resuming or evaluation would use: the
 * model evaluated, the checkpoint resumed from, --net's file (text, model or ONNX) or the
 * default. */
int print_summary(const cli *c, clg_ctx *ctx)
{
    clg_net *net = NULL;
    int trained;
    char checkpoint[4096];
    const char *path = c->evaluate ? c->evaluate : c->net_file;
    if (c->resume && !newest_checkpoint(c->resume, checkpoint, sizeof checkpoint)) {
        fprintf(stderr, "clgrad-train: --resume %s: no checkpoint-*.clgm there\n", c->resume);
        return 1;
    }
    path = c->resume ? checkpoint : path;
    clg_status st = make_net("clgrad-train", ctx, path, default_net, &net, &trained);
    if (st != CLG_OK)
        return 1;
    size_t len = 0;
    char *table = NULL;
    if (st == CLG_OK && (st = clg_net_summary(net, NULL, 0, &len)) == CLG_OK &&
        (table = malloc(len + 1)) != NULL)
        st = clg_net_summary(net, table, len + 1, NULL);
    if (st == CLG_OK && table)
        fputs(table, stdout);
    else
        train_fail(path ? path : "the default network", st, clg_ctx_last_error(ctx));
    free(table);
    clg_net_destroy(net);
    return st == CLG_OK && table ? 0 : 1;
}

/* The network against the data, before any table: the input shape (with the line that would
 * fit) and the classes. 0 when they cannot train together. */
int net_fits_data(const cli *c, clg_net *net, clg_datastore *train)
{
    clg_shape in = clg_net_input_shape(net), s = clg_datastore_sample_shape(train);
    if (in.c != s.c || in.h != s.h || in.w != s.w) {
        char folder[4096], resize[128] = "";
        if (data_folder(c, "train", folder, sizeof folder))
            snprintf(resize, sizeof resize, ", or read the images as the network takes them "
                     "with --image-size %zux%zu --channels %zu", in.h, in.w, in.c);
        fprintf(stderr, "clgrad-train: %s takes %zux%zux%zu images (HxWxC), the data in %s has "
                "%zux%zux%zu: make its input line \"input %zux%zux%zu\"%s\n",
                c->net_file ? c->net_file : "the default network", in.h, in.w, in.c, c->data,
                s.h, s.w, s.c, s.h, s.w, s.c, resize);
        return 0;
    }
    size_t k = clg_datastore_class_count(train), out = clg_net_class_count(net);
    if (clg_net_task(net) == CLG_TASK_SEGMENTATION && k != out) {
        fprintf(stderr, "clgrad-train: %s/classes.txt names %zu classes, %s's pixelsoftmax has "
                "%zu (the channels of its input): make its last convolution give %zu\n",
                c->data, k, c->net_file ? c->net_file : "the network", out, k);
        return 0;
    }
    if (clg_net_task(net) != CLG_TASK_CLASSIFICATION)
        return 1; /* the targets' shape: clg_train's check names it */
    char folder[4096];
    /* named classes (folders) fewer than the outputs: outputs no image teaches, a mistake */
    if (k > out || (k < out && data_folder(c, "train", folder, sizeof folder))) {
        fprintf(stderr, "clgrad-train: the data has %zu classes, %s's output %zu: make its last "
                "fc layer \"fc %zu\"\n", k, c->net_file ? c->net_file : "the default network",
                out, k);
        return 0;
    }
    return 1;
}

/* The default network's output sized to the data's classes (it is written for 10). */
int size_default_net(const cli *c, clg_net **net, size_t classes)
{
    if (classes < 2) {
        fprintf(stderr, "clgrad-train: the training data in %s has %zu class: a classifier "
                "needs at least 2\n", c->data, classes);
        return 0;
    }
    if (classes == clg_net_class_count(*net))
        return 1;
    clg_net *fresh;
    clg_status st = clg_net_replace_output(*net, classes, c->o.seed, &fresh);
    if (st != CLG_OK)
        return !train_fail("sizing the default network's output", st,
                     clg_ctx_last_error(clg_net_ctx(*net)));
    clg_net_destroy(*net);
    *net = fresh;
    if (!c->quiet)
        printf("The default network's output: %zu classes, the data's\n", classes);
    return 1;
}

/* Test images of a class the network lacks could never be scored right: said before any
 * training (classes are matched by name where both have names). */
int test_classes_known(const cli *c, clg_net *net, clg_datastore *test)
{
    size_t k = clg_datastore_class_count(test), out = clg_net_class_count(net);
    char folder[4096];
    if (clg_net_task(net) != CLG_TASK_CLASSIFICATION)
        return 1; /* one class list for both, or no classes */
    if (!data_folder(c, "test", folder, sizeof folder)) {
        if (k <= out)
            return 1;
        fprintf(stderr, "clgrad-train: the test data in %s has %zu classes, the network %zu\n",
                c->data, k, out);
        return 0;
    }
    for (size_t i = 0; i < k; i++) {
        const char *name = clg_datastore_class_name(test, i);
        size_t j = 0;
        while (j < out && !clg_class_names_equal(name, clg_net_class_name(net, j)))
            j++;
        if (j == out) {
            fprintf(stderr, "clgrad-train: the test data has class \"%s\" (%s/%s), which the "
                    "training data, and so the network, lacks: its images could never be "
                    "classified right; give the train and test folders the same classes\n",
                    name, folder, name);
            return 0;
        }
    }
    return 1;
}

/* A trained model (ONNX) for data of another class count gets a new output layer; with
 * --base-lr-factor every layer before it learns at that factor. 0 on failure (said). */
int transfer(const cli *c, clg_net **net, size_t classes)
{
    size_t had = clg_net_class_count(*net);
    if (classes != had) {
        clg_net *fresh;
        clg_status st = clg_net_replace_output(*net, classes, c->o.seed, &fresh);
        if (st != CLG_OK) {
            train_fail("replacing the output layer", st, clg_ctx_last_error(clg_net_ctx(*net)));
            return 0;
        }
        clg_net_destroy(*net);
        *net = fresh;
        if (!c->quiet)
            printf("Transfer learning: %s has %zu classes, the data %zu: its last fully "
                   "connected layer starts afresh with %zu outputs\n", c->net_file, had, classes,
                   classes);
    }
    size_t layers = clg_net_layer_count(*net);
    for (size_t i = 0; c->base_lr_factor >= 0 && i + 2 < layers; i++) { /* all but fc, softmax */
        clg_layer_info info;
        if (clg_net_layer_info(*net, i, &info) == CLG_OK && info.params)
            clg_net_set_learn_rate_factor(*net, info.name, c->base_lr_factor);
    }
    return 1;
}

int normalise_from_data(const cli *c, clg_net *net, clg_datastore *fit)
{
    size_t ch = clg_net_input_shape(net).c;
    float *mean = calloc(2 * ch, sizeof *mean), *sd = mean ? mean + ch : NULL;
    clg_status st = mean ? clg_datastore_channel_stats(fit, mean, sd, ch)
                         : CLG_ERR_OUT_OF_HOST_MEMORY;
    for (size_t k = 0; st == CLG_OK && c->normalize == 1 && k < ch; k++)
        sd[k] = 1.0f; /* zerocenter: the mean only */
    const char *why = mean ? clg_last_error() : "out of host memory"; /* the store's */
    if (st == CLG_OK && (st = clg_net_set_input_normalization(net, mean, sd, ch)) != CLG_OK)
        why = clg_ctx_last_error(clg_net_ctx(net));
    if (st != CLG_OK) {
        train_fail("--normalize", st, why);
        free(mean);
        return 0;
    }
    if (!c->quiet) {
        printf("Input normalisation (%s) from %zu training images: mean", c->normalize == 1
               ? "zerocenter" : "zscore", clg_datastore_size(fit));
        for (size_t k = 0; k < ch; k++)
            printf("%s%.4g", k ? "," : " ", (double)mean[k]);
        if (c->normalize == 2) {
            printf(", std");
            for (size_t k = 0; k < ch; k++)
                printf("%s%.4g", k ? "," : " ", (double)sd[k]);
        }
        printf("\n");
    }
    free(mean);
    return 1;
}
