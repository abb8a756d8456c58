/* The training loop: epochs of shuffled mini-batches, validation, early stopping, checkpoints
 * and resume, progress callbacks and the metrics log. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/testing.h"
#include "train/train_internal.h"

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The sample order of an epoch: a function of (seed, epoch) only, so resuming rebuilds it. */
static void build_order(clg__trainer *t, int epoch)
{
    for (size_t i = 0; i < t->samples; i++)
        t->perm[i] = i;
    if (t->o.shuffle == CLG_SHUFFLE_NEVER)
        return;
    uint64_t s = t->seed ^ 0x5DEECE66Dull;
    uint64_t e = t->o.shuffle == CLG_SHUFFLE_ONCE ? 0 : (uint64_t)epoch + 1;
    s ^= splitmix64(&e);
    for (size_t i = t->samples; i > 1; i--) { /* Fisher-Yates; modulo bias is < 2^-40 here */
        size_t j = (size_t)(splitmix64(&s) % i);
        size_t tmp = t->perm[i - 1];
        t->perm[i - 1] = t->perm[j];
        t->perm[j] = tmp;
    }
}

static float learn_rate(const clg__trainer *t)
{
    const clg_train_options *o = &t->o;
    double lr = o->initial_learn_rate;
    if (o->learn_rate_reference_batch) /* linear scaling with the (global) batch */
        lr *= (double)t->batch / (double)o->learn_rate_reference_batch;
    if (o->learn_rate_schedule == CLG_LR_PIECEWISE)
        lr *= pow(o->learn_rate_drop_factor, t->epoch / o->learn_rate_drop_period);
    if (o->learn_rate_schedule == CLG_LR_COSINE) { /* t->step: iterations done before this one */
        double total = (double)o->max_epochs * (double)t->iters_per_epoch;
        double warm = (double)o->warmup_iterations, done = (double)t->step - warm;
        double p = total > warm && done > 0 ? done / (total - warm) : 0.0;
        lr *= 0.5 * (1.0 + cos(3.14159265358979323846 * (p < 1.0 ? p : 1.0)));
    }
    if (o->learn_rate_schedule == CLG_LR_PLATEAU)
        lr *= t->plateau_scale;
    if (o->warmup_iterations && t->step < o->warmup_iterations)
        lr *= (double)(t->step + 1) / (double)o->warmup_iterations;
    return (float)lr;
}


/* A report of the last mini-batch's figures with no images/s (nonzero: stop). */
static int say(clg__trainer *t, clg_progress_kind kind, float lr, const char *text)
{
    return clg__train_report(t, kind, t->rep.loss, t->rep.accuracy, lr, 0.0, text);
}

/* Learnables then state, downloaded into t->best. */
static clg_status keep_best(clg__trainer *t)
{
    if (!t->best) {
        t->best = clg__malloc(t->best_count * sizeof *t->best);
        if (!t->best)
            return clg__oom(t->ctx, "clg_train");
    }
    size_t nl = clg_net_param_count(t->net, CLG_PARAMS_LEARNABLE);
    clg_status st = clg_net_get_params(t->net, CLG_PARAMS_LEARNABLE, t->best, nl);
    if (st == CLG_OK && t->best_count > nl)
        st = clg_net_get_params(t->net, CLG_PARAMS_STATE, t->best + nl, t->best_count - nl);
    return st;
}

static clg_status validate(clg__trainer *t, float lr, int *stop)
{
    if (t->rank != 0)
        return CLG_OK; /* cluster: rank 0 validates, its stop decision is shared */
    clg_status st = t->strategy->sync(t);
    if (st == CLG_OK)
        st = clg_net_evaluate(t->net, t->val, t->batch, &t->val_loss, &t->val_acc);
    if (st != CLG_OK)
        return st;
    int improved = !t->has_val || t->val_loss < t->best_val_loss;
    t->has_val = 1;
    if (improved) {
        t->best_val_loss = t->val_loss;
        t->best_val_acc = t->val_acc;
        t->best_iter = (size_t)t->step;
        t->bad_validations = 0;
        t->plateau_bad = 0;
        if (t->o.output_network == CLG_OUTPUT_BEST_VALIDATION)
            st = keep_best(t);
    } else if (t->o.learn_rate_schedule == CLG_LR_PLATEAU &&
               ++t->plateau_bad >= t->o.learn_rate_plateau_patience) {
        t->plateau_scale *= t->o.learn_rate_drop_factor; /* from the next iteration on */
        t->plateau_bad = 0;
    }
    if (!improved && ++t->bad_validations >= t->o.validation_patience &&
        t->o.validation_patience) {
        t->rep.stop_reason = CLG_STOP_VALIDATION_PATIENCE;
        *stop = 1;
    }
    clg__train_log_row(t, "validation", NAN, NAN, t->val_loss, t->val_acc, lr);
    if (t->log)
        fflush(t->log);
    if (say(t, CLG_PROGRESS_VALIDATION, lr, NULL)) {
        t->rep.stop_reason = CLG_STOP_CALLBACK;
        *stop = 1;
    }
    return st;
}

