/* Experiments: several models trained at once over the contexts give the weights each gives
 * trained alone, a bad model fails alone, more models than devices all complete, and models
 * sharing an image folder decode each image once per epoch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/testutil.h"
#include "clgrad/clgrad.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

static clg_ctx *ctx[2];
static clg_datastore *data;
static float images[96 * 64];
static int32_t labels[96];
static char *dir;

static const char net_a[] = "input 8x8x1\nconv 3x3x4 pad=1\nrelu\nmaxpool 2x2\nfc 4\nsoftmax\n";
static const char net_b[] = "input 8x8x1\nfc 12\ntanh\ndropout 0.1\nfc 4\nsoftmax\n";

static clg_experiment experiment(const char *name, const char *text, float lr, clg_datastore *d)
{
    clg_experiment e;
    memset(&e, 0, sizeof e);
    e.name = name;
    e.net_text = text;
    e.init_seed = 9;
    e.options = clg_train_options_default();
    e.options.solver = CLG_SOLVER_ADAM;
    e.options.initial_learn_rate = lr;
    e.options.mini_batch_size = 16;
    e.options.max_epochs = 2;
    e.options.seed = 4;
    e.options.verbose_frequency = 1;
    e.train = d;
    return e;
}

/* The same experiment trained alone with clg_train on the first context. */
static float *alone(const clg_experiment *e, size_t *n)
{
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx[0], e->net_text, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, e->init_seed), CLG_OK);
    CLG_ASSERT_STATUS(clg_train(net, e->train, e->val, &e->options, NULL), CLG_OK);
    float *w = clg_test_learnables(net, n);
    clg_net_destroy(net);
    return w;
}

static int events;

static int count_events(size_t index, const clg_train_progress *p, void *user)
{
    (void)p, (void)user;
    assert_true(index < 3);
    events++; /* calls are serialised: no lock needed here */
    return 0;
}

static void together_equals_alone(void **state)
{
    (void)state;
    clg_experiment e[2] = {experiment("a", net_a, 0.01f, data), experiment("b", net_b, 0.003f, data)};
    clg_experiment_result res[2];
    events = 0;
    CLG_ASSERT_STATUS(clg_experiments_run(ctx, 2, e, 2, count_events, NULL, res), CLG_OK);
    assert_true(events >= 2 * 12); /* every iteration of both */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(res[i].status, CLG_OK);
        assert_string_equal(res[i].name, i ? "b" : "a");
        assert_int_equal(res[i].report.iterations, 12);
        size_t n, m;
        float *w = clg_test_learnables(res[i].net, &n), *ref = alone(&e[i], &m);
        assert_int_equal(n, m);
        assert_memory_equal(w, ref, n * sizeof *w); /* same device kind, same kernels */
        free(w);
        free(ref);
        clg_net_destroy(res[i].net);
    }
    assert_true(res[0].device != res[1].device); /* two devices, two models: one each */
}

static void bad_model_fails_alone_and_more_models_than_devices(void **state)
{
    (void)state;
    clg_experiment e[3] = {experiment("ok1", net_a, 0.01f, data),
                           experiment("bad", net_b, -1.0f, data),
                           experiment("ok2", net_b, 0.01f, data)};
    clg_experiment broken = experiment("broken", "input 8x8x1\nconv 0x0\n", 0.01f, data);
    for (size_t nctx = 1; nctx <= 2; nctx++) {
        clg_experiment_result res[4];
        clg_experiment all[4] = {e[0], e[1], e[2], broken};
        CLG_ASSERT_STATUS(clg_experiments_run(ctx, nctx, all, 4, NULL, NULL, res), CLG_OK);
        /* statuses from the device threads: the thread-local last error is theirs */
        assert_int_equal(res[0].status, CLG_OK);
        assert_int_equal(res[2].status, CLG_OK);
        assert_int_equal(res[1].status, CLG_ERR_INVALID_ARG);
        assert_non_null(strstr(res[1].error, "initial_learn_rate"));
        assert_null(res[1].net);
        assert_int_not_equal(res[3].status, CLG_OK);
        assert_true(res[3].error[0] != '\0');
        for (int i = 0; i < 4; i++) {
            assert_true(res[i].device < nctx);
            clg_net_destroy(res[i].net);
        }
    }
    clg_experiment_result r;
    CLG_ASSERT_STATUS(clg_experiments_run(NULL, 1, e, 1, NULL, NULL, &r), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_experiments_run(ctx, 0, e, 1, NULL, NULL, &r), CLG_ERR_INVALID_ARG);
}

