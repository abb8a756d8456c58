/* Multi-device steps: every device runs its shard on its own host thread (a worker of the
 * group's crew) at the same time; the host adds the shard gradients in device order and
 * averages batch-norm statistics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/crew.h"
#include "parallel/group_internal.h"


static clg_status make_replica(clg_net *master, clg_ctx *ctx, const char *text, clg_net **out)
{
    clg_status st = clg_net_parse(ctx, text, out);
    if (st != CLG_OK)
        return st;
    (*out)->dropout_seed = master->dropout_seed;
    return CLG_OK;
}

clg_status clg__group_create(clg_net *master, clg_ctx *const *ctxs, size_t n,
                             const float *weights, clg__group **out)
{
    *out = NULL;
    if (n > CLG__GROUP_MAX_DEVICES)
        return clg__fail(master->ctx, CLG_ERR_INVALID_ARG, "device group: %zu devices, at most %d",
                         n, CLG__GROUP_MAX_DEVICES);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (ctxs[i] == ctxs[j] || !ctxs[i])
                return clg__fail(master->ctx, CLG_ERR_INVALID_ARG, "device group: context %zu is %s",
                                 i, ctxs[i] ? "given twice" : "NULL");
    if (!n || !ctxs[0])
        return clg__fail(master->ctx, CLG_ERR_INVALID_ARG, "device group: no devices");
    clg__group *g = clg__calloc(1, sizeof *g);
    if (!g)
        return clg__oom(master->ctx, "device group");
    g->n = n;
    g->nparams = clg_net_param_count(master, CLG_PARAMS_LEARNABLE);
    g->nstate = clg_net_param_count(master, CLG_PARAMS_STATE);
    g->per_sample = clg_shape_numel(master->input);
    g->auto_split = weights == NULL;
    g->ranges_ok = clg__ranges_init(&g->ranges, master->param_layers);
    g->r = clg__calloc(n, sizeof *g->r);
    g->weights = clg__malloc(n * sizeof *g->weights);
    g->counts = clg__calloc(n, sizeof *g->counts);
    g->ms = clg__calloc(n, sizeof *g->ms);
    g->crew = clg__crew_create(n);
    for (size_t i = 0; i < n; i++)
        g->serial |= clg__ctx_thread_unsafe(ctxs[i]);
    size_t cap = master->param_layers ? master->param_layers : 1;
    g->taken_lo = clg__calloc(cap, sizeof *g->taken_lo);
    g->taken_hi = clg__calloc(cap, sizeof *g->taken_hi);
    int made = g->taken_lo && g->taken_hi;
    for (size_t i = 0; g->r && i < n; i++) {
        g->r[i].ev = clg__calloc(cap, sizeof *g->r[i].ev);
        g->r[i].ev_lo = clg__calloc(cap, sizeof *g->r[i].ev_lo);
        g->r[i].ev_hi = clg__calloc(cap, sizeof *g->r[i].ev_hi);
        made &= g->r[i].ev && g->r[i].ev_lo && g->r[i].ev_hi;
    }
    g->params = clg__malloc_pages((g->nparams + 1) * sizeof(float));
    g->state = clg__malloc((g->nstate + 1) * sizeof(float));
    size_t text_len = 0;
    char *text = NULL;
    clg_status st = g->r && g->weights && g->counts && g->ms && g->crew && g->params && g->state &&
                            made
                        ? clg_net_text(master, NULL, 0, &text_len)
                        : clg__oom(master->ctx, "device group");
    if (st == CLG_OK && !(text = clg__malloc(text_len + 1)))
        st = clg__oom(master->ctx, "device group");
    if (st == CLG_OK)
        st = clg_net_text(master, text, text_len + 1, NULL);
    if (st == CLG_OK && g->nparams)
        st = clg_net_get_params(master, CLG_PARAMS_LEARNABLE, g->params, g->nparams);
    if (st == CLG_OK && g->nstate)
        st = clg_net_get_params(master, CLG_PARAMS_STATE, g->state, g->nstate);
    for (size_t i = 0; st == CLG_OK && i < n; i++) {
        g->weights[i] = weights ? weights[i] : 1.0f;
        g->r[i].g = g;
        g->r[i].grad = clg__malloc_pages((g->nparams + 1) * sizeof(float));
        g->r[i].state = clg__malloc((g->nstate + 1) * sizeof(float));
        if (!g->r[i].grad || !g->r[i].state)
            st = clg__oom(master->ctx, "device group");
        else
            st = make_replica(master, ctxs[i], text, &g->r[i].net);
        if (st != CLG_OK && st != CLG_ERR_OUT_OF_HOST_MEMORY)
            st = clg__fail(master->ctx, st, "device group: replica on %s: %s",
                           clg_ctx_device(ctxs[i])->name, clg_last_error());
    }
    if (st == CLG_OK) { /* checks the weights once: all zero or negative is refused here */
        st = clg_split_batch(n, g->weights, n, g->counts);
        if (st != CLG_OK)
            st = clg__fail(master->ctx, st, "device group: %s", clg_last_error());
    }
    free(text);
    if (st != CLG_OK) {
        clg__group_destroy(g);
        return st;
    }
    g->version = 1;
    *out = g;
    return CLG_OK;
}