/* A checkpoint at t's position (checkpoint.c). One that cannot be written is reported and
 * counted, and training goes on: the next one may succeed, and the result is saved anyway. */
static clg_status checkpoint(clg__trainer *t, float lr)
{
    if (t->rank != 0)
        return CLG_OK; /* cluster: rank 0 writes for the job */
    char path[4096], text[4096 + CLG__ERR_TEXT + 64];
    int io_failed;
    clg_status st = clg__checkpoint_write(t, path, sizeof path, &io_failed);
    if (st == CLG_OK) {
        snprintf(t->rep.last_checkpoint, sizeof t->rep.last_checkpoint, "%s", path);
        say(t, CLG_PROGRESS_CHECKPOINT, lr, path);
    } else if (io_failed) {
        snprintf(text, sizeof text, "%s: %s: %s", path, clg_status_name(st),
                 clg_ctx_last_error(t->ctx));
        t->rep.checkpoint_failures++;
        say(t, CLG_PROGRESS_CHECKPOINT_FAILED, lr, text);
        st = CLG_OK;
    }
    return st;
}

/* A NaN or infinite training loss: the weights are lost to it, and the run stops saying so. */
static clg_status diverged(clg__trainer *t, double loss, float lr)
{
    char last[4200] = "";
    if (t->rep.last_checkpoint[0])
        snprintf(last, sizeof last, "; the last checkpoint, %s, holds earlier weights",
                 t->rep.last_checkpoint);
    return clg__fail(t->ctx, CLG_ERR_NUMERICS, "clg_train: training diverged: the loss is %s at "
                     "iteration %llu (epoch %d), so the weights are no longer usable; lower the "
                     "learning rate (it was %g) or clip the gradients%s", isnan(loss) ? "NaN"
                     : "infinite", (unsigned long long)t->step, t->epoch + 1, (double)lr, last);
}

/* One iteration on the host mini-batch, in the strategy's steps. */
static clg_status train_step(clg__trainer *t, float lr, double *loss, size_t *correct)
{
    const clg__strategy *s = t->strategy;
    clg_status st = s->compute(t, lr);
    if (st == CLG_OK)
        st = s->reduce(t);
    if (st == CLG_OK)
        st = s->update(t, lr);
    if (st == CLG_OK)
        return s->finish(t, loss, correct);
    if (s->cancel)
        s->cancel(t);
    return st;
}

#ifdef CLGRAD_TESTING
/* A testing build's injected rank faults (CLGRAD_FAULT): this rank's weights drift by one
 * ulp, or the rank dies, after the iteration's work. */
static void inject_rank_faults(clg__trainer *t)
{
    if (t->skew_at && t->step == t->skew_at) {
        size_t np;
        float *p = clg__group_params(t->group, &np);
        p[0] = nextafterf(p[0], INFINITY);
    }
    if (t->exit_at && t->step == t->exit_at)
        clg__testing_rank_exit(t->rank, t->step);
}
#endif

/* CLG_BN_POPULATION: every batch-norm layer's statistics become the mean of the training
 * batches' (as PyTorch's update_bn): a training-mode forward pass over the data with the
 * final weights, batch b's statistics weighted 1 / b into the running ones (momentum 1 / b;
 * the first replaces them). Every rank of a cluster does the same on the same data. */
