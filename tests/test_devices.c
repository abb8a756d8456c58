/* Discovery on the real POCL devices (1 or 2, from CLG_TEST_EXPECT_DEVICES), environments and
 * filters on synthetic device lists, and CPU sub-devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CL/cl.h>
#include "common/testutil.h"

static void listing_matches_the_machine(void **state)
{
    (void)state;
    clg_device_info *list;
    size_t n;
    CLG_ASSERT_STATUS(clg_devices_list(&list, &n), CLG_OK);
    const char *expect = getenv("CLG_TEST_EXPECT_DEVICES");
    if (expect)
        assert_int_equal(n, strtoul(expect, NULL, 10));
    for (size_t i = 0; i < n; i++) {
        const clg_device_info *d = &list[i];
        assert_int_equal(d->index, i);
        assert_true(d->name[0] && d->vendor[0] && d->platform[0] && d->version[0]);
        assert_true(d->driver_version[0]);
        assert_true(d->compute_units >= 1);
        assert_true(d->global_mem_bytes > 0 && d->max_alloc_bytes > 0);
        assert_true(d->max_alloc_bytes <= d->global_mem_bytes);
        assert_true(d->local_mem_bytes > 0 && d->max_work_group_size >= 1);
        assert_true(d->vec_width_float >= 1);
        assert_false(d->is_subdevice);
        assert_non_null(d->cl_device);
    }
    clg_device_info *chosen;
    size_t count;
    CLG_ASSERT_STATUS(clg_devices_select(list, n, CLG_ENV_CPU, "", &chosen, &count), CLG_OK);
    assert_int_equal(count, n); /* all POCL devices share one platform */
    clg_devices_free(chosen, count);
    CLG_ASSERT_STATUS(clg_devices_select(list, n, CLG_ENV_GPU, "", &chosen, &count), CLG_ERR_NO_DEVICE);
    assert_null(chosen);
    assert_non_null(strstr(clg_last_error(), list[0].name));
    clg_devices_free(list, n);
    CLG_ASSERT_STATUS(clg_devices_list(NULL, &n), CLG_ERR_INVALID_ARG);
}

static void env_names_round_trip(void **state)
{
    (void)state;
    for (int e = CLG_ENV_AUTO; e <= CLG_ENV_PARALLEL; e++) {
        clg_exec_env back;
        CLG_ASSERT_STATUS(clg_exec_env_parse(clg_exec_env_name((clg_exec_env)e), &back), CLG_OK);
        assert_int_equal(back, e);
    }
    clg_exec_env env;
    CLG_ASSERT_STATUS(clg_exec_env_parse("Multi-GPU", &env), CLG_OK);
    assert_int_equal(env, CLG_ENV_MULTI_GPU);
    CLG_ASSERT_STATUS(clg_exec_env_parse("gpus", &env), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "multi-gpu"));
    assert_string_equal(clg_exec_env_name((clg_exec_env)42), "unknown");
}

/* A machine with two CPU runtimes, two GPUs of different vendors and an accelerator. */
static void fake_machine(clg_device_info d[6])
{
    static const struct {
        clg_device_type type;
        size_t platform;
        const char *vendor, *name;
        unsigned cus, mhz;
    } rows[6] = {
        {CLG_DEVICE_CPU, 0, "GenuineIntel", "Intel Xeon", 16, 2400},
        {CLG_DEVICE_GPU, 1, "NVIDIA Corporation", "GeForce RTX 3060", 28, 1800},
        {CLG_DEVICE_GPU, 2, "Advanced Micro Devices", "Radeon RX 7900", 96, 2500},
        {CLG_DEVICE_CPU, 3, "GenuineIntel", "pthread-Intel Xeon", 16, 2400},
        {CLG_DEVICE_ACCELERATOR, 4, "Xilinx", "FPGA card", 1, 300},
        {CLG_DEVICE_CPU, 0, "GenuineIntel", "Intel Xeon (second)", 16, 2400},
    };
    memset(d, 0, 6 * sizeof *d);
    for (size_t i = 0; i < 6; i++) {
        d[i].index = i;
        d[i].type = rows[i].type;
        d[i].platform_index = rows[i].platform;
        snprintf(d[i].platform, CLG_INFO_TEXT, "platform %zu", rows[i].platform);
        snprintf(d[i].vendor, CLG_INFO_TEXT, "%s", rows[i].vendor);
        snprintf(d[i].name, CLG_INFO_TEXT, "%s", rows[i].name);
        d[i].compute_units = rows[i].cus;
        d[i].clock_mhz = rows[i].mhz;
    }
}