clg_status clg__group_zero_copy(clg__group *g, int mode)
{
    g->zero_copy = mode;
    for (size_t i = 0; i < g->n; i++) {
        replica *r = &g->r[i];
        if (r->shared || !clg__group_wants_sharing(g, r))
            continue;
        clg_status st = clg__replica_share(r);
        if (st != CLG_OK)
            return clg__fail(NULL, st, "device group: replica on %s: %s",
                             clg_ctx_device(r->net->ctx)->name, clg_last_error());
    }
    return CLG_OK;
}

void clg__group_destroy(clg__group *g)
{
    if (!g)
        return;
    clg__crew_destroy(g->crew); /* idle between steps: its workers just end */
    for (size_t i = 0; g->r && i < g->n; i++) {
        if (g->r[i].net)
            clg__replica_unshare(&g->r[i]);
        clg_net_destroy(g->r[i].net);
        free(g->r[i].grad);
        free(g->r[i].state);
        free(g->r[i].ev);
        free(g->r[i].ev_lo);
        free(g->r[i].ev_hi);
    }
    free(g->taken_lo);
    free(g->taken_hi);
    free(g->r);
    free(g->weights);
    free(g->counts);
    free(g->ms);
    if (g->ranges_ok)
        clg__ranges_destroy(&g->ranges);
    free(g->params);
    free(g->state);
    free(g);
}

void clg__group_set_global(clg__group *g, size_t first, size_t batch)
{
    g->global_first = first;
    g->global_batch = batch;
}

clg__crew *clg__group_crew(clg__group *g)
{
    return g->crew;
}

float *clg__group_params(clg__group *g, size_t *count)
{
    *count = g->nparams;
    g->version++;
    return g->params;
}

float *clg__group_state(clg__group *g, size_t *count)
{
    *count = g->nstate;
    g->version++;
    return g->state;
}

clg_status clg__group_inject(clg__group *g, const char *spec)
{
    for (const char *p = spec; p && *p;) {
        if (!strncmp(p, "rank", 4)) { /* a cluster rank's fault: clg_train's, not the group's */
            p += strcspn(p, ",");
            p += *p == ',';
            continue;
        }
        unsigned long dev = 0, value = 0;
        int used = 0;
        char what[8] = "";
        unsigned long at = 0;
        int at_used = 0;
        if (sscanf(p, "%lu:%4[a-z]%*[@=]%lu%n", &dev, what, &value, &used) == 3 &&
            !strcmp(what, "slow") && p[used] == '@' &&
            (sscanf(p + used, "@%lu%n", &at, &at_used) != 1 || !at))
            used = 0; /* "slow=K@" without a step */
        if (!used || dev >= g->n || (strcmp(what, "fail") && strcmp(what, "slow")) || !value)
            return clg__fail(NULL, CLG_ERR_INVALID_ARG, "fault injection \"%s\": expected "
                             "DEVICE:fail@STEP, DEVICE:slow=FACTOR or DEVICE:slow=FACTOR@STEP, "
                             "comma-separated, with a device below %zu", spec, g->n);
        used += at_used;
        replica *r = &g->r[dev];
        if (!strcmp(what, "slow")) {
            r->slow = (unsigned)value;
            r->slow_at = at;
        }
        for (int k = 0; !strcmp(what, "fail") && k < 8; k++)
            if (!r->fail_at[k]) {
                r->fail_at[k] = value;
                break;
            }
        p += used;
        p += *p == ',';
        if (*p && !used)
            break;
    }
    return CLG_OK;
}

