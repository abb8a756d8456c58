/* Training: every solver lowers the loss on fixed synthetic data, an interrupted run resumed
 * from its checkpoint ends with the same weights as an uninterrupted one, options are
 * validated, early stopping, the metrics log and checkpoint rotation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include "common/testutil.h"
#include "clgrad/train.h"

static clg_ctx *ctx;
static clg_test_rng rng;
static char *dir;
static clg_datastore *data;

/* Under oclgrind (CLG_TEST_SMALL) the tests of host-side training logic (schedules, solver
 * options, reports) are left out: they add no GPU path of their own, and the simulator would
 * spend minutes on their many steps. */
static void host_logic_test(void)
{
    clg_test_skip_under_simulator("host-side logic only");
}

enum { SAMPLES = 96, SIDE = 8, CLASSES = 4 };

static void put_be32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    fwrite(b, 1, 4, f);
}

/* Class k: a bright 4x4 square in quadrant k, on noise. */
static void write_synthetic(const char *images, const char *labels)
{
    FILE *fi = fopen(images, "wb"), *fl = fopen(labels, "wb");
    assert_non_null(fi);
    assert_non_null(fl);
    put_be32(fi, 0x803);
    put_be32(fi, SAMPLES);
    put_be32(fi, SIDE);
    put_be32(fi, SIDE);
    put_be32(fl, 0x801);
    put_be32(fl, SAMPLES);
    clg_test_rng r;
    clg_test_rng_init(&r, 1234); /* fixed data: the tests compare runs, not seeds */
    for (int s = 0; s < SAMPLES; s++) {
        int k = s % CLASSES;
        unsigned char px[SIDE * SIDE];
        for (int y = 0; y < SIDE; y++)
            for (int x = 0; x < SIDE; x++) {
                int in = (y / 4) == k / 2 && (x / 4) == k % 2;
                px[y * SIDE + x] = (unsigned char)((in ? 150 : 0) + clg_test_rng_next(&r) % 100);
            }
        fwrite(px, 1, sizeof px, fi);
        unsigned char l = (unsigned char)k;
        fwrite(&l, 1, 1, fl);
    }
    fclose(fi);
    fclose(fl);
}

static const char net_text[] =
    "input 8x8x1\n"
    "conv 3x3x4 pad=1\n"
    "batchnorm\n"
    "relu\n"
    "maxpool 2x2\n"
    "dropout 0.2\n"
    "fc 4\n"
    "softmax\n";

static clg_net *new_net(uint64_t seed)
{
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, net_text, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, seed), CLG_OK);
    return net;
}

static clg_train_options small_options(void)
{
    clg_train_options o = clg_train_options_default();
    o.mini_batch_size = 16;
    o.max_epochs = 2;
    o.seed = 77;
    o.shuffle = CLG_SHUFFLE_EVERY_EPOCH;
    return o;
}

static float *weights(clg_net *net, size_t *n)
{
    *n = clg_net_param_count(net, CLG_PARAMS_LEARNABLE) + clg_net_param_count(net, CLG_PARAMS_STATE);
    float *p = malloc(*n * sizeof *p);
    size_t nl = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, p, nl), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_STATE, p + nl, *n - nl), CLG_OK);
    return p;
}

static void every_solver_lowers_the_loss(void **state)
{
    (void)state;
    const clg_solver solvers[4] = {CLG_SOLVER_SGDM, CLG_SOLVER_ADAM, CLG_SOLVER_RMSPROP,
                                   CLG_SOLVER_ADAMW};
    const float rates[4] = {0.05f, 0.01f, 0.01f, 0.01f};
    /* under oclgrind (CLG_TEST_SMALL) Adam only: the other solvers' kernels run under it in
     * test_dropout_optim, and the rest of a step is the same */
    int first = clg_test_small_limit() ? 1 : 0, last = clg_test_small_limit() ? 2 : 4;
    for (int s = first; s < last; s++) {
        clg_net *net = new_net(5);
        double before, after, acc;
        CLG_ASSERT_STATUS(clg_net_evaluate(net, data, 32, &before, &acc), CLG_OK);
        clg_train_options o = small_options();
        o.solver = solvers[s];
        o.initial_learn_rate = rates[s];
        o.max_epochs = 4;
        clg_train_report r;
        CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, &r), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_evaluate(net, data, 32, &after, &acc), CLG_OK);
        print_message("%s: loss %.4f -> %.4f, accuracy %.3f\n", clg_solver_name(solvers[s]),
                      before, after, acc);
        assert_int_equal(r.iterations, 4 * (SAMPLES / 16));
        assert_int_equal(r.epochs, 4);
        assert_true(after < 0.5 * before);
        assert_true(acc > 0.9);
        clg_net_destroy(net);
    }
}

