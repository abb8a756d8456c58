/* The mini-batches of an epoch, through a batch reader: read on the training thread, or
 * (DispatchInBackground) by worker threads ahead of the steps, in the same order either way. */
#include "train/train_internal.h"

clg_status clg__start_epoch_reads(clg__trainer *t)
{
    clg_status st = clg_batch_reader_start(t->reader, t->perm + t->next_iter * t->batch,
                                           t->iters_per_epoch - t->next_iter);
    return st == CLG_OK ? st : clg__fail(t->ctx, st, "clg_train: %s", clg_last_error());
}

clg_status clg__read_batch(clg__trainer *t)
{
    clg_status st = clg_batch_reader_next(t->reader, t->images, t->labels);
    if (st != CLG_OK)
        return clg__fail(t->ctx, st, "clg_train: %s", clg_batch_reader_last_error(t->reader));
    for (size_t i = 0; i < t->batch; i++)
        if (t->labels[i] < 0 || (size_t)t->labels[i] >= t->net->classes)
            return clg__fail(t->ctx, CLG_ERR_SHAPE, "clg_train: label %d is outside the net's "
                             "%zu classes", t->labels[i], t->net->classes);
    return CLG_OK;
}
