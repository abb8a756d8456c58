/* Several trainings at once on the same data (hyperparameter sweeps, architecture
 * comparisons): each experiment is one network with its own options and seed, trained on one
 * device; the experiments share the devices, a free device taking the next waiting experiment,
 * so faster devices take more of them and all finish about together. */
#ifndef CLGRAD_EXPERIMENT_H
#define CLGRAD_EXPERIMENT_H

#include "clgrad/context.h"
#include "clgrad/data.h"
#include "clgrad/train.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_experiment {
    const char *name;             /* shown in tables (copied into the result) */
    const char *net_text;         /* the network (nn.h text format) */
    uint64_t init_seed;           /* weight initialisation */
    clg_train_options options;    /* contexts and worker_load are ignored: one device each;
                                     progress is ignored: see clg_experiments_run */
    clg_datastore *train, *val;   /* borrowed; experiments may share them (see
                                     clg_datastore_shared to decode shared samples once) */
    const char *save_path;        /* NULL, or where the trained model is saved */
} clg_experiment;

typedef struct clg_experiment_result {
    char name[64];
    clg_status status;            /* CLG_OK, or why this experiment failed (the others go on) */
    char error[512];
    size_t device;                /* index of the context it trained on */
    clg_train_report report;      /* accuracy, loss, time, images/s */
    clg_net *net;                 /* the trained net (on that context), the caller's to
                                     destroy; NULL on failure */
} clg_experiment_result;

/* Progress of experiment `index` (a clg_train progress event). Calls come from the device
 * threads one at a time (under a lock); a nonzero return stops that experiment. */
typedef int (*clg_experiment_progress_fn)(size_t index, const clg_train_progress *p, void *user);

/** Runs the n experiments over the contexts (one thread per context, each training one
 *  experiment at a time; the longest waiting experiments first) and fills results[0..n). A
 *  failing experiment (bad options or network, a device error) fails alone, with its message.
 *  @return CLG_OK when every experiment ran (see each result's status); CLG_ERR_INVALID_ARG
 *          for NULL arguments or no context. */
CLG_API clg_status clg_experiments_run(clg_ctx *const *ctxs, size_t nctx,
                                       const clg_experiment *experiments, size_t n,
                                       clg_experiment_progress_fn progress, void *user,
                                       clg_experiment_result *results);

#ifdef __cplusplus
}
#endif

#endif