/* AdamW is Adam with the decay taken out of the gradient: without decay the two train the
 * same weights bit for bit; with it they differ from each other and from no decay. */
static void adamw_decay_is_decoupled(void **state)
{
    (void)state;
    host_logic_test();
    float *w[4];
    size_t n = 0;
    const clg_solver solver[4] = {CLG_SOLVER_ADAM, CLG_SOLVER_ADAMW, CLG_SOLVER_ADAM,
                                  CLG_SOLVER_ADAMW};
    const float l2[4] = {0.0f, 0.0f, 0.5f, 0.5f};
    for (int k = 0; k < 4; k++) {
        clg_net *net = new_net(9);
        clg_train_options o = small_options();
        o.solver = solver[k];
        o.l2_regularization = l2[k];
        o.initial_learn_rate = 0.01f;
        o.max_epochs = 1;
        CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_OK);
        w[k] = weights(net, &n);
        clg_net_destroy(net);
    }
    assert_memory_equal(w[0], w[1], n * sizeof(float));
    assert_true(clg_test_max_abs_diff(w[2], w[3], n) > 1e-4);
    assert_true(clg_test_max_abs_diff(w[1], w[3], n) > 1e-4);
    for (int k = 0; k < 4; k++)
        free(w[k]);
}

/* The confusion matrix counts each sample once, at (its label, the class clg_net_classify
 * puts first), and its diagonal is the accuracy clg_net_evaluate reports; a batch that does
 * not divide the samples (7) changes nothing. */
static void confusion_matches_classify(void **state)
{
    (void)state;
    host_logic_test();
    clg_net *net = new_net(3);
    clg_train_options o = small_options();
    o.max_epochs = 1; /* partly trained: some mistakes to count */
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_OK);
    size_t counts[CLASSES * CLASSES], want[CLASSES * CLASSES] = {0};
    double loss, acc, loss2, acc2;
    CLG_ASSERT_STATUS(clg_net_evaluate_confusion(net, data, 7, &loss, &acc, counts), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_evaluate(net, data, 32, &loss2, &acc2), CLG_OK);
    enum { PER = SIDE * SIDE };
    static float images[SAMPLES * PER];
    int32_t labels[SAMPLES], top[SAMPLES];
    float prob[SAMPLES];
    size_t idx[SAMPLES], diag = 0, wrong = 0;
    for (size_t i = 0; i < SAMPLES; i++)
        idx[i] = i;
    CLG_ASSERT_STATUS(clg_datastore_read(data, idx, SAMPLES, images, labels), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_classify(net, images, SAMPLES, 1, top, prob), CLG_OK);
    for (size_t i = 0; i < SAMPLES; i++)
        want[labels[i] * CLASSES + top[i]]++;
    assert_memory_equal(counts, want, sizeof counts);
    for (size_t t = 0; t < CLASSES; t++)
        for (size_t p = 0; p < CLASSES; p++)
            *(t == p ? &diag : &wrong) += counts[t * CLASSES + p];
    print_message("confusion: %zu right, %zu wrong, accuracy %.4f\n", diag, wrong, acc);
    assert_int_equal(diag + wrong, SAMPLES);
    assert_true(fabs(acc - (double)diag / SAMPLES) < 1e-12 && fabs(acc - acc2) < 1e-12);
    assert_true(fabs(loss - loss2) < 1e-5);
    clg_net_destroy(net);
}

/* Program builds are not training: with every program compiled from source (no binary
 * cache), elapsed time plus the compile seconds fit in the wall time of the call, and each
 * compile is announced before and after. */
typedef struct build_log {
    int before, after;
} build_log;

static void count_builds(void *user, const char *family, double seconds)
{
    build_log *b = user;
    assert_non_null(family);
    *(seconds > 0 ? &b->after : &b->before) += 1;
}

