/* Every public function with NULL handles and pointers: each returns its documented error with
 * a message (or, for destroy/free/getters, does nothing harmful). The table must name every
 * CLG_API function in include/clgrad/ (argv[1]): a new function without an entry fails here. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"

#define BAD(call) CLG_ASSERT_STATUS(call, CLG_ERR_INVALID_ARG)

static clg_ctx *ctx;

static void p_status(void) { assert_non_null(clg_status_name((clg_status)-99)); assert_non_null(clg_last_error()); assert_non_null(clg_version()); }
static void p_devices(void)
{
    size_t n;
    clg_device_info *idx;
    clg_device_info *out;
    BAD(clg_devices_list(NULL, NULL));
    clg_devices_free(NULL, 3);
    BAD(clg_devices_select(NULL, 0, CLG_ENV_AUTO, NULL, &idx, &n));
    BAD(clg_device_split(NULL, 2, 0, &out));
    BAD(clg_device_split(clg_test_device(), 2, 0, NULL));
    BAD(clg_exec_env_parse(NULL, NULL));
    assert_non_null(clg_exec_env_name((clg_exec_env)-1));
    assert_non_null(clg_device_type_name((clg_device_type)0));
    clg_cpu_class c;
    BAD(clg_device_cpu_class(NULL, &c));
    BAD(clg_device_cpu_class(clg_test_device(), NULL));
    BAD(clg_cpu_class_parse(NULL, &c));
    BAD(clg_cpu_class_parse("avx2", NULL));
    assert_string_equal(clg_cpu_class_name((clg_cpu_class)99), "unknown");
}
static void p_ctx(void)
{
    clg_ctx *c;
    clg_ctx_stats s;
    BAD(clg_ctx_create(NULL, NULL, &c));
    BAD(clg_ctx_create(clg_test_device(), NULL, NULL));
    clg_ctx_destroy(NULL);
    assert_non_null(clg_ctx_last_error(NULL));
    assert_null(clg_ctx_device(NULL));
    assert_null(clg_ctx_cache_dir(NULL));
    assert_null(clg_ctx_cl_queue(NULL));
    BAD(clg_ctx_finish(NULL));
    BAD(clg_ctx_get_stats(NULL, &s));
    BAD(clg_ctx_get_stats(ctx, NULL));
    BAD(clg_ctx_warm_up(NULL));
    clg_kernel_time kt;
    BAD(clg_ctx_kernel_times(NULL, &kt, 1, NULL, 0));
    BAD(clg_ctx_kernel_times(ctx, NULL, 1, NULL, 0));
    clg_ctx_options o = clg_ctx_options_default();
    assert_int_equal(o.profiling, 0);
    assert_int_equal(o.decisions, CLG_DECIDE_AUTO);
    assert_int_equal(clg_ctx_decides_as_gpu(NULL), 0);
    clg_ctx *made = NULL;
    o.decisions = (clg_decisions)7;
    BAD(clg_ctx_create(clg_ctx_device(ctx), &o, &made));
    assert_null(made);
    /* struct_size: one this library does not know is refused; an older caller's (a shorter
     * struct) gets the defaults for what it lacks */
    o = clg_ctx_options_default();
    o.struct_size = sizeof o + 4;
    BAD(clg_ctx_create(clg_ctx_device(ctx), &o, &made));
    assert_non_null(strstr(clg_last_error(), "struct_size"));
    o.struct_size = offsetof(clg_ctx_options, decisions);
    o.decisions = (clg_decisions)7; /* beyond the caller's struct: not read */
    CLG_ASSERT_STATUS(clg_ctx_create(clg_ctx_device(ctx), &o, &made), CLG_OK);
    clg_ctx_destroy(made);
}
static void p_tensor(void)
{
    clg_tensor *t;
    size_t off = 7;
    float f[4];
    BAD(clg_tensor_create(NULL, (clg_shape){1, 1, 1, 1}, &t));
    BAD(clg_tensor_create(ctx, (clg_shape){0, 1, 1, 1}, &t));
    clg_tensor_destroy(NULL);
    assert_int_equal(clg_tensor_numel(NULL), 0);
    assert_int_equal(clg_tensor_shape(NULL).n, 0);
    assert_int_equal(clg_shape_numel((clg_shape){2, 0, 3, 3}), 0);
    assert_null(clg_tensor_ctx(NULL));
    assert_null(clg_tensor_cl_buffer(NULL, &off));
    assert_int_equal(off, 0);
    BAD(clg_tensor_upload(NULL, f, 4));
    BAD(clg_tensor_download(NULL, f, 4));
    BAD(clg_tensor_fill(NULL, 0));
    BAD(clg_tensor_copy(NULL, NULL));
    BAD(clg_tensor_view_batch(NULL, 0, 1, &t));
}
static void p_gemm(void)
{
    clg_matrix m = {NULL, 0, 1};
    clg_gemm_params p;
    clg_gemm_backend b[3] = {CLG_GEMM_BUILTIN, CLG_GEMM_BUILTIN, CLG_GEMM_BUILTIN}, one;
    BAD(clg_sgemm(NULL, CLG_NO_TRANS, CLG_NO_TRANS, 1, 1, 1, 1, m, m, 0, m));
    BAD(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 1, 1, 1, 1, m, m, 0, m));
    BAD(clg_sgemm_batched(NULL, CLG_NO_TRANS, CLG_NO_TRANS, 1, 1, 1, 1, m, 0, m, 0, 0, m, 0, 1));
    BAD(clg_gemm_set_backend(NULL, CLG_GEMM_AUTO));
    BAD(clg_gemm_get_backend(NULL, &one));
    BAD(clg_gemm_get_params(NULL, &p));
    BAD(clg_gemm_get_params(ctx, NULL));
    BAD(clg_gemm_set_params(NULL, &p));
    BAD(clg_gemm_set_params(ctx, NULL));
    clg_gemm_params foreign = clg_gemm_params_default(clg_ctx_device(ctx)); /* a struct_size */
    foreign.struct_size = 0;                                                  /* not the library's: refused */
    BAD(clg_gemm_set_params(ctx, &foreign));
    BAD(clg_gemm_save_tuning(NULL, &p, b));
    BAD(clg_gemm_save_tuning(ctx, NULL, b));
    p = clg_gemm_params_default(NULL);
    BAD(clg_gemm_params_set_field(NULL, "mr", "4"));
    BAD(clg_gemm_params_set_field(&p, NULL, "4"));
    BAD(clg_gemm_params_set_field(&p, "mr", NULL));
    BAD(clg_gemm_params_set_field(&p, "mr", "four"));
    assert_int_equal(clg_gemm_params_print(NULL, "=", ",", NULL, 0), -1);
    assert_int_equal(clg_gemm_params_print(&p, NULL, ",", NULL, 0), -1);
    char small[8];
    assert_true(clg_gemm_params_print(&p, "=", ",", small, sizeof small) > (int)sizeof small);
    assert_int_equal(small[7], '\0'); /* cut like snprintf */
    assert_true(p.mr >= 1);
    assert_int_equal(clg_gemm_classify(1, 1, 1, 1), CLG_GEMM_CLASS_SMALL);
    assert_true(clg_gemm_has_clblast() == 0 || clg_gemm_has_clblast() == 1);
    double score;
    clg_tune_options o = clg_tune_options_default();
    assert_int_equal(o.level, CLG_TUNE_QUICK);
    BAD(clg_gemm_tune_score(NULL, &p, 1, &score));
    BAD(clg_gemm_tune_score(ctx, NULL, 1, &score));
    BAD(clg_gemm_tune_score(ctx, &p, 1, NULL));
    BAD(clg_gemm_tune(NULL, &o, &p, &score));
    BAD(clg_gemm_tune_if_wanted(NULL));
    BAD(clg_gemm_tune(ctx, &o, NULL, &score));
    BAD(clg_conv_tune_score(NULL, &p, 1, &score));
    BAD(clg_conv_tune_score(ctx, &p, 99, &score));
    BAD(clg_conv_tune(ctx, &o, &p, NULL));
    BAD(clg_gemm_tune_compare(ctx, &p, NULL, 1, &score));
    BAD(clg_gemm_tune_compare(ctx, &p, &p, 0, &score));
    BAD(clg_conv_tune_compare(NULL, &p, &p, 1, &score));
    BAD(clg_conv_tune_compare(ctx, &p, &p, 1, NULL));
}
static void p_conv(void)
{
    clg_conv2d_desc d = clg_conv2d_desc_default();
    clg_shape s = {1, 1, 1, 1};
    size_t lo, hi;
    clg_conv_algo a;
    BAD(clg_conv2d_output_shape(NULL, s, s, &s));
    BAD(clg_conv2d_output_shape(&d, s, s, NULL));
    BAD(clg_conv2d_forward(NULL, &d, NULL, NULL, NULL, NULL));
    BAD(clg_conv2d_forward(ctx, &d, NULL, NULL, NULL, NULL));
    BAD(clg_conv2d_backward_data(ctx, &d, NULL, NULL, NULL));
    BAD(clg_conv2d_backward_weights(ctx, &d, NULL, NULL, NULL));
    BAD(clg_conv2d_backward_weights_bias(ctx, &d, NULL, NULL, NULL, NULL));
    BAD(clg_conv2d_backward_bias(ctx, NULL, NULL));
    BAD(clg_conv2d_workspace(NULL, &d, CLG_CONV_FWD, CLG_CONV_ALGO_IM2COL, s, s, &lo, &hi));
    BAD(clg_conv2d_workspace(ctx, NULL, CLG_CONV_FWD, CLG_CONV_ALGO_IM2COL, s, s, &lo, &hi));
    BAD(clg_conv2d_choose(NULL, &d, CLG_CONV_FWD, s, s, &a));
    BAD(clg_conv2d_choose(ctx, NULL, CLG_CONV_FWD, s, s, &a));
    assert_non_null(clg_conv_algo_name((clg_conv_algo)42));
}
static void p_pool(void)
{
    clg_pool2d_desc d = clg_pool2d_desc_default();
    clg_shape s = {1, 1, 2, 2};
    BAD(clg_pool2d_output_shape(NULL, s, &s));
    BAD(clg_pool2d_output_shape(&d, s, NULL));
    BAD(clg_pool2d_forward(NULL, &d, NULL, NULL));
    BAD(clg_pool2d_forward(ctx, NULL, NULL, NULL));
    BAD(clg_pool2d_backward(ctx, &d, NULL, NULL, NULL));
    BAD(clg_global_avg_pool_forward(ctx, NULL, NULL));
    BAD(clg_global_avg_pool_backward(ctx, NULL, NULL));
    clg_pad2d_desc pd = clg_pad2d_desc_default();
    BAD(clg_pad2d_output_shape(NULL, s, &s));
    BAD(clg_pad2d_output_shape(&pd, s, NULL));
    BAD(clg_pad2d_forward(NULL, &pd, NULL, NULL));
    BAD(clg_pad2d_forward(ctx, NULL, NULL, NULL));
    BAD(clg_pad2d_backward(ctx, &pd, NULL, NULL));
    BAD(clg_upsample_forward(ctx, CLG_UPSAMPLE_NEAREST, 2, 2, NULL, NULL));
    BAD(clg_upsample_backward(NULL, CLG_UPSAMPLE_BILINEAR, 2, 2, NULL, NULL));
}
static void p_elementwise(void)
{
    int32_t label = 0;
    BAD(clg_activation_forward(NULL, CLG_ACT_RELU, 0, NULL, NULL));
    BAD(clg_activation_forward(ctx, CLG_ACT_RELU, 0, NULL, NULL));
    BAD(clg_activation_backward(ctx, CLG_ACT_RELU, 0, NULL, NULL, NULL, NULL));
    clg_activation_desc relu6 = {CLG_ACT_CLIP, 0, 6};
    BAD(clg_activation_forward_desc(NULL, &relu6, NULL, NULL));
    BAD(clg_activation_forward_desc(ctx, NULL, NULL, NULL));
    BAD(clg_activation_backward_desc(ctx, &relu6, NULL, NULL, NULL, NULL));
    BAD(clg_mul_forward(NULL, NULL, NULL, NULL));
    BAD(clg_mul_forward(ctx, NULL, NULL, NULL));
    BAD(clg_mul_backward(ctx, NULL, NULL, NULL, NULL, NULL));
    BAD(clg_bias_add(ctx, NULL, NULL));
    BAD(clg_bias_backward(ctx, NULL, NULL));
    BAD(clg_fc_forward(ctx, NULL, NULL, NULL, NULL));
    BAD(clg_fc_backward_data(ctx, NULL, NULL, NULL));
    BAD(clg_fc_backward_weights(ctx, NULL, NULL, NULL));
    BAD(clg_softmax_xent_forward(ctx, NULL, &label, 1, NULL, NULL, NULL));
    BAD(clg_softmax_xent_backward(ctx, NULL, &label, 1, 1.0f, NULL));
    float tv = 0.0f;
    double mean;
    BAD(clg_regression_forward(ctx, CLG_REGRESSION_MSE, NULL, &tv, 1, &mean));
    BAD(clg_regression_backward(ctx, CLG_REGRESSION_L1, NULL, &tv, 1, 1.0f, NULL));
    BAD(clg_pixel_xent_forward(ctx, NULL, &label, 1, NULL, &mean, NULL, NULL));
    BAD(clg_pixel_xent_backward(ctx, NULL, &label, 1, NULL, 1.0f, NULL));
    BAD(clg_batchnorm_forward_train(ctx, NULL, NULL, NULL, 0.1f, 1e-5f, NULL, NULL, NULL, NULL, NULL));
    BAD(clg_batchnorm_forward_infer(ctx, NULL, NULL, NULL, NULL, NULL, 1e-5f, NULL));
    BAD(clg_batchnorm_backward(ctx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    BAD(clg_dropout_forward(ctx, 0.5f, 1, 1, NULL, NULL));
    BAD(clg_dropout_backward(NULL, 0.5f, 1, 1, NULL, NULL));
}
static void p_optim(void)
{
    clg_sgd_params s = clg_sgd_params_default();
    clg_adam_params a = clg_adam_params_default();
    clg_rmsprop_params r = clg_rmsprop_params_default();
    assert_true(s.lr == 0.01f && a.beta2 == 0.999f && a.step == 1 && r.alpha == 0.9f);
    float w = 1, g = 1, m = 0, v = 0;
    BAD(clg_sgd_step(NULL, &s, NULL, NULL, NULL));
    BAD(clg_sgd_step(ctx, &s, NULL, NULL, NULL));
    BAD(clg_adam_step(ctx, &a, NULL, NULL, NULL, NULL));
    BAD(clg_sgd_step_host(NULL, &w, &g, &v, 1));
    BAD(clg_sgd_step_host(&s, NULL, &g, &v, 1));
    BAD(clg_adam_step_host(NULL, &w, &g, &m, &v, 1));
    BAD(clg_adam_step_host(&a, &w, NULL, &m, &v, 1));
    clg_sgd_params unknown = s; /* not made by the _default(): its struct_size is not known */
    unknown.struct_size = 0;
    BAD(clg_sgd_step_host(&unknown, &w, &g, &v, 1));
    unknown.struct_size = sizeof unknown + 8;
    BAD(clg_sgd_step_host(&unknown, &w, &g, &v, 1));
}
static void p_tensor_math(void)
{
    double d;
    BAD(clg_tensor_scale(NULL, 2));
    BAD(clg_tensor_sum_squares(NULL, &d));
    size_t cnt;
    BAD(clg_tensor_count_nonfinite(NULL, &cnt));
    clg_rmsprop_params r = {sizeof r, 0.1f, 0.9f, 1e-8f, 0};
    float w = 1, g = 1, v = 0;
    BAD(clg_rmsprop_step(NULL, &r, NULL, NULL, NULL));
    BAD(clg_rmsprop_step_host(NULL, &w, &g, &v, 1));
    BAD(clg_rmsprop_step_host(&r, NULL, &g, &v, 1));
}
static void p_nn(void)
{
    clg_net *replaced;
    BAD(clg_net_set_learn_rate_factor(NULL, "l1", 0.5f));
    BAD(clg_net_replace_output(NULL, 3, 1, &replaced));
    clg_net *net = NULL;
    clg_layer_info info;
    float f[2];
    int32_t c;
    size_t len;
    BAD(clg_net_create(NULL, (clg_shape){1, 1, 4, 4}, &net));
    BAD(clg_net_create(ctx, (clg_shape){1, 0, 4, 4}, &net));
    BAD(clg_net_create(ctx, (clg_shape){1, 1, 4, 4}, NULL));
    clg_net_destroy(NULL);
    BAD(clg_net_add_conv2d(NULL, 3, 3, 4, NULL, 1));
    BAD(clg_net_add_pool2d(NULL, NULL));
    BAD(clg_net_name_layer(NULL, "a"));
    BAD(clg_net_take_from(NULL, "a"));
    BAD(clg_net_add_add(NULL, NULL, 0, 0));
    BAD(clg_net_add_concat(NULL, NULL, 0));
    BAD(clg_net_summary(NULL, NULL, 0, &len));
    BAD(clg_net_activations(NULL, f, 1, "l1", f, 2, NULL));
    BAD(clg_net_add_global_avg_pool(NULL));
    BAD(clg_net_add_fc(NULL, 3));
    BAD(clg_net_add_batchnorm(NULL, 0.1f, 1e-5f));
    BAD(clg_net_add_dropout(NULL, 0.5f));
    BAD(clg_net_add_activation(NULL, CLG_ACT_RELU, 0));
    BAD(clg_net_add_activation_desc(NULL, NULL));
    BAD(clg_net_add_mul(NULL, NULL, 0));
    BAD(clg_net_add_channel_slice(NULL, 0, 1));
    BAD(clg_net_add_channel_shuffle(NULL, 2));
    BAD(clg_net_add_pad(NULL, NULL));
    BAD(clg_net_add_conv_transpose(NULL, 2, 2, 2, NULL, 0, 0, 1));
    BAD(clg_net_add_upsample(NULL, CLG_UPSAMPLE_NEAREST, 2, 2));
    BAD(clg_net_add_crop(NULL, "a"));
    BAD(clg_net_add_regression(NULL, CLG_REGRESSION_MSE));
    BAD(clg_net_add_pixel_softmax(NULL, NULL, 0));
    BAD(clg_net_set_class_weights(NULL, NULL, 0));
    assert_int_equal(clg_net_task(NULL), CLG_TASK_NONE);
    assert_int_equal(clg_net_output_count(NULL), 0);
    assert_int_equal(clg_net_output_shape(NULL).c, 0);
    BAD(clg_net_resized(NULL, 8, 8, &net));
    BAD(clg_segmentation_metrics_from(NULL, 2, NULL, NULL, NULL));
    BAD(clg_net_evaluate_restoration(NULL, NULL, 1, 0, NULL));
    f[0] = 0.5f;
    assert_true(isinf(clg_psnr(f, f, 1, 1.0)));
    assert_true(clg_ssim(f, f, 1, 1, 1, 1.0) > 0.999);
    BAD(clg_net_set_input_normalization(NULL, f, f, 1));
    BAD(clg_net_input_normalization(NULL, f, f, 1, &len));
    BAD(clg_net_add_softmax_xent(NULL));
    BAD(clg_net_parse(NULL, "input 2x2x1", &net));
    BAD(clg_net_parse(ctx, NULL, &net));
    BAD(clg_net_text(NULL, NULL, 0, &len));
    assert_int_equal(clg_net_layer_count(NULL), 0);
    BAD(clg_net_layer_info(NULL, 0, &info));
    assert_int_equal(clg_net_input_shape(NULL).c, 0);
    assert_int_equal(clg_net_class_count(NULL), 0);
    assert_null(clg_net_ctx(NULL));
    BAD(clg_net_set_class_names(NULL, NULL, 0));
    assert_null(clg_net_class_name(NULL, 0));
    BAD(clg_net_init(NULL, 1));
    assert_int_equal(clg_net_param_count(NULL, CLG_PARAMS_LEARNABLE), 0);
    BAD(clg_net_get_params(NULL, CLG_PARAMS_LEARNABLE, f, 2));
    BAD(clg_net_set_params(NULL, CLG_PARAMS_LEARNABLE, f, 2));
    BAD(clg_net_predict(NULL, f, 1, f));
    BAD(clg_net_classify(NULL, f, 1, 1, &c, f));
    BAD(clg_net_save(NULL, "x"));
    clg_layer_time lt;
    BAD(clg_net_profile(NULL, 1, 1, &lt));
    BAD(clg_net_profile_inference(NULL, 1, 1, &lt));
    BAD(clg_net_load(NULL, "x", &net));
    BAD(clg_net_load(ctx, NULL, &net));
    /* a real net, with arguments that do not fit it */
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 4x4x1\nfc 3\nsoftmax\n", &net), CLG_OK);
    BAD(clg_net_add_fc(net, 2)); /* after the softmax output */
    BAD(clg_net_layer_info(net, 9, &info));
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, f, 2), CLG_ERR_SHAPE);
    BAD(clg_net_get_params(net, (clg_param_set)7, f, 2));
    BAD(clg_net_classify(net, f, 1, 0, &c, f));
    BAD(clg_net_set_class_names(net, (const char *const[]){"a"}, 1));
    char small[4];
    BAD(clg_net_text(net, small, sizeof small, &len));
    assert_true(len > 4);
    clg_net_destroy(net);
}
static void p_data(void)
{
    clg_datastore *made;
    clg_datastore_callbacks cbs = clg_datastore_callbacks_default();
    BAD(clg_datastore_from_callbacks(NULL, &made));
    BAD(clg_datastore_from_callbacks(&cbs, &made));
    clg_datastore *ds;
    size_t i = 0;
    float f;
    int32_t l;
    BAD(clg_datastore_open_idx(NULL, "x", &ds));
    BAD(clg_datastore_open_idx("x", "y", NULL));
    BAD(clg_datastore_open_idx_folder(NULL, "train", &ds));
    BAD(clg_datastore_open_idx_folder(".", "validation", &ds));
    BAD(clg_datastore_subset(NULL, 0, 1, &ds));
    clg_datastore_destroy(NULL);
    assert_int_equal(clg_datastore_size(NULL), 0);
    assert_int_equal(clg_datastore_sample_shape(NULL).c, 0);
    assert_int_equal(clg_datastore_class_count(NULL), 0);
    assert_null(clg_datastore_class_name(NULL, 0));
    BAD(clg_datastore_set_class_names(NULL, NULL, 0));
    BAD(clg_datastore_read(NULL, &i, 1, &f, &l));
    assert_non_null(clg_datastore_last_error(NULL));
    BAD(clg_image_read(NULL, 1, 2, 2, &f));
    clg_datastore *a, *b;
    BAD(clg_datastore_select(NULL, &i, 1, &ds));
    BAD(clg_datastore_split(NULL, 0.5, 1, &a, &b));
    clg_image_folder_options fo = clg_image_folder_options_default();
    assert_int_equal(fo.channels, 1);
    BAD(clg_datastore_open_image_folder(NULL, &fo, &ds));
    fo.channels = 2;
    BAD(clg_datastore_open_image_folder(".", &fo, &ds));
    assert_int_equal(clg_datastore_skipped(NULL, 0), 0);
    clg_augment_options ao = clg_augment_options_default();
    BAD(clg_datastore_augment(NULL, &ao, &ds));
    BAD(clg_datastore_set_epoch(NULL, 1));
    BAD(clg_datastore_channel_stats(NULL, NULL, NULL, 0));
    BAD(clg_datastore_from_memory(NULL, &l, 1, (clg_shape){1, 1, 1, 1}, 2, &ds));
    l = 5;
    BAD(clg_datastore_from_memory(&f, &l, 1, (clg_shape){1, 1, 1, 1}, 2, &ds));
    BAD(clg_image_read("x.png", 2, 2, 2, &f));
    BAD(clg_image_read("x.png", 1, 0, 2, &f));
    BAD(clg_image_read_cropped(NULL, 1, 4, 2, 2, &f));
    size_t ih, iw;
    BAD(clg_image_size(NULL, &ih, &iw));
    BAD(clg_image_read_cropped("x.png", 1, 1, 2, 2, &f)); /* a shorter side under the crop */
    BAD(clg_datastore_shuffle(NULL, 1, &ds));
    BAD(clg_datastore_shared(NULL, 2, 0, &ds));
    const char *one_name[] = {"a"};
    BAD(clg_datastore_match_classes(NULL, one_name, 1, &ds));
    clg_pixel_label_options po = clg_pixel_label_options_default();
    assert_int_equal(po.images.channels, 1);
    BAD(clg_datastore_open_pixel_labels(NULL, ".", "c.txt", &po, &ds));
    BAD(clg_datastore_open_paired_images(".", NULL, &fo, 0, &ds));
    BAD(clg_datastore_open_image_values(".", NULL, &fo, &ds));
    clg_denoise_options dno = clg_denoise_options_default();
    assert_int_equal(dno.patches_per_image, 1);
    BAD(clg_datastore_denoising(NULL, &dno, &ds));
    BAD(clg_datastore_class_weights(NULL, 0, &f, 1));
    assert_int_equal(clg_datastore_target(NULL, NULL), CLG_TARGET_CLASS);
    BAD(clg_datastore_from_memory_targets(NULL, &l, 1, (clg_shape){1, 1, 1, 1}, CLG_TARGET_CLASS,
                                          (clg_shape){1, 1, 1, 1}, 2, &ds));
    assert_false(clg_class_names_equal(NULL, "a"));
    assert_null(clg_datastore_skipped_file(NULL, 0));
    assert_int_equal(clg_datastore_decoded(NULL), 0);
    BAD(clg_datastore_partition(NULL, 2, 0, &ds));
    clg_batch_reader *r;
    BAD(clg_batch_reader_create(NULL, 1, 1, 0, &r));
    BAD(clg_batch_reader_start(NULL, &i, 1));
    BAD(clg_batch_reader_next(NULL, &f, &l));
    assert_int_equal(clg_batch_reader_samples_read(NULL), 0);
    assert_string_equal(clg_batch_reader_last_error(NULL), "");
    clg_batch_reader_destroy(NULL);
}
/* Not started here: MPI needs mpirun (tests/test_cluster.c runs under it, and the
 * clgrad-train fault test ends a job with clg_cluster_abort's MPI_Abort path). */
