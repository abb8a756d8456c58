/* clgrad-bench experiments: two learning rates of the default Fashion-MNIST network, one epoch
 * each, one after the other on one one-core sub-device, then at once on two (one each); the
 * speed-up, and each model's test accuracy both ways (an experiment trains exactly as alone).
 * Then 3 models on the 2 sub-devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "tool_error.h"

#define FM "/usr/share/datasets/fashion-mnist/"

static const char default_net[] =
    "input 28x28x1\nconv 5x5x32 pad=2\nrelu\nmaxpool 2x2\nconv 5x5x64 pad=2\nrelu\nmaxpool 2x2\n"
    "fc 1024\nrelu\ndropout 0.4\nfc 10\nsoftmax\n";

static clg_experiment model(const char *name, float lr, clg_datastore *train)
{
    clg_experiment e;
    memset(&e, 0, sizeof e);
    e.name = name;
    e.net_text = default_net;
    e.init_seed = 1;
    e.options = clg_train_options_default();
    e.options.solver = CLG_SOLVER_ADAM;
    e.options.initial_learn_rate = lr;
    e.options.mini_batch_size = 64;
    e.options.max_epochs = 1;
    e.options.seed = 1;
    e.train = train;
    return e;
}

/* Runs the experiments on ctxs; wall seconds, test accuracies into acc (NAN on failure). */
static double run(clg_ctx *const *ctxs, size_t nctx, const clg_experiment *e, size_t n,
                  clg_datastore *test, double *acc)
{
    clg_experiment_result res[4];
    double t0 = tool_now();
    clg_status st = clg_experiments_run(ctxs, nctx, e, n, NULL, NULL, res);
    double secs = tool_now() - t0;
    for (size_t i = 0; i < n; i++) {
        double loss;
        acc[i] = -1.0;
        if (st == CLG_OK && res[i].status == CLG_OK)
            clg_net_evaluate(res[i].net, test, 256, &loss, &acc[i]);
        else
            fprintf(stderr, "clgrad-bench experiments: %s: %s\n", e[i].name,
                    st != CLG_OK ? clg_last_error() : res[i].error);
        clg_net_destroy(res[i].net);
    }
    return secs;
}

int bench_experiments(const bench_opts *o, size_t limit)
{
    clg_device_info *all = NULL, *subs = NULL;
    size_t n = 0, count = 0;
    clg_device_info *chosen = NULL;
    clg_ctx *sub[2] = {NULL, NULL};
    clg_datastore *train_all = NULL, *train = NULL, *test = NULL;
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK)
        st = clg_devices_select(all, n, CLG_ENV_CPU, o->filter, &chosen, &count);
    if (st == CLG_OK)
        st = clg_device_split(&chosen[0], 2, 1, &subs);
    clg_ctx_options co = clg_ctx_options_default();
    for (int i = 0; st == CLG_OK && i < 2; i++)
        st = clg_ctx_create(&subs[i], &co, &sub[i]);
    if (st == CLG_OK)
        st = clg_datastore_open_idx(FM "train-images-idx3-ubyte.gz", FM "train-labels-idx1-ubyte.gz",
                                    &train_all);
    if (st == CLG_OK)
        st = clg_datastore_open_idx(FM "t10k-images-idx3-ubyte.gz", FM "t10k-labels-idx1-ubyte.gz",
                                    &test);
    size_t samples = limit && limit < clg_datastore_size(train_all) ? limit
                                                                   : clg_datastore_size(train_all);
    if (st == CLG_OK)
        st = clg_datastore_subset(train_all, 0, samples, &train);
    int rc = 1;
    if (st == CLG_OK) {
        clg_experiment e[3] = {model("lr0.001", 1e-3f, train), model("lr0.003", 3e-3f, train),
                               model("lr0.0005", 5e-4f, train)};
        double one[2], two[2], three[3];
        double t1 = run(sub, 1, e, 2, test, one);
        double t2 = run(sub, 2, e, 2, test, two);
        double t3 = run(sub, 2, e, 3, test, three);
        int ok = one[0] >= 0 && one[1] >= 0 && two[0] >= 0 && two[1] >= 0 && three[0] >= 0 &&
                 three[1] >= 0 && three[2] >= 0;
        if (o->json) {
            printf("{\"bench\":\"experiments\",\"images\":%zu,\"one_device_s\":%.2f,"
                   "\"two_devices_s\":%.2f,\"speedup\":%.3f,\"accuracy_one\":[%.4f,%.4f],"
                   "\"accuracy_two\":[%.4f,%.4f],\"three_models_s\":%.2f,\"completed\":%s}\n",
                   samples, t1, t2, t1 / t2, one[0], one[1], two[0], two[1], t3,
                   ok ? "true" : "false");
        } else {
            printf("2 models (Adam lr 0.001, 0.003), default network, 1 epoch of %zu images:\n",
                   samples);
            printf("  one after another on 1 one-core sub-device: %7.1f s  test accuracy %.2f%%, %.2f%%\n",
                   t1, 100 * one[0], 100 * one[1]);
            printf("  at once on 2 one-core sub-devices:           %7.1f s  test accuracy %.2f%%, %.2f%%\n",
                   t2, 100 * two[0], 100 * two[1]);
            printf("  speed-up %.2fx\n", t1 / t2);
            printf("3 models on the 2 sub-devices: %.1f s, %s\n", t3,
                   ok ? "all completed" : "NOT all completed");
        }
        rc = ok ? 0 : 1;
    } else {
        fprintf(stderr, "clgrad-bench experiments: %s\n", tool_message(st, clg_last_error()));
    }
    clg_datastore_destroy(train);
    clg_datastore_destroy(train_all);
    clg_datastore_destroy(test);
    for (int i = 0; i < 2; i++)
        clg_ctx_destroy(sub[i]);
    if (subs)
        clg_devices_free(subs, 2);
    clg_devices_free(chosen, count);
    clg_devices_free(all, n);
    return rc;
}
