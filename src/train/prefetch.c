/* The mini-batches of an epoch, through a batch reader: read on the training thread, or
 * (DispatchInBackground) by worker threads ahead of the steps, in the same order either way. */
#include <string.h>

#include "train/train_internal.h"

clg_status clg__start_epoch_reads(clg__trainer *t)
{
    const size_t *order = t->perm + t->next_iter * t->batch;
    if (t->cluster) { /* this rank's shard of each global batch */
        size_t n = t->iters_per_epoch - t->next_iter;
        for (size_t b = 0; b < n; b++)
            memcpy(t->rank_order + b * t->local_batch, order + b * t->batch + t->shard_first,
                   t->local_batch * sizeof *order);
        order = t->rank_order;
    }
    clg_status st = clg_batch_reader_start(t->reader, order, t->iters_per_epoch - t->next_iter);
    return st == CLG_OK ? st : clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
}

/* Labels of a classification or segmentation batch within the net's classes (pixels may be
 * ignored); t->labelled counts those that count. */
static clg_status check_labels(clg__trainer *t)
{
    const int32_t *label = t->targets;
    long long bad;
    t->labelled = clg__count_labelled(t->net, label, t->local_batch * (t->target_bytes / 4), &bad);
    if (bad >= 0)
        return clg__fail(t->ctx, CLG_ERR_SHAPE, "clg_train: label %d is outside the net's %zu "
                         "classes", label[bad], t->net->classes);
    return CLG_OK;
}

clg_status clg__read_batch(clg__trainer *t)
{
    clg_status st = clg_batch_reader_next(t->reader, t->images, t->targets);
    if (st != CLG_OK)
        return clg__fail(t->ctx, st, "clg_train: %s", clg_batch_reader_last_error(t->reader));
    return t->net->task == CLG_TASK_REGRESSION ? CLG_OK : check_labels(t);
}