/* Selects and compares with an expected list written as "1,2" ("" for an error). */
static void expect_pick(const clg_device_info *d, size_t n, clg_exec_env env, const char *filter,
                        const char *expected)
{
    clg_device_info *chosen = NULL;
    size_t count = 0;
    clg_status st = clg_devices_select(d, n, env, filter, &chosen, &count);
    char got[64] = "";
    for (size_t i = 0; i < count; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", i ? "," : "", chosen[i].index);
    clg_devices_free(chosen, count);
    if (strcmp(got, expected) != 0 || (st == CLG_OK) != (expected[0] != '\0'))
        fail_msg("env %s filter \"%s\": got [%s] (%s), expected [%s]", clg_exec_env_name(env),
                 filter ? filter : "(env)", got, clg_status_name(st), expected);
}

static void environments_resolve_as_designed(void **state)
{
    (void)state;
    clg_device_info d[6];
    fake_machine(d);
    expect_pick(d, 6, CLG_ENV_AUTO, "", "1,2");
    expect_pick(d, 6, CLG_ENV_PARALLEL, "", "1,2");
    expect_pick(d, 6, CLG_ENV_MULTI_GPU, "", "1,2");
    expect_pick(d, 6, CLG_ENV_GPU, "", "2");          /* the fastest GPU */
    expect_pick(d, 6, CLG_ENV_CPU, "", "0,5");        /* one platform's CPUs, not both runtimes */
    expect_pick(d, 3, CLG_ENV_AUTO, "cpu", "0");      /* no GPU left: the CPU */
    expect_pick(d, 1, CLG_ENV_AUTO, "", "0");
    expect_pick(d, 1, CLG_ENV_MULTI_GPU, "", "");
}

static void filters_select_by_index_type_vendor_and_name(void **state)
{
    (void)state;
    clg_device_info d[6];
    fake_machine(d);
    expect_pick(d, 6, CLG_ENV_GPU, "1", "1");
    expect_pick(d, 6, CLG_ENV_AUTO, "nvidia", "1");
    expect_pick(d, 6, CLG_ENV_AUTO, "RADEON", "2");
    expect_pick(d, 6, CLG_ENV_MULTI_GPU, "0-1", "1");
    expect_pick(d, 6, CLG_ENV_AUTO, " 1 , 2 ", "1,2");
    expect_pick(d, 6, CLG_ENV_CPU, "pthread", "3");
    expect_pick(d, 6, CLG_ENV_CPU, "cpu", "0,5");     /* a type names no device: one platform */
    expect_pick(d, 6, CLG_ENV_CPU, "Xeon", "0,5");    /* nor does a name */
    /* devices named by index are all used, whatever their platforms and types */
    expect_pick(d, 6, CLG_ENV_CPU, "3,5", "3,5");
    expect_pick(d, 6, CLG_ENV_CPU, "0-5", "0,3,5");
    expect_pick(d, 6, CLG_ENV_AUTO, "0,3", "0,3");
    expect_pick(d, 6, CLG_ENV_AUTO, "1,3", "1,3");
    expect_pick(d, 6, CLG_ENV_PARALLEL, "0,2", "0,2");
    expect_pick(d, 6, CLG_ENV_GPU, "0-2", "2");
    expect_pick(d, 6, CLG_ENV_CPU, "gpu", "");
    expect_pick(d, 6, CLG_ENV_AUTO, "platform 2", "2");
    expect_pick(d, 6, CLG_ENV_AUTO, "fpga", "4");         /* only an accelerator left */
    expect_pick(d, 6, CLG_ENV_CPU, "fpga", "");
    expect_pick(d, 6, CLG_ENV_GPU, "accelerator", "");

    clg_device_info *idx;
    size_t count;
    CLG_ASSERT_STATUS(clg_devices_select(d, 6, CLG_ENV_AUTO, "tpu", &idx, &count), CLG_ERR_NO_DEVICE);
    /* The message lists what exists. */
    assert_non_null(strstr(clg_last_error(), "GeForce RTX 3060"));
    assert_non_null(strstr(clg_last_error(), "FPGA card"));
    assert_non_null(strstr(clg_last_error(), "tpu"));
    CLG_ASSERT_STATUS(clg_devices_select(d, 6, CLG_ENV_AUTO, "6", &idx, &count), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "0-5"));
    CLG_ASSERT_STATUS(clg_devices_select(d, 6, CLG_ENV_AUTO, "3-1", &idx, &count), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_devices_select(d, 6, CLG_ENV_AUTO, " , ", &idx, &count), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_devices_select(d, 6, (clg_exec_env)9, "", &idx, &count), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_devices_select(NULL, 0, CLG_ENV_AUTO, "", &idx, &count), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_devices_select(d, 6, CLG_ENV_AUTO, "", NULL, &count), CLG_ERR_INVALID_ARG);
}