static void build_time_is_not_training_time(void **state)
{
    (void)state;
    host_logic_test();
    build_log b = {0, 0};
    clg_ctx_options co = clg_ctx_options_default();
    co.cache_dir = "off";
    co.on_build = count_builds;
    co.on_build_user = &b;
    clg_ctx *cold;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &co, &cold), CLG_OK);
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(cold, "input 8x8x1\nconv 3x3x4 pad=1\nrelu\nfc 4\nsoftmax\n",
                                    &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 1), CLG_OK);
    clg_ctx_stats s0, s1;
    CLG_ASSERT_STATUS(clg_ctx_get_stats(cold, &s0), CLG_OK);
    clg_train_options o = small_options();
    o.max_epochs = 1;
    clg_train_report r;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, &r), CLG_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CLG_ASSERT_STATUS(clg_ctx_get_stats(cold, &s1), CLG_OK);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double built = s1.build_seconds - s0.build_seconds;
    print_message("training %.3f s of %.3f s wall, %.3f s building %u programs\n", r.elapsed_s,
                  wall, built, s1.programs_from_source - s0.programs_from_source);
    assert_true(s1.programs_from_source > s0.programs_from_source && built > 0.0);
    assert_true(r.elapsed_s + built <= wall + 1e-6);
    assert_true(b.before > 0 && b.before == b.after);
    assert_int_equal((unsigned)b.after, s1.programs_from_source);
    clg_net_destroy(net);
    clg_ctx_destroy(cold);
}

static int stop_at_5(const clg_train_progress *p, void *user)
{
    (void)user;
    return p->kind == CLG_PROGRESS_ITERATION && p->iteration == 5;
}

static int count_checkpoints(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, "checkpoint-", 11);
    if (d)
        closedir(d);
    return n;
}

/* Uninterrupted versus stopped and resumed, at an epoch boundary and inside an epoch (with
 * batch norm state, dropout and Adam moments all in play). */
static void resumed_run_equals_uninterrupted(void **state)
{
    (void)state;
    host_logic_test(); /* the steps' kernels are every training test's */
    clg_train_options o = small_options();
    o.solver = CLG_SOLVER_ADAM;
    o.initial_learn_rate = 0.01f;
    o.max_epochs = 3;
    clg_net *whole = new_net(11);
    CLG_ASSERT_STATUS(clg_train(whole, data, NULL, &o, NULL), CLG_OK);
    size_t n, m;
    float *ref = weights(whole, &n);

    for (int mode = 0; mode < 2; mode++) {
        char ckdir[4096];
        snprintf(ckdir, sizeof ckdir, "%s/ck%d", dir, mode);
        clg_train_options first = o;
        first.checkpoint_path = ckdir;
        if (mode == 0) {          /* stop after epoch 1, checkpoint per epoch */
            first.max_epochs = 1;
        } else {                  /* checkpoint every 3 iterations, stop at iteration 5 */
            first.checkpoint_frequency = 3;
            first.checkpoint_frequency_unit = CLG_CHECKPOINT_ITERATIONS;
            first.progress = stop_at_5;
            first.verbose_frequency = 1;
        }
        clg_net *part = new_net(11);
        clg_train_report r;
        CLG_ASSERT_STATUS(clg_train(part, data, NULL, &first, &r), CLG_OK);
        if (mode == 1) {
            assert_int_equal(r.stop_reason, CLG_STOP_CALLBACK);
            assert_int_equal(r.iterations, 5);
        }
        clg_net_destroy(part);
        clg_net *resumed = NULL;
        CLG_ASSERT_STATUS(clg_train_resume(ctx, ckdir, data, NULL, &o, &resumed, &r), CLG_OK);
        assert_int_equal(r.iterations, 3 * (SAMPLES / 16));
        float *got = weights(resumed, &m);
        assert_int_equal(n, m);
        if (memcmp(got, ref, n * sizeof *got))
            fail_msg("mode %d: resumed weights differ (max |diff| %g)", mode,
                     clg_test_max_abs_diff(got, ref, n));
        free(got);
        clg_net_destroy(resumed);
    }
    /* a solver that does not match the checkpoint's is refused */
    clg_train_options other = o;
    other.solver = CLG_SOLVER_SGDM;
    clg_net *x = NULL;
    char ckdir[4096];
    snprintf(ckdir, sizeof ckdir, "%s/ck0", dir);
    CLG_ASSERT_STATUS(clg_train_resume(ctx, ckdir, data, NULL, &other, &x, NULL), CLG_ERR_INVALID_ARG);
    clg_net_destroy(x);
    free(ref);
    clg_net_destroy(whole);
}