void clg__group_check_numerics(clg__group *g, int on)
{
    g->check_numerics = on;
}

void clg__group_overlap(clg__group *g, int on)
{
    g->overlap = on;
}

double clg__group_readback_ms(const clg__group *g)
{
    return g->readback_steps ? 1e3 * g->readback_sum / (double)g->readback_steps : 0.0;
}

void clg__group_drop(clg__group *g, size_t device)
{
    if (device < g->n)
        g->r[device].dropped = 1;
}

const char *clg__group_device_name(const clg__group *g, size_t device)
{
    return device < g->n ? clg_ctx_device(g->r[device].net->ctx)->name : "?";
}

const size_t *clg__group_split(const clg__group *g, size_t *n)
{
    *n = g->n;
    return g->counts;
}

const double *clg__group_device_ms(const clg__group *g)
{
    return g->ms;
}

/* Overlapped read-back: a layer's gradients are read on the transfer queue as soon as the
 * main queue has passed its backward (a marker event), while earlier layers still compute. */
typedef struct overlap {
    replica *r;
    cl_command_queue tq;
    /* streaming: each layer's last read, and the parameter range it completes (the
     * replica's arrays, ranges.cap long: a range per layer with parameters) */
    cl_event *ev;
    size_t *lo, *hi, nev, cap;
} overlap;

/* Streaming from host memory: nothing to read; mapping the layer's gradients for the host
 * (once the queue reaches it) marks its range ready. */
static clg_status map_layer(void *user, size_t layer)
{
    overlap *o = user;
    clg_ctx *ctx = o->r->net->ctx;
    size_t lo = o->r->net->layers[layer].plan.lo, hi = o->r->net->layers[layer].plan.hi;
    if (o->nev >= o->cap || lo >= hi)
        return CLG_OK;
    clg_status st = clg__replica_hold_range(o->r, lo, hi, o->r->g->updating, &o->ev[o->nev]);
    if (st != CLG_OK)
        return st;
    o->lo[o->nev] = lo, o->hi[o->nev] = hi;
    o->nev++;
    cl_int err = clFlush((cl_command_queue)clg_ctx_cl_queue(ctx));
    return err == CL_SUCCESS ? CLG_OK : clg__fail_cl(ctx, err, "flushing the queue");
}

