/* The trainer: everything one training run holds, shared by the loop, the optimizer and the
 * checkpoint code. */
#ifndef CLGRAD_TRAIN_INTERNAL_H
#define CLGRAD_TRAIN_INTERNAL_H

#include <pthread.h>
#include <stdio.h>
#include "clgrad/train.h"
#include "clgrad/tune.h"
#include "nn/nn_internal.h"
#include "parallel/parallel_internal.h"
#include "cluster/cluster_internal.h"
#include "train/optimizer.h"

typedef struct clg__trainer clg__trainer;

/* How one iteration runs on the devices this process trains on, in the same few calls for
 * every way of training: one device (train_device.c), a device group with host master
 * weights (train_group.c), and a group whose steps are summed across MPI ranks (the same,
 * with the ranks' shares added in reduce). train_step calls them in order; cancel after a
 * failure in any of them. */
typedef struct clg__strategy {
    const char *name;
    /* forward and backward of this process's share of the host mini-batch (t->images) */
    clg_status (*compute)(clg__trainer *t, float lr);
    /* the whole batch's gradient: the shares added (devices, ranks), then clipped */
    clg_status (*reduce)(clg__trainer *t);
    /* the optimizer's step; every replica then works on the new weights */
    clg_status (*update)(clg__trainer *t, float lr);
    /* the mini-batch's mean loss and correct count (waits for them) */
    clg_status (*finish)(clg__trainer *t, double *loss, size_t *correct);
    void (*cancel)(clg__trainer *t);
    /* the net (validation, checkpoints and the caller see it) and the optimizer's device
     * moments set to the master copies, where the strategy keeps them elsewhere */
    clg_status (*sync)(clg__trainer *t);
} clg__strategy;

extern const clg__strategy clg__strategy_device, clg__strategy_group, clg__strategy_cluster;

struct clg__trainer {
    clg_net *net;
    clg_ctx *ctx;
    clg_datastore *train, *val;
    clg_datastore *matched[2];    /* train and val relabelled to the net's class order, or NULL */
    clg_train_options o;          /* the caller's, over the defaults; o.execution is &x */
    clg_exec_options x;
    size_t samples, batch, iters_per_epoch, per_sample;
    size_t *perm;                 /* this epoch's sample order */
    float *images;                /* one host mini-batch */
    void *targets;                /* ... its targets (target_bytes a sample) */
    size_t target_bytes;
    size_t labelled;              /* labels of this process's batch that count (samples, or
                                     labelled pixels) */
    size_t units;                 /* ... of the whole batch (all ranks): accuracy's divisor */
    const clg__strategy *strategy;
    clg__optimizer opt;           /* with a group, its device moments stage checkpoints only */
    clg__group *group;            /* multi-device: replicas, host master weights */
    float *hgrad;                 /* multi-device: host gradient */
    int early;                    /* multi-device: update during the step (early_update) */
    int fused, during;            /* this step: the update sums the devices' gradients as it
                                     goes; the update runs layer by layer during the step */
    float update_lr;              /* multi-device, updating during the step: its rate, */
    clg_status update_st;         /* and the first failure of its updates */
    double step_loss;             /* multi-device: the step's loss and correct count */
    size_t step_correct;
    unsigned char faults[64];     /* multi-device: failures per device */
    int check_numerics;
    /* cluster ("parallel"): this rank's shard [shard_first, + local_batch) of each global
     * batch; local_batch = batch otherwise */
    clg__cluster *cluster;
    int rank, ranks;
    size_t shard_first, local_batch;
    size_t *rank_order;           /* the epoch's order of this rank's samples */
    uint64_t exit_at;             /* fault injection "rankR:exit@STEP": this rank dies then */
    uint64_t skew_at;             /* "rankR:skew@STEP": its weights drift by one ulp then */
    clg_batch_reader *reader;     /* the training batches (worker threads: dispatch_in_background) */
    /* position: `step` iterations done; the next is iteration next_iter of epoch `epoch` */
    uint64_t step;
    int epoch;
    size_t next_iter;
    uint64_t seed;
    /* validation history */
    int has_val;
    double val_loss, val_acc, best_val_loss, best_val_acc;
    size_t best_iter;
    int bad_validations;
    char resumed_from[4096];      /* clg_train_resume: the checkpoint file, else "" */
    char resume_skipped[2048];    /* ... and newer ones that did not load, with why, or "" */
    double build0;                /* program build seconds before t0 (build_seconds) */
    double plateau_scale;         /* CLG_LR_PLATEAU: the drops so far, multiplied */
    int plateau_bad;              /* validations without improvement since the last drop */
    float *best;                  /* learnables then state at the best validation, or NULL */
    size_t best_count;
    double elapsed_before, t0;    /* seconds of earlier runs (resumed), start of this one */
    FILE *log;
    clg_train_report rep;
};