static void p_cluster(void)
{
    int a = clg_cluster_available();
    assert_true(a == 0 || a == 1);
    int r, n;
    CLG_ASSERT_STATUS(clg_cluster_local_rank(&r, &n), CLG_ERR_UNSUPPORTED);
    clg_cluster_finalize(); /* not started: a no-op */
}

static void p_experiment(void)
{
    clg_experiment_result r;
    BAD(clg_experiments_run(NULL, 1, NULL, 0, NULL, NULL, &r));
}

static void p_onnx(void)
{
    clg_net *net;
    BAD(clg_net_import_onnx(NULL, "x.onnx", &net));
    BAD(clg_net_export_onnx(NULL, "x.onnx"));
}

static void p_train(void)
{
    clg_train_options o = clg_train_options_default();
    clg_solver s;
    clg_net *net;
    double d;
    BAD(clg_train_options_check(NULL));
    BAD(clg_exec_options_check(NULL));
    clg_exec_options x = clg_exec_options_default();
    CLG_ASSERT_STATUS(clg_exec_options_check(&x), CLG_OK);
    x.struct_size = 0; /* not from the _default() */
    BAD(clg_exec_options_check(&x));
    assert_null(clg_solver_name((clg_solver)9));
    BAD(clg_solver_parse("sgd", &s));
    BAD(clg_solver_parse(NULL, &s));
    BAD(clg_train(NULL, NULL, NULL, &o, NULL));
    BAD(clg_train_resume(NULL, "x", NULL, NULL, &o, &net, NULL));
    BAD(clg_net_evaluate(NULL, NULL, 1, &d, &d));
    BAD(clg_net_evaluate_confusion(NULL, NULL, 1, &d, &d, NULL));
    size_t counts[2];
    BAD(clg_split_batch(4, NULL, 2, counts));
    BAD(clg_split_batch(4, (const float[]){0, 0}, 2, counts));
    BAD(clg_split_batch(4, (const float[]){1, -1}, 2, counts));
    BAD(clg_split_batch(4, (const float[]){1, 1}, 0, counts));
}