static void checkpoints_keep_the_newest_three(void **state)
{
    (void)state;
    char ckdir[4096];
    snprintf(ckdir, sizeof ckdir, "%s/rot", dir);
    clg_train_options o = small_options();
    o.checkpoint_path = ckdir;
    o.checkpoint_frequency = 2;
    o.checkpoint_frequency_unit = CLG_CHECKPOINT_ITERATIONS; /* 12 iterations: 6 checkpoints written */
    clg_net *net = new_net(1);
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_OK);
    assert_int_equal(count_checkpoints(ckdir), 3);
    clg_net_destroy(net);
}

static void bad_options_are_rejected(void **state)
{
    (void)state;
    clg_train_options o;
    typedef struct bad_case {
        const char *expect;
        clg_train_options o;
    } bad_case;
    bad_case bad[20];
    int n = 0;
    o = small_options(), o.mini_batch_size = 0, bad[n++] = (bad_case){"mini_batch_size", o};
    o = small_options(), o.initial_learn_rate = -1, bad[n++] = (bad_case){"initial_learn_rate", o};
    o = small_options(), o.solver = (clg_solver)7, bad[n++] = (bad_case){"solver", o};
    o = small_options(), o.max_epochs = 0, bad[n++] = (bad_case){"max_epochs", o};
    o = small_options(), o.momentum = 1.5f, bad[n++] = (bad_case){"momentum", o};
    o = small_options(), o.shuffle = (clg_shuffle)5, bad[n++] = (bad_case){"shuffle", o};
    o = small_options(), o.l2_regularization = NAN, bad[n++] = (bad_case){"l2_regularization", o};
    o = small_options(), o.checkpoint_frequency_unit = (clg_checkpoint_unit)2,
        bad[n++] = (bad_case){"checkpoint_frequency_unit", o};
    o = small_options(), o.struct_size = 0, bad[n++] = (bad_case){"struct_size", o};
    o = small_options(), o.struct_size = sizeof o + 8, bad[n++] = (bad_case){"struct_size", o};
    /* execution options: each bad one, checked through the training options */
    enum { NX = 5 };
    static const char *const xbad[NX] = {"environment", "rank_load", "zero_copy", "early_update",
                                         "struct_size"};
    clg_exec_options bx[NX];
    for (int i = 0; i < NX; i++)
        bx[i] = clg_exec_options_default();
    bx[0].environment = (clg_exec_env)9;
    bx[1].rank_load = -1.0f;
    bx[2].zero_copy = (clg_switch)7;
    bx[3].early_update = (clg_switch)-1;
    bx[4].struct_size = 0;
    for (int i = 0; i < NX; i++) {
        CLG_ASSERT_STATUS(clg_exec_options_check(&bx[i]), CLG_ERR_INVALID_ARG);
        o = small_options(), o.execution = &bx[i], bad[n++] = (bad_case){xbad[i], o};
    }
    clg_net *net = new_net(1);
    for (int i = 0; i < n; i++) {
        CLG_ASSERT_STATUS(clg_train_options_check(&bad[i].o), CLG_ERR_INVALID_ARG);
        assert_non_null(strstr(clg_last_error(), bad[i].expect));
        CLG_ASSERT_STATUS(clg_train(net, data, NULL, &bad[i].o, NULL), CLG_ERR_INVALID_ARG);
        assert_non_null(strstr(clg_ctx_last_error(ctx), bad[i].expect));
    }
    clg_solver s;
    CLG_ASSERT_STATUS(clg_solver_parse("nadam", &s), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "(sgdm, adam, rmsprop, adamw)"));
    CLG_ASSERT_STATUS(clg_solver_parse("rmsprop", &s), CLG_OK);
    assert_int_equal(s, CLG_SOLVER_RMSPROP);
    CLG_ASSERT_STATUS(clg_solver_parse("adamw", &s), CLG_OK);
    assert_int_equal(s, CLG_SOLVER_ADAMW);
    clg_train_options def = clg_train_options_default();
    CLG_ASSERT_STATUS(clg_train_options_check(&def), CLG_OK);
    /* "parallel" outside mpirun (or without MPI built in) is refused, saying why */
    clg_train_options par = small_options();
    clg_exec_options px = clg_exec_options_default();
    px.environment = CLG_ENV_PARALLEL;
    par.execution = &px;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &par, NULL), CLG_ERR_UNSUPPORTED);
    assert_true(strstr(clg_ctx_last_error(ctx), "mpirun") ||
                strstr(clg_ctx_last_error(ctx), "without MPI"));
    clg_net_destroy(net);
}