/* Multi-device (train_group.c): the device group for the options' contexts (none: nothing to
 * do, the device strategy stays) with host optimizer state, and its strategy. */
clg_status clg__train_group_setup(clg__trainer *t);

/* What training tells (progress.c): a progress report (nonzero: the callback asks to stop),
 * a metrics-log row, the seconds of training so far and of program builds. */
int clg__train_report(clg__trainer *t, clg_progress_kind kind, double loss, double acc,
                      float lr, double images_per_s, const char *text);
void clg__train_log_row(clg__trainer *t, const char *kind, double loss, double acc,
                        double vloss, double vacc, float lr);
double clg__train_elapsed(const clg__trainer *t);
double clg__train_build_seconds(const clg__trainer *t);

/* Starts reading the epoch's batches from iteration next_iter (t->perm holds the order), and
 * the next of them into t->images / t->labels, its labels checked against the net. */
clg_status clg__start_epoch_reads(clg__trainer *t);
clg_status clg__read_batch(clg__trainer *t);

/* Cluster training (cluster_step.c): whether the options ask for it; the communicator, rank
 * and shard; rank 0's weights to all at the start; the ranks' gradients summed after a step;
 * rank 0's stop decision for all. */
/* The options the caller gave (any struct_size) over the defaults, checked. */
clg_status clg__train_options_read(const clg_train_options *given, clg_train_options *o,
                                   clg_exec_options *x);

clg_status clg__cluster_setup(clg__trainer *t);
clg_status clg__cluster_share_start(clg__trainer *t);
/* The rank faults of a fault-injection spec ("rankR:exit@STEP", "rankR:skew@STEP"; the
 * device group's own entries are skipped) that concern this rank. */
clg_status clg__cluster_inject(clg__trainer *t, const char *faults);
/* The master weights compared across ranks (a hash); rank 0's sent to all when they differ. */
clg_status clg__cluster_verify(clg__trainer *t);
clg_status clg__cluster_combine(clg__trainer *t, double *loss, size_t *correct);
clg_status clg__cluster_agree_stop(clg__trainer *t, int *stop);

/* Writes the checkpoint of t's position into the folder (path receives the file's name),
 * then keeps the newest three up to it (checkpoint.c). *io_failed: the file could not be
 * written, which training survives; other failures are the device's or memory's. */
clg_status clg__checkpoint_write(clg__trainer *t, char *path, size_t cap, int *io_failed);

/* The checkpoint files of folder dir as full paths, newest first (names sort by epoch and
 * iteration): those clg__checkpoint_write names (written_only), or any checkpoint-*.clgm.
 * *list (n paths) is freed with clg__checkpoint_list_free; 0 when out of memory (n is 0 for a
 * folder that cannot be opened). */
int clg__checkpoint_list(const char *dir, int written_only, char ***list, size_t *n);
void clg__checkpoint_list_free(char **list, size_t n);

/* The training state (position, validation history, optimizer moments, best parameters) as a
 * blob for the model file, and back. */
clg_status clg__train_state_save(clg__trainer *t, unsigned char **blob, size_t *len);
clg_status clg__train_state_load(clg__trainer *t, const unsigned char *blob, size_t len);

/* A view of ds with labels in the net's class order (clg_datastore_match_classes) where its
 * classes are named differently from a named net's; *view NULL where none is needed. `what`
 * starts the error. */
clg_status clg__match_to_net(clg_net *net, clg_datastore *ds, const char *what,
                             clg_datastore **view);
/* Whether ds fits net: its samples the net's input, its targets what the net's output layer
 * trains against (CLG_ERR_SHAPE / CLG_ERR_INVALID_ARG naming both, `what` first). */
clg_status clg__check_data(clg_net *net, clg_datastore *ds, const char *what);
/* Labels of n that count (all but ignored pixels); *bad: the first outside the net's classes,
 * or -1. */
size_t clg__count_labelled(const clg_net *net, const int32_t *labels, size_t n, long long *bad);
/* The task's figure of merit after a loss: accuracy (correct / units: samples, or labelled
 * pixels), or for regression the RMSE (MSE loss) or mean absolute error (L1). */
double clg__task_metric(const clg_net *net, double loss, size_t correct, size_t units);


/* The trainer's life (train.c): set up for net and its data (resuming: append to the
 * metrics log), the loop from its position, and everything freed (also after a failed
 * init). */
clg_status clg__trainer_init(clg__trainer *t, clg_net *net, clg_datastore *train,
                             clg_datastore *val, const clg_train_options *given, int resuming);
clg_status clg__train_run(clg__trainer *t);
void clg__trainer_free(clg__trainer *t);
/* The end both clg_train and clg_train_resume share: unless st already failed, the device
 * group set up and the loop run; then the report copied out (report_out may be NULL) and the
 * trainer freed. Returns the first failure. */
clg_status clg__train_finish(clg__trainer *t, clg_status st, clg_train_report *report_out);

#endif
