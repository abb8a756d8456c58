/* The device group of multi-device training: a replica of the network on each context, one
 * host thread per device per step, shard gradients summed on the host in device order. */
#ifndef CLGRAD_PARALLEL_INTERNAL_H
#define CLGRAD_PARALLEL_INTERNAL_H

#include "clgrad/parallel.h"
#include "nn/nn_internal.h"
#include "parallel/crew.h"

typedef struct clg__group clg__group;

/* Devices one group can hold (the step's and the balancer's arrays are this long). */
#define CLG__GROUP_MAX_DEVICES 64

/* Replicas of master (its text, parameters, state and dropout seed) on each of the n contexts
 * (borrowed). weights: n fixed shares (WorkerLoad), or NULL for auto: equal at first, then in
 * proportion to each device's measured speed, re-split every few steps. */
clg_status clg__group_create(clg_net *master, clg_ctx *const *ctxs, size_t n,
                             const float *weights, clg__group **out);
void clg__group_destroy(clg__group *g);

/* Host copies of the learnables and batch-norm state that replicas are set to at the next step
 * (the optimizer updates the learnables in place between steps). */
float *clg__group_params(clg__group *g, size_t *count);
/* The group's worker threads (crew.h), one per device: idle between steps, so the host's pass
 * over the weights may run its slices on them. */
clg__crew *clg__group_crew(clg__group *g);
float *clg__group_state(clg__group *g, size_t *count);

/* One step on a host mini-batch: each device takes its shard (forward in training mode with
 * dropout drawn for the whole-batch positions, backward of the summed loss), then
 * grad[i] = (sum over devices, in order, of the shard gradient sums) / batch; the state becomes
 * the shard-weighted mean of the replicas' running statistics. *loss is the batch mean loss. */
clg_status clg__group_step(clg__group *g, const float *images, const void *targets,
                           size_t batch, uint64_t step, size_t skip, float *grad, double *loss,
                           size_t *correct, size_t *failed);
/* (skip: a device that sits this step out, or (size_t)-1; on a device's failure *failed is
 * its index and the status its error, the message naming it. grad NULL: the caller takes the
 * gradient itself with clg__group_sum, e.g. slice by slice in the optimizer's pass.) */
/* Elements [lo, hi) of the last step's gradient into out[0, hi - lo): the working devices'
 * sums, in device order, / the batch. Threads may take disjoint ranges at once. */
void clg__group_sum(const clg__group *g, float *out, size_t lo, size_t hi);
/* For a pass that sums as it reads: the number of working devices of the last step, the first
 * and the last one's gradient sums (whole arrays) and 1 / the batch; and (two or more) the
 * sum of all but the last, in device order, unscaled, of elements [lo, hi) into out. The
 * gradient is then (that sum + last) * inv, bit for bit clg__group_sum's. */
size_t clg__group_shards(const clg__group *g, const float **first, const float **last,
                         float *inv);
void clg__group_sum_but_last(const clg__group *g, float *out, size_t lo, size_t hi);

/* Fault injection for tests and benchmarks: "DEVICE:fail@STEP" (that device's work fails with
 * CLG_ERR_DEVICE_LOST at that step, once), "DEVICE:slow=K" (it computes everything K times)
 * and "DEVICE:slow=K@STEP" (at that step only), comma-separated. */
clg_status clg__group_inject(clg__group *g, const char *spec);
/* Every replica checks its outputs and gradients for NaN and infinity (see
 * clg__net_check_numerics); a finding fails the step like a device error, but is not one. */
void clg__group_check_numerics(clg__group *g, int on);

/* Replicas compute in host memory (mode 1: on every device, -1: on CPUs, 0: never): their
 * parameters are buffers over the group's weights and their gradients over host arrays, so
 * that a step copies neither (see host_shared.c). Set once, after create. */
clg_status clg__group_zero_copy(clg__group *g, int mode);

/* Overlapped gradient read-back on (the default from the options) or off, and the mean per
 * step of the slowest device's read-back time left exposed after its backward. */
void clg__group_overlap(clg__group *g, int on);
double clg__group_readback_ms(const clg__group *g);

/* Cluster training: the group's samples are positions [first, first + its batch) of a global
 * batch of `batch` (dropout draws by global position), and the step's gradient, state and loss
 * are divided by that global batch, so that the ranks' results add up to the whole. */
void clg__group_set_global(clg__group *g, size_t first, size_t batch);
/* Streaming (cluster training): with overlapped read-back on every device, each layer's
 * gradient range, once every device has read it, is summed in device order, divided by the
 * (global) batch and handed to ready() on the thread in clg__group_step while earlier layers
 * still compute; idle() is called every millisecond or so while that thread waits (to move
 * MPI along). clg__group_streamed tells whether the last step did so for every parameter
 * (else the caller has the whole gradient at the end, as without a stream). */
typedef struct clg__group_stream {
    void (*ready)(void *user, float *grad, size_t first, size_t count);
    void (*idle)(void *user);
    void *user;
} clg__group_stream;
void clg__group_set_stream(clg__group *g, const clg__group_stream *s);
/* Updating as the gradients land (no stream, and the caller passing no gradient array to
 * clg__group_step): with every working device streaming (in host memory, or reading back
 * overlapped), range(user, params, lo, hi) is called on the thread in clg__group_step for
 * each range of the parameters once every device has its gradients there, while earlier
 * layers still compute; it takes the gradient with clg__group_sum and updates params[lo, hi)
 * (the master weights: the caller marks them changed with clg__group_params after the step).
 * clg__group_updated tells whether the last step updated every parameter so; else the
 * caller updates them after the step, as without. A step that fails may have updated some
 * ranges: only for callers that do not redo a failed step. */
typedef struct clg__group_update {
    void (*range)(void *user, float *params, size_t lo, size_t hi);
    void *user;
} clg__group_update;
void clg__group_set_update(clg__group *g, const clg__group_update *u);
int clg__group_updated(const clg__group *g);
int clg__group_streamed(const clg__group *g);
/* Takes a device out of the group for good. */
void clg__group_drop(clg__group *g, size_t device);
const char *clg__group_device_name(const clg__group *g, size_t device);

/* The split of the last step (n counts) and the number of devices; each device's time for its
 * shard in that step (ms, 0 for an empty shard). */
const size_t *clg__group_split(const clg__group *g, size_t *n);
const double *clg__group_device_ms(const clg__group *g);

#endif