/* Data that does not fit the net: other image size, labels beyond the classes. */
static void data_that_does_not_fit_is_rejected(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 4x4x1\nfc 4\nsoftmax\n", &net), CLG_OK);
    clg_train_options o = small_options();
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "8x8"));
    clg_net_destroy(net);
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nfc 3\nsoftmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "classes"));
    clg_net_destroy(net);
}

/* A learning rate too small to change anything (and no batch norm, whose running statistics
 * would): the validation loss stays equal, which counts as no improvement, so training stops
 * after `patience` validations past the first. */
static void validation_patience_stops_early(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nfc 4\nsoftmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 2), CLG_OK);
    clg_datastore *val;
    CLG_ASSERT_STATUS(clg_datastore_subset(data, 64, 32, &val), CLG_OK);
    char log[4096];
    snprintf(log, sizeof log, "%s/metrics.csv", dir);
    clg_train_options o = small_options();
    o.initial_learn_rate = 1e-30f;
    o.l2_regularization = 0;
    o.validation_frequency = 2;
    o.validation_patience = 3;
    o.max_epochs = 10;
    o.metrics_log = log;
    clg_train_report r;
    CLG_ASSERT_STATUS(clg_train(net, data, val, &o, &r), CLG_OK);
    assert_int_equal(r.stop_reason, CLG_STOP_VALIDATION_PATIENCE);
    assert_int_equal(r.iterations, 8);
    assert_int_equal(r.best_iteration, 2);
    assert_true(r.has_validation);
    /* the log: a header, 8 iterations and 4 validations */
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char line[512];
    int iterations = 0, validations = 0, lines = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        iterations += !strncmp(line, "iteration,", 10);
        validations += !strncmp(line, "validation,", 11);
    }
    fclose(f);
    assert_int_equal(lines, 13);
    assert_int_equal(iterations, 8);
    assert_int_equal(validations, 4);
    clg_datastore_destroy(val);
    clg_net_destroy(net);
}

/* A learning rate far too large drives the weights to infinity: with the numerics check the
 * run stops at the first non-finite value, naming the layer and step; without it at the first
 * non-finite loss (training diverged), with what to change. */
static void numerics_check_names_the_first_bad_layer(void **state)
{
    (void)state;
    for (int check = 0; check < 2; check++) {
        clg_net *net = new_net(4);
        clg_train_options o = small_options();
        o.initial_learn_rate = 1e30f;
        o.momentum = 0.0f;
        clg_exec_options x = clg_exec_options_default();
        x.check_numerics = check;
        o.execution = &x;
        clg_train_report r;
        clg_status st = clg_train(net, data, NULL, &o, &r);
        if (check) {
            CLG_ASSERT_STATUS(st, CLG_ERR_NUMERICS);
            const char *msg = clg_ctx_last_error(ctx);
            print_message("%s\n", msg);
            assert_non_null(strstr(msg, "NaN or infinite values in the"));
            assert_non_null(strstr(msg, "of layer "));
            assert_non_null(strstr(msg, "at step "));
        } else { /* unchecked layers: the first NaN loss stops training, saying so */
            CLG_ASSERT_STATUS(st, CLG_ERR_NUMERICS);
            const char *msg = clg_ctx_last_error(ctx);
            print_message("%s\n", msg);
            assert_non_null(strstr(msg, "training diverged: the loss is"));
            assert_non_null(strstr(msg, "lower the learning rate (it was 1e+30)"));
        }
        clg_net_destroy(net);
    }
}

/* DispatchInBackground reads the next batches on worker threads: the same batches in the same
 * order, so the same weights bit for bit with 0, 1 and 4 workers (and a stop mid-epoch leaves
 * no thread behind). */
/* A callback store passing reads through to the test's data. */
static int through(void *user, size_t index, float *image, int32_t *label, char *why, size_t cap)
{
    (void)why, (void)cap;
    return clg_datastore_read(user, &index, 1, image, label) != CLG_OK;
}

/* Training reads a callback store as it reads a built-in one: the same weights bit for bit,
 * with background dispatch on two workers (so the callback runs on their threads). */
