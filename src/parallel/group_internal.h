/* The device group's state, shared by the step (group.c) and the host's gradient sums
 * (group_sum.c). */
#ifndef CLGRAD_PARALLEL_GROUP_INTERNAL_H
#define CLGRAD_PARALLEL_GROUP_INTERNAL_H

#include "parallel/parallel_internal.h"
#include "parallel/ranges.h"

#define CLG__TIMED_STEPS 5 /* auto split: step times kept per device */

typedef struct replica {
    clg__group *g;
    clg_net *net;
    float *grad, *state;     /* this shard's gradient sums and running statistics (host) */
    size_t first, count;     /* shard of the current step */
    double loss;             /* shard mean loss */
    size_t correct;
    double seconds;          /* last step's time */
    size_t timed_count;      /* auto split: the shard the timed steps ran */
    double timed[CLG__TIMED_STEPS]; /* their last times, a ring (the first at a shard left out) */
    unsigned ntimed;         /* steps timed at the shard (the ring holds the last ones) */
    size_t fit_count;        /* auto split: the shard before, and its time (0: none) */
    double fit_seconds;
    size_t proposed;         /* auto split: its shard in a small move awaiting confirmation */
    clg_status st;
    char error[CLG__ERR_TEXT];
    unsigned long version;   /* of the parameters it holds (0: none or unknown) */
    int dropped;             /* out of the group for good */
    uint64_t fail_at[8];     /* injected: fail at these steps (0: unused) */
    unsigned slow;           /* injected: compute this many times (1: normal) */
    uint64_t slow_at;        /* at this step only (0: every step) */
    double readback;         /* last step: seconds spent waiting for gradients after backward */
    size_t published;        /* streaming: ranges published this step */
    cl_event *ev;            /* overlapped read-back: per layer range its last read's event, */
    size_t *ev_lo, *ev_hi;   /* and the range it completes (ranges.cap each) */
    /* computing in host memory (host_shared.c): per layer with parameters (a slice), a
       buffer over its part of g->params and one over its part of grad, and what the host
       has mapped of them since the replica's last step */
    int shared;
    size_t nslices;
    cl_mem *host_params, *host_grads;
    size_t *slice_lo, *slice_hi;  /* in floats */
    unsigned char *mapped;        /* per slice: MAPPED_GRADS | MAPPED_PARAMS */
    int held;                     /* every slice of both is mapped */
} replica;

struct clg__group {
    size_t n;
    replica *r;
    float *params, *state;
    size_t nparams, nstate;
    unsigned long version;   /* of params/state; a replica with another one is sent them */
    int check_numerics;
    int overlap;             /* read each layer's gradients as soon as its backward is done:
                                1 always, 0 never, -1 on devices other than CPUs */
    int zero_copy;           /* replicas compute in host memory: 1 on every device, 0 never,
                                -1 on CPUs */
    double readback_sum;     /* per step, the slowest device's exposed read-back time */
    unsigned long readback_steps;
    float *weights;          /* current shares */
    int auto_split;
    int serial;              /* replicas run one after the other on the caller's thread: a
                                device's runtime is not thread-safe (oclgrind's) */
    unsigned verdicts;       /* auto split: verdicts in a row for a small move (its shards
                                in replica.proposed) */
    size_t *counts;
    double *ms;              /* each device's time in the last step */
    clg__crew *crew;         /* worker i runs device i's step (and a slice of the host pass) */
    /* inputs of the current step, read by the workers */
    const float *images;
    const unsigned char *targets; /* the step's: target_bytes a sample */
    size_t target_bytes;
    size_t per_sample;
    uint64_t step;
    /* cluster training: this group's samples start at global_first of a global batch of
     * global_batch (0: the group has the whole batch) */
    size_t global_first, global_batch;
    /* streaming gradient ranges to the caller during the step */
    clg__group_stream stream;
    int has_stream, ranges_ok;
    int streaming;           /* this step streams (every working device overlaps read-back) */
    int streamed;            /* the last step streamed every parameter */
    /* updating ranges of the master weights as the devices' gradients land */
    clg__group_update update;
    int has_update;
    int updating;            /* this step updates (every working device streams) */
    int updated;             /* the last step updated every parameter so */
    clg__ranges ranges;
    float *step_grad;        /* the step's output gradient */
    float step_inv;          /* 1 / the (global) batch */
    size_t *taken_lo, *taken_hi, ntaken; /* ranges.cap of each */
};

/* The step's gradient range [lo, hi): the working devices' sums in device order, divided by
 * the batch, then (streaming) handed on; user is the group. */
void clg__group_take_range(void *user, size_t lo, size_t hi);
/* Updating: the step's range [lo, hi) to the caller's update; user is the group. */
void clg__group_update_range(void *user, size_t lo, size_t hi);
/* After a streamed or updating step: the parameters no range covered, taken (or updated)
 * now. */
void clg__group_take_the_rest(clg__group *g, void (*take)(void *user, size_t lo, size_t hi));
/* Streaming: the caller's idle() while the stepping thread waits; user is the group. */
void clg__group_stream_idle(void *user);
/* Auto split (balance.c): after each step, new shares from the devices' measured speeds. */
void clg__group_rebalance(clg__group *g);
/* Whether replica r reads its gradients back layer by layer. */
int clg__group_overlaps(const clg__group *g, const replica *r);

/* Computing in host memory (host_shared.c). Whether the group's setting puts replica r there;
 * clg__replica_share makes its parameters and gradients buffers over g->params and r->grad,
 * one per layer, and maps them for the host; release unmaps them before a step's kernels
 * (queued), hold maps again what is not mapped after its last (blocking); hold_range maps one
 * layer's gradients [lo, hi) for reading, and with weights its master weights for writing,
 * once the queue reaches that point (*done: when); unshare unmaps and
 * releases the buffers, before the replica's net is destroyed. */
int clg__group_wants_sharing(const clg__group *g, const replica *r);
clg_status clg__replica_share(replica *r);
clg_status clg__replica_release(replica *r);
clg_status clg__replica_hold(replica *r);
clg_status clg__replica_hold_range(replica *r, size_t lo, size_t hi, int weights, cl_event *done);
void clg__replica_unshare(replica *r);

#endif
