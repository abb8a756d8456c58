/* Out-of-memory sweep: a scenario is run again and again with the Nth host allocation, then the
 * Nth device buffer, made to fail, for every N until it runs through. Two scenarios: the ops
 * (devices, context and its cached programs, tensors, GEMM, convolution, pooling, a fully
 * connected layer, softmax), and training (a network parsed and initialised, two training
 * steps with a checkpoint, a model saved over an existing file and loaded back, a resume).
 * Every failure must come back as the right status with a message and leave nothing behind
 * (the sanitizer build checks for leaks), the model file saved before must still load, and
 * nothing may crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "runtime/runtime_internal.h"
#include "runtime/testing.h"

static clg_status scenario(void)
{
    clg_device_info *devs = NULL;
    size_t n = 0, npick = 0;
    clg_device_info *pick = NULL;
    clg_ctx *ctx = NULL;
    clg_tensor *t[7] = {NULL};
    float host[8 * 8 * 2];
    for (int i = 0; i < 128; i++)
        host[i] = (float)(i % 7) - 3.0f;
    clg_status st = clg_devices_list(&devs, &n);
    if (st == CLG_OK)
        st = clg_devices_select(devs, n, CLG_ENV_CPU, "", &pick, &npick);
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = getenv("CLGRAD_CACHE_DIR");
    if (st == CLG_OK)
        st = clg_ctx_create(&pick[0], &o, &ctx);
    const clg_shape shapes[7] = {{2, 1, 8, 8}, {3, 1, 3, 3}, {2, 3, 8, 8}, {2, 3, 4, 4}, {2, 48, 1, 1}, {48, 48, 1, 1},
                                 {48, 48, 1, 1}};
    for (int i = 0; i < 7 && st == CLG_OK; i++)
        st = clg_tensor_create(ctx, shapes[i], &t[i]);
    if (st == CLG_OK)
        st = clg_tensor_upload(t[0], host, 128);
    if (st == CLG_OK)
        st = clg_tensor_fill(t[1], 0.5f);
    clg_conv2d_desc cd = clg_conv2d_desc_default();
    cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
    cd.algo = CLG_CONV_ALGO_IM2COL;
    if (st == CLG_OK)
        st = clg_conv2d_forward(ctx, &cd, t[0], t[1], NULL, t[2]);
    clg_pool2d_desc pd = clg_pool2d_desc_default();
    if (st == CLG_OK)
        st = clg_pool2d_forward(ctx, &pd, t[2], t[3]);
    if (st == CLG_OK)
        st = clg_fc_forward(ctx, t[3], t[5], NULL, t[4]);
    int32_t labels[2] = {1, 40};
    double loss;
    if (st == CLG_OK)
        st = clg_softmax_xent_forward(ctx, t[4], labels, 2, NULL, &loss, NULL);
    clg_matrix m = {t[5], 0, 48}, out = {t[6], 0, 48};
    if (st == CLG_OK) /* large enough for the register-blocked kernel and its scratch */
        st = clg_sgemm(ctx, CLG_NO_TRANS, CLG_TRANS, 48, 48, 48, 1.0f, m, m, 0.0f, out);
    if (st == CLG_OK)
        st = clg_ctx_finish(ctx);
    if (st != CLG_OK && !clg_last_error()[0])
        fail_msg("%s without a message", clg_status_name(st));
    for (int i = 0; i < 7; i++)
        clg_tensor_destroy(t[i]);
    clg_ctx_destroy(ctx);
    clg_devices_free(pick, npick);
    clg_devices_free(devs, n);
    return st;
}

static char *dir, model[4096], ckdir[4096];

static clg_status training_scenario(void)
{
    clg_device_info *devs = NULL;
    size_t n = 0, npick = 0;
    clg_device_info *pick = NULL;
    clg_ctx *ctx = NULL;
    clg_net *net = NULL, *back = NULL, *resumed = NULL;
    clg_datastore *ds = NULL;
    float images[8 * 16];
    int32_t labels[8];
    for (int i = 0; i < 8 * 16; i++)
        images[i] = (float)(i % 5) * 0.25f;
    for (int i = 0; i < 8; i++)
        labels[i] = i % 2;
    clg_status st = clg_devices_list(&devs, &n);
    if (st == CLG_OK)
        st = clg_devices_select(devs, n, CLG_ENV_CPU, "", &pick, &npick);
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = getenv("CLGRAD_CACHE_DIR");
    if (st == CLG_OK)
        st = clg_ctx_create(&pick[0], &o, &ctx);
    if (st == CLG_OK)
        st = clg_datastore_from_memory(images, labels, 8, (clg_shape){1, 1, 4, 4}, 2, &ds);
    if (st == CLG_OK)
        st = clg_net_parse(ctx, "input 4x4x1\nconv 3x3x2 pad=1\nbatchnorm\nrelu\nmaxpool 2x2\n"
                                "dropout 0.5\nfc 2\nsoftmax\n", &net);
    if (st == CLG_OK)
        st = clg_net_init(net, 3);
    clg_train_options t = clg_train_options_default();
    t.solver = CLG_SOLVER_ADAM;
    t.mini_batch_size = 4;
    t.max_epochs = 1;
    t.checkpoint_path = ckdir;
    t.gradient_threshold = 0.5f;
    if (st == CLG_OK)
        st = clg_train(net, ds, ds, &t, NULL);
    if (st == CLG_OK)
        st = clg_net_save(net, model);
    if (st == CLG_OK)
        st = clg_net_load(ctx, model, &back);
    t.max_epochs = 2;
    t.checkpoint_path = NULL;
    if (st == CLG_OK)
        st = clg_train_resume(ctx, ckdir, ds, NULL, &t, &resumed, NULL);
    if (st != CLG_OK && !clg_last_error()[0])
        fail_msg("%s without a message", clg_status_name(st));
    clg_net_destroy(resumed);
    clg_net_destroy(back);
    clg_net_destroy(net);
    clg_datastore_destroy(ds);
    clg_ctx_destroy(ctx);
    clg_devices_free(pick, npick);
    clg_devices_free(devs, n);
    return st;
}

