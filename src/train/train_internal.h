/* The trainer: everything one training run holds, shared by the loop, the optimizer and the
 * checkpoint code. */
#ifndef CLGRAD_TRAIN_INTERNAL_H
#define CLGRAD_TRAIN_INTERNAL_H

#include <pthread.h>
#include <stdio.h>
#include "clgrad/train.h"
#include "nn/nn_internal.h"
#include "parallel/parallel_internal.h"
#include "cluster/cluster_internal.h"

typedef struct clg__trainer {
    clg_net *net;
    clg_ctx *ctx;
    clg_datastore *train, *val;
    clg_datastore *matched[2];    /* train and val relabelled to the net's class order, or NULL */
    clg_train_options o;          /* the caller's, over the defaults; o.execution is &x */
    clg_exec_options x;
    size_t samples, batch, iters_per_epoch, per_sample;
    size_t *perm;                 /* this epoch's sample order */
    float *images;                /* one host mini-batch */
    int32_t *labels;
    clg__param_ref *params;
    size_t nparams;
    clg_tensor **m, **v;          /* optimizer state per parameter (m: adam only); with a
                                     group, staging for checkpoints only */
    clg__group *group;            /* multi-device: replicas, host master weights */
    float *hgrad, *hm, *hv;       /* multi-device: host gradient and optimizer state */
    int early;                    /* multi-device: update during the step (early_update) */
    float update_lr;              /* multi-device, updating during the step: its rate, */
    clg_status update_st;         /* and the first failure of its updates */
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
} clg__trainer;

/* Multi-device (train_group.c): the device group for the options' contexts (none: nothing to
 * do) with host optimizer state; and the net, as validation, checkpoints and the caller see
 * it, set to the group's host master weights and state. */
clg_status clg__train_group_setup(clg__trainer *t);
clg_status clg__train_sync_master(clg__trainer *t);

/* Optimizer state tensors for every parameter (zeroed) and one update with rate lr. */
clg_status clg__optim_create(clg__trainer *t);
void clg__optim_destroy(clg__trainer *t);
clg_status clg__optim_step(clg__trainer *t, float lr);
/* Whether the options clip gradients (a finite threshold above 0); the clipping by it (no-op
 * when off). */
int clg__clipping(const clg__trainer *t);
clg_status clg__clip_gradients(clg__trainer *t);
/* Multi-device: the same on the host arrays (group master weights, t->hgrad, t->hm, t->hv);
 * sum: t->hgrad is first taken from the group's last step, slice by slice in the same pass
 * (the step left it to this). */
clg_status clg__optim_step_host(clg__trainer *t, float lr, int sum);
/* The same for master weights [lo, hi) only, taking their gradient from the group, at
 * t->update_lr (the group's update callback: user is the trainer); a failure goes to
 * t->update_st. */
void clg__optim_update_range(void *user, float *w, size_t lo, size_t hi);
void clg__clip_gradients_host(clg__trainer *t);
/* Multi-device: host optimizer state from / to the device staging tensors (for checkpoints). */
clg_status clg__optim_host_from_device(clg__trainer *t);
clg_status clg__optim_host_to_device(clg__trainer *t);

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

/* The training state (position, validation history, optimizer moments, best parameters) as a
 * blob for the model file, and back. */
clg_status clg__train_state_save(clg__trainer *t, unsigned char **blob, size_t *len);
clg_status clg__train_state_load(clg__trainer *t, const unsigned char *blob, size_t len);

/* A view of ds with labels in the net's class order (clg_datastore_match_classes) where its
 * classes are named differently from a named net's; *view NULL where none is needed. `what`
 * starts the error. */
clg_status clg__match_to_net(clg_net *net, clg_datastore *ds, const char *what,
                             clg_datastore **view);

/* Adam and AdamW: first and second moments. */
static inline int clg__adam_family(clg_solver s)
{
    return s == CLG_SOLVER_ADAM || s == CLG_SOLVER_ADAMW;
}

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