typedef struct entry {
    const char *group;
    void (*probe)(void);
    const char *names;  /* the functions the probe covers, space-separated */
} entry;

static const entry table[] = {
    {"status", p_status, "clg_status_name clg_last_error clg_version"},
    {"devices", p_devices, "clg_devices_list clg_devices_free clg_devices_select clg_device_split "
                           "clg_exec_env_parse clg_exec_env_name clg_device_type_name clg_device_cpu_class "
                           "clg_cpu_class_parse clg_cpu_class_name"},
    {"ctx", p_ctx, "clg_ctx_create clg_ctx_destroy clg_ctx_last_error clg_ctx_device clg_ctx_cache_dir "
                   "clg_ctx_cl_queue clg_ctx_finish clg_ctx_get_stats clg_ctx_warm_up clg_ctx_options_default "
                   "clg_ctx_kernel_times clg_ctx_decides_as_gpu"},
    {"tensor", p_tensor, "clg_tensor_create clg_tensor_destroy clg_tensor_numel clg_tensor_shape clg_shape_numel "
                         "clg_tensor_ctx clg_tensor_cl_buffer clg_tensor_upload clg_tensor_download "
                         "clg_tensor_fill clg_tensor_copy clg_tensor_view_batch"},
    {"gemm", p_gemm, "clg_sgemm clg_sgemm_batched clg_gemm_set_backend clg_gemm_get_backend clg_gemm_get_params "
                     "clg_gemm_set_params clg_gemm_save_tuning clg_gemm_params_default clg_gemm_classify "
                     "clg_gemm_has_clblast clg_tune_options_default clg_gemm_tune_score clg_gemm_tune "
                     "clg_conv_tune_score clg_conv_tune clg_gemm_tune_compare clg_conv_tune_compare "
                     "clg_gemm_params_set_field clg_gemm_params_print clg_gemm_tune_if_wanted"},
    {"conv", p_conv, "clg_conv2d_output_shape clg_conv2d_forward clg_conv2d_backward_data "
                     "clg_conv2d_backward_weights clg_conv2d_backward_weights_bias "
                     "clg_conv2d_backward_bias clg_conv2d_workspace "
                     "clg_conv2d_choose clg_conv_algo_name clg_conv2d_desc_default"},
    {"pool", p_pool, "clg_pool2d_output_shape clg_pool2d_forward clg_pool2d_backward clg_global_avg_pool_forward "
                     "clg_global_avg_pool_backward clg_pool2d_desc_default clg_pad2d_output_shape "
                     "clg_pad2d_forward clg_pad2d_backward clg_pad2d_desc_default clg_upsample_forward "
                     "clg_upsample_backward"},
    {"elementwise", p_elementwise, "clg_activation_forward clg_activation_backward "
                                   "clg_activation_forward_desc clg_activation_backward_desc clg_mul_forward "
                                   "clg_mul_backward clg_bias_add clg_bias_backward "
                                   "clg_fc_forward clg_fc_backward_data clg_fc_backward_weights "
                                   "clg_softmax_xent_forward clg_softmax_xent_backward "
                                   "clg_regression_forward clg_regression_backward "
                                   "clg_pixel_xent_forward clg_pixel_xent_backward "
                                   "clg_batchnorm_forward_train clg_batchnorm_forward_infer "
                                   "clg_batchnorm_backward clg_dropout_forward clg_dropout_backward"},
    {"optim", p_optim, "clg_sgd_step clg_adam_step clg_sgd_step_host clg_adam_step_host "
                       "clg_sgd_params_default clg_adam_params_default clg_rmsprop_params_default"},
    {"tensor math", p_tensor_math, "clg_tensor_scale clg_tensor_sum_squares clg_tensor_count_nonfinite clg_rmsprop_step "
                                   "clg_rmsprop_step_host"},
    {"nn", p_nn, "clg_net_create clg_net_destroy clg_net_add_conv2d clg_net_add_pool2d "
                 "clg_net_name_layer clg_net_take_from clg_net_add_add clg_net_add_concat clg_net_summary "
                 "clg_net_activations "
                 "clg_net_add_global_avg_pool clg_net_add_fc clg_net_add_batchnorm clg_net_add_dropout "
                 "clg_net_add_activation clg_net_add_activation_desc clg_net_add_mul clg_net_add_softmax_xent "
                 "clg_net_add_channel_slice clg_net_add_channel_shuffle clg_net_add_pad "
                 "clg_net_add_conv_transpose clg_net_add_upsample clg_net_add_crop "
                 "clg_net_add_regression clg_net_add_pixel_softmax clg_net_set_class_weights clg_net_task "
                 "clg_net_output_count clg_net_output_shape clg_net_resized "
                 "clg_segmentation_metrics_from clg_psnr clg_ssim clg_net_evaluate_restoration "
                 "clg_net_set_input_normalization clg_net_input_normalization clg_net_parse clg_net_text "
                 "clg_net_layer_count clg_net_layer_info clg_net_input_shape clg_net_class_count "
                 "clg_net_ctx clg_net_set_class_names clg_net_class_name clg_net_init "
                 "clg_net_param_count clg_net_get_params clg_net_set_params clg_net_predict "
                 "clg_net_classify clg_net_save clg_net_load clg_net_profile clg_net_profile_inference "
                 "clg_net_set_learn_rate_factor clg_net_replace_output"},
    {"data", p_data, "clg_datastore_open_idx clg_datastore_open_idx_folder clg_datastore_subset "
                     "clg_datastore_destroy clg_datastore_size clg_datastore_sample_shape "
                     "clg_datastore_class_count clg_datastore_class_name clg_datastore_set_class_names "
                     "clg_datastore_read clg_datastore_last_error clg_image_read clg_image_read_cropped clg_datastore_from_memory "
                     "clg_image_size "
                     "clg_datastore_from_callbacks clg_datastore_callbacks_default "
                     "clg_datastore_select clg_datastore_split clg_image_folder_options_default "
                     "clg_datastore_open_image_folder clg_datastore_skipped clg_augment_options_default "
                     "clg_datastore_augment clg_datastore_set_epoch clg_datastore_shuffle "
                     "clg_datastore_channel_stats "
                     "clg_datastore_partition clg_datastore_shared clg_datastore_decoded "
                     "clg_datastore_match_classes clg_class_names_equal clg_datastore_skipped_file "
                     "clg_pixel_label_options_default clg_datastore_open_pixel_labels "
                     "clg_datastore_open_paired_images clg_datastore_open_image_values "
                     "clg_denoise_options_default clg_datastore_denoising "
                     "clg_datastore_class_weights clg_datastore_target "
                     "clg_datastore_from_memory_targets "
                     "clg_batch_reader_create "
                     "clg_batch_reader_start clg_batch_reader_next clg_batch_reader_samples_read "
                     "clg_batch_reader_last_error clg_batch_reader_destroy"},
    {"cluster", p_cluster, "clg_cluster_available clg_cluster_init clg_cluster_local_rank "
                           "clg_cluster_finalize clg_cluster_abort"},
    {"experiment", p_experiment, "clg_experiments_run"},
    {"onnx", p_onnx, "clg_net_import_onnx clg_net_export_onnx"},
    {"train", p_train, "clg_train_options_default clg_train_options_check clg_solver_name "
                       "clg_exec_options_default clg_exec_options_check "
                       "clg_solver_parse clg_train clg_train_resume clg_net_evaluate clg_split_batch "
                       "clg_net_evaluate_confusion"},
};
#define N_ENTRIES (sizeof table / sizeof table[0])