static void filter_comes_from_the_environment(void **state)
{
    (void)state;
    clg_device_info d[6];
    fake_machine(d);
    setenv("CLGRAD_DEVICES", "nvidia", 1);
    expect_pick(d, 6, CLG_ENV_AUTO, NULL, "1");
    expect_pick(d, 6, CLG_ENV_AUTO, "", "1,2"); /* an explicit empty filter overrides it */
    setenv("CLGRAD_DEVICES", "", 1);
    expect_pick(d, 6, CLG_ENV_AUTO, NULL, "1,2");
    unsetenv("CLGRAD_DEVICES");
}

static clg_status fill_and_check(const clg_device_info *dev, float value)
{
    clg_ctx *ctx;
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = "off";
    clg_status st = clg_ctx_create(dev, &o, &ctx);
    if (st != CLG_OK)
        return st;
    clg_shape s = {3, 1, 5, 7};
    clg_tensor *t;
    float host[105];
    st = clg_tensor_create(ctx, s, &t);
    if (st == CLG_OK)
        st = clg_tensor_fill(t, value);
    if (st == CLG_OK)
        st = clg_tensor_download(t, host, 105);
    for (size_t i = 0; st == CLG_OK && i < 105; i++)
        if (host[i] != value)
            st = CLG_ERR_INTERNAL;
    assert_string_equal(clg_ctx_device(ctx)->name, dev->name);
    clg_tensor_destroy(t);
    clg_ctx_destroy(ctx);
    return st;
}

static void cpu_splits_into_working_subdevices(void **state)
{
    (void)state;
    const clg_device_info *cpu = clg_test_device();
    if (cpu->compute_units < 2)
        skip();
    clg_device_info *subs;
    CLG_ASSERT_STATUS(clg_device_split(cpu, 2, 0, &subs), CLG_OK);
    for (int i = 0; i < 2; i++) {
        assert_true(subs[i].is_subdevice);
        assert_int_equal(subs[i].parent_index, cpu->index);
        assert_int_equal(subs[i].compute_units, cpu->compute_units / 2);
        assert_string_equal(subs[i].name, cpu->name);
        CLG_ASSERT_STATUS(fill_and_check(&subs[i], 1.5f + (float)i), CLG_OK);
    }
    /* Sub-devices work with the selection logic too. */
    clg_device_info *chosen;
    size_t count;
    CLG_ASSERT_STATUS(clg_devices_select(subs, 2, CLG_ENV_CPU, "", &chosen, &count), CLG_OK);
    assert_int_equal(count, 2);
    clg_devices_free(subs, 2);
    /* the selection holds its own reference to each sub-device: usable after the list */
    CLG_ASSERT_STATUS(fill_and_check(&chosen[1], 2.5f), CLG_OK);
    clg_devices_free(chosen, count);

    CLG_ASSERT_STATUS(clg_device_split(cpu, 1, 1, &subs), CLG_OK);
    assert_int_equal(subs[0].compute_units, 1);
    clg_devices_free(subs, 1);
    CLG_ASSERT_STATUS(clg_device_split(cpu, 0, 0, &subs), CLG_ERR_INVALID_ARG);
    assert_null(subs);
    CLG_ASSERT_STATUS(clg_device_split(cpu, cpu->compute_units + 1, 0, &subs), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_device_split(cpu, 2, cpu->compute_units, &subs), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_device_split(NULL, 2, 0, &subs), CLG_ERR_INVALID_ARG);
}

static void profiling_is_on_only_when_asked(void **state)
{
    (void)state;
    for (int on = 0; on < 2; on++) {
        clg_ctx_options o = clg_ctx_options_default();
        o.profiling = on;
        o.cache_dir = "off";
        clg_ctx *c;
        CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &o, &c), CLG_OK);
        cl_command_queue_properties props = 0;
        assert_int_equal(clGetCommandQueueInfo((cl_command_queue)clg_ctx_cl_queue(c), CL_QUEUE_PROPERTIES,
                                               sizeof props, &props, NULL), CL_SUCCESS);
        assert_int_equal((props & CL_QUEUE_PROFILING_ENABLE) != 0, on);
        assert_int_equal(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0); /* in order */
        clg_ctx_destroy(c);
    }
}

/* A context on the CPU under `decisions` (the environment's CLGRAD_GPU_PROFILE set to env,
 * NULL: unset): whether it decides as a GPU, its GEMM kernel and its algorithm for a 3x3
 * convolution with 32 channels in and out (Winograd on a CPU, implicit GEMM on a GPU). */
