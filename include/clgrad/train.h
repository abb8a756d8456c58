/* Training a network on a datastore, with options that mirror MATLAB's trainingOptions,
 * validation, early stopping, checkpoints that resume exactly, a progress callback and a CSV
 * metrics log. The library never prints: the callback shows progress. */
#ifndef CLGRAD_TRAIN_H
#define CLGRAD_TRAIN_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include "clgrad/data.h"
#include "clgrad/nn.h"
#include "clgrad/parallel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_solver {
    CLG_SOLVER_SGDM = 0,    /* SGD with momentum (PyTorch's form: v = m v + g; w -= lr v) */
    CLG_SOLVER_ADAM = 1,
    CLG_SOLVER_RMSPROP = 2,
    CLG_SOLVER_ADAMW = 3    /* Adam with decoupled weight decay: l2_regularization is the
                               decay, w -= lr * l2 * w before the Adam step (Loshchilov and
                               Hutter; PyTorch's AdamW) */
} clg_solver;

typedef enum clg_lr_schedule {
    CLG_LR_NONE = 0,
    CLG_LR_PIECEWISE = 1,   /* times drop_factor every drop_period epochs */
    CLG_LR_COSINE = 2,      /* cosine annealing from the rate to 0 over the iterations after
                               warm-up (PyTorch's CosineAnnealingLR, stepped per iteration) */
    CLG_LR_PLATEAU = 3      /* times drop_factor after plateau_patience validations in a row
                               without a lower validation loss (PyTorch's ReduceLROnPlateau);
                               needs validation data */
} clg_lr_schedule;

typedef enum clg_shuffle {
    CLG_SHUFFLE_ONCE = 0,   /* one permutation, before the first epoch */
    CLG_SHUFFLE_EVERY_EPOCH = 1,
    CLG_SHUFFLE_NEVER = 2
} clg_shuffle;

typedef enum clg_output_network {
    CLG_OUTPUT_LAST = 0,
    CLG_OUTPUT_BEST_VALIDATION = 1  /* the parameters of the lowest validation loss */
} clg_output_network;

/* MATLAB's BatchNormalizationStatistics: what batch norm's running statistics hold when
 * training ends. */
typedef enum clg_bn_statistics {
    CLG_BN_MOVING = 0,    /* the moving averages of the last steps (they lag the weights) */
    CLG_BN_POPULATION = 1 /* the mean of every training batch's statistics under the final
                             weights: one forward pass over the training data at the end */
} clg_bn_statistics;

typedef enum clg_grad_threshold_method {
    CLG_GRAD_L2NORM = 0,         /* each learnable tensor's norm clipped on its own (MATLAB) */
    CLG_GRAD_GLOBAL_L2NORM = 1   /* all gradients scaled by one factor: the norm of them all */
} clg_grad_threshold_method;

typedef enum clg_progress_kind {
    CLG_PROGRESS_ITERATION = 0,  /* every verbose_frequency iterations, and the first */
    CLG_PROGRESS_VALIDATION = 1,
    CLG_PROGRESS_EPOCH = 2,      /* an epoch ended */
    CLG_PROGRESS_CHECKPOINT = 3, /* a checkpoint was written (path in text) */
    CLG_PROGRESS_DONE = 4,
    CLG_PROGRESS_DEVICE_FAULT = 5, /* a device failed a step (text: which and why) */
    CLG_PROGRESS_RESUMED = 6,    /* clg_train_resume, before its first step: text is the
                                    checkpoint, iteration the steps it holds, epoch the one
                                    training goes on with */
    CLG_PROGRESS_CHECKPOINT_FAILED = 7, /* a checkpoint could not be written (text: the file
                                    and why); training goes on, the next one is tried */
    CLG_PROGRESS_RESUME_SKIPPED = 8 /* before CLG_PROGRESS_RESUMED: the folder's newer
                                    checkpoints that did not load, passed over (text: each
                                    and why) */
} clg_progress_kind;

typedef enum clg_checkpoint_unit {
    CLG_CHECKPOINT_EPOCHS = 0,
    CLG_CHECKPOINT_ITERATIONS = 1
} clg_checkpoint_unit;