static void callback_store_trains_like_its_source(void **state)
{
    (void)state;
    clg_datastore_callbacks cb = clg_datastore_callbacks_default();
    cb.count = clg_datastore_size(data), cb.sample = clg_datastore_sample_shape(data);
    cb.classes = clg_datastore_class_count(data), cb.read = through, cb.user = data;
    clg_datastore *own;
    CLG_ASSERT_STATUS(clg_datastore_from_callbacks(&cb, &own), CLG_OK);
    size_t n[2];
    float *w[2];
    for (int k = 0; k < 2; k++) {
        clg_net *net = new_net(6);
        clg_train_options o = small_options();
        clg_exec_options x = clg_exec_options_default();
        x.dispatch_in_background = 1, x.dispatch_workers = 2;
        o.execution = &x;
        CLG_ASSERT_STATUS(clg_train(net, k ? own : data, NULL, &o, NULL), CLG_OK);
        w[k] = weights(net, &n[k]);
        clg_net_destroy(net);
    }
    assert_int_equal(n[0], n[1]);
    assert_memory_equal(w[0], w[1], n[0] * sizeof *w[0]);
    free(w[0]), free(w[1]);
    clg_datastore_destroy(own);
}

static void background_dispatch_changes_nothing(void **state)
{
    (void)state;
    host_logic_test(); /* the steps' kernels are every training test's */
    size_t n[3];
    float *w[3];
    const size_t workers[3] = {0, 1, 4};
    for (int k = 0; k < 3; k++) {
        clg_net *net = new_net(6);
        clg_train_options o = small_options();
        o.solver = CLG_SOLVER_ADAM;
        o.initial_learn_rate = 0.01f;
        clg_exec_options x = clg_exec_options_default();
        x.dispatch_in_background = workers[k] > 0;
        x.dispatch_workers = workers[k];
        o.execution = &x;
        CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_OK);
        w[k] = weights(net, &n[k]);
        clg_net_destroy(net);
    }
    for (int k = 1; k < 3; k++) {
        assert_int_equal(n[0], n[k]);
        assert_memory_equal(w[0], w[k], n[0] * sizeof *w[0]);
    }
    for (int k = 0; k < 3; k++)
        free(w[k]);
    clg_net *net = new_net(6);
    clg_train_options o = small_options();
    clg_exec_options x = clg_exec_options_default();
    x.dispatch_in_background = 1;
    o.execution = &x;
    o.progress = stop_at_5;
    o.verbose_frequency = 1;
    clg_train_report r;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, &r), CLG_OK);
    assert_int_equal(r.iterations, 5);
    clg_net_destroy(net);
}

/* The GPU profile takes other kernels and algorithms (GEMM's local-memory tiles, im2col for
 * what a CPU does with Winograd) but trains the same network: the same weights up to float
 * summation order (rel. L2 1.1e-6 on POCL, 5.7e-6 on Intel's runtime after 2 epochs). */
static const char wide_net_text[] = /* products above the small-GEMM bound; on a CPU the
                                      second conv is Winograd's, on a GPU im2col */
    "input 8x8x1\n"
    "conv 3x3x16 pad=1\n"
    "relu\n"
    "conv 3x3x16 pad=1\n"
    "relu\n"
    "maxpool 2x2\n"
    "fc 4\n"
    "softmax\n";

static void gpu_profile_trains_the_same_weights(void **state)
{
    (void)state;
    if (clg_test_device()->type != CLG_DEVICE_CPU)
        skip(); /* a GPU decides as one with either setting */
    float *w[2];
    size_t n[2];
    double loss[2];
    for (int k = 0; k < 2; k++) {
        clg_ctx_options co = clg_ctx_options_default();
        co.cache_dir = getenv("CLGRAD_CACHE_DIR");
        co.decisions = k ? CLG_DECIDE_AS_GPU : CLG_DECIDE_BY_TYPE;
        clg_ctx *c;
        CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &co, &c), CLG_OK);
        assert_int_equal(clg_ctx_decides_as_gpu(c), k);
        clg_net *net;
        CLG_ASSERT_STATUS(clg_net_parse(c, wide_net_text, &net), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_init(net, 8), CLG_OK);
        clg_train_options o = small_options();
        o.solver = CLG_SOLVER_ADAM;
        o.initial_learn_rate = 0.01f;
        clg_train_report r;
        CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, &r), CLG_OK);
        loss[k] = r.loss;
        w[k] = weights(net, &n[k]);
        clg_net_destroy(net);
        clg_ctx_destroy(c);
    }
    assert_int_equal(n[0], n[1]);
    double d = 0, ref = 0;
    for (size_t i = 0; i < n[0]; i++) {
        d += ((double)w[1][i] - w[0][i]) * ((double)w[1][i] - w[0][i]);
        ref += (double)w[0][i] * w[0][i];
    }
    double rel = sqrt(d / ref);
    print_message("GPU profile against a CPU's choices: weights rel. L2 %.2e, final loss %.6f "
                  "and %.6f\n", rel, loss[0], loss[1]);
    assert_true(rel < 1e-4);
    free(w[0]);
    free(w[1]);
}

