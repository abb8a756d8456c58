/* clgrad-train: train (or evaluate) a network on Fashion-MNIST or any IDX data set, with a
 * MATLAB-like progress table, a CSV metrics log, a progress plot, checkpoints and resume. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clgrad/clgrad.h"
#include "train_args.h"
#include "train_dense.h"
#include "train_display.h"
#include "model_io.h"
#include "train_network.h"
#include "train_paths.h"
#include "train_report.h"
#include "train_sweep.h"
#include "pocl_pin.h"
#include "tool_error.h"


/* Ctrl-C (MATLAB's stop button): the first stops training after the step it is in (the
 * network so far is saved, and a checkpoint written where checkpoints go); a second ends the
 * program at once. A signal handler can reach no state but a static flag. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    if (interrupted) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    interrupted = 1;
    static const char msg[] = "\nclgrad-train: interrupted: stopping after this iteration "
                              "(Ctrl-C again stops at once)\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
}

/* Unless SIGINT is ignored (a background job of a script, nohup): then it stays so. */
static void catch_interrupts(clg_train_options *o)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN &&
        sigaction(SIGINT, &sa, NULL) == 0)
        o->stop_request = &interrupted;
}

static const char *const fashion_names[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress",
                                              "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                                              "Ankle boot"};




/* Every device the environment (and filter) picks, or the first CPU split into sub-devices;
 * contexts in devs->ctx[0..n). */
typedef struct devices {
    clg_device_info *all, *subs;
    size_t nall, nsubs, n;
    clg_ctx *ctx[MAX_DEVICES];
} devices;

/* Cluster ranks ("parallel"): this process's rank, and its place among the ranks on its host,
 * which picks its devices. */
typedef struct ranks {
    int on, rank, size, local, nlocal;
} ranks;

/* Two whole-CPU devices in one group (two runtimes of one CPU, or POCL_DEVICES) run on the
 * same cores, and each slows the other; sub-devices of a split have cores of their own. */
static void warn_shared_cores(const clg_device_info *const *use, size_t count)
{
    for (size_t i = 0; i < count; i++)
        for (size_t j = i + 1; j < count; j++)
            if (use[i]->type == CLG_DEVICE_CPU && use[j]->type == CLG_DEVICE_CPU &&
                !use[i]->is_subdevice && !use[j]->is_subdevice) {
                fflush(stdout); /* after the device lines */
                fprintf(stderr, "clgrad-train: warning: devices %zu (%s, %s) and %zu (%s, %s) are "
                        "the same CPU: they share its cores, and each slows the other "
                        "(--split-cpu N gives each device cores of its own)\n", i,
                        use[i]->name, use[i]->platform, j, use[j]->name, use[j]->platform);
                return; /* once */
            }
}

static clg_status open_devices(const cli *c, const ranks *mpi, devices *d, display *shown)
{
    clg_device_info *chosen = NULL;
    size_t count = 0, nchosen = 0;
    clg_exec_env env;
    clg_status st = clg_exec_env_parse(c->env, &env);
    if (st == CLG_OK)
        st = clg_devices_list(&d->all, &d->nall);
    if (st == CLG_OK)
        st = clg_devices_select(d->all, d->nall, c->split_cpu ? CLG_ENV_CPU : env, c->devices,
                                &chosen, &count);
    nchosen = count;
    const clg_device_info *use[MAX_DEVICES];
    if (st == CLG_OK && c->split_cpu) {
        st = clg_device_split(&chosen[0], c->split_cpu, 0, &d->subs);
        d->nsubs = st == CLG_OK ? c->split_cpu : 0;
        for (size_t i = 0; i < d->nsubs; i++)
            use[i] = &d->subs[i];
        count = d->nsubs;
    } else {
        if (st == CLG_OK && count > MAX_DEVICES) {
            fprintf(stderr, "clgrad-train: %zu devices chosen, at most %d train together (narrow "
                    "them with --devices)\n", count, MAX_DEVICES);
            st = CLG_ERR_INVALID_ARG;
        }
        for (size_t i = 0; st == CLG_OK && i < count; i++)
            use[i] = &d->all[chosen[i].index];
    }
    if (st == CLG_OK && mpi->on && mpi->nlocal > 1 && count) {
        /* ranks on one host take turns at its devices; a rank left without one shares */
        size_t kept = 0;
        for (size_t i = 0; i < count; i++)
            if (i % (size_t)mpi->nlocal == (size_t)mpi->local)
                use[kept++] = use[i];
        if (!kept) { /* a CPU shared this way wants POCL_MAX_PTHREAD_COUNT per rank */
            use[0] = use[(size_t)mpi->local % count];
            kept = 1;
        }
        count = kept;
    }
    clg_ctx_options co = clg_ctx_options_default();
    if (!c->sweep) { /* a sweep's table is its own */
        co.on_build = display_build;
        co.on_build_user = shown;
    }
    for (size_t i = 0; st == CLG_OK && i < count; i++) {
        st = clg_ctx_create(use[i], &co, &d->ctx[i]);
        if (st == CLG_OK) {
            d->n++;
            if (!c->quiet && mpi->on)
                printf("Rank %d of %d, device %zu: %s (%s, %u compute unit%s)\n", mpi->rank,
                       mpi->size, i, use[i]->name, use[i]->platform, use[i]->compute_units,
                       use[i]->compute_units == 1 ? "" : "s");
            else if (!c->quiet)
                printf("Device %zu: %s (%s, %u compute unit%s)\n", i, use[i]->name,
                       use[i]->platform, use[i]->compute_units,
                       use[i]->compute_units == 1 ? "" : "s");
        }
    }
    warn_shared_cores(use, st == CLG_OK ? count : 0);
    clg_devices_free(chosen, nchosen);
    return st;
}

static void close_devices(devices *d)
{
    for (size_t i = 0; i < d->n; i++)
        clg_ctx_destroy(d->ctx[i]);
    clg_devices_free(d->subs, d->nsubs);
    clg_devices_free(d->all, d->nall);
}

/* An IDX folder (train-/t10k- files), image folders DIR/train and DIR/test, or an
 * image-to-image layout (train_dense.h); with --denoise, a denoising view of it, whose images'
 * store moves to *base. */
static clg_status open_data(const cli *c, const char *subset, clg_datastore **out,
                            clg_datastore **base)
{
    char path[4096];
    data_layout layout = data_layout_of(c);
    clg_status st = layout != LAYOUT_CLASSES ? open_dense_data(c, layout, subset, out)
                    : data_folder(c, subset, path, sizeof path)
                        ? clg_datastore_open_image_folder(path, &c->images, out)
                        : clg_datastore_open_idx_folder(c->data, subset, out);
    if (st == CLG_OK && c->denoising)
        st = denoise_view(c, !strcmp(subset, "test"), out, base);
    return st;
}

/* Fashion-MNIST's class names when the data is the Debian package's folder. */
static void name_classes(const cli *c, clg_datastore *ds)
{
    if (strstr(c->data, "fashion-mnist") && clg_datastore_class_count(ds) == 10 &&
        !strcmp(clg_datastore_class_name(ds, 0), "0"))
        clg_datastore_set_class_names(ds, fashion_names, 10);
}

/* Replaces *ds by a view of n of its samples (n = 0: all): the first n of an IDX set, n at
 * random (seed 1) from an image folder, whose files come sorted by class. The views borrow
 * their parents, which move to parents[0..2) to be freed at exit. */
static int limit(clg_datastore **ds, size_t n, int folder, clg_datastore **parents)
{
    if (!n || n >= clg_datastore_size(*ds))
        return 1;
    clg_datastore *mixed = NULL, *sub = NULL;
    clg_status st = folder ? clg_datastore_shuffle(*ds, 1, &mixed) : CLG_OK;
    if (st == CLG_OK)
        st = clg_datastore_subset(mixed ? mixed : *ds, 0, n, &sub);
    if (st != CLG_OK) {
        clg_datastore_destroy(mixed);
        train_fail("limiting the data", st, clg_last_error());
        return 0;
    }
    parents[0] = *ds;
    parents[1] = mixed;
    *ds = sub;
    return 1;
}

/* Settings that run but are probably mistakes: said, not refused. */
static void warn_unlikely(const cli *c, size_t train_images, size_t total)
{
    if (c->o.mini_batch_size > train_images)
        fprintf(stderr, "clgrad-train: warning: --batch %zu is more than the %zu training "
                "images: each epoch is one mini-batch of %zu\n", c->o.mini_batch_size,
                train_images, train_images);
    if (c->val_split > 0 && (train_images * 4 < total || train_images < c->o.mini_batch_size))
        fprintf(stderr, "clgrad-train: warning: --validation-split %g leaves %zu of %zu images "
                "to train on\n", c->val_split, train_images, total);
}

static int evaluate_and_report(const cli *c, clg_net *net, clg_datastore *test, size_t batch,
                               display *d)
{
    if (clg_net_task(net) != CLG_TASK_CLASSIFICATION)
        return report_dense(net, test, c, d);
    double loss, acc;
    clg_status st = clg_net_evaluate(net, test, batch, &loss, &acc);
    display_close_builds(d);
    if (st != CLG_OK)
        return train_fail("evaluating", st, clg_ctx_last_error(clg_net_ctx(net)));
    report_accuracy(acc, clg_datastore_size(test), loss);
    return 0;
}

static int run(cli *cp, const ranks *mpi, int argc, char **argv);

int main(int argc, char **argv)
{
    cli c;
    int rc = cli_parse(argc, argv, &c);
    if (rc)
        return rc < 0 ? 0 : rc;
    /* before the first OpenCL call; sub-devices and several devices ran slower pinned */
    pocl_pin_threads(!c.split_cpu && !c.sweep && strcasecmp(c.env, "multi-gpu") &&
                     strcasecmp(c.env, "parallel"));
    ranks mpi = {0, 0, 1, 0, 1};
    if (!strcasecmp(c.env, "parallel")) { /* under mpirun: one process per rank */
        clg_status st = clg_cluster_init(&argc, &argv, &mpi.rank, &mpi.size);
        if (st == CLG_OK)
            st = clg_cluster_local_rank(&mpi.local, &mpi.nlocal);
        if (st != CLG_OK)
            return train_fail("starting MPI", st, clg_last_error());
        mpi.on = 1;
    }
    rc = run(&c, &mpi, argc, argv);
    if (mpi.on && rc != 0)
        clg_cluster_abort(rc); /* the other ranks would wait for this one forever */
    clg_cluster_finalize();
    return rc;
}

/* Everything after option parsing: devices, data, training, the report (rank 0 of a cluster
 * speaks; the other ranks train quietly). */
static int run(cli *cp, const ranks *mpi, int argc, char **argv)
{
    cli c = *cp;
    int rc;
    if (mpi->rank != 0) {
        c.quiet = 1;
        c.plot = NULL;
        c.save = NULL;
    }
    if (!c.summary && (!data_readable(&c) || !outputs_writable(&c))) /* before any training */
        return 2;
    devices devs = {0};
    display d = {.quiet = c.quiet, .tty = isatty(STDOUT_FILENO) && !c.quiet,
                 .table_every = c.table_every, .batch = c.o.mini_batch_size, .plot_path = c.plot,
                 .log_path = c.o.metrics_log};
    display_init(&d);
    clg_status st = open_devices(&c, mpi, &devs, &d);
    if (st != CLG_OK) {
        close_devices(&devs);
        return train_fail("opening the devices", st, clg_last_error());
    }
    clg_ctx *ctx = devs.ctx[0];
    if (c.summary) {
        rc = print_summary(&c, ctx);
        close_devices(&devs);
        return rc;
    }
    if (devs.n > 1 && !c.sweep) {
        c.x.contexts = devs.ctx;
        c.x.context_count = devs.n;
        if (c.worker_load_count > devs.n) { /* probably a mistake, but it can run */
            fprintf(stderr, "clgrad-train: warning: --worker-load has %zu weights for %zu "
                    "devices: the last %zu %s left out\n", c.worker_load_count, devs.n,
                    c.worker_load_count - devs.n, c.worker_load_count - devs.n == 1 ? "is" : "are");
            c.worker_load_count = devs.n;
        }
        if (c.worker_load_count > 1 && c.worker_load_count != devs.n) {
            fprintf(stderr, "clgrad-train: --worker-load has %zu weights for %zu devices (one "
                    "weight per device, or one fraction of them)\n", c.worker_load_count, devs.n);
            close_devices(&devs);
            return 2;
        }
        c.x.worker_load = c.worker_load_count ? c.worker_load : NULL;
        c.x.worker_load_count = c.worker_load_count;
    }
    clg_datastore *train = NULL, *test = NULL, *fit = NULL, *val = NULL, *augmented = NULL;
    clg_datastore *train_all[2] = {NULL, NULL}, *test_all[2] = {NULL, NULL}; /* --limit-* */
    clg_datastore *train_base = NULL, *test_base = NULL; /* --denoise: the images */
    clg_net *net = NULL;
    rc = 1;
    char folder[4096];
    if (c.image_options && !data_folder(&c, "test", folder, sizeof folder) &&
        !data_folder(&c, "train", folder, sizeof folder)) {
        fprintf(stderr, "clgrad-train: --image-size, --channels and --resize-shorter are for "
                "image folders; %s holds IDX files, whose images have their own size\n", c.data);
        rc = 2;
        goto done;
    }
    st = open_data(&c, "test", &test, &test_base);
    if (st != CLG_OK) {
        train_fail("opening the test set", st, clg_last_error());
        goto done;
    }
    name_classes(&c, test);
    if (!limit(&test, c.limit_test, data_folder(&c, "test", folder, sizeof folder), test_all))
        goto done;
    if (c.evaluate) {
        st = load_model(ctx, c.evaluate, &net);
        if (st != CLG_OK) {
            train_fail("loading the model", st, clg_ctx_last_error(ctx));
            goto done;
        }
        if (c.export_onnx && (st = clg_net_export_onnx(net, c.export_onnx)) != CLG_OK) {
            train_fail("exporting ONNX", st, clg_ctx_last_error(ctx));
            goto done;
        }
        if (c.export_onnx && !c.json)
            printf("ONNX model written to %s\n", c.export_onnx);
        rc = clg_net_task(net) == CLG_TASK_CLASSIFICATION
                 ? report_evaluation(net, test, c.json, c.plot, &d)
                 : report_dense(net, test, &c, &d);
        goto done;
    }
    st = open_data(&c, "train", &train, &train_base);
    if (st != CLG_OK) {
        train_fail("opening the training set", st, clg_last_error());
        goto done;
    }
    name_classes(&c, train);
    if (!limit(&train, c.limit_train, data_folder(&c, "train", folder, sizeof folder), train_all))
        goto done;
    size_t n = clg_datastore_size(train), nval = (size_t)(c.val_split * (double)n);
    st = clg_datastore_subset(train, 0, n - nval, &fit);
    if (st == CLG_OK && nval)
        st = clg_datastore_subset(train, n - nval, nval, &val);
    if (st != CLG_OK) {
        train_fail("splitting the training set", st, clg_last_error());
        goto done;
    }
    if (c.sweep) { /* several experiments, one per device */
        rc = sweep_run(c.sweep, argc, argv, devs.ctx, devs.n, fit, c.val_on_test ? test : val,
                       test, &c);
        goto done;
    }
    if (c.augmenting) { /* the training part only; validation and test images stay as they are */
        c.augment.seed = c.o.seed;
        if (c.augment.crop == CLG_CROP_RANDOM_RESIZED) { /* to the size the images are read at */
            clg_shape s = clg_datastore_sample_shape(fit);
            c.augment.height = s.h, c.augment.width = s.w;
        }
        clg_datastore *aug = NULL;
        st = clg_datastore_augment(fit, &c.augment, &aug);
        if (st != CLG_OK) {
            train_fail("augmentation", st, clg_last_error());
            goto done;
        }
        augmented = aug;
    }
    if (c.val_on_test)
        val = test;
    /* the table's figure, from the data's targets (a resumed run's net is not built yet) */
    clg_target_kind kind = clg_datastore_target(train, NULL);
    d.task = kind == CLG_TARGET_VALUES   ? CLG_TASK_REGRESSION
             : kind == CLG_TARGET_PIXELS ? CLG_TASK_SEGMENTATION
                                         : CLG_TASK_CLASSIFICATION;
    d.plot.error_metric = d.task == CLG_TASK_REGRESSION;
    if (c.images.bad_files == CLG_BAD_FILES_SKIP)
        d.skips = train;
    d.val_every = val ? c.o.validation_frequency : 0;
    c.o.execution = &c.x;
    c.o.progress = display_progress;
    c.o.progress_user = &d;
    clg_train_report rep;
    char what[120]; /* the title's room */
    network_title(&c, ctx, what, sizeof what);
    snprintf(d.title, sizeof d.title, "Training progress: %s, %s, batch %zu", what,
             clg_solver_name(c.o.solver), c.o.mini_batch_size);
    if (c.resume) {
        if (!resume_net_agrees(&c, ctx)) {
            rc = 2;
            goto done;
        }
        catch_interrupts(&c.o);
        st = clg_train_resume(ctx, c.resume, augmented ? augmented : fit, val, &c.o, &net, &rep);
    } else {
        int trained; /* an ONNX model keeps its weights: fine-tuning */
        st = make_net("clgrad-train", ctx, c.net_file, default_net, &net, &trained);
        if (st != CLG_OK)
            goto done;
        int classifying = clg_datastore_target(train, NULL) == CLG_TARGET_CLASS;
        if (!c.net_file && !classifying) {
            fprintf(stderr, "clgrad-train: the default network classifies images; the data in "
                    "%s%s needs --net: tools/nets/dncnn.net (denoising), tools/nets/unet.net "
                    "(segmentation) or one of your own\n", c.data,
                    c.denoising ? " with --denoise" : "");
            rc = 2;
            goto done;
        }
        if (!net_fits_task(&c, net, train)) {
            rc = 2;
            goto done;
        }
        if (trained && classifying && !transfer(&c, &net, clg_datastore_class_count(train))) {
            rc = 1;
            goto done;
        }
        if (!c.net_file && !size_default_net(&c, &net, clg_datastore_class_count(train))) {
            rc = 2;
            goto done;
        }
        size_t classes = clg_datastore_class_count(train);
        const char **names = calloc(classes ? classes : 1, sizeof *names);
        for (size_t i = 0; names && i < classes; i++)
            names[i] = clg_datastore_class_name(train, i);
        if (names && classes == clg_net_class_count(net))
            clg_net_set_class_names(net, names, classes);
        free(names);
        if (!net_fits_data(&c, net, train) || !test_classes_known(&c, net, test) ||
            !apply_class_weights(&c, net, fit)) {
            rc = 2;
            goto done;
        }
        if (c.normalize && !normalise_from_data(&c, net, fit)) {
            rc = 1;
            goto done;
        }
        warn_unlikely(&c, n - nval, n);
        display_close_builds(&d); /* the net's allocation may have built some */
        if (!c.quiet) {
            size_t params = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
            char valtext[64];
            if (c.val_on_test)
                snprintf(valtext, sizeof valtext, "%zu validation (the test set)",
                         clg_datastore_size(test));
            else
                snprintf(valtext, sizeof valtext, "%zu validation", nval);
            printf("Network: %zu layers, %zu parameters; %zu training images, %s, %zu test\n",
                   clg_net_layer_count(net), params, n - nval, valtext, clg_datastore_size(test));
            printf("Solver %s, learning rate %g, mini-batch %zu, %d epoch%s\n",
                   clg_solver_name(c.o.solver), (double)c.o.initial_learn_rate,
                   c.o.mini_batch_size, c.o.max_epochs, c.o.max_epochs == 1 ? "" : "s");
        }
        st = trained ? CLG_OK : clg_net_init(net, c.o.seed);
        if (st == CLG_OK) {
            catch_interrupts(&c.o);
            st = clg_train(net, augmented ? augmented : fit, val, &c.o, &rep);
        }
    }
    if (st != CLG_OK) {
        display_clear_bar(&d);
        train_fail("training", st, clg_ctx_last_error(ctx));
        if (st == CLG_ERR_NUMERICS) /* nothing was saved: the weights are not numbers */
            fprintf(stderr, "clgrad-train: no model saved%s%s\n", c.save ? " to " : "",
                    c.save ? c.save : "");
        goto done;
    }
    if (mpi->rank != 0) { /* rank 0 reports, evaluates and saves for the job */
        rc = 0;
        goto done;
    }
    display_close_builds(&d);
    char resumed[64] = "";
    if (c.resume)
        snprintf(resumed, sizeof resumed, ", %zu after resuming", rep.run_iterations);
    size_t per_epoch = c.o.max_epochs > 0 ? d.max_it / (size_t)c.o.max_epochs : 0;
    const char *why = rep.stop_reason == CLG_STOP_VALIDATION_PATIENCE
                          ? " (stopped early: validation patience)"
                      : rep.stop_reason == CLG_STOP_REQUESTED ? " (stopped by Ctrl-C)" : "";
    if (per_epoch && rep.iterations % per_epoch) /* stopped inside an epoch: say which */
        printf("Trained %zu iteration%s%s, into epoch %zu of %d, in %.1f s, %.0f images/s%s\n",
               rep.iterations, rep.iterations == 1 ? "" : "s", resumed,
               rep.iterations / per_epoch + 1, c.o.max_epochs, rep.elapsed_s, rep.images_per_s,
               why);
    else
        printf("Trained %d epoch%s (%zu iteration%s%s) in %.1f s, %.0f images/s%s\n", rep.epochs,
               rep.epochs == 1 ? "" : "s", rep.iterations, rep.iterations == 1 ? "" : "s",
               resumed, rep.elapsed_s, rep.images_per_s, why);
    if (mpi->on)
        printf("%d ranks; each sent %.2f MB per step (MPI payload: the gradient sums)\n",
               mpi->size, rep.cluster_bytes_per_step / 1e6);
    if (rep.has_validation && clg_net_task(net) == CLG_TASK_REGRESSION)
        printf("Validation RMSE: %.5f, loss %.6f; the lowest validation loss, %.6f, was at "
               "iteration %zu (RMSE %.5f there)%s\n", rep.val_accuracy, rep.val_loss,
               rep.best_val_loss, rep.best_iteration, rep.best_val_accuracy,
               c.o.output_network == CLG_OUTPUT_BEST_VALIDATION ? ": the network saved" : "");
    else if (rep.has_validation)
        printf("Validation %saccuracy: %.2f%%, loss %.4f; the lowest validation loss, %.4f, was "
               "at iteration %zu (accuracy %.2f%% there)%s\n",
               clg_net_task(net) == CLG_TASK_SEGMENTATION ? "pixel " : "", 100 * rep.val_accuracy,
               rep.val_loss, rep.best_val_loss, rep.best_iteration, 100 * rep.best_val_accuracy,
               c.o.output_network == CLG_OUTPUT_BEST_VALIDATION ? ": the network saved" : "");
    rc = c.save ? save_model(net, c.save, &c) : 0; /* first: evaluation can fail */
    if (rep.checkpoint_failures) {
        fprintf(stderr, "clgrad-train: %zu checkpoint%s could not be written (see the warnings "
                "above); the trained network %s\n", rep.checkpoint_failures,
                rep.checkpoint_failures == 1 ? "" : "s",
                rc == 0 && c.save ? "was saved" : "was not saved either");
        rc = 1;
    }
    if (rep.stop_reason == CLG_STOP_REQUESTED) { /* the user wants to stop: no evaluation */
        if (rep.last_checkpoint[0])
            printf("Resume with: clgrad-train --resume %s and this run's other options\n",
                   c.o.checkpoint_path);
        else
            printf("No checkpoint was written (--checkpoint-path DIR makes a run resumable)\n");
        rc = rc ? rc : 130;
        goto done;
    }
    if (c.export_onnx) {
        st = clg_net_export_onnx(net, c.export_onnx);
        if (st != CLG_OK)
            rc |= train_fail("exporting ONNX", st, clg_ctx_last_error(ctx));
        else
            printf("ONNX model written to %s\n", c.export_onnx);
    }
    rc |= evaluate_and_report(&c, net, test, 256, &d);
    if (d.plot_failed) {
        fprintf(stderr, "clgrad-train: --plot %s was not written (see above)\n", c.plot);
        rc = 1;
    }
done:
    display_close_builds(&d);
    display_free(&d);
    plot_free(&d.plot);
    clg_net_destroy(net);
    clg_datastore_destroy(augmented);
    if (val != test)
        clg_datastore_destroy(val);
    clg_datastore_destroy(fit);
    clg_datastore_destroy(train);
    clg_datastore_destroy(test);
    for (int i = 1; i >= 0; i--) {
        clg_datastore_destroy(test_all[i]);
        clg_datastore_destroy(train_all[i]);
    }
    clg_datastore_destroy(test_base);
    clg_datastore_destroy(train_base);
    close_devices(&devs);
    return rc;
}
