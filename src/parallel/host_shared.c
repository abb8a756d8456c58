/* Replicas that compute in the host's memory: on a device that shares it (a CPU), a replica's
 * parameters are buffers over the group's master weights and its gradients buffers over its
 * host gradient array (one of each per layer), so that a step copies nothing: no weights
 * sent, no gradients read back (26 MB a step per device for the default network). The host
 * touches those arrays only while they are mapped, from the end of the replica's step to the
 * start of its next (or a layer's from the end of its backward), as OpenCL asks of buffers
 * over host memory; on such devices a map is no copy. */
#include "parallel/group_internal.h"

int clg__group_wants_sharing(const clg__group *g, const replica *r)
{
    return g->zero_copy > 0 ||
           (g->zero_copy < 0 && !clg_ctx_decides_as_gpu(r->net->ctx));
}

enum { MAPPED_GRADS = 1, MAPPED_PARAMS = 2 };

/* Maps slice b of the gradients or the weights for the host (queued; done, when given, is
 * its event). Buffers over host memory map to their own pointer. */
static clg_status map(replica *r, size_t b, int which, cl_event *done)
{
    clg_ctx *ctx = r->net->ctx;
    int params = which == MAPPED_PARAMS;
    float *want = (params ? r->g->params : r->grad) + r->slice_lo[b];
    cl_int err;
    void *p = clEnqueueMapBuffer((cl_command_queue)clg_ctx_cl_queue(ctx),
                                 params ? r->host_params[b] : r->host_grads[b], CL_FALSE,
                                 params ? CL_MAP_READ | CL_MAP_WRITE : CL_MAP_READ, 0,
                                 (r->slice_hi[b] - r->slice_lo[b]) * sizeof(float), 0, NULL, done,
                                 &err);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "device group: mapping host memory");
    r->mapped[b] |= (unsigned char)which;
    if (p != (void *)want)
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "device group: %s mapped host memory at "
                         "another address", clg_ctx_device(ctx)->name);
    return CLG_OK;
}

clg_status clg__replica_hold(replica *r)
{
    if (r->held)
        return CLG_OK;
    clg_status st = CLG_OK;
    for (size_t b = 0; st == CLG_OK && b < r->nslices; b++) {
        if (!(r->mapped[b] & MAPPED_GRADS))
            st = map(r, b, MAPPED_GRADS, NULL);
        if (st == CLG_OK && !(r->mapped[b] & MAPPED_PARAMS))
            st = map(r, b, MAPPED_PARAMS, NULL);
    }
    if (st == CLG_OK) /* the queue is in order: one wait for every map */
        st = clg_ctx_finish(r->net->ctx);
    r->held = st == CLG_OK;
    return st;
}

clg_status clg__replica_hold_range(replica *r, size_t lo, size_t hi, int weights, cl_event *done)
{
    size_t b = 0;
    while (b < r->nslices && !(r->slice_lo[b] == lo && r->slice_hi[b] == hi))
        b++;
    if (b == r->nslices)
        return clg__fail(r->net->ctx, CLG_ERR_INTERNAL, "device group: %zu-%zu is not one "
                         "layer's parameters", lo, hi);
    clg_status st = map(r, b, MAPPED_GRADS, weights ? NULL : done);
    return st != CLG_OK || !weights ? st : map(r, b, MAPPED_PARAMS, done); /* in order */
}