/* The rate each iteration reports: warm-up rises linearly, the linear scaling rule multiplies
 * by batch / reference, piecewise drops by the factor every period. */
static int record_rates(const clg_train_progress *p, void *user)
{
    double *r = user;
    if (p->kind == CLG_PROGRESS_ITERATION && p->iteration <= 12)
        r[p->iteration - 1] = p->learn_rate;
    return 0;
}

static void learning_rate_schedules(void **state)
{
    (void)state;
    host_logic_test();
    clg_net *net = new_net(1);
    clg_train_options o = small_options(); /* 6 iterations per epoch */
    o.initial_learn_rate = 0.01f;
    o.learn_rate_reference_batch = 8;      /* batch 16: twice the rate */
    o.warmup_iterations = 4;
    o.learn_rate_schedule = CLG_LR_PIECEWISE;
    o.learn_rate_drop_period = 1;
    o.learn_rate_drop_factor = 0.5f;
    double r[12];
    o.progress = record_rates;
    o.progress_user = r;
    o.verbose_frequency = 1;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_OK);
    const double want[12] = {0.005, 0.01, 0.015, 0.02, 0.02, 0.02,
                             0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
    for (int i = 0; i < 12; i++)
        if (fabs(r[i] - want[i]) > 1e-9)
            fail_msg("iteration %d: rate %g, expected %g", i + 1, r[i], want[i]);
    clg_net_destroy(net);
}

/* Cosine annealing after warm-up: iteration i (i - 1 done before it) of 12 runs at
 * lr * 0.5 * (1 + cos(pi * (i - 1 - 4) / 8)) once warm-up's 4 have risen linearly. */
static void cosine_schedule(void **state)
{
    (void)state;
    host_logic_test();
    clg_net *net = new_net(1);
    clg_train_options o = small_options(); /* 2 epochs of 6 iterations */
    o.initial_learn_rate = 0.01f;
    o.warmup_iterations = 4;
    o.learn_rate_schedule = CLG_LR_COSINE;
    double r[12];
    o.progress = record_rates;
    o.progress_user = r;
    o.verbose_frequency = 1;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_OK);
    for (int i = 1; i <= 12; i++) {
        double done = i - 1, warm = done < 4 ? (done + 1) / 4 : 1.0;
        double p = done > 4 ? (done - 4) / 8 : 0.0;
        double want = 0.01 * warm * 0.5 * (1 + cos(3.14159265358979323846 * p));
        if (fabs(r[i - 1] - want) > 1e-9)
            fail_msg("iteration %d: rate %.9g, expected %.9g", i, r[i - 1], want);
    }
    assert_true(r[11] < 0.001 && fabs(r[4] - 0.01) < 1e-9);
    clg_net_destroy(net);
}

/* Reduce on plateau: every iteration's rate follows the validation losses seen before it
 * (patience 2: halved after two validations in a row without a new lowest loss). A rate far
 * too high makes the loss bounce, so that drops happen. */
typedef struct plateau_log {
    double rate[64], val_loss[64];
    int val_after[64]; /* the iteration a validation followed */
    int nval;
} plateau_log;

static int record_plateau(const clg_train_progress *p, void *user)
{
    plateau_log *l = user;
    if (p->kind == CLG_PROGRESS_ITERATION && p->iteration <= 64)
        l->rate[p->iteration - 1] = p->learn_rate;
    if (p->kind == CLG_PROGRESS_VALIDATION && l->nval < 64) {
        l->val_loss[l->nval] = p->val_loss;
        l->val_after[l->nval++] = (int)p->iteration;
    }
    return 0;
}