static clg_status read_layer(void *user, size_t layer)
{
    overlap *o = user;
    clg_ctx *ctx = o->r->net->ctx;
    cl_command_queue q = (cl_command_queue)clg_ctx_cl_queue(ctx);
    cl_event done = NULL, last = NULL;
    cl_int err = CL_SUCCESS;
    int stream = (o->r->g->streaming || o->r->g->updating) && o->nev < o->cap;
    const clg__layer *l = &o->r->net->layers[layer];
    size_t lo = l->plan.lo, hi = l->plan.hi, at = lo;
    for (size_t k = 0; k < l->nparams && err == CL_SUCCESS; k++) {
        if (!done)
            err = clEnqueueMarkerWithWaitList(q, 0, NULL, &done);
        size_t off = 0, n = clg_tensor_numel(l->grad[k]);
        cl_mem mem = (cl_mem)clg_tensor_cl_buffer(l->grad[k], &off);
        if (last)
            clReleaseEvent(last), last = NULL;
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(o->tq, mem, CL_FALSE, off * sizeof(float), n * sizeof(float),
                                      o->r->grad + at, 1, &done, stream ? &last : NULL);
        at += n;
    }
    if (last && err == CL_SUCCESS) { /* in-order transfer queue: the last read ends the layer */
        o->ev[o->nev] = last, o->lo[o->nev] = lo, o->hi[o->nev] = hi;
        o->nev++;
    } else if (last) {
        clReleaseEvent(last);
    }
    if (done) {
        clReleaseEvent(done);
        if (err == CL_SUCCESS)
            err = clFlush(q); /* the marker must reach the device for the reads to start */
        if (err == CL_SUCCESS)
            err = clFlush(o->tq);
    }
    return err == CL_SUCCESS ? CLG_OK
                             : clg__fail_cl(ctx, err, "reading layer %zu's gradients", layer + 1);
}

/* The gradients of every learnable, downloaded in clg_net_get_params order. */
static clg_status read_grads(clg_net *net, float *out)
{
    clg_status st = CLG_OK;
    for (size_t i = 0, at = 0; i < net->count && st == CLG_OK; i++)
        for (size_t p = 0; p < net->layers[i].nparams && st == CLG_OK; p++) {
            size_t k = clg_tensor_numel(net->layers[i].grad[p]);
            st = clg_tensor_download(net->layers[i].grad[p], out + at, k);
            at += k;
        }
    return st;
}

/* The e-th layer's gradients have landed (read back, or mapped): its range is published for
 * the stepping thread. */
static clg_status land(replica *r, overlap *ov, size_t e, clg_status st)
{
    cl_int err = st == CLG_OK ? clWaitForEvents(1, &ov->ev[e]) : CL_SUCCESS;
    clReleaseEvent(ov->ev[e]);
    if (err != CL_SUCCESS)
        return clg__fail_cl(r->net->ctx, err, "waiting for gradient read-back");
    if (st == CLG_OK)
        clg__ranges_publish(&r->g->ranges, r->published++, ov->lo[e], ov->hi[e]);
    return st;
}

