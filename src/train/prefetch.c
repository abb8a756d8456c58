/* Reading the mini-batches of an epoch, in the training thread or (DispatchInBackground) one
 * ahead on a second thread. */
#include <stdio.h>

#include "train/train_internal.h"

/* Reads mini-batch `iter` of the epoch into images/labels; the reason of a failure goes to msg
 * (not to the context: this may run on the prefetch thread). */
static clg_status read_into(clg__trainer *t, size_t iter, float *images, int32_t *labels,
                            char *msg, size_t cap)
{
    clg_status st = clg_datastore_read(t->train, t->perm + iter * t->batch, t->batch, images,
                                       labels);
    if (st != CLG_OK) {
        snprintf(msg, cap, "clg_train: %s", clg_datastore_last_error(t->train));
        return st;
    }
    for (size_t i = 0; i < t->batch; i++)
        if (labels[i] < 0 || (size_t)labels[i] >= t->net->classes) {
            snprintf(msg, cap, "clg_train: label %d is outside the net's %zu classes", labels[i],
                     t->net->classes);
            return CLG_ERR_SHAPE;
        }
    return CLG_OK;
}

static void *prefetch_work(void *arg)
{
    clg__prefetch *p = arg;
    p->st = read_into(p->t, p->iter, p->images, p->labels, p->msg, sizeof p->msg);
    return NULL;
}

void clg__prefetch_wait(clg__prefetch *p)
{
    if (p->running)
        pthread_join(p->tid, NULL);
    p->running = 0;
}

/* The batch of iteration `iter` into t->images / t->labels. DispatchInBackground: it was read
 * by the prefetch thread while the previous step computed (the buffers swap), and the next
 * batch of the epoch starts reading now; the order of batches is the same either way. */
clg_status clg__read_batch(clg__trainer *t, size_t iter)
{
    clg__prefetch *p = &t->prefetch;
    clg_status st;
    char msg[CLG__ERR_TEXT];
    int had = p->running && p->iter == iter;
    clg__prefetch_wait(p);
    if (had) {
        st = p->st;
        snprintf(msg, sizeof msg, "%s", p->msg);
        float *im = t->images;
        int32_t *lb = t->labels;
        t->images = p->images, t->labels = p->labels;
        p->images = im, p->labels = lb;
    } else {
        st = read_into(t, iter, t->images, t->labels, msg, sizeof msg);
    }
    if (st != CLG_OK)
        return clg__fail(t->ctx, st, "%s", msg);
    if (t->o.dispatch_in_background && p->images && iter + 1 < t->iters_per_epoch) {
        p->t = t;
        p->iter = iter + 1;
        p->running = pthread_create(&p->tid, NULL, prefetch_work, p) == 0;
    }
    return CLG_OK;
}