static clg_status population_statistics(clg__trainer *t)
{
    clg_net *net = t->net;
    float keep[64];
    size_t nbn = 0;
    for (size_t i = 0; i < net->count; i++)
        nbn += net->layers[i].kind == CLG_LAYER_BATCHNORM;
    if (!nbn || t->o.batchnorm_statistics != CLG_BN_POPULATION)
        return CLG_OK;
    size_t *idx = clg__malloc(t->batch * sizeof *idx);
    float *images = clg__malloc(t->batch * t->per_sample * sizeof *images);
    void *targets = clg__malloc(t->batch * t->target_bytes);
    clg_status st = idx && images && targets ? CLG_OK : clg__oom(t->ctx, "clg_train");
    if (st == CLG_OK)
        st = clg__net_reserve(net, t->batch);
    for (size_t i = 0, k = 0; st == CLG_OK && i < net->count; i++)
        if (net->layers[i].kind == CLG_LAYER_BATCHNORM && k < 64)
            keep[k++] = net->layers[i].momentum;
    for (size_t b = 0; st == CLG_OK && b < t->iters_per_epoch; b++) {
        for (size_t j = 0; j < t->batch; j++)
            idx[j] = b * t->batch + j;
        st = clg_datastore_read(t->train, idx, t->batch, images, targets);
        if (st != CLG_OK) {
            st = clg__fail(t->ctx, st, "clg_train: %s", clg_datastore_last_error(t->train));
            break;
        }
        for (size_t i = 0; i < net->count; i++)
            if (net->layers[i].kind == CLG_LAYER_BATCHNORM)
                net->layers[i].momentum = 1.0f / (float)(b + 1);
        st = clg__net_upload(net, images, t->batch);
        if (st == CLG_OK)
            st = clg__net_forward(net, 1, t->step + 1 + b);
    }
    for (size_t i = 0, k = 0; i < net->count; i++)
        if (net->layers[i].kind == CLG_LAYER_BATCHNORM)
            net->layers[i].momentum = k < 64 ? keep[k++] : 0.1f;
    if (st == CLG_OK)
        st = clg_ctx_finish(t->ctx);
    free(idx), free(images), free(targets);
    return st;
}

clg_status clg__train_run(clg__trainer *t)
{
    const clg_train_options *o = &t->o;
    clg_status st = CLG_OK;
    int stop = 0;
    size_t since_report = 0;
    double report_t = clg__now(), start = clg__now(), build_start = clg__train_build_seconds(t);
    size_t trained = 0;
    uint64_t sent0 = clg__cluster_bytes_sent(t->cluster);
    float lr = learn_rate(t);
    if (t->resume_skipped[0])
        say(t, CLG_PROGRESS_RESUME_SKIPPED, lr, t->resume_skipped);
    if (t->resumed_from[0] && say(t, CLG_PROGRESS_RESUMED, lr, t->resumed_from)) {
        t->rep.stop_reason = CLG_STOP_CALLBACK;
        stop = 1;
    }
    while (st == CLG_OK && !stop && t->epoch < o->max_epochs) {
        build_order(t, t->epoch);
        clg_datastore_set_epoch(t->train, (uint64_t)t->epoch); /* augmentation draws */
        st = clg__start_epoch_reads(t);
        for (; st == CLG_OK && !stop && t->next_iter < t->iters_per_epoch; t->next_iter++) {
            lr = learn_rate(t);
            t->step++;
            double loss = 0.0;
            size_t correct = 0;
            st = clg__read_batch(t);
            t->units = t->labelled; /* cluster: all ranks' (clg__cluster_combine) */
            if (st == CLG_OK)
                st = train_step(t, lr, &loss, &correct);
            if (st == CLG_OK && !isfinite(loss))
                st = diverged(t, loss, lr);
            if (st != CLG_OK)
                break;
            trained += t->batch;
            since_report += t->batch;
            t->rep.loss = loss;
            t->rep.accuracy = clg__task_metric(t->net, loss, correct, t->units);
            clg__train_log_row(t, "iteration", loss, t->rep.accuracy, NAN, NAN, lr);
            int last = t->next_iter + 1 == t->iters_per_epoch && t->epoch + 1 == o->max_epochs;
            if (t->step == 1 || t->step % o->verbose_frequency == 0 || last) {
                double now = clg__now();
                if (clg__train_report(t, CLG_PROGRESS_ITERATION, loss, t->rep.accuracy, lr,
                           since_report / (now - report_t > 1e-9 ? now - report_t : 1e-9), NULL)) {
                    t->rep.stop_reason = CLG_STOP_CALLBACK;
                    stop = 1;
                }
                since_report = 0;
                report_t = now;
            }
            if (t->val && (t->step % o->validation_frequency == 0 || last))
                st = validate(t, lr, &stop);
            if (st == CLG_OK && o->checkpoint_path &&
                o->checkpoint_frequency_unit == CLG_CHECKPOINT_ITERATIONS &&
                t->step % (uint64_t)o->checkpoint_frequency == 0) {
                t->next_iter++; /* the position saved is the next iteration to run */
                st = checkpoint(t, lr);
                t->next_iter--;
            }
            if (o->stop_request && *o->stop_request && !stop) {
                t->rep.stop_reason = CLG_STOP_REQUESTED;
                stop = 1;
            }
            if (st == CLG_OK && t->cluster)
                st = clg__cluster_agree_stop(t, &stop);
#ifdef CLGRAD_TESTING
            inject_rank_faults(t);
#endif
        }
        if (st != CLG_OK || t->next_iter < t->iters_per_epoch)
            break; /* stopped inside the epoch */
        t->epoch++;
        t->next_iter = 0;
        if (t->log)
            fflush(t->log);
        if (say(t, CLG_PROGRESS_EPOCH, lr, NULL)) {
            t->rep.stop_reason = CLG_STOP_CALLBACK;
            stop = 1;
        }
        if (t->cluster) {
            st = clg__cluster_agree_stop(t, &stop);
            if (st == CLG_OK)
                st = clg__cluster_verify(t);
            if (st != CLG_OK)
                break;
        }
        if (o->checkpoint_path && o->checkpoint_frequency_unit == CLG_CHECKPOINT_EPOCHS &&
            t->epoch % o->checkpoint_frequency == 0)
            st = checkpoint(t, lr);
    }
    if (st == CLG_OK && t->rep.stop_reason == CLG_STOP_REQUESTED && o->checkpoint_path)
        st = checkpoint(t, lr); /* where a resumed run goes on from */
    if (st == CLG_OK && t->cluster)
        st = clg__cluster_verify(t);
    if (st == CLG_OK && t->val && !t->has_val)
        st = validate(t, lr, &stop);
    if (st == CLG_OK)
        st = t->strategy->sync(t);
    if (st == CLG_OK && o->output_network == CLG_OUTPUT_BEST_VALIDATION && t->best) {
        size_t nl = clg_net_param_count(t->net, CLG_PARAMS_LEARNABLE);
        st = clg_net_set_params(t->net, CLG_PARAMS_LEARNABLE, t->best, nl);
        if (st == CLG_OK && t->best_count > nl)
            st = clg_net_set_params(t->net, CLG_PARAMS_STATE, t->best + nl, t->best_count - nl);
    }
    if (st == CLG_OK && t->rep.stop_reason != CLG_STOP_REQUESTED)
        st = population_statistics(t);
    double secs = clg__now() - start - (clg__train_build_seconds(t) - build_start);
    t->rep.epochs = t->epoch;
    t->rep.iterations = (size_t)t->step;
    t->rep.has_validation = t->has_val;
    t->rep.val_loss = t->val_loss;
    t->rep.val_accuracy = t->val_acc;
    t->rep.best_val_loss = t->best_val_loss;
    t->rep.best_val_accuracy = t->best_val_acc;
    t->rep.best_iteration = t->best_iter;
    t->rep.elapsed_s = clg__train_elapsed(t);
    t->rep.readback_ms = t->group ? clg__group_readback_ms(t->group) : 0.0;
    t->rep.images_per_s = secs > 0 ? (double)trained / secs : 0.0;
    t->rep.run_iterations = trained / t->batch;
    if (t->rep.run_iterations)
        t->rep.cluster_bytes_per_step = (double)(clg__cluster_bytes_sent(t->cluster) - sent0) /
                                        (double)t->rep.run_iterations;
    if (t->log)
        fflush(t->log);
    if (st == CLG_OK)
        clg__train_report(t, CLG_PROGRESS_DONE, t->rep.loss, t->rep.accuracy, lr,
                          t->rep.images_per_s, NULL);
    return st;
}