static void decides(clg_decisions decisions, const char *env, int *as_gpu,
                    clg_gemm_kernel *kernel, clg_conv_algo *algo)
{
    if (env)
        setenv("CLGRAD_GPU_PROFILE", env, 1);
    else
        unsetenv("CLGRAD_GPU_PROFILE");
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = "off";
    o.decisions = decisions;
    clg_ctx *c;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &o, &c), CLG_OK);
    *as_gpu = clg_ctx_decides_as_gpu(c);
    clg_gemm_params p;
    CLG_ASSERT_STATUS(clg_gemm_get_params(c, &p), CLG_OK);
    *kernel = p.kernel;
    clg_conv2d_desc d = clg_conv2d_desc_default();
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    CLG_ASSERT_STATUS(clg_conv2d_choose(c, &d, CLG_CONV_FWD, (clg_shape){8, 32, 14, 14},
                                        (clg_shape){32, 32, 3, 3}, algo), CLG_OK);
    clg_ctx_destroy(c);
}

static void gpu_profile_takes_the_gpu_choices(void **state)
{
    (void)state;
    if (clg_test_device()->type != CLG_DEVICE_CPU)
        skip(); /* a GPU decides as one with either setting */
    const char *saved = getenv("CLGRAD_GPU_PROFILE"); /* CI runs the suite with it set */
    char *keep = saved ? strdup(saved) : NULL;
    int gpu;
    clg_gemm_kernel k;
    clg_conv_algo a;
    decides(CLG_DECIDE_AUTO, NULL, &gpu, &k, &a);
    assert_int_equal(gpu, 0);
    assert_int_equal(k, CLG_GEMM_KERNEL_REG);
    assert_int_equal(a, CLG_CONV_ALGO_WINOGRAD);
    decides(CLG_DECIDE_AS_GPU, NULL, &gpu, &k, &a);
    assert_int_equal(gpu, 1);
    assert_int_equal(k, CLG_GEMM_KERNEL_LOCAL);
    assert_int_equal(a, CLG_CONV_ALGO_WINOGRAD); /* 32 channels: products on the GEMM tiles */
    decides(CLG_DECIDE_AUTO, "1", &gpu, &k, &a);
    assert_int_equal(gpu, 1);
    assert_int_equal(k, CLG_GEMM_KERNEL_LOCAL);
    decides(CLG_DECIDE_BY_TYPE, "1", &gpu, &k, &a); /* the option wins over the variable */
    assert_int_equal(gpu, 0);
    assert_int_equal(k, CLG_GEMM_KERNEL_REG);
    decides(CLG_DECIDE_AUTO, "0", &gpu, &k, &a);
    assert_int_equal(gpu, 0);
    setenv("CLGRAD_GPU_PROFILE", "yes", 1);
    clg_ctx *c = NULL;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), NULL, &c), CLG_ERR_INVALID_ARG);
    assert_null(c);
    assert_non_null(strstr(clg_last_error(), "CLGRAD_GPU_PROFILE=yes"));
    if (keep)
        setenv("CLGRAD_GPU_PROFILE", keep, 1);
    else
        unsetenv("CLGRAD_GPU_PROFILE");
    free(keep);
}

static void every_listed_device_runs_a_kernel(void **state)
{
    (void)state;
    clg_device_info *list;
    size_t n;
    CLG_ASSERT_STATUS(clg_devices_list(&list, &n), CLG_OK);
    for (size_t i = 0; i < n; i++)
        CLG_ASSERT_STATUS(fill_and_check(&list[i], -2.25f), CLG_OK);
    clg_devices_free(list, n);
    clg_ctx *ctx = (clg_ctx *)1;
    CLG_ASSERT_STATUS(clg_ctx_create(NULL, NULL, &ctx), CLG_ERR_INVALID_ARG);
    assert_null(ctx);
}

int main(void)
{
    clg_test_skip_unless_pocl();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listing_matches_the_machine),
        cmocka_unit_test(env_names_round_trip),
        cmocka_unit_test(environments_resolve_as_designed),
        cmocka_unit_test(filters_select_by_index_type_vendor_and_name),
        cmocka_unit_test(filter_comes_from_the_environment),
        cmocka_unit_test(cpu_splits_into_working_subdevices),
        cmocka_unit_test(every_listed_device_runs_a_kernel),
        cmocka_unit_test(profiling_is_on_only_when_asked),
        cmocka_unit_test(gpu_profile_takes_the_gpu_choices),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clg_test_devices_release();
    return rc;
}
