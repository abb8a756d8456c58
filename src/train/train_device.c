/* Training on one device (the net's context): forward and backward on the device, the
 * optimizer there too; nothing crosses to the host but the loss. */
#include "train/train_internal.h"

static clg_status compute(clg__trainer *t, float lr)
{
    (void)lr;
    clg_status st = clg__net_upload(t->net, t->images, t->batch);
    if (st == CLG_OK)
        st = clg__net_forward(t->net, 1, t->step);
    if (st == CLG_OK && t->check_numerics)
        st = clg__net_check_numerics(t->net, 0, t->step);
    if (st == CLG_OK) /* no pause between forward and backward: the loss arrives meanwhile */
        st = clg__net_loss_begin(t->net, t->targets);
    if (st == CLG_OK)
        st = clg__net_backward(t->net, t->targets, 1.0f / (float)t->batch, t->step);
    if (st == CLG_OK && t->check_numerics)
        st = clg__net_check_numerics(t->net, 1, t->step);
    return st;
}

static clg_status reduce(clg__trainer *t)
{
    return clg__optim_clip(&t->opt); /* one device: its gradient is the batch's already */
}

static clg_status update(clg__trainer *t, float lr)
{
    return clg__optim_step(&t->opt, lr, t->step);
}

static clg_status finish(clg__trainer *t, double *loss, size_t *correct)
{
    return clg__net_loss_end(t->net, loss, correct);
}

static void cancel(clg__trainer *t)
{
    clg__net_loss_cancel(t->net);
}

static clg_status sync(clg__trainer *t)
{
    (void)t; /* the net and the optimizer live on the device: nothing elsewhere */
    return CLG_OK;
}

const clg__strategy clg__strategy_device = {"device", compute, reduce, update, finish, cancel,
                                            sync};