clg_status clg__trainer_init(clg__trainer *t, clg_net *net, clg_datastore *train,
                             clg_datastore *val, const clg_train_options *given, int resuming)
{
    memset(t, 0, sizeof *t);
    t->net = net;
    t->ctx = net->ctx;
    t->train = train;
    t->val = val;
    t->plateau_scale = 1.0;
    t->t0 = clg__now();
    if (clg__train_options_read(given, &t->o, &t->x) != CLG_OK)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s", clg_last_error());
    t->build0 = clg__train_build_seconds(t);
    const clg_train_options *o = &t->o;
    t->seed = o->seed;
    t->check_numerics = t->x.check_numerics || clg__ctx_check_numerics(net->ctx);
    if (net->task == CLG_TASK_NONE)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_train: the net has no output layer "
                         "(softmax, pixelsoftmax or regression)");
    if (o->learn_rate_schedule == CLG_LR_PLATEAU && !val)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_train: the plateau schedule drops "
                         "the rate when the validation loss stops falling: it needs validation "
                         "data");
    clg_datastore *stores[2] = {train, val};
    for (int i = 0; i < 2; i++) {
        if (!stores[i])
            continue;
        clg_status st = clg__check_data(net, stores[i], i ? "clg_train: validation data"
                                                           : "clg_train: training data");
        if (st != CLG_OK)
            return st;
        st = clg__match_to_net(net, stores[i], i ? "clg_train: validation data"
                                                          : "clg_train: training data",
                                          &t->matched[i]);
        if (st != CLG_OK)
            return st;
        if (t->matched[i])
            stores[i] = t->matched[i];
        if (net->task != CLG_TASK_REGRESSION &&
            clg_datastore_class_count(stores[i]) > net->classes)
            return clg__fail(net->ctx, CLG_ERR_SHAPE, "clg_train: the %s data has %zu classes, "
                             "the net's output %zu", i ? "validation" : "training",
                             clg_datastore_class_count(stores[i]), net->classes);
    }
    t->train = train = stores[0];
    t->val = val = stores[1];
    t->samples = clg_datastore_size(train);
    if (!t->samples)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_train: the training data is empty");
    t->batch = o->mini_batch_size < t->samples ? o->mini_batch_size : t->samples;
    t->iters_per_epoch = t->samples / t->batch;
    t->per_sample = clg_shape_numel(net->input);
    t->local_batch = t->batch;
    if (t->x.environment == CLG_ENV_PARALLEL) {
        clg_status st = clg__cluster_setup(t);
        if (st != CLG_OK)
            return st;
    }
    t->best_count = clg_net_param_count(net, CLG_PARAMS_LEARNABLE) +
                    clg_net_param_count(net, CLG_PARAMS_STATE);
    t->perm = clg__malloc(t->samples * sizeof *t->perm);
    t->images = clg__malloc(t->local_batch * t->per_sample * sizeof *t->images);
    t->target_bytes = 4 * clg__net_target_values(net);
    t->targets = clg__malloc(t->local_batch * t->target_bytes);
    if (!t->perm || !t->images || !t->targets)
        return clg__oom(net->ctx, "clg_train");
    size_t workers = !t->x.dispatch_in_background ? 0
                     : t->x.dispatch_workers ? t->x.dispatch_workers : 1;
    clg_status st = clg_batch_reader_create(train, t->local_batch, workers, 0, &t->reader);
    if (st != CLG_OK)
        return clg__fail(net->ctx, st, "clg_train: %s", clg_last_error());
    st = clg_gemm_tune_if_wanted(net->ctx); /* asked for at the context's creation */
    if (st == CLG_OK)
        st = clg__net_reserve(net, t->batch);
    t->strategy = &clg__strategy_device; /* until a group is set up */
    if (st == CLG_OK)
        st = clg__optim_create(&t->opt, net, o);
    if (st == CLG_OK && o->metrics_log && t->rank == 0) {
        t->log = fopen(o->metrics_log, resuming ? "a" : "w");
        if (!t->log)
            return clg__fail(net->ctx, CLG_ERR_IO, "clg_train: cannot write the metrics log %s",
                             o->metrics_log);
        if (!resuming || ftell(t->log) == 0)
            fprintf(t->log, "kind,epoch,iteration,elapsed_s,loss,accuracy,val_loss,"
                            "val_accuracy,learn_rate\n");
    }
    if (st == CLG_OK && o->checkpoint_path && !clg__make_dirs(o->checkpoint_path))
        st = clg__fail(net->ctx, errno == ENOMEM ? CLG_ERR_OUT_OF_HOST_MEMORY : CLG_ERR_IO,
                       "clg_train: cannot create the checkpoint folder %s: %s", o->checkpoint_path,
                       strerror(errno));
    return st;
}

