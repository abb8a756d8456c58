/* Where and how training runs: the execution options (devices, their shares of each
 * mini-batch, MPI ranks, background dispatch, device faults, the multi-device step's
 * choices), given to clg_train through clg_train_options.execution, and how a mini-batch is
 * split. */
#ifndef CLGRAD_PARALLEL_H
#define CLGRAD_PARALLEL_H

#include <stddef.h>
#include "clgrad/context.h"
#include "clgrad/status.h"
#include "clgrad/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_fault_policy {
    CLG_FAULT_STOP = 0,      /* training ends with the device's error; checkpoints stay */
    CLG_FAULT_CONTINUE = 1   /* the step is redone on the other devices; a device that fails
                                twice is dropped */
} clg_fault_policy;

/* A choice clgrad makes by device unless told. */
typedef enum clg_switch {
    CLG_SWITCH_AUTO = 0,
    CLG_SWITCH_ON = 1,
    CLG_SWITCH_OFF = 2
} clg_switch;

/* Start from clg_exec_options_default(): it sets struct_size, through which a library newer
 * than the caller's header reads only the fields the caller knows. */
typedef struct clg_exec_options {
    size_t struct_size;           /* sizeof(clg_exec_options) of the caller's header */
    clg_exec_env environment;     /* CLG_ENV_AUTO; the caller picks the devices (contexts),
                                     except that CLG_ENV_PARALLEL trains across the MPI
                                     ranks (cluster.h), each global mini-batch split over the
                                     ranks in proportion to rank_load */
    clg_ctx *const *contexts;     /* NULL: train on the net's context alone; else a replica on
                                     each of these (data parallel), the net holding the
                                     result */
    size_t context_count;
    const float *worker_load;     /* NULL: auto (by measured speed); else one weight per
                                     context (MATLAB's WorkerLoad), or one value in (0, 1]:
                                     the fraction of the contexts that train (the first ones,
                                     sharing each batch equally) */
    size_t worker_load_count;
    float rank_load;              /* parallel: this rank's weight in the split of each global
                                     batch over the ranks; 0: its number of devices */
    size_t bucket_bytes;          /* parallel: gradients are summed across ranks in messages
                                     of this size (0: 4 MiB) */
    int dispatch_in_background;   /* 0; 1: worker threads read (decode, augment) the next
                                     mini-batches while a step computes: the same batches in
                                     the same order (clg_batch_reader) */
    size_t dispatch_workers;      /* 0 means 1 worker; at most 64 */
    clg_fault_policy device_fault_policy; /* multi-device: stop */
    clg_switch overlap;           /* multi-device: read each layer's gradients while earlier
                                     layers compute backward; auto: on devices other than
                                     CPUs (where the copy would take the cores that
                                     compute) */
    clg_switch zero_copy;         /* multi-device: replicas compute on the host's master
                                     weights and write their gradients into host memory
                                     (buffers over it, mapped between steps), so a step copies
                                     neither; auto: on devices that share the host's memory
                                     (CPUs) */
    clg_switch early_update;      /* multi-device: the host updates each layer's weights as
                                     soon as every device has its gradients, while the devices
                                     still compute the layers before (with policy stop only,
                                     as a failed step is then not redone; overlap not off; no
                                     clipping; one process); auto: when no device is a CPU
                                     (whose cores the update would take from the devices) */
    int check_numerics;           /* 1 (or CLGRAD_CHECK_NUMERICS=1): every layer's outputs and
                                     gradients are checked for NaN and infinity each step; the
                                     first is CLG_ERR_NUMERICS naming the layer and step
                                     (costs a few percent) */
} clg_exec_options;

/** The defaults above. */
CLG_API clg_exec_options clg_exec_options_default(void);

/** Checks every option; CLG_ERR_INVALID_ARG naming the first bad one. */
CLG_API clg_status clg_exec_options_check(const clg_exec_options *o);

/** Splits `batch` samples into n contiguous shards in proportion to weights (MATLAB's
 *  WorkerLoad): counts[i] = floor(batch * w_i / sum w), then the samples left over go one each
 *  to the largest remainders (ties to the lower index). A weight of 0 gets no samples; shards
 *  may be empty when there are more devices than samples.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for n = 0, NULL arrays, a negative or non-finite
 *          weight, or weights that are all 0. */
CLG_API clg_status clg_split_batch(size_t batch, const float *weights, size_t n, size_t *counts);

#ifdef __cplusplus
}
#endif

#endif