/* Three models (one augmenting its own way) on one image folder through a shared view:
 * every image decoded once per epoch, not three times. */
static void shared_folder_decoded_once(void **state)
{
    (void)state;
    char root[4200], p[4400];
    snprintf(root, sizeof root, "%s/folder", dir);
    mkdir(root, 0755);
    for (int c = 0; c < 4; c++) {
        snprintf(p, sizeof p, "%s/c%d", root, c);
        mkdir(p, 0755);
    }
    enum { N = 64 };
    for (int i = 0; i < N; i++) {
        unsigned char px[64];
        for (int k = 0; k < 64; k++)
            px[k] = (unsigned char)((k % 4 == i % 4) * 200 + (i * 7 + k) % 40);
        snprintf(p, sizeof p, "%s/c%d/%02d.png", root, i % 4, i);
        assert_true(stbi_write_png(p, 8, 8, 1, px, 8));
    }
    clg_datastore *folder, *shared, *aug;
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, NULL, &folder), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_shared(folder, 3, 0, &shared), CLG_OK);
    clg_augment_options ao = clg_augment_options_default();
    ao.reflection_x = 1;
    ao.seed = 3;
    CLG_ASSERT_STATUS(clg_datastore_augment(shared, &ao, &aug), CLG_OK);
    clg_exec_options background = clg_exec_options_default();
    background.dispatch_in_background = 1;
    clg_experiment e[3] = {experiment("a", net_a, 0.01f, shared),
                           experiment("b", net_b, 0.01f, shared),
                           experiment("c", net_a, 0.003f, aug)};
    for (int i = 0; i < 3; i++) {
        e[i].options.max_epochs = 1;
        e[i].options.mini_batch_size = 8;
        e[i].options.execution = i == 1 ? &background : NULL; /* reads from another thread too */
    }
    clg_experiment_result res[3];
    CLG_ASSERT_STATUS(clg_experiments_run(ctx, 2, e, 3, NULL, NULL, res), CLG_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(res[i].status, CLG_OK);
        clg_net_destroy(res[i].net);
    }
    printf("3 models, 1 epoch: %llu images decoded (the folder holds %d)\n",
           (unsigned long long)clg_datastore_decoded(folder), N);
    assert_int_equal(clg_datastore_decoded(folder), N);
    assert_int_equal(clg_datastore_decoded(shared), 3 * N); /* served */
    clg_datastore_destroy(aug);
    clg_datastore_destroy(shared);
    clg_datastore_destroy(folder);
    CLG_ASSERT_STATUS(clg_datastore_shared(NULL, 2, 0, &shared), CLG_ERR_INVALID_ARG);
}

static int setup(void **state)
{
    (void)state;
    dir = clg_test_tempdir("experiment");
    ctx[0] = clg_test_ctx(NULL);
    ctx[1] = clg_test_ctx(NULL);
    clg_test_rng rng;
    clg_test_rng_init(&rng, 8);
    for (size_t i = 0; i < 96; i++) {
        labels[i] = (int32_t)(i % 4);
        for (size_t k = 0; k < 64; k++)
            images[i * 64 + k] = (float)(k % 4 == (size_t)labels[i]) + clg_test_uniform(&rng, 0, 0.5f);
    }
    return ctx[0] && ctx[1] && clg_datastore_from_memory(images, labels, 96, (clg_shape){1, 1, 8, 8},
                                                         4, &data) == CLG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    clg_datastore_destroy(data);
    clg_ctx_destroy(ctx[0]);
    clg_ctx_destroy(ctx[1]);
    clg_test_rmtree(dir);
    free(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(together_equals_alone),
        cmocka_unit_test(bad_model_fails_alone_and_more_models_than_devices),
        cmocka_unit_test(shared_folder_decoded_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
