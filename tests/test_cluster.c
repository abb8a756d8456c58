/* Cluster training under mpirun (ctest runs it with 1, 2 and 3 ranks): 20 steps in the
 * "parallel" environment match the same 20 steps in one process within relative L2 1e-5 with
 * the same loss sequence (also for a network of the mobile layers imported models bring),
 * every rank ends with the same bits, and ranks given different options refuse to start, all
 * of them. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "clgrad/clgrad.h"
#include "clgrad/cluster.h"

static clg_ctx *ctx;
static clg_datastore *data, *class_data, *seg_data;
static float images[200 * 64];
static int32_t labels[200];
static int rank, ranks;
static clg_train_report last; /* of the last train() */

/* Dropout drawn by global position included. No batch norm: each rank (like each device of a
 * group) normalises with its own shard's statistics, so it would differ from one process by
 * design (README, Several devices). */
static const char plain_net[] = "input 8x8x1\nconv 3x3x4 pad=1\nrelu\nmaxpool 2x2\ndropout 0.2\n"
                               "fc 6\ntanh\nfc 4\nsoftmax\n";
/* Padding, ReLU6, a depthwise convolution, hard swish, a squeeze-and-excitation gate, a
 * channel split, concat and shuffle, SiLU: what imported mobile networks are made of. */
static const char mobile_net[] = "input 8x8x1\npad 1 mode=reflect\nconv 3x3x4\nclip min=0 max=6\n"
                                 "conv 3x3x4 pad=1 groups=4\nhardswish name=f\ngap\nconv 1x1x4\n"
                                 "hardsigmoid alpha=0.16666667 beta=0.5\nmul f name=g\n"
                                 "slice 0:2 name=a\nslice 2:4 from=g\nconv 1x1x2\nsilu\nconcat a\n"
                                 "shuffle 2\nmaxpool 2x2\nfc 6\ntanh\nfc 4\nsoftmax\n";
static const char *net_text = plain_net;

typedef struct losses {
    double v[32];
    size_t n;
} losses;

static int record(const clg_train_progress *p, void *user)
{
    losses *l = user;
    if (p->kind == CLG_PROGRESS_ITERATION && l->n < 32)
        l->v[l->n++] = p->loss;
    return 0;
}

static clg_train_options options(losses *l)
{
    clg_train_options o = clg_train_options_default();
    o.solver = CLG_SOLVER_ADAM;
    o.initial_learn_rate = 0.01f;
    o.mini_batch_size = 25; /* 3 ranks: shards of 9, 8, 8 */
    o.max_epochs = 3;       /* 8 steps an epoch: 20 steps end inside the third */
    o.seed = 19;
    o.verbose_frequency = 1;
    o.progress = record;
    o.progress_user = l;
    return o;
}

static int stop_at_20(const clg_train_progress *p, void *user)
{
    record(p, user);
    return p->kind == CLG_PROGRESS_ITERATION && p->iteration >= 20;
}

static float *train(const char *env, losses *l, size_t *n)
{
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, net_text, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    clg_train_options o = options(l);
    clg_exec_options x = clg_exec_options_default();
    x.environment = strncmp(env, "parallel", 8) ? CLG_ENV_AUTO : CLG_ENV_PARALLEL;
    o.execution = &x;
    o.progress = stop_at_20;
    if (!strcmp(env, "parallel-loaded")) /* ranks weighted 1, 2, 3: uneven shards */
        x.rank_load = (float)(rank + 1);
    if (!strcmp(env, "parallel-streamed")) { /* read-back per layer: sums start during backward */
        x.overlap = CLG_SWITCH_ON;
        x.bucket_bytes = 100; /* many small sums in flight */
    }
    clg_train_report rep;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, &rep), CLG_OK);
    assert_int_equal(rep.cluster_resyncs, 0); /* MPI's sums agreed on every rank, bit for bit */
    last = rep;
    size_t nl = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    *n = nl + clg_net_param_count(net, CLG_PARAMS_STATE);
    float *w = malloc(*n * sizeof *w);
    assert_non_null(w);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, w, nl), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_STATE, w + nl, *n - nl), CLG_OK);
    clg_net_destroy(net);
    return w;
}