clg_status clg__replica_release(replica *r)
{
    clg_ctx *ctx = r->net->ctx;
    cl_command_queue q = (cl_command_queue)clg_ctx_cl_queue(ctx);
    cl_int err = CL_SUCCESS;
    for (size_t b = 0; b < r->nslices; b++) {
        cl_int e = CL_SUCCESS;
        if (r->mapped[b] & MAPPED_GRADS)
            e = clEnqueueUnmapMemObject(q, r->host_grads[b], r->grad + r->slice_lo[b], 0, NULL,
                                        NULL);
        err = err == CL_SUCCESS ? e : err;
        if (r->mapped[b] & MAPPED_PARAMS)
            e = clEnqueueUnmapMemObject(q, r->host_params[b], r->g->params + r->slice_lo[b], 0,
                                        NULL, NULL);
        err = err == CL_SUCCESS ? e : err;
        r->mapped[b] = 0;
    }
    r->held = 0;
    return err == CL_SUCCESS ? CLG_OK
                             : clg__fail_cl(ctx, err, "device group: unmapping host memory");
}

/* The slices: each layer's parameters, in clg_net_get_params order (the network plan's
 * ranges). */
static clg_status find_slices(replica *r)
{
    clg_net *net = r->net;
    size_t n = net->param_layers;
    r->host_params = clg__calloc(n ? n : 1, sizeof *r->host_params);
    r->host_grads = clg__calloc(n ? n : 1, sizeof *r->host_grads);
    r->slice_lo = clg__calloc(n ? n : 1, sizeof *r->slice_lo);
    r->slice_hi = clg__calloc(n ? n : 1, sizeof *r->slice_hi);
    r->mapped = clg__calloc(n ? n : 1, 1);
    if (!r->host_params || !r->host_grads || !r->slice_lo || !r->slice_hi || !r->mapped)
        return clg__oom(net->ctx, "device group");
    for (size_t i = 0; i < net->count; i++) {
        const clg__layer *l = &net->layers[i];
        if (l->nparams) {
            r->slice_lo[r->nslices] = l->plan.lo;
            r->slice_hi[r->nslices++] = l->plan.hi;
        }
    }
    return CLG_OK;
}

/* One buffer per layer, not one for all: OpenCL leaves undefined a kernel that uses a buffer
 * any part of which is mapped (oclgrind reports it), and the host maps a layer's slice while
 * the device still computes the layers before it. */
clg_status clg__replica_share(replica *r)
{
    clg__group *g = r->g;
    clg_ctx *ctx = r->net->ctx;
    r->shared = 1;
    clg_status st = find_slices(r);
    cl_int err = CL_SUCCESS;
    for (size_t b = 0; st == CLG_OK && err == CL_SUCCESS && b < r->nslices; b++) {
        size_t lo = r->slice_lo[b], bytes = (r->slice_hi[b] - lo) * sizeof(float);
        r->host_params[b] = clg__create_host_buffer(ctx, g->params + lo, bytes, &err);
        if (err == CL_SUCCESS)
            r->host_grads[b] = clg__create_host_buffer(ctx, r->grad + lo, bytes, &err);
    }
    if (st == CLG_OK && err != CL_SUCCESS)
        st = clg__fail_cl(ctx, err, "device group: a buffer over host memory on %s",
                          clg_ctx_device(ctx)->name);
    if (st == CLG_OK)
        st = clg__net_bind_params(r->net, r->host_params, r->host_grads);
    if (st == CLG_OK)
        st = clg__replica_hold(r); /* the host owns the arrays until the first step */
    return st;
}

void clg__replica_unshare(replica *r)
{
    int any = 0;
    for (size_t b = 0; b < r->nslices; b++)
        any |= r->mapped[b];
    if (any) {
        (void)clg__replica_release(r);
        (void)clg_ctx_finish(r->net->ctx);
    }
    for (size_t b = 0; b < r->nslices; b++) {
        if (r->host_params[b])
            clReleaseMemObject(r->host_params[b]);
        if (r->host_grads[b])
            clReleaseMemObject(r->host_grads[b]);
    }
    free(r->host_params);
    free(r->host_grads);
    free(r->slice_lo);
    free(r->slice_hi);
    free(r->mapped);
    r->host_params = r->host_grads = NULL;
    r->slice_lo = r->slice_hi = NULL;
    r->mapped = NULL;
    r->nslices = 0;
    r->shared = 0;
}