static void plateau_schedule(void **state)
{
    (void)state;
    host_logic_test();
    clg_net *net = new_net(1);
    clg_train_options o = small_options();
    o.max_epochs = 8; /* 48 iterations, a validation after each */
    o.initial_learn_rate = 3.0f;
    o.learn_rate_schedule = CLG_LR_PLATEAU;
    o.learn_rate_plateau_patience = 2;
    o.learn_rate_drop_factor = 0.5f;
    o.validation_frequency = 1;
    o.verbose_frequency = 1;
    CLG_ASSERT_STATUS(clg_train(net, data, NULL, &o, NULL), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "needs validation data"));
    static plateau_log l;
    memset(&l, 0, sizeof l);
    o.progress = record_plateau;
    o.progress_user = &l;
    CLG_ASSERT_STATUS(clg_train(net, data, data, &o, NULL), CLG_OK);
    assert_int_equal(l.nval, 48);
    double scale = 1.0, best = INFINITY;
    int bad = 0, drops = 0;
    for (int i = 1; i <= 48; i++) {
        if (fabs(l.rate[i - 1] - 3.0 * scale) > 1e-6 * scale)
            fail_msg("iteration %d: rate %.9g, expected %.9g", i, l.rate[i - 1], 3.0 * scale);
        assert_int_equal(l.val_after[i - 1], i);
        if (l.val_loss[i - 1] < best) {
            best = l.val_loss[i - 1], bad = 0;
        } else if (++bad >= 2) {
            scale *= 0.5, bad = 0, drops++;
        }
    }
    print_message("plateau: %d drops in 48 validations\n", drops);
    assert_true(drops >= 1);
    clg_net_destroy(net);
}

/* The plateau schedule's state (drops so far, validations since) travels in checkpoints: a
 * run stopped after a drop and resumed ends with the uninterrupted run's weights. */
static void plateau_resume_exact(void **state)
{
    (void)state;
    host_logic_test();
    clg_train_options o = small_options();
    o.max_epochs = 3;
    o.initial_learn_rate = 3.0f;
    o.learn_rate_schedule = CLG_LR_PLATEAU;
    o.learn_rate_plateau_patience = 2;
    o.learn_rate_drop_factor = 0.5f;
    o.validation_frequency = 1;
    clg_net *whole = new_net(5);
    CLG_ASSERT_STATUS(clg_train(whole, data, data, &o, NULL), CLG_OK);
    size_t n, m;
    float *ref = weights(whole, &n);
    char ckdir[4096];
    snprintf(ckdir, sizeof ckdir, "%s/ck-plateau", dir);
    clg_train_options first = o;
    first.checkpoint_path = ckdir;
    first.max_epochs = 2;
    static plateau_log l;
    memset(&l, 0, sizeof l);
    first.progress = record_plateau;
    first.progress_user = &l;
    first.verbose_frequency = 1;
    clg_net *part = new_net(5), *resumed = NULL;
    CLG_ASSERT_STATUS(clg_train(part, data, data, &first, NULL), CLG_OK);
    assert_true(l.rate[11] < 3.0 * 0.99); /* dropped before the checkpoint */
    CLG_ASSERT_STATUS(clg_train_resume(ctx, ckdir, data, data, &o, &resumed, NULL), CLG_OK);
    float *got = weights(resumed, &m);
    assert_int_equal(n, m);
    if (memcmp(got, ref, n * sizeof *got))
        fail_msg("resumed weights differ (max |diff| %g)", clg_test_max_abs_diff(got, ref, n));
    free(got);
    free(ref);
    clg_net_destroy(part);
    clg_net_destroy(resumed);
    clg_net_destroy(whole);
}

static int setup(void **state)
{
    (void)state;
    clg_test_fixture_setup(&ctx, &rng);
    dir = clg_test_tempdir("train");
    char images[4096], labels[4096];
    snprintf(images, sizeof images, "%s/images.idx", dir);
    snprintf(labels, sizeof labels, "%s/labels.idx", dir);
    write_synthetic(images, labels);
    CLG_ASSERT_STATUS(clg_datastore_open_idx(images, labels, &data), CLG_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_datastore_destroy(data);
    clg_test_rmtree(dir);
    free(dir);
    clg_test_fixture_teardown(ctx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_profile_trains_the_same_weights),
        cmocka_unit_test(every_solver_lowers_the_loss),
        cmocka_unit_test(resumed_run_equals_uninterrupted),
        cmocka_unit_test(checkpoints_keep_the_newest_three),
        cmocka_unit_test(bad_options_are_rejected),
        cmocka_unit_test(data_that_does_not_fit_is_rejected),
        cmocka_unit_test(validation_patience_stops_early),
        cmocka_unit_test(numerics_check_names_the_first_bad_layer),
        cmocka_unit_test(background_dispatch_changes_nothing),
        cmocka_unit_test(callback_store_trains_like_its_source),
        cmocka_unit_test(learning_rate_schedules),
        cmocka_unit_test(cosine_schedule),
        cmocka_unit_test(build_time_is_not_training_time),
        cmocka_unit_test(confusion_matches_classify),
        cmocka_unit_test(adamw_decay_is_decoupled),
        cmocka_unit_test(plateau_schedule),
        cmocka_unit_test(plateau_resume_exact),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