typedef struct clg_train_progress {
    clg_progress_kind kind;
    int epoch;                   /* 1-based */
    int max_epochs;
    size_t iteration;            /* 1-based, over all epochs */
    size_t iterations_per_epoch;
    double elapsed_s;
    double loss, accuracy;       /* the last mini-batch (accuracy as a fraction) */
    int has_validation;
    double val_loss, val_accuracy;
    double learn_rate;
    double images_per_s;         /* over the iterations since the previous report */
    const char *text;            /* checkpoint path, or NULL */
    size_t devices;              /* devices training (1 without contexts) */
    const size_t *split;         /* multi-device: samples per device in the last step */
    const double *device_ms;     /* multi-device: each device's time for its samples in the
                                    last step (what the auto split evens out) */
} clg_train_progress;

/* Called from the training thread; a nonzero return stops training after this iteration (the
 * report says so). */
typedef int (*clg_train_progress_fn)(const clg_train_progress *p, void *user);

/* What to train and how (MATLAB's trainingOptions); where it runs is clg_exec_options
 * (parallel.h). Start from clg_train_options_default(): it sets struct_size, through which a
 * library newer than the caller's header reads only the fields the caller knows. */
typedef struct clg_train_options {
    size_t struct_size;               /* sizeof(clg_train_options) of the caller's header */
    clg_solver solver;                /* sgdm */
    float initial_learn_rate;         /* 0.01 */
    clg_lr_schedule learn_rate_schedule;  /* none */
    float learn_rate_drop_factor;     /* 0.1 */
    int learn_rate_drop_period;       /* 10 epochs */
    size_t warmup_iterations;         /* 0; else the rate rises linearly over them */
    size_t learn_rate_reference_batch;/* 0: off; else the linear scaling rule: the rate is
                                         initial_learn_rate * mini_batch_size / this (for a
                                         global batch grown with the devices; pair it with
                                         warm-up) */
    float momentum;                   /* 0.9 (sgdm) */
    float gradient_decay_factor;      /* 0.9 (adam beta1) */
    float squared_gradient_decay_factor; /* 0 = the solver's default: adam 0.999, rmsprop 0.9 */
    float epsilon;                    /* 1e-8 */
    float l2_regularization;          /* 1e-4, on weights (not biases or batch norm) */
    float gradient_threshold;         /* 0 or infinity: off */
    clg_grad_threshold_method gradient_threshold_method;  /* l2norm */
    int max_epochs;                   /* 30 */
    size_t mini_batch_size;           /* 128; an epoch drops the last partial batch */
    clg_shuffle shuffle;              /* once */
    size_t validation_frequency;      /* 50 iterations (and at the end) */
    int validation_patience;          /* 0: never stop early */
    clg_output_network output_network;    /* last */
    size_t verbose_frequency;         /* 50 iterations */
    const char *checkpoint_path;      /* NULL: none; else a folder */
    int checkpoint_frequency;         /* 1 */
    clg_checkpoint_unit checkpoint_frequency_unit; /* epochs */
    const char *metrics_log;          /* NULL, or a CSV file written as training goes */
    uint64_t seed;                    /* shuffles and dropout */
    clg_train_progress_fn progress;   /* NULL */
    void *progress_user;
    const clg_exec_options *execution;/* NULL: clg_exec_options_default() (the net's context
                                         alone); borrowed for the call */
    int learn_rate_plateau_patience;  /* 3 validations (CLG_LR_PLATEAU) */
    /* NULL; else training stops after the iteration during which *stop_request became
     * nonzero (MATLAB's stop button; a SIGINT handler may set it), with a checkpoint there
     * when checkpoint_path is set, and the report's stop_reason CLG_STOP_REQUESTED. */
    const volatile sig_atomic_t *stop_request;
    clg_bn_statistics batchnorm_statistics; /* moving (clgrad-train's default is population,
                                               as MATLAB trainNetwork's) */
} clg_train_options;

/** MATLAB's trainingOptions("sgdm") defaults, as commented above. */
CLG_API clg_train_options clg_train_options_default(void);

/** Checks every option; CLG_ERR_INVALID_ARG naming the first bad one (a zero mini-batch, a
 *  negative rate, an unknown solver, ...). */