static void *work(void *arg)
{
    replica *r = arg;
    clg__group *g = r->g;
    clg_net *net = r->net;
    double t0 = clg__now();
    clg_status st = CLG_OK;
    for (int k = 0; k < 8; k++)
        if (r->fail_at[k] && r->fail_at[k] == g->step) {
            r->fail_at[k] = 0; /* once */
            st = clg__fail(net->ctx, CLG_ERR_DEVICE_LOST, "injected fault at step %llu",
                           (unsigned long long)g->step);
        }
    int fresh = r->version == g->version;
    r->version = 0; /* unknown until this step completes */
    if (st == CLG_OK && r->shared)
        st = clg__replica_release(r); /* the host is done with the weights and gradients */
    if (st == CLG_OK && !fresh && g->nparams && !r->shared)
        st = clg_net_set_params(net, CLG_PARAMS_LEARNABLE, g->params, g->nparams);
    if (st == CLG_OK && !fresh && g->nstate)
        st = clg_net_set_params(net, CLG_PARAMS_STATE, g->state, g->nstate);
    if (st == CLG_OK)
        st = clg__net_reserve(net, r->count);
    if (st == CLG_OK) {
        net->shard_first = g->global_first + r->first; /* dropout draws by global position */
        st = clg__net_upload(net, g->images + r->first * g->per_sample, r->count);
    }
    unsigned slow = !r->slow_at || r->slow_at == g->step ? r->slow : 1;
    for (unsigned rep = 1; st == CLG_OK && rep < slow; rep++) { /* injected slowness: */
        st = clg__net_forward(net, 1, g->step);                       /* the same work again, */
        if (st == CLG_OK)
            st = clg__net_backward(net, g->targets + r->first * g->target_bytes, 1.0f, g->step);
        if (st == CLG_OK && g->nstate) /* without its effect on the running statistics */
            st = clg_net_set_params(net, CLG_PARAMS_STATE, g->state, g->nstate);
    }
    if (st == CLG_OK)
        st = clg__net_forward(net, 1, g->step);
    if (st == CLG_OK && g->check_numerics)
        st = clg__net_check_numerics(net, 0, g->step);
    if (st == CLG_OK) /* read back while backward runs */
        st = clg__net_loss_begin(net, g->targets + r->first * g->target_bytes);
    overlap ov;
    memset(&ov, 0, sizeof ov);
    ov.r = r;
    ov.ev = r->ev, ov.lo = r->ev_lo, ov.hi = r->ev_hi, ov.cap = g->ranges.cap;
    /* in host memory there is nothing to read: layer by layer only to stream or update */
    int publish = g->streaming || g->updating;
    int overlapped = r->shared ? publish : clg__group_overlaps(g, r);
    if (st == CLG_OK && overlapped && !r->shared)
        st = clg__ctx_transfer_queue(net->ctx, &ov.tq);
    if (st == CLG_OK) /* the sum over the shard: the host divides by the whole batch */
        st = clg__net_backward_each(net, g->targets + r->first * g->target_bytes, 1.0f, g->step,
                                    !overlapped ? NULL : r->shared ? map_layer : read_layer,
                                    &ov);
    /* each layer's range as it lands, while the layers before compute; the read-back left
     * once they are all done (the last layer's) is what overlap did not hide */
    size_t e = 0;
    for (; e + 1 < ov.nev; e++)
        st = land(r, &ov, e, st);
    if (st == CLG_OK)
        st = clg_ctx_finish(net->ctx);
    double t_back = clg__now();
    for (; e < ov.nev; e++)
        st = land(r, &ov, e, st);
    if (st == CLG_OK)
        st = clg__net_loss_end(net, &r->loss, &r->correct);
    else
        clg__net_loss_cancel(net);
    if (ov.tq) { /* after a failure too: no queued read may land in r->grad once freed */
        cl_int err = clFinish(ov.tq);
        if (st == CLG_OK && err != CL_SUCCESS)
            st = clg__fail_cl(net->ctx, err, "waiting for gradient read-back");
    } else if (st == CLG_OK && !r->shared) {
        st = read_grads(net, r->grad);
    }
    r->readback = clg__now() - t_back;
    if (st == CLG_OK && g->check_numerics)
        st = clg__net_check_numerics(net, 1, g->step);
    if (st == CLG_OK && g->nstate)
        st = clg_net_get_params(net, CLG_PARAMS_STATE, r->state, g->nstate);
    if (r->shared) { /* the host's again (also after a failure: it updates the weights) */
        clg_status held = clg__replica_hold(r);
        st = st == CLG_OK ? held : st;
    }
    r->st = st;
    if (st != CLG_OK)
        snprintf(r->error, sizeof r->error, "%s", *clg_ctx_last_error(net->ctx)
                                                      ? clg_ctx_last_error(net->ctx)
                                                      : clg_status_name(st)); /* never empty */
    else
        r->version = g->version; /* its state now differs, but the step's end resends it */
    r->seconds = clg__now() - t0;
    if (g->streaming || g->updating)
        clg__ranges_finished(&g->ranges);
    return NULL;
}

