/* Out-of-memory sweep: a scenario (devices, context and its cached programs, tensors, GEMM,
 * convolution, pooling, a fully connected layer, softmax) is run again and again with the Nth host allocation, then the
 * Nth device buffer, made to fail, for every N until it runs through. Every failure must come
 * back as the right status with a message and leave nothing behind (the sanitizer build checks
 * for leaks); nothing may crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "runtime/runtime_internal.h"

static clg_status scenario(void)
{
    clg_device_info *devs = NULL;
    size_t n = 0, *pick = NULL, npick = 0;
    clg_ctx *ctx = NULL;
    clg_tensor *t[6] = {NULL};
    float host[8 * 8 * 2];
    for (int i = 0; i < 128; i++)
        host[i] = (float)(i % 7) - 3.0f;
    clg_status st = clg_devices_list(&devs, &n);
    if (st == CLG_OK)
        st = clg_devices_select(devs, n, CLG_ENV_CPU, "", &pick, &npick);
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = getenv("CLGRAD_CACHE_DIR");
    if (st == CLG_OK)
        st = clg_ctx_create(&devs[pick[0]], &o, &ctx);
    const clg_shape shapes[6] = {{2, 1, 8, 8}, {3, 1, 3, 3}, {2, 3, 8, 8}, {2, 3, 4, 4}, {2, 48, 1, 1}, {48, 48, 1, 1}};
    for (int i = 0; i < 6 && st == CLG_OK; i++)
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
    clg_matrix m = {t[5], 0, 48};
    if (st == CLG_OK) /* large enough for the register-blocked kernel and its scratch */
        st = clg_sgemm(ctx, CLG_NO_TRANS, CLG_TRANS, 48, 48, 48, 1.0f, m, m, 0.0f, m);
    if (st == CLG_OK)
        st = clg_ctx_finish(ctx);
    if (st != CLG_OK && !clg_last_error()[0])
        fail_msg("%s without a message", clg_status_name(st));
    for (int i = 0; i < 6; i++)
        clg_tensor_destroy(t[i]);
    clg_ctx_destroy(ctx);
    free(pick);
    clg_devices_free(devs, n);
    return st;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_host_allocation_can_fail),
        cmocka_unit_test(every_device_buffer_can_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