/* Every rank holds rank 0's bits. */
static void assert_same_on_every_rank(const float *w, size_t n)
{
    float *root = malloc(n * sizeof *root);
    assert_non_null(root);
    memcpy(root, w, n * sizeof *w);
    assert_int_equal(MPI_Bcast(root, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_memory_equal(root, w, n * sizeof *w);
    free(root);
}

static void compare_with_one_process(const char *env)
{
    losses one = {{0}, 0}, par = {{0}, 0};
    size_t n, m;
    float *ref = train("cpu", &one, &n);
    float *w = train(env, &par, &m);
    assert_int_equal(n, m);
    double d = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)w[i] - ref[i]) * ((double)w[i] - ref[i]);
        r += (double)ref[i] * ref[i];
    }
    double e = sqrt(d / r);
    if (rank == 0)
        printf("%d rank(s), %s: weights after 20 steps differ from one process by relative L2 "
               "%.2e\n", ranks, env, e);
    assert_true(e < 1e-5);
    assert_int_equal(one.n, 20);
    assert_int_equal(par.n, 20);
    for (size_t i = 0; i < 20; i++) /* mean batch losses: float sums in another order */
        assert_true(fabs(one.v[i] - par.v[i]) <= 1e-5 * fabs(one.v[i]) + 1e-6);
    assert_same_on_every_rank(w, n);
    free(ref);
    free(w);
}

static void parallel_equals_one_process(void **state)
{
    (void)state;
    compare_with_one_process("parallel");
}

/* The same with each layer's gradient sum started as soon as its read-back lands, while
 * earlier layers still compute backward (in 100-byte buckets: many sums in flight). */
static void streamed_sums_equal_one_process(void **state)
{
    (void)state;
    compare_with_one_process("parallel-streamed");
}

static void mobile_layers_equal_one_process(void **state)
{
    (void)state;
    net_text = mobile_net;
    compare_with_one_process("parallel");
    net_text = plain_net;
}

/* A small U-Net segmenter on label maps (every fifth pixel unlabelled): the per-pixel loss and
 * the pixel accuracy (correct over labelled pixels of every rank) as one process's. */
static const char unet_net[] = "input 8x8x1\nconv 3x3x4 pad=1\nrelu name=skip\nmaxpool 2x2\n"
                               "conv 3x3x4 pad=1\nrelu\nupsample 2 mode=bilinear\nconcat skip\n"
                               "conv 1x1x3\npixelsoftmax weights=1,0.5,2\n";

static void segmenter_equals_one_process(void **state)
{
    (void)state;
    net_text = unet_net;
    data = seg_data;
    compare_with_one_process("parallel");
    double acc_parallel = last.accuracy;
    losses l = {{0}, 0};
    size_t n;
    free(train("cpu", &l, &n));
    if (rank == 0)
        printf("%d rank(s): last pixel accuracy %.6f, one process %.6f\n", ranks, acc_parallel,
               last.accuracy);
    assert_true(fabs(acc_parallel - last.accuracy) < 1e-12); /* labelled pixels counted alike */
    assert_true(last.accuracy > 0.2 && last.accuracy <= 1.0);
    data = class_data;
    net_text = plain_net;
}

/* Rank loads 1, 2, 3 (MATLAB's WorkerLoad for the ranks): shards grow with the load and add
 * up to the batch, and the weights still equal one process's. */
