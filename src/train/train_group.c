/* Training on a device group: replicas on several devices, WorkerLoad, the devices' gradient
 * sums added on the host and the optimizer applied to host master weights, faults survived;
 * and the same with MPI ranks, whose shares are added across the ranks too (the group and
 * cluster strategies). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/testing.h"
#include "train/train_internal.h"

/* The group's -1 (auto), 0, 1 of a switch. */
static int switch_int(clg_switch s)
{
    return s == CLG_SWITCH_ON ? 1 : s == CLG_SWITCH_OFF ? 0 : -1;
}

/* Multi-device: replicas of the net as it is now (initialised, or loaded from a checkpoint)
 * and host copies of the optimizer state. */
clg_status clg__train_group_setup(clg__trainer *t)
{
    const clg_exec_options *o = &t->x;
    /* a cluster rank trains through a group even on one device: host master weights */
    clg_ctx *const *ctxs = o->context_count ? o->contexts : t->cluster ? &t->ctx : NULL;
    size_t nctx = o->context_count ? o->context_count : t->cluster ? 1 : 0;
    if (!nctx)
        return CLG_OK;
    const float *load = o->worker_load_count ? o->worker_load : NULL;
    float *fraction = NULL;
    if (load && o->worker_load_count == 1 && nctx > 1) {
        /* MATLAB's scalar WorkerLoad: the fraction of the devices that compute, sharing each
         * batch equally; the others sit idle */
        if (!(load[0] > 0.0f && load[0] <= 1.0f))
            return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "clg_train: a single worker_load is "
                             "the fraction of the %zu devices that train: %g is not in (0, 1]",
                             nctx, (double)load[0]);
        size_t use = (size_t)lround(load[0] * (double)nctx);
        if (!(fraction = clg__calloc(nctx, sizeof *fraction)))
            return clg__oom(t->ctx, "clg_train");
        for (size_t i = 0; i < nctx; i++)
            fraction[i] = i < (use ? use : 1) ? 1.0f : 0.0f;
        load = fraction;
    } else if (load && o->worker_load_count != nctx) {
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "clg_train: %zu worker_load weights for %zu "
                         "contexts (or one: the fraction of them that trains)",
                         o->worker_load_count, nctx);
    }
    clg_status st = CLG_OK;
    for (size_t i = 0; i < nctx && st == CLG_OK; i++)
        st = clg_gemm_tune_if_wanted(ctxs[i]); /* asked for at the context's creation */
    if (st == CLG_OK)
        st = clg__group_create(t->net, ctxs, nctx, load, &t->group);
    free(fraction);
    if (st == CLG_OK) {
        clg__group_check_numerics(t->group, t->check_numerics);
        clg__group_overlap(t->group, switch_int(o->overlap));
        int cpu = 0; /* updating during the step takes a CPU device's cores */
        for (size_t i = 0; i < nctx; i++)
            cpu |= !clg_ctx_decides_as_gpu(ctxs[i]);
        t->early = o->early_update == CLG_SWITCH_ON || (o->early_update == CLG_SWITCH_AUTO && !cpu);
        st = clg__group_zero_copy(t->group, switch_int(o->zero_copy));
        if (st != CLG_OK)
            st = clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    }
    size_t n = clg_net_param_count(t->net, CLG_PARAMS_LEARNABLE) + 1;
    if (st == CLG_OK && !(t->hgrad = clg__malloc_pages(n * sizeof(float))))
        st = clg__oom(t->ctx, "clg_train");
    if (st == CLG_OK)
        st = clg__optim_host(&t->opt);
    t->strategy = t->cluster ? &clg__strategy_cluster : &clg__strategy_group;
    const char *faults = clg__testing_faults();
    if (st == CLG_OK && faults && *faults) {
        st = clg__group_inject(t->group, faults);
        if (st != CLG_OK)
            st = clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    }
    if (st == CLG_OK && t->cluster && faults)
        st = clg__cluster_inject(t, faults);
    if (st == CLG_OK && t->cluster)
        st = clg__cluster_share_start(t);
    return st;
}

