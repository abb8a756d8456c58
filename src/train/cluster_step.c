/* Cluster training (execution environment "parallel"): every rank takes a contiguous shard of
 * each global mini-batch, its device group returns that shard's share of the gradient (divided
 * by the global batch), and the shares are summed over the ranks with MPI so that every rank
 * applies the same optimizer step to the same master weights. Rank 0 speaks for the job:
 * validation, checkpoints, the metrics log and the stop decision. */
#include <string.h>

#include "train/train_internal.h"

clg_status clg__cluster_setup(clg__trainer *t)
{
    clg_status st = clg__cluster_open(&t->cluster);
    if (st != CLG_OK)
        return clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    t->rank = clg__cluster_rank(t->cluster);
    t->ranks = clg__cluster_size(t->cluster);
    /* every rank must train the same thing: rank 0's settings are checked on each */
    size_t nl = clg_net_param_count(t->net, CLG_PARAMS_LEARNABLE);
    double mine[8] = {(double)t->batch, (double)t->samples, (double)t->o.max_epochs,
                      (double)t->o.seed, (double)t->o.solver, (double)t->o.initial_learn_rate,
                      (double)nl, (double)t->o.shuffle};
    double root[8], local = t->x.rank_load > 0 ? (double)t->x.rank_load
                            : t->x.context_count ? (double)t->x.context_count : 1.0;
    memcpy(root, mine, sizeof root);
    st = clg__cluster_broadcast(t->cluster, root, sizeof root, 0);
    double differ = memcmp(root, mine, sizeof root) != 0;
    /* weights: each rank's share of the global batch follows its load, or its device count */
    double *shares = clg__calloc((size_t)t->ranks + 1, sizeof *shares);
    if (!shares)
        return clg__oom(t->ctx, "clg_train");
    shares[t->rank] = local;
    shares[t->ranks] = differ;
    if (st == CLG_OK)
        st = clg__cluster_sum_doubles(t->cluster, shares, (size_t)t->ranks + 1);
    if (st != CLG_OK) {
        free(shares);
        return clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    }
    if (shares[t->ranks] > 0) {
        free(shares);
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "clg_train: the ranks were given different "
                         "data or options (batch, data size, epochs, seed, solver, learning rate, "
                         "net or shuffle differ from rank 0's)");
    }
    if (t->batch < (size_t)t->ranks) {
        free(shares);
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "clg_train: a mini-batch of %zu cannot be "
                         "split over %d ranks", t->batch, t->ranks);
    }
    size_t n = (size_t)t->ranks;
    float *w = clg__malloc(n * sizeof *w);
    size_t *counts = clg__malloc(n * sizeof *counts);
    if (!w || !counts) {
        free(shares), free(w), free(counts);
        return clg__oom(t->ctx, "clg_train");
    }
    /* at least one sample per rank keeps every rank's reader and group busy */
    for (size_t i = 0; i < n; i++)
        w[i] = (float)shares[i] > 0 ? (float)shares[i] : 1.0f;
    free(shares);
    st = clg_split_batch(t->batch - n, w, n, counts);
    free(w);
    if (st != CLG_OK) {
        free(counts);
        return clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    }
    t->shard_first = 0;
    for (size_t i = 0; i < (size_t)t->rank; i++)
        t->shard_first += counts[i] + 1;
    t->local_batch = counts[t->rank] + 1;
    free(counts);
    t->rep.cluster_shard = t->local_batch;
    t->rank_order = clg__malloc(t->iters_per_epoch * t->local_batch * sizeof *t->rank_order);
    if (!t->rank_order)
        return clg__oom(t->ctx, "clg_train");
    return CLG_OK;
}

clg_status clg__cluster_inject(clg__trainer *t, const char *faults)
{
    for (const char *p = faults; (p = strstr(p, "rank")); p++) {
        int r = -1;
        unsigned long long at = 0;
        char what[8] = "";
        if (sscanf(p, "rank%d:%4[a-z]@%llu", &r, what, &at) != 3 || !at ||
            (strcmp(what, "exit") && strcmp(what, "skew")))
            return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "fault injection \"%s\": expected "
                             "rankR:exit@STEP or rankR:skew@STEP", faults);
        if (r == t->rank && !strcmp(what, "exit"))
            t->exit_at = at;
        else if (r == t->rank)
            t->skew_at = at;
    }
    return CLG_OK;
}