static void rank_loads_split_the_batch(void **state)
{
    (void)state;
    compare_with_one_process("parallel-loaded");
    unsigned long mine = (unsigned long)last.cluster_shard, all[64];
    assert_int_equal(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG, all, 1, MPI_UNSIGNED_LONG,
                                   MPI_COMM_WORLD), MPI_SUCCESS);
    unsigned long sum = 0;
    for (int r = 0; r < ranks; r++) {
        sum += all[r];
        if (r)
            assert_true(all[r] > all[r - 1]);
    }
    assert_int_equal(sum, 25);
}

/* A fresh net and the options of a "parallel" run, with one change by the caller. */
static clg_net *parallel_net(clg_train_options *o, losses *l)
{
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, net_text, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    static clg_exec_options x;
    x = clg_exec_options_default();
    x.environment = CLG_ENV_PARALLEL;
    *o = options(l);
    o->execution = &x;
    return net;
}

/* A rank whose weights drift (one ulp, injected at step 3) is caught at the epoch's end and
 * given rank 0's weights: every rank ends with the same bits, the resync counted. */
static void drifting_rank_is_resynchronised(void **state)
{
    (void)state;
    if (ranks < 2) {
        printf("skipped: needs 2 ranks\n");
        return;
    }
    losses l = {{0}, 0};
    clg_train_options o;
    clg_net *net = parallel_net(&o, &l);
    o.max_epochs = 1;
    clg__testing_set_faults("rank1:skew@3");
    clg_train_report rep;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, &rep), CLG_OK);
    assert_int_equal(rep.cluster_resyncs, 1);
    size_t n = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    float *w = malloc(n * sizeof *w);
    assert_non_null(w);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, w, n), CLG_OK);
    assert_same_on_every_rank(w, n);
    free(w);
    clg_net_destroy(net);
}

static void different_options_refused_on_every_rank(void **state)
{
    (void)state;
    if (ranks < 2) {
        printf("skipped: needs 2 ranks\n");
        return;
    }
    losses l = {{0}, 0};
    clg_train_options o;
    clg_net *net = parallel_net(&o, &l);
    o.seed = rank == ranks - 1 ? 20 : 19;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "different data or options"));
    clg_net_destroy(net);
}

static int setup(void **state)
{
    (void)state;
    ctx = clg_test_ctx(NULL);
    clg_test_rng rng;
    clg_test_rng_init(&rng, 5);
    for (size_t i = 0; i < 200; i++) {
        labels[i] = (int32_t)(i % 4);
        for (size_t k = 0; k < 64; k++) /* a class-dependent pattern plus noise */
            images[i * 64 + k] = (float)(k % 4 == (size_t)labels[i]) + clg_test_uniform(&rng, 0.0f, 0.5f);
    }
    static int32_t maps[200 * 64];
    for (size_t i = 0; i < 200 * 64; i++)
        maps[i] = i % 5 == 2 ? CLG_LABEL_IGNORE : images[i] > 1.0f ? 1 : images[i] > 0.25f ? 2 : 0;
    clg_shape plane = {1, 1, 8, 8};
    if (!ctx || clg_datastore_from_memory(images, labels, 200, plane, 4, &data) != CLG_OK ||
        clg_datastore_from_memory_targets(images, maps, 200, plane, CLG_TARGET_PIXELS, plane, 3,
                                          &seg_data) != CLG_OK)
        return -1;
    class_data = data;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_datastore_destroy(class_data);
    clg_datastore_destroy(seg_data);
    clg_ctx_destroy(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (clg_cluster_init(&argc, &argv, &rank, &ranks) != CLG_OK) {
        fprintf(stderr, "test_cluster: %s\n", clg_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parallel_equals_one_process),
        cmocka_unit_test(segmenter_equals_one_process),
        cmocka_unit_test(streamed_sums_equal_one_process),
        cmocka_unit_test(mobile_layers_equal_one_process),
        cmocka_unit_test(rank_loads_split_the_batch),
        cmocka_unit_test(drifting_rank_is_resynchronised),
        cmocka_unit_test(different_options_refused_on_every_rank),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    clg_cluster_finalize();
    return failed;
}