/* The net (which validation, checkpoints and the caller see) and the optimizer's device
 * moments take the host master state. */
static clg_status sync(clg__trainer *t)
{
    size_t np, ns;
    const float *p = clg__group_params(t->group, &np), *s = clg__group_state(t->group, &ns);
    clg_status st = np ? clg_net_set_params(t->net, CLG_PARAMS_LEARNABLE, p, np) : CLG_OK;
    if (st == CLG_OK && ns)
        st = clg_net_set_params(t->net, CLG_PARAMS_STATE, s, ns);
    if (st == CLG_OK)
        st = clg__optim_host_to_device(&t->opt);
    return st;
}

/* The devices' gradients summed as the update reads them: one or two devices' arrays read
 * directly; with more, all but the last summed slice by slice into a buffer that stays in the
 * L1 cache (a whole-size sum would go to memory and back). */
enum { SUM_SLICE = 2048 };

static clg_status sum_and_step(clg__trainer *t, float lr, float *w, size_t begin, size_t end)
{
    const float *first = NULL, *last = NULL;
    float inv = 1.0f;
    size_t shards = clg__group_shards(t->group, &first, &last, &inv);
    if (!shards)
        return CLG_OK; /* no device worked: nothing to update */
    if (shards <= 2) {
        clg__grad_sum g = {shards == 2 ? first + begin : NULL, last + begin, inv};
        return clg__optim_step_host(&t->opt, lr, t->step, w, &g, begin, end);
    }
    float slice_sum[SUM_SLICE] __attribute__((aligned(64)));
    clg_status st = CLG_OK;
    for (size_t b = begin; st == CLG_OK && b < end; b += SUM_SLICE) {
        size_t e = end - b > SUM_SLICE ? b + SUM_SLICE : end;
        clg__group_sum_but_last(t->group, slice_sum, b, e);
        st = clg__optim_step_host(&t->opt, lr, t->step, w,
                                  &(clg__grad_sum){slice_sum, last + b, inv}, b, e);
    }
    return st;
}

typedef struct range_job {
    clg__trainer *t;
    float lr;
    float *w;
    size_t begin, end;
    int sum;
    clg_status st;
} range_job;

static void *range_work(void *arg)
{
    range_job *j = arg;
    clg__grad_sum summed = {NULL, j->t->hgrad + j->begin, 1.0f};
    j->st = j->sum ? sum_and_step(j->t, j->lr, j->w, j->begin, j->end)
                   : clg__optim_step_host(&j->t->opt, j->lr, j->t->step, j->w, &summed,
                                          j->begin, j->end);
    return NULL;
}

/* The group's update callback while the step runs: master weights [lo, hi), their gradient
 * taken from the devices, at t->update_lr; a failure goes to t->update_st. */
static void update_range(void *user, float *w, size_t lo, size_t hi)
{
    clg__trainer *t = user;
    clg_status st = sum_and_step(t, t->update_lr, w, lo, hi);
    t->update_st = t->update_st == CLG_OK ? st : t->update_st;
}

/* The host update over slices of the elements, on one thread per device (this one and the
 * group's idle workers): the update is elementwise, so the slicing changes no result. sum:
 * the gradient is taken from the devices' arrays as it goes, else from t->hgrad. */
static clg_status step_host(clg__trainer *t, float lr, int sum)
{
    size_t total = 0, threads = t->x.context_count < 16 ? t->x.context_count : 16;
    float *w = clg__group_params(t->group, &total); /* once: it marks the weights changed */
    clg__crew *crew = clg__group_crew(t->group);
    threads = threads ? threads : 1;
    range_job jobs[16];
    size_t per = (total + threads - 1) / threads;
    per = (per + 15) / 16 * 16; /* whole cache lines per thread */
    for (size_t i = 0; i < threads; i++) {
        size_t b = i * per < total ? i * per : total, e = b + per < total ? b + per : total;
        jobs[i] = (range_job){t, lr, w, b, e, sum, CLG_OK};
        if (i > 0 && !clg__crew_start(crew, i - 1, range_work, &jobs[i]))
            range_work(&jobs[i]);
    }
    range_work(&jobs[0]);
    clg_status st = jobs[0].st;
    for (size_t i = 1; i < threads; i++) {
        clg__crew_wait(crew, i - 1);
        if (st == CLG_OK)
            st = jobs[i].st;
    }
    return st;
}