/* The model file saved before the sweep (or by a run that got through) must load whatever
 * failed since: a failed save never harms the file already there. */
static void model_still_loads(void)
{
    clg_ctx *ctx = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
    clg_net *net = NULL;
    CLG_ASSERT_STATUS(clg_net_load(ctx, model, &net), CLG_OK);
    clg_net_destroy(net);
    clg_test_fixture_teardown(ctx);
}

static void sweep_scenario(clg_status (*run)(void), int device, const char *name, long min)
{
    long last = 0;
    for (long at = 1; at < 100000; at++) {
        clg__fault_inject(device ? 0 : at, device ? at : 0);
        clg_status st = run();
        long host, dev;
        clg__fault_counts(&host, &dev);
        clg__fault_inject(0, 0);
        clg_status want = device ? CLG_ERR_OUT_OF_DEVICE_MEMORY : CLG_ERR_OUT_OF_HOST_MEMORY;
        if (st != CLG_OK && st != want)
            fail_msg("%s: %s allocation %ld: %s (%s), expected %s", name, device ? "device" : "host",
                     at, clg_status_name(st), clg_last_error(), clg_status_name(want));
        if (run == training_scenario)
            model_still_loads();
        if ((device ? dev : host) < at) { /* the failure point lies past the scenario: done */
            assert_int_equal(st, CLG_OK);
            last = at;
            break;
        }
    }
    print_message("%s: %s allocations swept: %ld\n", name, device ? "device" : "host", last - 1);
    assert_true(last > min); /* the scenario really allocates */
}

static void sweep(int device)
{
    long last = 0;
    for (long at = 1; at < 100000; at++) {
        clg__fault_inject(device ? 0 : at, device ? at : 0);
        clg_status st = scenario();
        long host, dev;
        clg__fault_counts(&host, &dev);
        clg__fault_inject(0, 0);
        clg_status want = device ? CLG_ERR_OUT_OF_DEVICE_MEMORY : CLG_ERR_OUT_OF_HOST_MEMORY;
        if (st != CLG_OK && st != want)
            fail_msg("%s allocation %ld: %s (%s), expected %s", device ? "device" : "host", at,
                     clg_status_name(st), clg_last_error(), clg_status_name(want));
        if ((device ? dev : host) < at) { /* the failure point lies past the scenario: done */
            assert_int_equal(st, CLG_OK);
            last = at;
            break;
        }
    }
    print_message("%s allocations swept: %ld\n", device ? "device" : "host", last - 1);
    assert_true(last > (device ? 3 : 20)); /* the scenario really allocates */
}

static void every_host_allocation_can_fail(void **state)
{
    (void)state;
    sweep(0);
}

static void every_device_buffer_can_fail(void **state)
{
    (void)state;
    sweep(1);
}

static void every_allocation_of_training_can_fail(void **state)
{
    (void)state;
    dir = clg_test_tempdir("faults");
    snprintf(model, sizeof model, "%s/model.clgm", dir);
    snprintf(ckdir, sizeof ckdir, "%s/ck", dir);
    clg__fault_inject(0, 0);
    CLG_ASSERT_STATUS(training_scenario(), CLG_OK); /* the file a failed save must not harm */
    sweep_scenario(training_scenario, 0, "training", 100);
    sweep_scenario(training_scenario, 1, "training", 10);
    clg_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    /* Program binaries even on POCL: the sweeps make hundreds of contexts, and a binary loads
     * in milliseconds where POCL's own cache preprocesses each source again (~50 ms). */
    clg__testing_set_bincache_always(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_host_allocation_can_fail),
        cmocka_unit_test(every_device_buffer_can_fail),
        cmocka_unit_test(every_allocation_of_training_can_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