void clg__trainer_free(clg__trainer *t)
{
    clg_batch_reader_destroy(t->reader);
    clg_datastore_destroy(t->matched[0]);
    clg_datastore_destroy(t->matched[1]);
    free(t->rank_order);
    clg__cluster_close(t->cluster);
    clg__group_destroy(t->group);
    free(t->hgrad);
    clg__optim_destroy(&t->opt);
    free(t->perm);
    free(t->images);
    free(t->targets);
    free(t->best);
    if (t->log)
        fclose(t->log);
}

clg_status clg_train(clg_net *net, clg_datastore *train, clg_datastore *val,
                     const clg_train_options *options, clg_train_report *report_out)
{
    if (report_out)
        memset(report_out, 0, sizeof *report_out);
    if (!net || !train || !options)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_train: net, train and options must not be NULL");
    clg__trainer t;
    clg_status st = clg__trainer_init(&t, net, train, val, options, 0);
    return clg__train_finish(&t, st, report_out);
}

clg_status clg__train_finish(clg__trainer *t, clg_status st, clg_train_report *report_out)
{
    if (st == CLG_OK)
        st = clg__train_group_setup(t);
    if (st == CLG_OK)
        st = clg__train_run(t);
    if (report_out)
        *report_out = t->rep;
    clg__trainer_free(t);
    return st;
}