/* The group's step over the host mini-batch, redone without a device that fails when the
 * policy is continue (a second failure drops it). Without clipping or other ranks, the
 * optimizer's pass adds the devices' gradients slice by slice as it goes (fused: one pass
 * over memory fewer); early_update, where a failed step is not redone (policy stop): each
 * layer as soon as every device has its gradients, while the devices still compute the
 * layers before. */
static clg_status compute(clg__trainer *t, float lr)
{
    size_t skip = (size_t)-1;
    t->fused = !t->cluster && !clg__optim_clipping(&t->opt);
    t->during = t->fused && t->early && t->x.device_fault_policy == CLG_FAULT_STOP;
    clg__group_set_update(t->group, t->during ? &(clg__group_update){update_range, t} : NULL);
    t->update_lr = lr;
    t->update_st = CLG_OK;
    for (;;) {
        size_t failed = (size_t)-1;
        clg_status st = clg__group_step(t->group, t->images, t->targets, t->local_batch, t->step,
                                        skip, t->fused ? NULL : t->hgrad, &t->step_loss,
                                        &t->step_correct, &failed);
        if (st == CLG_OK)
            return CLG_OK;
        /* bad numbers are the model's, not the device's; a cluster rank cannot redo a step
         * alone (the other ranks have summed theirs) */
        if (failed == (size_t)-1 || t->x.device_fault_policy == CLG_FAULT_STOP ||
            st == CLG_ERR_NUMERICS || t->cluster)
            return clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
        char text[CLG__ERR_TEXT];
        snprintf(text, sizeof text, "%s%s", clg_last_error(),
                 failed < 64 && ++t->faults[failed] >= 2 ? "; dropped from the group" : "; "
                 "the step is redone on the other devices");
        t->rep.device_faults++;
        if (failed >= 64 || t->faults[failed] >= 2) {
            clg__group_drop(t->group, failed);
            t->rep.devices_dropped++;
        }
        skip = failed;
        clg__train_report(t, CLG_PROGRESS_DEVICE_FAULT, t->rep.loss, t->rep.accuracy, lr, 0.0,
                          text);
    }
}

static clg_status reduce(clg__trainer *t)
{
    if (!t->fused) /* fused: no clipping, and the update adds the devices' sums itself */
        clg__optim_clip_host(&t->opt, t->hgrad);
    return CLG_OK;
}

/* The ranks' shares added first (the group's sums, batch-norm state, loss and count). */
static clg_status reduce_ranks(clg__trainer *t)
{
    clg_status st = clg__cluster_combine(t, &t->step_loss, &t->step_correct);
    return st == CLG_OK ? reduce(t) : st;
}

static clg_status update(clg__trainer *t, float lr)
{
    if (t->during && clg__group_updated(t->group)) {
        size_t n;
        (void)clg__group_params(t->group, &n); /* changed: copies are sent them */
        t->rep.updated_early_steps++;
        return t->update_st;
    }
    return step_host(t, lr, t->fused);
}

static clg_status finish(clg__trainer *t, double *loss, size_t *correct)
{
    *loss = t->step_loss;
    *correct = t->step_correct;
    return CLG_OK;
}

const clg__strategy clg__strategy_group = {"group", compute, reduce, update, finish, NULL,
                                           sync};
const clg__strategy clg__strategy_cluster = {"cluster", compute, reduce_ranks, update, finish,
                                             NULL, sync};
