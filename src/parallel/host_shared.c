/* Replicas that compute in the host's memory: on a device that shares it (a CPU), a replica's
 * parameters are a buffer over the group's master weights and its gradients a buffer over its
 * host gradient array, so that a step copies nothing: no weights sent, no gradients read back
 * (26 MB a step per device for the default network). The host touches those arrays only
 * while they are mapped, from the end of the replica's step to the start of its next, as
 * OpenCL asks of buffers over host memory; on such devices a map is no copy. */
#include "parallel/group_internal.h"

int clg__group_wants_sharing(const clg__group *g, const replica *r)
{
    return g->zero_copy > 0 ||
           (g->zero_copy < 0 && !clg_ctx_decides_as_gpu(r->net->ctx));
}

/* Maps count floats of mem from element `first` for the host; the pointer must be `want`
 * (buffers over host memory map to it). Queued (done, when given, is its event). */
static clg_status map(replica *r, cl_mem mem, cl_map_flags flags, size_t first, size_t count,
                      float *want, cl_event *done)
{
    clg_ctx *ctx = r->net->ctx;
    if (r->nmaps >= CLG__MAX_MAPS)
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "device group: more than %d mappings",
                         CLG__MAX_MAPS);
    cl_int err;
    void *p = clEnqueueMapBuffer((cl_command_queue)clg_ctx_cl_queue(ctx), mem, CL_FALSE, flags,
                                 first * sizeof(float), count * sizeof(float), 0, NULL, done,
                                 &err);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "device group: mapping host memory");
    r->map_mem[r->nmaps] = mem;
    r->map_ptr[r->nmaps] = p;
    r->map_lo[r->nmaps] = first;
    r->map_hi[r->nmaps++] = first + count;
    if (p != (void *)want)
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "device group: %s mapped host memory at "
                         "another address", clg_ctx_device(ctx)->name);
    return CLG_OK;
}

/* Maps what of [0, n) is not mapped yet. Regions mapped twice at once are never made: with a
 * layer's range streamed from element 0, the whole buffer would map to the same pointer, and
 * Intel's runtime then refuses the second unmap of that pointer (CL_INVALID_VALUE). */
static clg_status map_gaps(replica *r, cl_mem mem, cl_map_flags flags, size_t n, float *base)
{
    size_t at = 0;
    while (at < n) {
        size_t next = n; /* the first mapped range at or after `at` bounds the gap */
        int inside = 0;
        for (size_t i = 0; i < r->nmaps; i++) {
            if (r->map_mem[i] != mem || r->map_hi[i] <= at)
                continue;
            if (r->map_lo[i] <= at) {
                at = r->map_hi[i], inside = 1;
                break;
            }
            next = r->map_lo[i] < next ? r->map_lo[i] : next;
        }
        if (inside)
            continue;
        clg_status st = map(r, mem, flags, at, next - at, base + at, NULL);
        if (st != CLG_OK)
            return st;
        at = next;
    }
    return CLG_OK;
}

clg_status clg__replica_hold(replica *r)
{
    clg__group *g = r->g;
    if (r->held)
        return CLG_OK;
    size_t n = g->nparams ? g->nparams : 1;
    clg_status st = map_gaps(r, r->host_grads, CL_MAP_READ, n, r->grad);
    if (st == CLG_OK)
        st = map_gaps(r, r->host_params, CL_MAP_READ | CL_MAP_WRITE, n, g->params);
    if (st == CLG_OK) /* the queue is in order: one wait for every map */
        st = clg_ctx_finish(r->net->ctx);
    r->held = st == CLG_OK;
    return st;
}

clg_status clg__replica_hold_range(replica *r, size_t lo, size_t hi, int weights, cl_event *done)
{
    if (!weights)
        return map(r, r->host_grads, CL_MAP_READ, lo, hi - lo, r->grad + lo, done);
    clg_status st = map(r, r->host_grads, CL_MAP_READ, lo, hi - lo, r->grad + lo, NULL);
    return st != CLG_OK ? st : /* in order: done once both are mapped */
           map(r, r->host_params, CL_MAP_READ | CL_MAP_WRITE, lo, hi - lo, r->g->params + lo, done);
}

clg_status clg__replica_release(replica *r)
{
    clg_ctx *ctx = r->net->ctx;
    cl_int err = CL_SUCCESS;
    for (size_t i = 0; i < r->nmaps; i++) {
        cl_int e = clEnqueueUnmapMemObject((cl_command_queue)clg_ctx_cl_queue(ctx), r->map_mem[i],
                                           r->map_ptr[i], 0, NULL, NULL);
        err = err == CL_SUCCESS ? e : err;
    }
    r->nmaps = 0;
    r->held = 0;
    return err == CL_SUCCESS ? CLG_OK
                             : clg__fail_cl(ctx, err, "device group: unmapping host memory");
}

clg_status clg__replica_share(replica *r)
{
    clg__group *g = r->g;
    clg_ctx *ctx = r->net->ctx;
    size_t bytes = (g->nparams ? g->nparams : 1) * sizeof(float);
    cl_int err = CL_SUCCESS;
    r->host_params = clg__create_host_buffer(ctx, g->params, bytes, &err);
    if (err == CL_SUCCESS)
        r->host_grads = clg__create_host_buffer(ctx, r->grad, bytes, &err);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "device group: a buffer over host memory on %s",
                            clg_ctx_device(ctx)->name);
    clg_status st = clg__net_bind_params(r->net, r->host_params, r->host_grads);
    if (st == CLG_OK)
        st = clg__replica_hold(r); /* the host owns the arrays until the first step */
    return st;
}

void clg__replica_unshare(replica *r)
{
    if (r->nmaps) {
        (void)clg__replica_release(r);
        (void)clg_ctx_finish(r->net->ctx);
    }
    if (r->host_params)
        clReleaseMemObject(r->host_params);
    if (r->host_grads)
        clReleaseMemObject(r->host_grads);
    r->host_params = r->host_grads = NULL;
}