CLG_API clg_status clg_train_options_check(const clg_train_options *o);

/** "sgdm", "adam", "rmsprop"; NULL for others. */
CLG_API const char *clg_solver_name(clg_solver s);
/** Parses a solver name; CLG_ERR_INVALID_ARG for an unknown one. */
CLG_API clg_status clg_solver_parse(const char *name, clg_solver *out);

typedef enum clg_stop_reason {
    CLG_STOP_MAX_EPOCHS = 0,
    CLG_STOP_VALIDATION_PATIENCE = 1,
    CLG_STOP_CALLBACK = 2,
    CLG_STOP_REQUESTED = 3       /* options.stop_request */
} clg_stop_reason;

typedef struct clg_train_report {
    int epochs;                   /* completed */
    size_t iterations;            /* in all, counting those before a resume */
    size_t run_iterations;        /* done by this call */
    double loss, accuracy;        /* the last mini-batch */
    int has_validation;
    double val_loss, val_accuracy;    /* the last validation */
    double best_val_loss, best_val_accuracy;
    size_t best_iteration;
    double elapsed_s;
    double images_per_s;          /* training images over the whole run */
    clg_stop_reason stop_reason;
    double readback_ms;           /* multi-device: mean per step of the slowest device's
                                     gradient read-back time not hidden behind backward */
    size_t updated_early_steps;   /* multi-device: steps whose weights the host updated
                                     layer by layer while the devices still computed
                                     (early_update) */
    size_t device_faults;         /* device failures survived (policy continue) */
    size_t devices_dropped;
    double cluster_bytes_per_step;/* "parallel": MPI payload this rank sent per step */
    size_t cluster_shard;         /* "parallel": samples of each global batch on this rank */
    size_t cluster_resyncs;       /* "parallel": epochs that ended with the ranks' weights
                                     differing (MPI sums rounded differently), after which
                                     rank 0's were sent to all; 0 with Open MPI so far */
    size_t checkpoint_failures;   /* checkpoints that could not be written (training went on) */
    char last_checkpoint[4096];   /* the newest checkpoint this run wrote, or "" */
} clg_train_report;

/** Trains net (already initialised) on train; val may be NULL. The class count of the data
 *  must equal the net's. net ends as options.output_network says. report may be NULL.
 *  With options.contexts, every mini-batch is split across a replica on each context (shards
 *  in proportion to worker_load, or to measured speed), each replica computes the sum of its
 *  samples' gradients on its own host thread, the host adds them in device order, divides by
 *  the batch and applies the optimizer to master weights that every replica then receives:
 *  replicas never drift, and 1, 2 or 3 devices give the same weights up to float summation
 *  order. Batch-norm batch statistics are per replica; running statistics are averaged.
 *  A checkpoint that cannot be written (a full disk) is reported (CLG_PROGRESS_CHECKPOINT_
 *  FAILED) and counted, and training goes on. Checkpoint files are named by epoch and
 *  iteration; after each one the newest three in the folder up to it are kept (also those
 *  of the runs it resumed from).
 *  @return CLG_OK; CLG_ERR_INVALID_ARG / CLG_ERR_SHAPE for options or data that do not fit the
 *          net; CLG_ERR_NUMERICS when the training loss becomes NaN or infinite (training
 *          diverged: the net's weights are then unusable, the last checkpoint holds earlier
 *          ones); datastore, device and file errors as they come (the last checkpoint stays). */
CLG_API clg_status clg_train(clg_net *net, clg_datastore *train, clg_datastore *val,
                             const clg_train_options *options, clg_train_report *report);

/** Continues training from a checkpoint file written by clg_train: the network, its
 *  optimizer state and its position (epoch, iteration) come from the file, the rest from
 *  options; a run interrupted and resumed ends with the same weights as one uninterrupted
 *  with the same options and seed on the same device. *net receives the network (the
 *  caller's), also when training fails after loading. */
CLG_API clg_status clg_train_resume(clg_ctx *ctx, const char *checkpoint, clg_datastore *train,
                                    clg_datastore *val, const clg_train_options *options,
                                    clg_net **net, clg_train_report *report);

#ifdef __cplusplus
}
#endif

#endif