static const char *include_dir;

static int covered(const char *name)
{
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const char *p = table[i].names;
        size_t n = strlen(name);
        for (const char *q = strstr(p, name); q; q = strstr(q + 1, name))
            if ((q == p || q[-1] == ' ') && (q[n] == ' ' || q[n] == '\0'))
                return 1;
    }
    return 0;
}

/* Every "CLG_API <type> <name>(" in the public headers has an entry. */
static void every_public_function_has_an_entry(void **state)
{
    (void)state;
    /* every header in the folder, so that a new header cannot escape the sweep */
    char headers[64][128];
    size_t nheaders = 0;
    DIR *dir = opendir(include_dir);
    if (!dir)
        fail_msg("cannot list %s", include_dir);
    for (struct dirent *e; (e = readdir(dir)) && nheaders < 64;) {
        size_t n = strlen(e->d_name);
        if (n > 2 && n < 128 && !strcmp(e->d_name + n - 2, ".h"))
            memcpy(headers[nheaders++], e->d_name, n + 1);
    }
    closedir(dir);
    assert_true(nheaders >= 15);
    int found = 0, missing = 0;
    for (size_t h = 0; h < nheaders; h++) {
        char path[8448];
        snprintf(path, sizeof path, "%s/%s", include_dir, headers[h]);
        FILE *f = fopen(path, "r");
        if (!f)
            fail_msg("cannot read %s", path);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "CLG_API ", 8) != 0)
                continue;
            char *paren = strchr(line, '(');
            if (!paren)
                continue;
            char *start = paren;
            while (start > line && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                                    (start[-1] >= '0' && start[-1] <= '9')))
                start--;
            *paren = '\0';
            found++;
            if (!covered(start)) {
                print_error("%s (%s) has no entry in the sweep table\n", start, headers[h]);
                missing++;
            }
        }
        fclose(f);
    }
    assert_true(found >= 125); /* as many as there were when this was written */
    assert_int_equal(missing, 0);
}

static void every_entry_survives_bad_arguments(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ENTRIES; i++)
        table[i].probe();
}

static int setup(void **state)
{
    (void)state;
    ctx = clg_test_ctx("off");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_fixture_teardown(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    include_dir = argc > 1 ? argv[1] : "include/clgrad";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_public_function_has_an_entry),
        cmocka_unit_test(every_entry_survives_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