/* Rank 0's master weights, batch-norm state and optimizer moments go to every rank. */
static clg_status broadcast_master(clg__trainer *t)
{
    size_t np, ns;
    float *p = clg__group_params(t->group, &np), *s = clg__group_state(t->group, &ns);
    clg_status st = clg__cluster_broadcast(t->cluster, p, np * sizeof *p, 0);
    if (st == CLG_OK && ns)
        st = clg__cluster_broadcast(t->cluster, s, ns * sizeof *s, 0);
    if (st == CLG_OK && t->opt.hm)
        st = clg__cluster_broadcast(t->cluster, t->opt.hm, np * sizeof *t->opt.hm, 0);
    if (st == CLG_OK && t->opt.hv)
        st = clg__cluster_broadcast(t->cluster, t->opt.hv, np * sizeof *t->opt.hv, 0);
    return st == CLG_OK ? st : clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
}

/* Streaming: a layer's gradients, summed over this rank's devices, go to MPI at once. */
static void stream_ready(void *user, float *grad, size_t first, size_t count)
{
    clg__trainer *t = user;
    (void)first;
    clg__cluster_isum_floats(t->cluster, grad, count, t->x.bucket_bytes);
}

static void stream_idle(void *user)
{
    clg__cluster_progress(((clg__trainer *)user)->cluster);
}

clg_status clg__cluster_share_start(clg__trainer *t)
{
    clg__group_set_global(t->group, t->shard_first, t->batch);
    /* with overlapped read-back (GPUs by default) the sums overlap backward */
    clg__group_set_stream(t->group, &(clg__group_stream){stream_ready, stream_idle, t});
    return broadcast_master(t);
}

clg_status clg__cluster_verify(clg__trainer *t)
{
    size_t np;
    const float *p = clg__group_params(t->group, &np);
    int same = 1;
    clg_status st = clg__cluster_same(t->cluster, p, np * sizeof *p, &same);
    if (st != CLG_OK)
        return clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    if (same)
        return CLG_OK;
    t->rep.cluster_resyncs++; /* the ranks' sums differed in rounding: rank 0's weights win */
    return broadcast_master(t);
}

/* The ranks' shares of gradient, batch-norm state, loss, correct count and labels that count,
 * summed. */
clg_status clg__cluster_combine(clg__trainer *t, double *loss, size_t *correct)
{
    size_t np, ns;
    float *s = clg__group_state(t->group, &ns);
    (void)clg__group_params(t->group, &np);
    clg_status st = clg__group_streamed(t->group) /* started during the step */
                        ? clg__cluster_wait(t->cluster)
                        : clg__cluster_sum_floats(t->cluster, t->hgrad, np, t->x.bucket_bytes);
    if (st == CLG_OK && ns)
        st = clg__cluster_sum_floats(t->cluster, s, ns, t->x.bucket_bytes);
    double sums[3] = {*loss, (double)*correct, (double)t->labelled};
    if (st == CLG_OK)
        st = clg__cluster_sum_doubles(t->cluster, sums, 3);
    *loss = sums[0];
    *correct = (size_t)(sums[1] + 0.5);
    t->units = (size_t)(sums[2] + 0.5);
    return st == CLG_OK ? st : clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
}

/* Rank 0's stop decision (its callback, validation patience) and plateau drops (its
 * validations) for every rank. */
clg_status clg__cluster_agree_stop(clg__trainer *t, int *stop)
{
    double flags[4] = {*stop, (double)t->rep.stop_reason, t->plateau_scale, t->plateau_bad};
    clg_status st = clg__cluster_broadcast(t->cluster, flags, sizeof flags, 0);
    if (st != CLG_OK)
        return clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
    *stop = (int)flags[0];
    t->rep.stop_reason = (clg_stop_reason)(int)flags[1];
    t->plateau_scale = flags[2];
    t->plateau_bad = (int)flags[3];
    return CLG_OK;
}
