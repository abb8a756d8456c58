/* The trainer's multi-device side: the device group (replicas, WorkerLoad, host optimizer
 * state) and the master net kept in step with the group's host weights. */
#include <math.h>
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
    clg_status st = clg__group_create(t->net, ctxs, nctx, load, &t->group);
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
    if (st == CLG_OK) {
        t->hgrad = clg__malloc_pages(n * sizeof(float));
        t->hm = clg__calloc_pages(n * sizeof(float));
        t->hv = clg__calloc_pages(n * sizeof(float));
        if (!t->hgrad || !t->hm || !t->hv)
            st = clg__oom(t->ctx, "clg_train");
    }
    if (st == CLG_OK)
        st = clg__optim_host_from_device(t);
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

/* Multi-device: the net (which validation, checkpoints and the caller see) and the optimizer
 * staging tensors take the host master state. */
clg_status clg__train_sync_master(clg__trainer *t)
{
    if (!t->group)
        return CLG_OK;
    size_t np, ns;
    const float *p = clg__group_params(t->group, &np), *s = clg__group_state(t->group, &ns);
    clg_status st = np ? clg_net_set_params(t->net, CLG_PARAMS_LEARNABLE, p, np) : CLG_OK;
    if (st == CLG_OK && ns)
        st = clg_net_set_params(t->net, CLG_PARAMS_STATE, s, ns);
    if (st == CLG_OK)
        st = clg__optim_host_to_device(t);
    return st;
}