clg_status clg__group_step(clg__group *g, const float *images, const void *targets,
                           size_t batch, uint64_t step, size_t skip, float *grad, double *loss,
                           size_t *correct, size_t *failed)
{
    float w[CLG__GROUP_MAX_DEVICES];
    size_t active = 0;
    for (size_t i = 0; i < g->n; i++) {
        w[i] = g->r[i].dropped || i == skip ? 0.0f : g->weights[i];
        active += w[i] > 0.0f;
    }
    if (!active)
        return clg__fail(NULL, CLG_ERR_DEVICE_LOST, "device group: no device left to train on");
    clg_status st = clg_split_batch(batch, w, g->n, g->counts);
    if (st != CLG_OK)
        return st;
    g->images = images;
    g->targets = targets;
    g->target_bytes = 4 * clg__net_target_values(g->r[0].net);
    g->step = step;
    size_t first = 0, whole = g->global_batch ? g->global_batch : batch;
    unsigned working = 0;
    g->streaming = g->has_stream && grad;
    g->updating = g->has_update && !g->has_stream && !grad;
    for (size_t i = 0; i < g->n; i++) {
        if (g->counts[i]) {
            working++;
            g->streaming &= clg__group_overlaps(g, &g->r[i]);
            g->updating &= clg__group_overlaps(g, &g->r[i]);
        }
    }
    g->streamed = 0;
    g->updated = 0;
    g->ntaken = 0;
    g->step_grad = grad;
    g->step_inv = 1.0f / (float)whole;
    if (g->streaming || g->updating)
        clg__ranges_reset(&g->ranges, working);
    for (size_t i = 0; i < g->n; i++) {
        replica *r = &g->r[i];
        r->first = first;
        r->count = g->counts[i];
        r->st = CLG_OK;
        r->loss = 0.0;
        r->correct = 0;
        r->published = 0;
        first += r->count;
        if (!r->count)
            continue;
        if (g->serial || !clg__crew_start(g->crew, i, work, r))
            work(r); /* no thread to be had, or a runtime that wants one: run it here */
    }
    if (g->streaming) /* each layer's gradients onward while the devices still compute */
        clg__ranges_drain(&g->ranges, working, clg__group_take_range, clg__group_stream_idle,
                          g);
    else if (g->updating) /* each layer's weights updated while the devices still compute */
        clg__ranges_drain(&g->ranges, working, clg__group_update_range, NULL, g);
    for (size_t i = 0; i < g->n; i++)
        clg__crew_wait(g->crew, i);
    for (size_t i = 0; i < g->n; i++) {
        replica *r = &g->r[i];
        if (r->count && r->st != CLG_OK) {
            *failed = i;
            return clg__fail(NULL, r->st, "device %zu (%s) failed at step %llu: %s", i,
                             clg_ctx_device(r->net->ctx)->name, (unsigned long long)step,
                             r->error);
        }
    }
    /* grad = sum over devices in order / batch (streamed: done range by range); the state:
     * shard-weighted mean */
    double total_loss = 0.0;
    size_t total_correct = 0;
    for (size_t i = 0; i < g->n; i++) {
        replica *r = &g->r[i];
        total_loss += r->count ? r->loss * (double)r->count : 0.0;
        total_correct += r->count ? r->correct : 0;
    }
    if (g->streaming) {
        clg__group_take_the_rest(g, clg__group_take_range);
        g->streamed = 1;
    } else if (g->updating) {
        clg__group_take_the_rest(g, clg__group_update_range);
        g->updated = 1;
    } else if (grad) {
        g->ntaken = 0;
        clg__group_take_range(g, 0, g->nparams); /* no stream: ready() is not called */
    }
    for (size_t k = 0; k < g->nstate; k++) {
        double s = 0.0;
        for (size_t i = 0; i < g->n; i++)
            if (g->r[i].count)
                s += (double)g->r[i].state[k] * (double)g->r[i].count;
        g->state[k] = (float)(s / (double)whole);
    }
    if (g->nstate)
        g->version++; /* the averaged statistics go to every replica next step */
    double slowest = 0.0;
    for (size_t i = 0; i < g->n; i++)
        if (g->r[i].count && g->r[i].readback > slowest)
            slowest = g->r[i].readback;
    g->readback_sum += slowest;
    for (size_t i = 0; i < g->n; i++)
        g->ms[i] = g->r[i].count ? 1e3 * g->r[i].seconds : 0.0;
    g->readback_steps++;
    *loss = total_loss / (double)whole;
    *correct = total_correct;
    clg__group_rebalance(g);
    return CLG_OK;
}
