/* Networks: text format (round trip, errors with line and column), shape inference, seeded
 * initialisation, whole-network gradients against finite differences, the staged loss (and its
 * failure leaving nothing queued), prediction, and model files (exact round trip; every
 * truncation and random bit flips rejected). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "nn/nn_internal.h"
#include "parallel/group_internal.h"
#include "runtime/runtime_internal.h"

static clg_ctx *ctx;
static clg_test_rng rng;

static const char tutorial[] =
    "input 28x28x1\n"
    "conv 5x5x32 pad=2\n"
    "relu\n"
    "maxpool 2x2\n"
    "conv 5x5x64 pad=2\n"
    "relu\n"
    "maxpool 2x2\n"
    "fc 1024\n"
    "relu\n"
    "dropout 0.4\n"
    "fc 10\n"
    "softmax\n";

static clg_net *parse_ok(const char *text)
{
    clg_net *net = NULL;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, text, &net), CLG_OK);
    return net;
}

static void tutorial_shapes_and_round_trip(void **state)
{
    (void)state;
    clg_net *net = parse_ok(tutorial);
    assert_int_equal(clg_net_layer_count(net), 11);
    static const size_t out[11][3] = {{32, 28, 28}, {32, 28, 28}, {32, 14, 14}, {64, 14, 14},
                                      {64, 14, 14}, {64, 7, 7}, {1024, 1, 1}, {1024, 1, 1},
                                      {1024, 1, 1}, {10, 1, 1}, {10, 1, 1}};
    for (size_t i = 0; i < 11; i++) {
        clg_layer_info info;
        CLG_ASSERT_STATUS(clg_net_layer_info(net, i, &info), CLG_OK);
        assert_int_equal(info.output.c, out[i][0]);
        assert_int_equal(info.output.h, out[i][1]);
        assert_int_equal(info.output.w, out[i][2]);
    }
    /* 5*5*32+32, 5*5*32*64+64, 3136*1024+1024, 1024*10+10 */
    assert_int_equal(clg_net_param_count(net, CLG_PARAMS_LEARNABLE), 3274634);
    /* the summary's totals: 2*25*28*28*32 + 28*28*32 for the first conv, ... */
    size_t slen;
    CLG_ASSERT_STATUS(clg_net_summary(net, NULL, 0, &slen), CLG_OK);
    char *summary = malloc(slen + 1);
    CLG_ASSERT_STATUS(clg_net_summary(net, summary, slen + 1, NULL), CLG_OK);
    assert_non_null(strstr(summary, "11 layers, 3,274,634 learnable parameters, 27,882,792 FLOPs"));
    assert_non_null(strstr(summary, "   1  l1           conv 5x5x32 pad=2"));
    char memory[160]; /* the layouts' sizes (their buffers: inference_layout_reuses_...) */
    snprintf(memory, sizeof memory, "batch buffers per image: %.1f KiB to train (outputs and "
             "gradients), %.1f KiB to infer\n", (double)clg__net_train_floats(net) / 256.0,
             (double)clg__net_infer_floats(net) / 256.0);
    assert_non_null(strstr(summary, memory));
    assert_true(clg__net_infer_floats(net) * 3 < clg__net_train_floats(net));
    free(summary);
    assert_int_equal(clg_net_class_count(net), 10);
    size_t len;
    CLG_ASSERT_STATUS(clg_net_text(net, NULL, 0, &len), CLG_OK);
    char *text = malloc(len + 1);
    CLG_ASSERT_STATUS(clg_net_text(net, text, len + 1, NULL), CLG_OK);
    assert_string_equal(text, tutorial);
    free(text);
    clg_net_destroy(net);
}

/* Every option survives text(parse(text)). */
static void every_option_round_trips(void **state)
{
    (void)state;
    static const char full[] =
        "input 9x11x3\n"
        "conv 3x3x6 pad=1,2 stride=2,1 dilation=1,2 groups=3 bias=0 algo=im2col workspace=3M\n"
        "batchnorm momentum=0.25 eps=0.001\n"
        "leaky alpha=0.125\n"
        "avgpool 3x2 stride=1 pad=1,0,1,1 ceil=1 exclude-pad=1\n"
        "elu alpha=0.5\n"
        "maxpool 2x2 stride=1\n"
        "sigmoid\n"
        "conv 1x1x4 algo=gemm workspace=1000\n"
        "tanh\n"
        "clip min=-1 max=2.5\n"
        "hardsigmoid alpha=0.25 beta=0.375\n"
        "hardswish\n"
        "silu\n"
        "gap\n"
        "dropout 0.25\n"
        "fc 5\n"
        "softmax\n";
    clg_net *net = parse_ok(full);
    char text[2048];
    CLG_ASSERT_STATUS(clg_net_text(net, text, sizeof text, NULL), CLG_OK);
    assert_string_equal(text, full);
    clg_net_destroy(net);
    /* comments, blank lines, pad=same and defaults */
    net = parse_ok("# a comment\n\ninput 8x8x1   # trailing\n conv 3x3x2 pad=same\nrelu\nfc 3\nsoftmax");
    clg_layer_info info;
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 0, &info), CLG_OK);
    assert_string_equal(info.text, "conv 3x3x2 pad=1");
    assert_int_equal(info.output.h, 8);
    clg_net_destroy(net);
}

/* Each bad text fails with the status and a message naming line and column. */
static void text_errors_name_line_and_column(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        clg_status st;
        const char *where;
    } cases[] = {
        {"input 28x28x1\nconv 5x5x32\nfoo 3\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 3, column 1"},
        {"input 28x28x1\nconv 5x5x32 pdd=2\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 13"},
        {"input 28x28x1\nconv 5x5\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 6"},
        {"input 28x28x1\n  fc -3\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 6"},
        {"conv 5x5x32\n", CLG_ERR_INVALID_ARG, "line 1, column 1"},
        {"input 28x28\n", CLG_ERR_INVALID_ARG, "line 1, column 7"},
        {"input 4x4x1\nmaxpool 5x5\nsoftmax\n", CLG_ERR_SHAPE, "line 2, column 1"},
        {"input 4x4x1\nconv 3x3x4 groups=3\nsoftmax\n", CLG_ERR_SHAPE, "line 2"},
        {"input 4x4x1\nfc 3\n", CLG_ERR_INVALID_ARG, "last layer must be softmax"},
        {"input 4x4x1\nfc 3\nsoftmax\nrelu\n", CLG_ERR_INVALID_ARG, "line 4"},
        {"input 4x4x1\ndropout 1.5\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2"},
        {"input 4x4x1\nclip min=3 max=1\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "min=3 is above max=1"},
        {"input 4x4x3\nslice 2:5\nfc 2\nsoftmax\n", CLG_ERR_SHAPE, "channels 2:5 of an input of 3"},
        {"input 4x4x3\nslice 2:2\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 7"},
        {"input 4x4x3\nshuffle 2\nfc 2\nsoftmax\n", CLG_ERR_SHAPE, "the groups must divide them"},
        {"input 4x4x3\npad 4 mode=reflect\nfc 2\nsoftmax\n", CLG_ERR_SHAPE, "must be below"},
        {"input 4x4x3\npad 1,2,3\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 5"},
        {"input 4x4x3\npad 1 mode=wrap\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "constant, reflect or edge"},
        {"input 4x4x3\npad -1 mode=edge\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "negative pads"},
        {"input 4x4x3\nconvt 3x3x2 stride=2 outpad=2\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "below the stride"},
        {"input 1x1x3\nconvt 1x1x2 pad=1\nfc 2\nsoftmax\n", CLG_ERR_SHAPE, "gives a -1x-1 output"},
        {"input 2x2x1\nupsample 0\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "expected upsample FACTOR"},
        {"input 2x2x1\nupsample 2 mode=cubic\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "nearest or bilinear"},
        {"input 4x4x1\nconv 3x3x2 name=a\nconv 3x3x3 from=input\nmul a\nfc 2\nsoftmax\n",
         CLG_ERR_SHAPE, "a product takes two inputs of one shape, or one of Cx1x1"},
        {"input 4x4x1\nconv 3x3x2 pad=1 name=a\nconv 3x3x2 pad=1\nmul a,input\nfc 2\nsoftmax\n",
         CLG_ERR_SHAPE, "3 inputs: a product takes two"},
        {"input 4x4x1\nhardswish alpha=1\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 11"},
        {"input 4x4x1\nconv 3x3x2 stride=0\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 12"},
        /* pad=same divides by the stride: a zero window (the default stride) is refused */
        {"input 9x11x3\navgpool 0x2 pad=same\nsoftmax\n", CLG_ERR_INVALID_ARG, "window_h"},
        {"input 4x4x1\nrelu alpha=2\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "line 2, column 6"},
        {"input 1x1x1\nsoftmax\n", CLG_ERR_SHAPE, "at least 2 classes"},
        {"", CLG_ERR_INVALID_ARG, "no layers"},
        {"input 4x4x1\nfc 2\x01\nsoftmax\n", CLG_ERR_INVALID_ARG, "control character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clg_net *net = (clg_net *)1;
        clg_status st = clg_net_parse(ctx, cases[i].text, &net);
        if (st != cases[i].st || !strstr(clg_ctx_last_error(ctx), cases[i].where))
            fail_msg("case %zu: %s, \"%s\" (wanted %s with \"%s\")", i, clg_status_name(st),
                     clg_ctx_last_error(ctx), clg_status_name(cases[i].st), cases[i].where);
        assert_null(net);
    }
}

static char *text_of(const clg_net *net)
{
    size_t len;
    CLG_ASSERT_STATUS(clg_net_text(net, NULL, 0, &len), CLG_OK);
    char *text = malloc(len + 1);
    CLG_ASSERT_STATUS(clg_net_text(net, text, len + 1, NULL), CLG_OK);
    return text;
}

/* What the builder accepts survives the text form, and with it model files and the replicas
 * of multi-device training (both rebuilt from the text); what the text could not say is
 * refused. */
static void builder_settings_survive_save_load_and_replication(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 9, 9}, &net), CLG_OK);
    clg_conv2d_desc d = clg_conv2d_desc_default();
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.algo = CLG_CONV_ALGO_IM2COL;
    d.workspace_limit = (1u << 20) + 5;
    d.relu = 1; /* the net decides fusions */
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, &d, 1), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "d->relu must be 0"));
    d.relu = 0;
    d.algo = (clg_conv_algo)9;
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, &d, 1), CLG_ERR_INVALID_ARG);
    d.algo = CLG_CONV_ALGO_IM2COL;
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, &d, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_activation(net, CLG_ACT_RELU, 0.0f), CLG_OK);
    clg_pool2d_desc pd = clg_pool2d_desc_default();
    pd.relu_input = 1;
    CLG_ASSERT_STATUS(clg_net_add_pool2d(net, &pd), CLG_ERR_INVALID_ARG);
    pd.relu_input = 0;
    CLG_ASSERT_STATUS(clg_net_add_pool2d(net, &pd), CLG_OK);
    d = clg_conv2d_desc_default();
    d.algo = CLG_CONV_ALGO_WINOGRAD;
    d.workspace_limit = (size_t)3 << 30;
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 3, &d, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_fc(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_softmax_xent(net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 5), CLG_OK);
    char *text = text_of(net);
    assert_string_equal(text, "input 9x9x2\n"
                              "conv 3x3x4 pad=1 algo=im2col workspace=1048581\n"
                              "relu\nmaxpool 2x2\n"
                              "conv 3x3x3 bias=0 algo=winograd workspace=3G\n"
                              "fc 3\nsoftmax\n");
    clg_layer_info info; /* 2 x (3*3*2) multiply-adds per output, 4x9x9 outputs, + bias */
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 0, &info), CLG_OK);
    assert_true(info.flops == 2.0 * 18 * 324 + 324);

    char path[512], *dir = clg_test_tempdir("nn-settings");
    snprintf(path, sizeof path, "%s/settings.clgm", dir);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_OK);
    clg_net *loaded;
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &loaded), CLG_OK);
    char *again = text_of(loaded);
    assert_string_equal(again, text);
    free(again);
    clg_net_destroy(loaded);
    clg_test_rmtree(dir);
    free(dir);

    clg_ctx *other; /* a second context on the same device: a group of two */
    CLG_ASSERT_STATUS(clg_ctx_create(clg_ctx_device(ctx), NULL, &other), CLG_OK);
    clg__group *g;
    CLG_ASSERT_STATUS(clg__group_create(net, (clg_ctx *const[]){ctx, other}, 2, NULL, &g), CLG_OK);
    for (size_t i = 0; i < 2; i++) {
        again = text_of(g->r[i].net);
        assert_string_equal(again, text);
        free(again);
    }
    clg__group_destroy(g);
    clg_ctx_destroy(other);
    free(text);
    clg_net_destroy(net);
}

static void impossible_shape_names_the_layer(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 1, 6, 6}, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, NULL, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 5, 5, 4, NULL, 1), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "layer 2 (conv 5x5x4)"));
    assert_int_equal(clg_net_layer_count(net), 1); /* the failed layer was not added */
    CLG_ASSERT_STATUS(clg_net_add_fc(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_softmax_xent(net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_activation(net, CLG_ACT_RELU, 0), CLG_ERR_INVALID_ARG);
    clg_net_destroy(net);
}

static void init_is_seeded_and_scaled(void **state)
{
    (void)state;
    /* host-side draws; oclgrind would spend a minute copying them */
    clg_test_skip_under_simulator("host-side initialisation");
    clg_net *a = parse_ok(tutorial), *b = parse_ok(tutorial);
    CLG_ASSERT_STATUS(clg_net_init(a, 42), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(b, 42), CLG_OK);
    size_t n, m;
    float *pa = clg_test_learnables(a, &n), *pb = clg_test_learnables(b, &m);
    assert_int_equal(n, m);
    assert_memory_equal(pa, pb, n * sizeof *pa);
    CLG_ASSERT_STATUS(clg_net_init(b, 43), CLG_OK);
    free(pb);
    pb = clg_test_learnables(b, &m);
    assert_true(memcmp(pa, pb, n * sizeof *pa) != 0);
    /* fc 1024 follows relu: He normal, std sqrt(2 / 3136); fc 10 feeds the softmax: Glorot
     * uniform, std sqrt(6 / (1024 + 10)) / sqrt(3) */
    size_t fc1 = 800 + 32 + 51200 + 64, fc1_n = 3136 * 1024, fc2 = fc1 + fc1_n + 1024;
    double s1 = 0, s2 = 0;
    for (size_t i = 0; i < fc1_n; i++)
        s1 += (double)pa[fc1 + i] * pa[fc1 + i];
    for (size_t i = 0; i < 10240; i++)
        s2 += (double)pa[fc2 + i] * pa[fc2 + i];
    assert_true(fabs(sqrt(s1 / fc1_n) / sqrt(2.0 / 3136) - 1) < 0.01);
    assert_true(fabs(sqrt(s2 / 10240) / (sqrt(6.0 / 1034) / sqrt(3.0)) - 1) < 0.03);
    for (size_t i = 0; i < 1024; i++) /* biases start at zero */
        assert_true(pa[fc1 + fc1_n + i] == 0.0f);
    free(pa);
    free(pb);
    clg_net_destroy(a);
    clg_net_destroy(b);
}

/* A small net with every layer kind (smooth activations where possible, so that central
 * differences are accurate; max pooling and ReLU have no kink within eps for random inputs
 * with probability close to 1, and the few parameters checked are fixed by seed). */
static const char tiny[] =
    "input 6x6x2\n"
    "conv 3x3x3 pad=1\n"
    "batchnorm\n"
    "tanh\n"
    "maxpool 2x2\n"
    "conv 2x2x4 stride=1\n"
    "elu\n"
    "avgpool 2x2 stride=1 pad=1 exclude-pad=1\n"
    "dropout 0.3\n"
    "fc 5\n"
    "sigmoid\n"
    "fc 3\n"
    "softmax\n";

static double loss_at(clg_net *net, const int32_t *labels)
{
    double loss;
    CLG_ASSERT_STATUS(clg__net_forward(net, 1, 7), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_loss(net, labels, &loss, NULL), CLG_OK);
    return loss;
}

/* A layer graph on the same input: a residual block (an activation read by two layers, their
 * sum read by two branches), the branches stacked along the channels, and a branch from the
 * network's input that rejoins by a sum. Smooth throughout (ELU, tanh, average pooling):
 * after batch norm a step of 1e-3 moves many values across a ReLU's or a max pool's kink at
 * once, where finite differences say nothing (both are checked exactly below and in the
 * chain above). */
static const char graph[] =
    "input 6x6x2\n"
    "conv 3x3x4 pad=1 name=stem\n"
    "elu name=r0\n"
    "conv 3x3x4 pad=1\n"
    "batchnorm\n"
    "add r0 name=res\n"
    "conv 1x1x3 name=b1\n"
    "conv 3x3x2 pad=1 name=b2 from=res\n"
    "concat b1\n"
    "tanh name=t\n"
    "conv 3x3x5 pad=1 name=side from=input\n"
    "add t\n"
    "avgpool 2x2\n"
    "fc 3\n"
    "softmax\n";

/* Every parameter's gradient against finite differences of the loss, on 3 random elements
 * each. */
static void check_gradients(const char *text, size_t nparams)
{
    enum { N = 4 };
    clg_net *net = parse_ok(text);
    CLG_ASSERT_STATUS(clg_net_init(net, clg_test_rng_next(&rng)), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_reserve(net, N), CLG_OK);
    float x[N * 72];
    int32_t labels[N] = {0, 2, 1, 2};
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    CLG_ASSERT_STATUS(clg__net_upload(net, x, N), CLG_OK);
    loss_at(net, labels);
    CLG_ASSERT_STATUS(clg__net_backward(net, labels, 1.0f / N, 7), CLG_OK);
    clg__param_ref refs[16];
    size_t nrefs = clg__net_params(net, refs, 16);
    assert_int_equal(nrefs, nparams);
    double worst = 0;
    int kinks = 0;
    for (size_t r = 0; r < nrefs; r++) {
        size_t n = clg_tensor_numel(refs[r].param);
        float *w = malloc(n * sizeof *w), *g = malloc(n * sizeof *g);
        CLG_ASSERT_STATUS(clg_tensor_download(refs[r].param, w, n), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(refs[r].grad, g, n), CLG_OK);
        /* three elements of each parameter; one under oclgrind (CLG_TEST_SMALL), which
         * interprets each of the five forward passes a probe takes */
        for (int k = 0; k < (clg_test_small_limit() ? 1 : 3); k++) {
            size_t i = (size_t)(clg_test_rng_next(&rng) % n);
            /* Central differences at two step sizes, and the one-sided slopes of the smaller.
             * Where a max-pooling window switches within the step (a kink), the central
             * difference mixes the slopes on both sides, but the derivative at the point is
             * the slope on the side without the switch: the gradient must then match one of
             * the one-sided slopes instead. At most a few elements may sit at a kink. */
            double fd[2], base = loss_at(net, labels), s_up = 0, s_down = 0;
            for (int h = 0; h < 2; h++) {
                const float eps = h ? 1.5e-3f : 3e-3f;
                float keep = w[i];
                w[i] = keep + eps;
                CLG_ASSERT_STATUS(clg_tensor_upload(refs[r].param, w, n), CLG_OK);
                double up = loss_at(net, labels);
                w[i] = keep - eps;
                CLG_ASSERT_STATUS(clg_tensor_upload(refs[r].param, w, n), CLG_OK);
                double down = loss_at(net, labels);
                w[i] = keep;
                CLG_ASSERT_STATUS(clg_tensor_upload(refs[r].param, w, n), CLG_OK);
                fd[h] = (up - down) / (2.0 * eps);
                s_up = (up - base) / eps;
                s_down = (base - down) / eps;
            }
            /* float forward passes: the difference quotient carries ~1e-7 / eps of noise, and
             * O(eps^2) curvature; 1e-3 absolute plus 2% relative covers both. One-sided slopes
             * carry O(eps) curvature: 5% relative. */
            double tol = 1e-3 + 0.02 * fabs(fd[1]), tol_one = 1e-3 + 0.05 * fabs(fd[1]);
            int smooth = fabs(fd[0] - fd[1]) <= tol;
            double err = fabs(fd[1] - g[i]) / tol;
            if (smooth && err <= 1) {
                worst = err > worst ? err : worst;
                continue;
            }
            if (fabs(s_up - g[i]) <= tol_one || fabs(s_down - g[i]) <= tol_one) {
                kinks++;
                continue;
            }
            fail_msg("param %zu element %zu: backward %g, finite differences %g and %g, "
                     "one-sided slopes %g and %g", r, i, (double)g[i], fd[0], fd[1], s_down, s_up);
        }
        free(w);
        free(g);
    }
    print_message("worst gradient error %.3f of the bound (%d of %zu elements at a kink, "
                  "matched by a one-sided slope)\n", worst, kinks, 3 * nrefs);
    assert_true((size_t)kinks <= 3 * nrefs / 7); /* the rest by central differences */
    clg_net_destroy(net);
}

static void whole_network_gradient_matches_finite_differences(void **state)
{
    (void)state;
    check_gradients(tiny, 10); /* conv w b, bn g b, conv w b, fc w b, fc w b */
}

/* The same through sums, stacked channels, a layer read by two others and a branch that
 * rejoins: the gradients that meet are added. */
static void graph_gradient_matches_finite_differences(void **state)
{
    (void)state;
    check_gradients(graph, 14); /* five convs w b, bn g b, fc w b */
}

/* The activations of mobile networks between layers with weights: ReLU6, hard swish, SiLU,
 * a hard sigmoid of PyTorch's slope. Their kinks (clip's and the hard forms' ends) are
 * matched by one-sided slopes, as a max pool's. A clip to [0, M] after a convolution runs in
 * the convolution's epilogue: with M small enough to clip, the same values as the clip run
 * alone (a second reader keeps it apart), and its backward pass from the clipped values the
 * same as from its input. */
static void mobile_activations_gradient_matches_finite_differences(void **state)
{
    (void)state;
    static const char fused[] = "input 6x6x2\nconv 3x3x4 pad=1\nclip min=0 max=0.2 name=c\n"
                                "conv 3x3x3 pad=1\nfc 3\nsoftmax\n";
    static const char apart[] = "input 6x6x2\nconv 3x3x4 pad=1 name=v\nclip min=0 max=0.2 name=c\n"
                                "conv 3x3x3 pad=1\nconcat v\nslice 0:3\nfc 3\nsoftmax\n";
    /* the fused clip's backward reads the clipped output where the clip alone reads its
     * input: the same mask (0 < x < M, strict), so the same gradient, bit for bit, on values
     * that cross both ends (a gradient check there sits on kinks too often to be reliable) */
    enum { M = 4096 };
    float raw[M], capped[M], g[M], d1[M], d2[M];
    clg_test_fill_uniform(&rng, raw, M, -1.0f, 2.0f);
    clg_test_fill_uniform(&rng, g, M, -1.0f, 1.0f);
    for (int i = 0; i < M; i++)
        capped[i] = raw[i] < 0 ? 0 : raw[i] > 1 ? 1 : raw[i];
    clg_shape sh = {1, M, 1, 1};
    clg_tensor *tr = clg_test_tensor(ctx, sh, raw), *tc = clg_test_tensor(ctx, sh, capped);
    clg_tensor *tg = clg_test_tensor(ctx, sh, g), *t1 = clg_test_tensor(ctx, sh, NULL);
    clg_tensor *t2 = clg_test_tensor(ctx, sh, NULL);
    clg_activation_desc clip = {CLG_ACT_CLIP, 0.0f, 1.0f};
    CLG_ASSERT_STATUS(clg_activation_backward_desc(ctx, &clip, tr, tc, tg, t1), CLG_OK);
    CLG_ASSERT_STATUS(clg_activation_backward_desc(ctx, &clip, tc, tc, tg, t2), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(t1, d1, M), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(t2, d2, M), CLG_OK);
    assert_memory_equal(d1, d2, sizeof d1);
    clg_tensor *all[] = {tr, tc, tg, t1, t2};
    for (int i = 0; i < 5; i++)
        clg_tensor_destroy(all[i]);
    clg_net *a = parse_ok(fused), *b = parse_ok(apart);
    CLG_ASSERT_STATUS(clg_net_init(a, 4), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(b, 4), CLG_OK);
    assert_true(a->layers[0].plan.relu_fused && a->layers[0].plan.relu_max == 0.2f);
    assert_false(b->layers[0].plan.relu_fused);
    float x[3 * 72], ya[3 * 144], yb[3 * 144];
    clg_test_fill_uniform(&rng, x, 3 * 72, -1, 1);
    CLG_ASSERT_STATUS(clg_net_predict(a, x, 3, ya), CLG_OK); /* the fused form's clipped values */
    clg_test_poison_nan(ya, 3 * 144);
    clg_test_poison_nan(yb, 3 * 144);
    CLG_ASSERT_STATUS(clg_net_activations(a, x, 3, "c", ya, 3 * 144, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_activations(b, x, 3, "c", yb, 3 * 144, NULL), CLG_OK);
    int clipped = 0;
    for (int i = 0; i < 3 * 144; i++) {
        assert_true(fabsf(ya[i] - yb[i]) <= 1e-6f && ya[i] >= 0.0f && ya[i] <= 0.2f);
        clipped += ya[i] == 0.2f;
    }
    assert_true(clipped > 0);
    clg_net_destroy(a);
    clg_net_destroy(b);
    check_gradients("input 6x6x2\n"
                    "conv 3x3x4 pad=1\n"
                    "clip min=0 max=6\n"
                    "conv 3x3x4 pad=1\n"
                    "hardswish\n"
                    "conv 1x1x4\n"
                    "silu\n"
                    "fc 5\n"
                    "hardsigmoid alpha=0.16666667 beta=0.5\n"
                    "fc 3\n"
                    "softmax\n",
                    10); /* three convs w b, two fc w b */
}

/* At inference a SiLU after a convolution runs in the convolution's epilogue (the inference
 * layout gives both one buffer); training's layout keeps them apart (SiLU's backward reads
 * its input). Both give the same outputs, and a convolution asked for its own output still
 * gives it before the SiLU: a fusion applied twice, or not at all, fails these. */
static void silu_fused_at_inference_only(void **state)
{
    (void)state;
    static const char text[] = "input 12x12x8\nconv 3x3x16 pad=1 stride=2 name=v\nsilu name=s\n"
                               "conv 1x1x48 name=e\nsilu\nconv 3x3x48 pad=1 groups=48\n"
                               "silu name=u\ngap\nfc 3\nsoftmax\n";
    enum { N = 5, IN = 12 * 12 * 8, MID = 16 * 6 * 6, LAST = 48 * 6 * 6 };
    clg_net *a = parse_ok(text), *b = parse_ok(text);
    CLG_ASSERT_STATUS(clg_net_init(a, 21), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(b, 21), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_reserve(b, N), CLG_OK); /* the training layout */
    static float x[N * IN], pa[N * 3], pb[N * 3], v[N * MID], s[N * MID], ua[N * LAST],
        ub[N * LAST];
    clg_test_fill_uniform(&rng, x, N * IN, -1, 1);
    clg_test_poison_nan(pa, N * 3);
    clg_test_poison_nan(pb, N * 3);
    CLG_ASSERT_STATUS(clg_net_predict(a, x, N, pa), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_predict(b, x, N, pb), CLG_OK);
    assert_true(a->infer_layout && !b->infer_layout);
    for (size_t i = 0; i < 5; i += 2) /* each convolution applies the SiLU after it */
        assert_true(a->layers[i].plan.silu_fused && a->layers[i + 1].plan.silu_applied &&
                    a->layers[i + 1].slot == a->layers[i].slot);
    for (int i = 0; i < N * 3; i++)
        assert_true(fabsf(pa[i] - pb[i]) <= 1e-6f);
    CLG_ASSERT_STATUS(clg_net_activations(a, x, N, "u", ua, N * LAST, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_activations(b, x, N, "u", ub, N * LAST, NULL), CLG_OK);
    double num = 0, den = 0;
    for (int i = 0; i < N * LAST; i++)
        num += (double)(ua[i] - ub[i]) * (ua[i] - ub[i]), den += (double)ub[i] * ub[i];
    assert_true(den > 0 && sqrt(num / den) <= 1e-6);
    /* the first convolution's own output, then the SiLU's from the fused pass */
    clg_test_poison_nan(v, N * MID);
    clg_test_poison_nan(s, N * MID);
    CLG_ASSERT_STATUS(clg_net_activations(a, x, N, "v", v, N * MID, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_activations(a, x, N, "s", s, N * MID, NULL), CLG_OK);
    int negative = 0;
    for (int i = 0; i < N * MID; i++) {
        double want = v[i] / (1.0 + exp(-(double)v[i]));
        assert_true(fabs(s[i] - want) <= 1e-6 * (1.0 + fabs(want)));
        negative += v[i] < 0;
    }
    assert_true(negative > 0); /* the SiLU changed values both sides of 0 */
    /* the inference profile runs those fusions: a fused SiLU's time is next to nothing, but
     * the layout and its buffers stay; bad arguments are refused */
    clg_layer_time lt[10];
    CLG_ASSERT_STATUS(clg_net_profile_inference(a, N, 3, lt), CLG_OK);
    assert_true(a->infer_layout);
    for (size_t i = 0; i < 5; i += 2)
        assert_true(lt[i].forward_ms > 0 && lt[i + 1].backward_ms == 0 &&
                    lt[i + 1].forward_ms < lt[i].forward_ms);
    assert_int_equal(clg_net_profile_inference(a, 0, 3, lt), CLG_ERR_INVALID_ARG);
    assert_int_equal(clg_net_profile_inference(a, N, 0, lt), CLG_ERR_INVALID_ARG);
    clg_net_destroy(a);
    clg_net_destroy(b);
}

/* Squeeze-and-excitation: a gate from the global mean of a feature map scales its channels
 * (the gate the product's first input, then its second), and a product of one shape. The
 * gate's gradient sums over each plane; the feature map's reaches it twice (through the gate
 * and the product). */
static void gate_products_gradient_matches_finite_differences(void **state)
{
    (void)state;
    check_gradients("input 6x6x2\n"
                    "conv 3x3x4 pad=1 name=f\n"
                    "gap\n"
                    "conv 1x1x2\n"
                    "silu\n"
                    "conv 1x1x4\n"
                    "sigmoid name=g\n"
                    "mul f name=se\n"
                    "conv 3x3x4 pad=1\n"
                    "tanh name=t\n"
                    "mul t from=se\n"
                    "fc 3\n"
                    "softmax\n",
                    10); /* four convs w b, fc w b */
}

/* ShuffleNet's unit: a layer's channels split (by range and as part 2 of 3), one part through
 * a branch, the parts stacked and shuffled in 3 groups of 2 (its inverse: 2 groups of 3); the
 * gradient reaches the split layer through both slices. */
static void channel_split_and_shuffle_gradient_matches_finite_differences(void **state)
{
    (void)state;
    static const char text[] = "input 6x6x2\n"
                               "conv 3x3x6 pad=1 name=a\n"
                               "slice 0:2 name=lo\n"
                               "slice 2/3 name=hi from=a\n"
                               "conv 3x3x4 pad=1\n"
                               "tanh\n"
                               "concat lo\n"
                               "shuffle 3\n"
                               "fc 3\n"
                               "softmax\n";
    check_gradients(text, 6); /* two convs w b, fc w b */
    /* the part resolves to its channels; the builder makes the same */
    clg_net *net = parse_ok(text);
    char *back = text_of(net);
    assert_non_null(strstr(back, "slice 4:6 name=hi from=a\n"));
    free(back);
    clg_net_destroy(net);
    clg_conv2d_desc p1 = clg_conv2d_desc_default();
    p1.pad_top = p1.pad_bottom = p1.pad_left = p1.pad_right = 1;
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 6, 6}, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, &p1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_channel_slice(net, 1, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_channel_shuffle(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_channel_shuffle(net, 2), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_net_add_channel_slice(net, 2, 2), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_net_add_channel_slice(net, 1, 0), CLG_ERR_INVALID_ARG);
    back = text_of(net);
    assert_string_equal(back, "input 6x6x2\nconv 3x3x4 pad=1\nslice 1:4\nshuffle 3\n");
    free(back);
    clg_net_destroy(net);
}

/* The copies behind shuffle, slice and concat on planes of 65x65 (a concat's per-image block
 * of 2 x 4,225 values cut into pieces on CPUs; runs that end off a 16-wide vector): the
 * outputs against their definitions, exact. */
static void channel_copies_on_large_planes(void **state)
{
    (void)state;
    enum { C = 4, HW = 65 * 65, N = 2 };
    clg_net *net = parse_ok("input 65x65x4\nshuffle 2 name=s\nslice 1:3 name=m\nconcat s name=c\n"
                            "fc 2\nsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 1), CLG_OK);
    float *x = malloc(sizeof *x * N * C * HW), *y = malloc(sizeof *y * N * 6 * HW);
    for (size_t i = 0; i < (size_t)N * C * HW; i++)
        x[i] = (float)i;
    clg_test_poison_nan(y, N * 6 * HW);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "c", y, N * 6 * HW, NULL), CLG_OK);
    /* shuffle 2 of 4: s = x channels 0, 2, 1, 3; m = s's 1, 2 = x's 2, 1; c = m then s */
    const int from[6] = {2, 1, 0, 2, 1, 3};
    for (int n = 0; n < N; n++)
        for (int c = 0; c < 6; c++)
            for (int k = 0; k < HW; k++)
                assert_true(y[((size_t)n * 6 + (size_t)c) * HW + (size_t)k] ==
                            x[((size_t)n * C + (size_t)from[c]) * HW + (size_t)k]);
    free(x);
    free(y);
    clg_net_destroy(net);
}

/* Padding in the three modes between layers with weights, one cropping (negative constant
 * pads); the text form keeps each (shortest forms written as four sides), and the builder
 * makes the same layers. */
static void padding_gradient_matches_finite_differences(void **state)
{
    (void)state;
    static const char text[] = "input 5x6x2\n"
                               "pad 1,2 mode=reflect\n"
                               "conv 3x3x3\n"
                               "pad -1,0,1,2 value=0.5\n"
                               "tanh\n"
                               "pad 1 mode=edge\n"
                               "conv 3x3x2\n"
                               "fc 3\n"
                               "softmax\n";
    check_gradients(text, 6); /* two convs w b, fc w b */
    clg_net *net = parse_ok(text);
    char *back = text_of(net);
    assert_non_null(strstr(back, "pad 1,1,2,2 mode=reflect\nconv 3x3x3\npad -1,0,1,2 value=0.5\n"
                                 "tanh\npad 1,1,1,1 mode=edge\n"));
    free(back);
    clg_net_destroy(net);
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 5, 6}, &net), CLG_OK);
    clg_pad2d_desc d = clg_pad2d_desc_default();
    d.mode = CLG_PAD_REFLECT, d.top = d.bottom = 1, d.left = d.right = 2;
    CLG_ASSERT_STATUS(clg_net_add_pad(net, &d), CLG_OK);
    d.left = 10; /* not below the 10 columns it reflects */
    CLG_ASSERT_STATUS(clg_net_add_pad(net, &d), CLG_ERR_SHAPE);
    d.mode = CLG_PAD_EDGE, d.left = -1;
    CLG_ASSERT_STATUS(clg_net_add_pad(net, &d), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_add_pad(net, NULL), CLG_ERR_INVALID_ARG);
    back = text_of(net);
    assert_string_equal(back, "input 5x6x2\npad 1,1,2,2 mode=reflect\n");
    free(back);
    clg_net_destroy(net);
}

/* Transposed convolutions (strides with output padding, groups, dilation, no bias) between
 * layers with weights: gradients against finite differences; the text form keeps every
 * setting; the builder makes the same; an output padding not below the stride is refused. */
static void transposed_convolution_gradient_matches_finite_differences(void **state)
{
    (void)state;
    static const char text[] = "input 3x4x2\n"
                               "convt 3x3x4 stride=2 pad=1 outpad=1\n"
                               "tanh\n"
                               "convt 2x2x2 stride=2 groups=2 bias=0\n"
                               "elu\n"
                               "convt 3x3x2 pad=2 dilation=2\n"
                               "fc 3\n"
                               "softmax\n";
    check_gradients(text, 7); /* convt w b, convt w, convt w b, fc w b */
    clg_net *net = parse_ok(text);
    char *back = text_of(net);
    assert_non_null(strstr(back, "convt 3x3x4 stride=2 pad=1 outpad=1\ntanh\n"
                                 "convt 2x2x2 stride=2 groups=2 bias=0\nelu alpha=1\n"
                                 "convt 3x3x2 pad=2 dilation=2\n"));
    free(back);
    clg_layer_info info;
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 0, &info), CLG_OK);
    assert_true(info.output.c == 4 && info.output.h == 6 && info.output.w == 8);
    clg_net_destroy(net);
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 3, 4}, &net), CLG_OK);
    clg_conv2d_desc d = clg_conv2d_desc_default();
    d.stride_h = d.stride_w = 2, d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    CLG_ASSERT_STATUS(clg_net_add_conv_transpose(net, 3, 3, 4, &d, 1, 1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv_transpose(net, 3, 3, 4, &d, 2, 0, 1), CLG_ERR_INVALID_ARG);
    back = text_of(net);
    assert_string_equal(back, "input 3x4x2\nconvt 3x3x4 stride=2 pad=1 outpad=1\n");
    free(back);
    clg_net_destroy(net);
}

/* Up-sampling layers (nearest, bilinear, factors apart) between layers with weights:
 * gradients against finite differences; text and builder; refusals. */
static void upsampling_gradient_matches_finite_differences(void **state)
{
    (void)state;
    static const char text[] = "input 3x4x2\n"
                               "conv 3x3x3 pad=1\n"
                               "upsample 2 mode=bilinear\n"
                               "tanh\n"
                               "upsample 1,3\n"
                               "conv 3x3x2 pad=1\n"
                               "fc 3\n"
                               "softmax\n";
    check_gradients(text, 6); /* two convs w b, fc w b */
    clg_net *net = parse_ok(text);
    char *back = text_of(net);
    assert_non_null(strstr(back, "upsample 2 mode=bilinear\ntanh\nupsample 1,3\n"));
    free(back);
    clg_layer_info info;
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 3, &info), CLG_OK);
    assert_true(info.output.c == 3 && info.output.h == 6 && info.output.w == 24);
    clg_net_destroy(net);
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 3, 4}, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_upsample(net, CLG_UPSAMPLE_BILINEAR, 2, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_upsample(net, CLG_UPSAMPLE_NEAREST, 0, 2), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_add_upsample(net, (clg_upsample_mode)4, 2, 2), CLG_ERR_INVALID_ARG);
    back = text_of(net);
    assert_string_equal(back, "input 3x4x2\nupsample 2,3 mode=bilinear\n");
    free(back);
    clg_net_destroy(net);
}

/* A U-Net-like skip: the encoder's map (unpadded convolutions make the decoder's smaller) is
 * cropped at the centre to the decoder's size and stacked with it; gradients against finite
 * differences (the reference layer's size only is read: a zero gradient from the crop), the
 * window's place by the definition (an odd difference's extra row at the bottom), text and
 * builder, refusals. */
static void centre_crop_gradient_matches_finite_differences(void **state)
{
    (void)state;
    static const char text[] = "input 6x6x2\n"
                               "conv 3x3x3 pad=1 name=enc\n"
                               "conv 3x3x3 name=mid\n"
                               "convt 3x3x2 stride=1 name=dec\n"
                               "conv 2x2x2 name=small\n"
                               "crop small from=enc name=c\n"
                               "concat small\n"
                               "fc 3\n"
                               "softmax\n";
    check_gradients(text, 10); /* four convs w b (convt's too), fc w b */
    clg_net *net = parse_ok(text);
    char *back = text_of(net);
    if (!strstr(back, "crop name=c from=enc,small\n"))
        fail_msg("%s", back);
    free(back);
    clg_layer_info info;
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 4, &info), CLG_OK);
    assert_true(info.output.c == 3 && info.output.h == 5 && info.output.w == 5);
    /* 6x6 cropped to 5x5: rows and columns 0..4 (the extra row and column dropped at the
     * bottom and right) */
    CLG_ASSERT_STATUS(clg_net_init(net, 2), CLG_OK);
    float x[72], e[3 * 36], c[3 * 25];
    clg_test_fill_uniform(&rng, x, 72, -1, 1);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, 1, "enc", e, 3 * 36, NULL), CLG_OK);
    clg_test_poison_nan(c, 3 * 25);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, 1, "c", c, 3 * 25, NULL), CLG_OK);
    for (int ch = 0; ch < 3; ch++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                assert_true(c[(ch * 5 + i) * 5 + j] == e[(ch * 6 + i) * 6 + j]);
    clg_net_destroy(net);
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 9, 8}, &net), CLG_OK);
    clg_conv2d_desc d = clg_conv2d_desc_default();
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 2, &d, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "small"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_take_from(net, "input"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_crop(net, "small"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_crop(net, NULL), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_add_crop(net, "input"), CLG_ERR_SHAPE); /* larger than it */
    back = text_of(net);
    assert_string_equal(back, "input 9x8x2\nconv 3x3x2 name=small\ncrop from=input,small\n");
    free(back);
    clg_net_destroy(net);
}

/* A transposed convolution's output against its definition in double: each input value
 * scattered through the kernel, y[o][h s - pt + r d][w s - pl + q d] += x[i][h][w] W[i][o][r][q],
 * plus the bias; on small integers (exact). */
static void transposed_convolution_matches_its_definition(void **state)
{
    (void)state;
    enum { N = 2, C = 3, H = 3, W = 5, K = 4, R = 3, S = 2, SH = 2, SW = 3, PT = 1, PL = 1 };
    clg_net *net = parse_ok("input 3x5x3\nconvt 3x2x4 stride=2,3 pad=1,0,1,0 outpad=1,2 name=t\n"
                            "fc 2\nsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    size_t np = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    float *p = malloc(np * sizeof *p);
    clg_test_fill_int(&rng, p, np, -2, 2);
    CLG_ASSERT_STATUS(clg_net_set_params(net, CLG_PARAMS_LEARNABLE, p, np), CLG_OK);
    enum { OH = (H - 1) * SH - PT + (R - 1) + 1 + 1, OW = (W - 1) * SW - PL + (S - 1) + 1 + 2 };
    float x[N * C * H * W], y[N * K * OH * OW];
    double ref[N * K * OH * OW];
    clg_test_fill_int(&rng, x, N * C * H * W, -3, 3);
    const float *wt = p, *bias = p + C * K * R * S;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < K; o++)
            for (int i = 0; i < OH * OW; i++)
                ref[(n * K + o) * OH * OW + i] = bias[o];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++)
                    for (int o = 0; o < K; o++)
                        for (int r = 0; r < R; r++)
                            for (int q = 0; q < S; q++) {
                                int oh = h * SH - PT + r, ow = w * SW - PL + q;
                                if (oh < 0 || ow < 0 || oh >= OH || ow >= OW)
                                    continue;
                                ref[((n * K + o) * OH + oh) * OW + ow] +=
                                    (double)x[((n * C + c) * H + h) * W + w] *
                                    wt[((c * K + o) * R + r) * S + q];
                            }
    clg_test_poison_nan(y, N * K * OH * OW);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "t", y, N * K * OH * OW, NULL), CLG_OK);
    for (int i = 0; i < N * K * OH * OW; i++)
        assert_true(y[i] == (float)ref[i]);
    free(p);
    clg_net_destroy(net);
}

/* The shuffle's output against its definition on small integers (exact: a copy), and its
 * backward pass the inverse permutation. */
static void shuffle_permutes_channels(void **state)
{
    (void)state;
    clg_net *net = parse_ok("input 2x1x6\nshuffle 3\nfc 2\nsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 1), CLG_OK);
    float x[2 * 12], y[2 * 12];
    for (int i = 0; i < 24; i++)
        x[i] = (float)i;
    clg_test_poison_nan(y, 24);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, 2, "l1", y, 24, NULL), CLG_OK);
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 6; c++) /* 3 groups of 2: out c from in (c % 3) * 2 + c / 3 */
            for (int k = 0; k < 2; k++)
                assert_true(y[(n * 6 + c) * 2 + k] == x[(n * 6 + (c % 3) * 2 + c / 3) * 2 + k]);
    clg_net_destroy(net);
}

/* The builder makes the same network as the text: a gate, clip's and hard sigmoid's two
 * settings; and refuses a product of three inputs. */
static void gates_through_the_builder(void **state)
{
    (void)state;
    static const char text[] = "input 6x6x2\nconv 3x3x4 pad=1 name=f\ngap\nconv 1x1x4\n"
                               "hardsigmoid alpha=0.2 beta=0.5\nmul f\nclip min=0 max=6\nfc 3\n"
                               "softmax\n";
    clg_conv2d_desc p1 = clg_conv2d_desc_default();
    p1.pad_top = p1.pad_bottom = p1.pad_left = p1.pad_right = 1;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 2, 6, 6}, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, &p1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "f"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_global_avg_pool(net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 1, 1, 4, NULL, 1), CLG_OK);
    clg_activation_desc hs = {CLG_ACT_HARD_SIGMOID, 0.2f, 0.5f}, relu6 = {CLG_ACT_CLIP, 0, 6};
    CLG_ASSERT_STATUS(clg_net_add_activation(net, CLG_ACT_HARD_SIGMOID, 0.2f), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_add_activation_desc(net, &hs), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_mul(net, (const char *const[]){"f", "l2"}, 2), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_add_mul(net, (const char *const[]){"f"}, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_activation_desc(net, &relu6), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_fc(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_softmax_xent(net), CLG_OK);
    char *built = text_of(net);
    assert_string_equal(built, text);
    free(built);
    clg_net_destroy(net);
}

/* Input normalisation: in the text form (per channel, or one value for all), applied to what
 * the network takes (its predictions are those of the same weights on inputs normalised
 * here: a subtraction and a division per value, as the device does), kept by model files,
 * and refused where it cannot apply. */
static void input_normalisation(void **state)
{
    (void)state;
    static const char text[] = "input 5x4x3 mean=0.5,0.25,-1 std=2,0.5,0.25\nconv 3x3x4 pad=1\n"
                               "relu\nfc 3\nsoftmax\n";
    static const char plain[] = "input 5x4x3\nconv 3x3x4 pad=1\nrelu\nfc 3\nsoftmax\n";
    clg_net *net = parse_ok(text), *ref = parse_ok(plain);
    char *back = text_of(net);
    assert_string_equal(back, text);
    free(back);
    CLG_ASSERT_STATUS(clg_net_init(net, 9), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(ref, 9), CLG_OK);
    enum { N = 7, PER = 60 };
    static const float mean[3] = {0.5f, 0.25f, -1}, sd[3] = {2, 0.5f, 0.25f};
    float x[N * PER], xn[N * PER], p[N * 3], q[N * 3];
    clg_test_fill_uniform(&rng, x, N * PER, 0, 1);
    for (size_t i = 0; i < N * PER; i++) {
        size_t c = (i / 20) % 3;
        xn[i] = (x[i] - mean[c]) / sd[c];
    }
    clg_test_poison_nan(p, N * 3);
    CLG_ASSERT_STATUS(clg_net_predict(net, x, N, p), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_predict(ref, xn, N, q), CLG_OK);
    for (size_t i = 0; i < N * 3; i++) /* OpenCL's division may differ by an ulp or two */
        if (!(fabsf(p[i] - q[i]) <= 1e-6f))
            fail_msg("probability %zu: %.9g normalised by the net, %.9g normalised here", i,
                     p[i], q[i]);
    /* a model file keeps it; one value for all channels is written as one */
    char *dir = clg_test_tempdir("nn-norm"), path[4096];
    snprintf(path, sizeof path, "%s/n.clgm", dir);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_OK);
    clg_net *loaded;
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &loaded), CLG_OK);
    float m[3], d[3];
    size_t count;
    CLG_ASSERT_STATUS(clg_net_input_normalization(loaded, m, d, 3, &count), CLG_OK);
    assert_int_equal(count, 3);
    assert_memory_equal(m, mean, sizeof m);
    assert_memory_equal(d, sd, sizeof d);
    CLG_ASSERT_STATUS(clg_net_input_normalization(loaded, m, d, 2, &count), CLG_ERR_INVALID_ARG);
    float one = 0.5f, s2 = 4;
    CLG_ASSERT_STATUS(clg_net_set_input_normalization(loaded, &one, &s2, 1), CLG_OK);
    back = text_of(loaded);
    assert_true(!strncmp(back, "input 5x4x3 mean=0.5 std=4\n", 27));
    free(back);
    CLG_ASSERT_STATUS(clg_net_set_input_normalization(loaded, NULL, NULL, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_input_normalization(loaded, m, d, 3, &count), CLG_OK);
    assert_int_equal(count, 0);
    /* refused: two values for three channels, a std of 0, a NaN mean, an unknown word */
    float two[2] = {1, 1}, zero = 0, bad = NAN;
    CLG_ASSERT_STATUS(clg_net_set_input_normalization(loaded, two, two, 2), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_net_set_input_normalization(loaded, &one, &zero, 1), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_net_set_input_normalization(loaded, &bad, &s2, 1), CLG_ERR_INVALID_ARG);
    static const struct {
        const char *text, *words;
    } bad_text[] = {
        {"input 4x4x3 mean=1,2\nfc 2\nsoftmax\n", "one value or one per channel"},
        {"input 4x4x3 std=0\nfc 2\nsoftmax\n", "std of channel 1 is 0"},
        {"input 4x4x3 scale=2\nfc 2\nsoftmax\n", "line 1, column 13"},
        {"input 4x4x3 mean=1,x,2\nfc 2\nsoftmax\n", "mean: expected numbers"},
    };
    for (size_t i = 0; i < sizeof bad_text / sizeof bad_text[0]; i++) {
        clg_net *no = (clg_net *)&no;
        CLG_ASSERT_STATUS(clg_net_parse(ctx, bad_text[i].text, &no), CLG_ERR_INVALID_ARG);
        assert_null(no);
        if (!strstr(clg_ctx_last_error(ctx), bad_text[i].words))
            fail_msg("\"%s\" lacks \"%s\"", clg_ctx_last_error(ctx), bad_text[i].words);
    }
    clg_net_destroy(loaded);
    clg_test_rmtree(dir);
    free(dir);
    clg_net_destroy(net);
    clg_net_destroy(ref);
}

/* All gradients of the net, packed. */
static float *all_grads(clg_net *net, size_t *count)
{
    clg__param_ref refs[16];
    size_t nrefs = clg__net_params(net, refs, 16), total = 0, at = 0;
    for (size_t r = 0; r < nrefs; r++)
        total += clg_tensor_numel(refs[r].grad);
    float *g = malloc(total * sizeof *g);
    for (size_t r = 0; r < nrefs; r++) {
        size_t n = clg_tensor_numel(refs[r].grad);
        CLG_ASSERT_STATUS(clg_tensor_download(refs[r].grad, g + at, n), CLG_OK);
        at += n;
    }
    *count = total;
    return g;
}

/* A residual block's sum (and its ReLU) written by the convolution before it: a 1x1 layer
 * on 7x7 planes (the products' epilogue, images side by side), a 3x3 one (a pass after) and
 * a 1x1 without bias, the convolution the sum's first input (a) or its second (b, as a
 * projection block's shortcut in PyTorch's graphs); against the same network with an
 * identity (dropout 0) between each convolution and its sum (nothing fused) and the same
 * parameters: the same probabilities, bit for bit, at inference, and the same loss and
 * gradients in training. */
static void sum_fused_into_convolutions(void **state)
{
    (void)state;
    static const char first[] =
        "input 7x7x8\nconv 3x3x48 pad=1 name=r\nconv 1x1x48 name=p\nadd r relu=1 name=s1\n"
        "conv 3x3x48 pad=1 name=q\nadd s1 name=s2\nconv 1x1x48 bias=0 name=t\n"
        "add s2 relu=1\ngap\nfc 3\nsoftmax\n";
    static const char second[] =
        "input 7x7x8\nconv 3x3x48 pad=1 name=r\nconv 1x1x48 name=p\nadd p relu=1 name=s1 from=r\n"
        "conv 3x3x48 pad=1 name=q\nadd q name=s2 from=s1\nconv 1x1x48 bias=0 name=t\n"
        "add t relu=1 from=s2\ngap\nfc 3\nsoftmax\n";
    static const char apart[] =
        "input 7x7x8\nconv 3x3x48 pad=1 name=r\nconv 1x1x48\ndropout 0 name=p\n"
        "add r relu=1 name=s1\nconv 3x3x48 pad=1\ndropout 0 name=q\nadd s1 name=s2\n"
        "conv 1x1x48 bias=0\ndropout 0 name=t\nadd s2 relu=1\ngap\nfc 3\nsoftmax\n";
    enum { N = 5, IN = 7 * 7 * 8 };
    clg_net *c = parse_ok(apart);
    CLG_ASSERT_STATUS(clg_net_init(c, 5), CLG_OK);
    for (size_t i = 1; i < 10; i++)
        assert_false(c->layers[i].plan.sum_fused || c->layers[i].plan.sum_written);
    static float x[N * IN], pa[N * 3], pc[N * 3];
    clg_test_fill_uniform(&rng, x, N * IN, -1, 1);
    clg_test_poison_nan(pc, N * 3);
    CLG_ASSERT_STATUS(clg_net_predict(c, x, N, pc), CLG_OK);
    int32_t labels[N] = {0, 2, 1, 2, 1};
    size_t count[2];
    CLG_ASSERT_STATUS(clg__net_reserve(c, N), CLG_OK); /* the training layout */
    CLG_ASSERT_STATUS(clg__net_upload(c, x, N), CLG_OK);
    double loss_c = loss_at(c, labels);
    CLG_ASSERT_STATUS(clg__net_backward(c, labels, 1.0f / N, 7), CLG_OK);
    float *gc = all_grads(c, &count[1]);
    const char *const fused[] = {first, second};
    for (int f = 0; f < 2; f++) {
        clg_net *a = parse_ok(fused[f]);
        CLG_ASSERT_STATUS(clg_net_init(a, 5), CLG_OK);
        /* the same parameters (an initialiser's gain reads what follows a layer, which
         * differs) */
        clg__param_ref ra[16], rc[16];
        size_t nr = clg__net_params(a, ra, 16);
        assert_int_equal(clg__net_params(c, rc, 16), nr);
        for (size_t r = 0; r < nr; r++) {
            size_t n = clg_tensor_numel(ra[r].param);
            float *v = malloc(n * sizeof *v);
            CLG_ASSERT_STATUS(clg_tensor_download(rc[r].param, v, n), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_upload(ra[r].param, v, n), CLG_OK);
            free(v);
        }
        for (size_t i = 1; i < 7; i += 2)
            assert_true(a->layers[i].plan.sum_fused && a->layers[i + 1].plan.sum_written);
        clg_test_poison_nan(pa, N * 3);
        CLG_ASSERT_STATUS(clg_net_predict(a, x, N, pa), CLG_OK);
        for (int i = 0; i < N * 3; i++)
            assert_true(pa[i] == pc[i]);
        CLG_ASSERT_STATUS(clg__net_reserve(a, N), CLG_OK);
        CLG_ASSERT_STATUS(clg__net_upload(a, x, N), CLG_OK);
        assert_true(loss_at(a, labels) == loss_c);
        CLG_ASSERT_STATUS(clg__net_backward(a, labels, 1.0f / N, 7), CLG_OK);
        float *ga = all_grads(a, &count[0]);
        assert_int_equal(count[0], count[1]);
        /* the gradients within rounding: a sum's readers add their gradients in another
         * order */
        double num = 0, den = 0;
        for (size_t i = 0; i < count[0]; i++)
            num += ((double)ga[i] - gc[i]) * ((double)ga[i] - gc[i]),
                den += (double)gc[i] * gc[i];
        assert_true(den > 0 && sqrt(num / den) <= 1e-6);
        free(ga);
        clg_net_destroy(a);
    }
    free(gc);
    clg_net_destroy(c);
}

/* The tiny network, initialised, holding a batch of n random samples. */
static clg_net *tiny_with_batch(size_t n)
{
    clg_net *net = parse_ok(tiny);
    CLG_ASSERT_STATUS(clg_net_init(net, 11), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_reserve(net, n), CLG_OK);
    float *x = malloc(n * 72 * sizeof *x);
    clg_test_fill_uniform(&rng, x, n * 72, -1, 1);
    CLG_ASSERT_STATUS(clg__net_upload(net, x, n), CLG_OK);
    free(x);
    return net;
}

/* Training reads the loss back while backward runs, which then reuses the staged labels: the
 * same loss, hits and gradients, bit for bit, as the blocking path; after a step with other
 * labels, the labels are this step's. */
static void staged_loss_equals_the_blocking_one(void **state)
{
    (void)state;
    enum { N = 5 };
    clg_net *net = tiny_with_batch(N);
    int32_t labels[N] = {0, 2, 1, 2, 1}, other[N] = {1, 1, 0, 0, 2};
    double want_loss;
    size_t want_hits, n1, n2;
    CLG_ASSERT_STATUS(clg__net_forward(net, 1, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_loss(net, labels, &want_loss, &want_hits), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_backward(net, labels, 1.0f / N, 3), CLG_OK);
    float *want = all_grads(net, &n1);
    for (int round = 0; round < 2; round++) {
        double loss = -1;
        size_t hits = 99;
        CLG_ASSERT_STATUS(clg__net_forward(net, 1, 3), CLG_OK);
        CLG_ASSERT_STATUS(clg__net_loss_begin(net, round ? labels : other), CLG_OK);
        CLG_ASSERT_STATUS(clg__net_backward(net, round ? labels : other, 1.0f / N, 3), CLG_OK);
        CLG_ASSERT_STATUS(clg__net_loss_end(net, &loss, &hits), CLG_OK);
        if (!round) { /* other labels: another loss */
            assert_true(loss != want_loss);
            continue;
        }
        assert_true(loss == want_loss);
        assert_int_equal(hits, want_hits);
        float *got = all_grads(net, &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(got, want, n1 * sizeof *got);
        free(got);
    }
    double loss;
    CLG_ASSERT_STATUS(clg__net_loss_end(net, &loss, NULL), CLG_ERR_INTERNAL); /* none pending */
    free(want);
    clg_net_destroy(net);
}

/* The queue held until `gate` opens: a helper thread opens it after a pause, saying so first. */
typedef struct held_queue {
    cl_event gate;
    atomic_int opened;
    pthread_t thread;
} held_queue;

static void *open_later(void *arg)
{
    held_queue *h = arg;
    struct timespec pause = {0, 150 * 1000 * 1000};
    nanosleep(&pause, NULL);
    atomic_store(&h->opened, 1);
    clSetUserEventStatus(h->gate, CL_COMPLETE);
    return NULL;
}

static void hold_queue(held_queue *h, cl_command_queue q)
{
    cl_context c = NULL;
    cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
    assert_int_equal(err, CL_SUCCESS);
    h->gate = clCreateUserEvent(c, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clEnqueueBarrierWithWaitList(q, 1, &h->gate, NULL), CL_SUCCESS);
    atomic_init(&h->opened, 0);
    assert_int_equal(pthread_create(&h->thread, NULL, open_later, h), 0);
}

/* A staged loss that fails after queueing the labels' upload (here: its host arrays cannot
 * grow) must not return while the upload may still read the caller's labels, which training
 * frees at once on an error (AddressSanitizer once caught POCL reading them after the free).
 * The queue is held shut for 150 ms: the failed call must return only after it opened. */
static void failed_staged_loss_leaves_nothing_queued(void **state)
{
    (void)state;
    enum { N = 5 };
    clg_net *net = tiny_with_batch(N);
    int32_t *labels = malloc(N * sizeof *labels);
    for (int i = 0; i < N; i++)
        labels[i] = i % 3;
    CLG_ASSERT_STATUS(clg__net_forward(net, 1, 3), CLG_OK);
    double loss;
    CLG_ASSERT_STATUS(clg__net_loss(net, labels, &loss, NULL), CLG_OK); /* device buffers made */
    held_queue h;
    hold_queue(&h, clg_ctx_cl_queue(ctx));
    clg__fault_inject(1, 0); /* the first host allocation: the staged loss's arrays */
    clg_status st = clg__net_loss_begin(net, labels);
    clg__fault_inject(0, 0);
    int waited = atomic_load(&h.opened);
    free(labels);
    assert_int_equal(pthread_join(h.thread, NULL), 0);
    clReleaseEvent(h.gate);
    CLG_ASSERT_STATUS(st, CLG_ERR_OUT_OF_HOST_MEMORY);
    assert_true(waited);
    clg__net_loss_cancel(net);
    CLG_ASSERT_STATUS(clg_ctx_finish(ctx), CLG_OK);
    clg_net_destroy(net);
}

static void predict_and_classify_agree(void **state)
{
    (void)state;
    enum { N = 5 };
    clg_net *net = parse_ok(tiny);
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_set_class_names(net, (const char *const[]){"a", "b", "c"}, 3), CLG_OK);
    assert_string_equal(clg_net_class_name(net, 2), "c");
    float x[N * 72], p[N * 3], top_p[N * 2];
    int32_t top[N * 2];
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    clg_test_poison_nan(p, N * 3);
    CLG_ASSERT_STATUS(clg_net_predict(net, x, N, p), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_classify(net, x, N, 2, top, top_p), CLG_OK);
    for (size_t s = 0; s < N; s++) {
        double sum = p[s * 3] + p[s * 3 + 1] + p[s * 3 + 2];
        assert_true(fabs(sum - 1) < 1e-5);
        int best = 0;
        for (int c = 1; c < 3; c++)
            best = p[s * 3 + c] > p[s * 3 + best] ? c : best;
        assert_int_equal(top[s * 2], best);
        assert_true(top_p[s * 2] >= top_p[s * 2 + 1]);
        assert_true(top[s * 2] != top[s * 2 + 1]);
    }
    clg_net_destroy(net);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*len);
    assert_int_equal(fread(p, 1, *len, f), *len);
    fclose(f);
    return p;
}

static void spill(const char *path, const unsigned char *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, len, f), len);
    fclose(f);
}

/* A residual block and an Inception-style block in the text form: it reads back to the same
 * network, writes back the same text, and is what the builder's graph calls make. */
static void graph_text_round_trips_and_matches_the_builder(void **state)
{
    (void)state;
    static const char text[] =
        "input 8x8x3\n"
        "conv 3x3x8 pad=1 name=stem\n"
        "relu\n"
        "conv 3x3x8 pad=1\n"
        "batchnorm momentum=0.1 eps=1e-05\n"
        "add l2 relu=1 name=block1\n"
        "conv 1x1x4 name=a\n"
        "conv 3x3x4 pad=1 from=block1\n"
        "relu name=b\n"
        "maxpool 3x3 stride=1 pad=1 from=block1\n"
        "conv 1x1x4\n"
        "concat a,b name=mixed\n"
        "conv 1x1x12 from=input\n"
        "gap\n"
        "gap from=mixed\n"
        "fc 12\n"
        "add l13\n"
        "fc 3\n"
        "softmax\n";
    clg_net *net = parse_ok(text);
    char *back = text_of(net);
    assert_string_equal(back, text);
    clg_layer_info info;
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 10, &info), CLG_OK); /* the concat */
    assert_string_equal(info.name, "mixed");
    assert_int_equal(info.inputs, 3);
    assert_int_equal(info.input[0], 9);
    assert_int_equal(info.input[1], 5);
    assert_int_equal(info.input[2], 7);
    assert_int_equal(info.output.c, 12);
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 11, &info), CLG_OK);
    assert_int_equal(info.input[0], CLG_NET_INPUT);
    clg_net_destroy(net);

    /* the same through the builder */
    clg_conv2d_desc p1 = clg_conv2d_desc_default();
    p1.pad_top = p1.pad_bottom = p1.pad_left = p1.pad_right = 1;
    clg_pool2d_desc mp = clg_pool2d_desc_default();
    mp.window_h = mp.window_w = 3, mp.stride_h = mp.stride_w = 1;
    mp.pad_top = mp.pad_bottom = mp.pad_left = mp.pad_right = 1;
    CLG_ASSERT_STATUS(clg_net_create(ctx, (clg_shape){1, 3, 8, 8}, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 8, &p1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "stem"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_activation(net, CLG_ACT_RELU, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 8, &p1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_batchnorm(net, 0.1f, 1e-5f), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_add(net, (const char *const[]){"l2"}, 1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "block1"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 1, 1, 4, NULL, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "a"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_take_from(net, "block1"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 3, 3, 4, &p1, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_activation(net, CLG_ACT_RELU, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "b"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_take_from(net, "block1"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_pool2d(net, &mp), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 1, 1, 4, NULL, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_concat(net, (const char *const[]){"a", "b"}, 2), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_name_layer(net, "mixed"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_take_from(net, "input"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_conv2d(net, 1, 1, 12, NULL, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_global_avg_pool(net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_take_from(net, "mixed"), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_global_avg_pool(net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_fc(net, 12), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_add(net, (const char *const[]){"l13"}, 1, 0), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_fc(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_add_softmax_xent(net), CLG_OK);
    char *built = text_of(net);
    assert_string_equal(built, text);
    free(built);

    /* model files: a graph is version 2 (a chain stays 1, which earlier libraries read) */
    char *dir = clg_test_tempdir("nn-graph"), path[4096];
    snprintf(path, sizeof path, "%s/g.clgm", dir);
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_OK);
    unsigned char head[12];
    FILE *f = fopen(path, "rb");
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    assert_int_equal(head[8] | head[9] << 8, 2);
    clg_net *loaded;
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &loaded), CLG_OK);
    char *again = text_of(loaded);
    assert_string_equal(again, text);
    size_t n, m;
    float *a = clg_test_learnables(net, &n), *b = clg_test_learnables(loaded, &m);
    assert_int_equal(n, m);
    assert_memory_equal(a, b, n * sizeof *a);
    free(a), free(b), free(again);
    clg_net_destroy(loaded);
    clg_net_destroy(net);
    net = parse_ok(tiny);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_OK);
    f = fopen(path, "rb");
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    assert_int_equal(head[8] | head[9] << 8, 1);
    clg_net_destroy(net);
    clg_test_rmtree(dir);
    free(dir);
    free(back);
}

/* Each bad graph fails with the status and a message naming the place. */
static void graph_errors_name_the_layers(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        clg_status st;
        const char *says;
    } cases[] = {
        {"input 4x4x1\nconv 3x3x2 pad=1 from=later\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG,
         "line 2, column 18: no earlier layer named \"later\""},
        {"input 4x4x1\nconv 3x3x2 pad=1 name=a\nrelu name=a\nfc 2\nsoftmax\n",
         CLG_ERR_INVALID_ARG, "another layer has this name"},
        {"input 4x4x1\nrelu name=l7\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "own names"},
        {"input 4x4x1\nrelu name=input\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "own names"},
        {"input 4x4x1\nrelu name=9x\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "starts with"},
        {"input 4x4x1\nconv 3x3x2 pad=1 name=a\nconv 3x3x2 pad=1 from=input\nfc 2\nsoftmax\n",
         CLG_ERR_INVALID_ARG, "layer 1 (a) feeds no later layer"},
        {"input 4x4x1\nconv 3x3x2 pad=1 name=a\nconv 3x3x3 pad=1\nadd a\nfc 2\nsoftmax\n",
         CLG_ERR_SHAPE, "input 2 is 2x4x4, input 1 3x4x4"},
        {"input 4x4x1\nconv 3x3x2 name=a\nconv 3x3x2 pad=1 from=input\nconcat a\nfc 2\nsoftmax\n",
         CLG_ERR_SHAPE, "stacking needs one size"},
        {"input 4x4x1\nrelu\nadd\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG, "at least 2 inputs"},
        {"input 4x4x1\nrelu name=a\nrelu\nfc 2 from=a,l2\nsoftmax\n", CLG_ERR_INVALID_ARG,
         "fc reads one input, not 2"},
        {"input 4x4x1\nrelu name=a\nadd a a\nfc 2\nsoftmax\n", CLG_ERR_INVALID_ARG,
         "one comma-separated list"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clg_net *net = (clg_net *)1;
        clg_status st = clg_net_parse(ctx, cases[i].text, &net);
        if (st != cases[i].st || !strstr(clg_ctx_last_error(ctx), cases[i].says))
            fail_msg("case %zu: %s, \"%s\" (wanted %s with \"%s\")", i, clg_status_name(st),
                     clg_ctx_last_error(ctx), clg_status_name(cases[i].st), cases[i].says);
        assert_null(net);
    }
}

/* Loss and gradients of a net for one batch, with the weights w (NULL: from a seed, then
 * left in *w for the next net). */
static float *loss_and_grads(const char *text, const float *x, const int32_t *labels, size_t n,
                             float **w, double *loss, size_t *count)
{
    clg_net *net = parse_ok(text);
    size_t nw = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    if (*w) {
        CLG_ASSERT_STATUS(clg_net_set_params(net, CLG_PARAMS_LEARNABLE, *w, nw), CLG_OK);
    } else {
        CLG_ASSERT_STATUS(clg_net_init(net, 31), CLG_OK);
        *w = clg_test_learnables(net, &nw);
    }
    CLG_ASSERT_STATUS(clg__net_reserve(net, n), CLG_OK);
    CLG_ASSERT_STATUS(clg__net_upload(net, x, n), CLG_OK);
    *loss = loss_at(net, labels);
    CLG_ASSERT_STATUS(clg__net_backward(net, labels, 1.0f / (float)n, 7), CLG_OK);
    float *g = all_grads(net, count);
    clg_net_destroy(net);
    return g;
}

/* A ReLU across a kink is checked exactly: against a leaky ReLU of slope 0, which no
 * fusion touches, in nets where the fusions apply (a ReLU alone after a convolution, before a
 * pooling layer, of a sum) and where they must not (the convolution's or the ReLU's output
 * read by another layer too). Equal values (the leaky one gives -0 where the ReLU gives 0). */
static void relu_fusions_follow_the_graph(void **state)
{
    (void)state;
    static const char *const nets[][2] = {
        {"input 6x6x2\nconv 3x3x4 pad=1\nrelu\nmaxpool 2x2\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1\nleaky alpha=0\nmaxpool 2x2\nfc 3\nsoftmax\n"},
        {"input 6x6x2\nconv 3x3x4 pad=1 name=c\nrelu\nmaxpool 2x2 name=p\nconv 1x1x4 from=c\n"
         "maxpool 2x2\nadd p\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1 name=c\nleaky alpha=0\nmaxpool 2x2 name=p\n"
         "conv 1x1x4 from=c\nmaxpool 2x2\nadd p\nfc 3\nsoftmax\n"},
        {"input 6x6x2\nconv 3x3x4 pad=1\nrelu name=r\nmaxpool 2x2\nconv 3x3x4 pad=1 from=r\n"
         "maxpool 2x2\nadd l3\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1\nleaky alpha=0 name=r\nmaxpool 2x2\n"
         "conv 3x3x4 pad=1 from=r\nmaxpool 2x2\nadd l3\nfc 3\nsoftmax\n"},
        {"input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nadd c relu=1\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nadd c\nleaky alpha=0\nfc 3\n"
         "softmax\n"},
        /* a sum with its ReLU read by three: the readers' gradients summed and masked in one
         * pass */
        {"input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nadd c relu=1 name=s\n"
         "conv 3x3x4 pad=1\nadd s\nconv 1x1x4 from=s\nadd l5\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nadd c\nleaky alpha=0 name=s\n"
         "conv 3x3x4 pad=1\nadd s\nconv 1x1x4 from=s\nadd l6\nfc 3\nsoftmax\n"},
        /* the ReLU fused into the batch norm before it: its mask applied by the batch norm's
         * backward pass (and a ReLU read by two, before a pooling layer) */
        {"input 6x6x2\nconv 3x3x4 pad=1\nbatchnorm\nrelu\nconv 3x3x4 pad=1\nbatchnorm\n"
         "relu name=r\nmaxpool 2x2\nconv 1x1x4 from=r\nmaxpool 2x2\nadd l7\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1\nbatchnorm\nleaky alpha=0\nconv 3x3x4 pad=1\nbatchnorm\n"
         "leaky alpha=0 name=r\nmaxpool 2x2\nconv 1x1x4 from=r\nmaxpool 2x2\nadd l7\nfc 3\n"
         "softmax\n"},
        {"input 6x6x2\nconv 3x3x4 pad=1\nbatchnorm\nrelu\nmaxpool 2x2\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1\nbatchnorm\nleaky alpha=0\nmaxpool 2x2\nfc 3\n"
         "softmax\n"},
        /* the sum and its ReLU written by the batch norm before it (and not, where the batch
         * norm's output is read twice) */
        {"input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nbatchnorm\nadd c relu=1\nfc 3\n"
         "softmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nbatchnorm\nadd c\n"
         "leaky alpha=0\nfc 3\nsoftmax\n"},
        {"input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nbatchnorm name=b\nadd c relu=1\n"
         "add b\nfc 3\nsoftmax\n",
         "input 6x6x2\nconv 3x3x4 pad=1 name=c\nconv 3x3x4 pad=1\nbatchnorm name=b\nadd c\n"
         "leaky alpha=0\nadd b\nfc 3\nsoftmax\n"},
    };
    enum { N = 3 };
    float x[N * 72];
    int32_t labels[N] = {2, 0, 1};
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
        double la, lb;
        size_t na, nb;
        float *w = NULL;
        float *ga = loss_and_grads(nets[i][0], x, labels, N, &w, &la, &na);
        float *gb = loss_and_grads(nets[i][1], x, labels, N, &w, &lb, &nb);
        free(w);
        assert_int_equal(na, nb);
        if (la != lb)
            fail_msg("net %zu: loss %.9g with relu, %.9g with leaky 0", i, la, lb);
        for (size_t k = 0; k < na; k++)
            if (ga[k] != gb[k])
                fail_msg("net %zu: gradient %zu: %.9g with relu, %.9g with leaky 0", i, k,
                         (double)ga[k], (double)gb[k]);
        free(ga);
        free(gb);
    }
}

/* Any layer's outputs for a batch: a convolution's before the ReLU that is fused into it in
 * the forward pass, the ReLU's the same values clipped, a named layer's, the softmax's the
 * probabilities of clg_net_predict; in chunks larger than the net's buffers. */
static void activations_of_any_layer(void **state)
{
    (void)state;
    enum { N = 300 }; /* more than one prediction chunk */
    clg_net *net = parse_ok("input 6x6x2\nconv 3x3x4 pad=1\nrelu\nmaxpool 2x2 name=pooled\n"
                            "fc 3\nsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 8), CLG_OK);
    float *x = malloc(N * 72 * sizeof *x), *conv = malloc(N * 144 * sizeof *conv);
    float *relu = malloc(N * 144 * sizeof *relu), *probs = malloc(N * 3 * sizeof *probs);
    float *soft = malloc(N * 3 * sizeof *soft), *pooled = malloc(N * 36 * sizeof *pooled);
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    clg_shape s;
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "l1", conv, N * 144, &s), CLG_OK);
    assert_int_equal(s.c, 4);
    assert_int_equal(s.h, 6);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "l2", relu, N * 144, NULL), CLG_OK);
    size_t negative = 0;
    for (size_t i = 0; i < N * 144; i++) {
        negative += conv[i] < 0;
        if (relu[i] != (conv[i] > 0 ? conv[i] : 0.0f))
            fail_msg("element %zu: conv %g, relu %g", i, (double)conv[i], (double)relu[i]);
    }
    assert_true(negative > N * 144 / 10); /* the convolution's own outputs, not clipped */
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "pooled", pooled, N * 36, &s), CLG_OK);
    assert_int_equal(s.h, 3);
    for (size_t i = 0; i < N * 36; i++) { /* each the largest of its ReLU window */
        size_t n = i / 36, c = i % 36 / 9, p = i % 9 / 3, q = i % 3;
        const float *r = relu + n * 144 + c * 36 + 2 * p * 6 + 2 * q;
        float m = fmaxf(fmaxf(r[0], r[1]), fmaxf(r[6], r[7]));
        assert_true(pooled[i] == m);
    }
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "l5", soft, N * 3, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_predict(net, x, N, probs), CLG_OK);
    assert_memory_equal(soft, probs, N * 3 * sizeof *soft);
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "nothing", soft, N * 3, NULL),
                      CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "no layer named \"nothing\""));
    CLG_ASSERT_STATUS(clg_net_activations(net, x, N, "l1", soft, N * 3, NULL), CLG_ERR_INVALID_ARG);
    free(x), free(conv), free(relu), free(probs), free(soft), free(pooled);
    clg_net_destroy(net);
}

/* The inference layout (a net only ever used for inference) keeps few buffers and computes
 * what the training layout does: the same predictions and activations, bit for bit, on a
 * graph with every fusion and alias the plan follows (a ReLU fused into a batch norm, a
 * residual sum written by one, a projection, a concatenation, dropout, a branch read twice). */
static void inference_layout_reuses_buffers_and_matches(void **state)
{
    (void)state;
    static const char text[] =
        "input 8x8x2\n"
        "conv 3x3x4 pad=1 bias=0\nbatchnorm\nrelu name=s0\n"
        "conv 3x3x4 pad=1 bias=0\nbatchnorm\nrelu\nconv 3x3x4 pad=1 bias=0\nbatchnorm\n"
        "add s0 relu=1 name=b1\n"
        "conv 1x1x6 stride=2 bias=0 from=b1\nbatchnorm name=p\n"
        "conv 3x3x6 pad=1 stride=2 from=b1\nbatchnorm\nadd p relu=1 name=b2\n"
        "conv 1x1x3 from=b2 name=u\nmaxpool 3x3 stride=1 pad=1 from=b2\nconv 1x1x3\n"
        "concat u name=cat\ndropout p=0.5\nrelu name=r\n"
        "conv 3x3x6 pad=1 from=b2\nadd cat,r name=mix\n"
        "gap\nfc 5\nsoftmax\n";
    enum { N = 11, PER = 128 }; /* more than the training layout first holds (8) */
    clg_net *a = parse_ok(text), *b = parse_ok(text);
    CLG_ASSERT_STATUS(clg_net_init(a, 5), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(b, 5), CLG_OK);
    size_t ns = clg_net_param_count(a, CLG_PARAMS_STATE);
    float *st = malloc(ns * sizeof *st), *x = malloc(N * PER * sizeof *x);
    clg_test_fill_uniform(&rng, st, ns, 0.25f, 1.5f); /* running means and variances */
    CLG_ASSERT_STATUS(clg_net_set_params(a, CLG_PARAMS_STATE, st, ns), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_set_params(b, CLG_PARAMS_STATE, st, ns), CLG_OK);
    clg_test_fill_uniform(&rng, x, N * PER, -1, 1);
    CLG_ASSERT_STATUS(clg__net_reserve(b, 8), CLG_OK); /* b: the training layout */
    float pa[N * 5], pb[N * 5];
    CLG_ASSERT_STATUS(clg_net_predict(a, x, N, pa), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_predict(b, x, N, pb), CLG_OK);
    assert_true(a->infer_layout && !b->infer_layout);
    assert_memory_equal(pa, pb, sizeof pa);
    /* the same batch held in a third of the training layout's bytes, or less */
    size_t bytes_a = clg__net_buffer_bytes(a), bytes_b = clg__net_buffer_bytes(b);
    if (!(bytes_a * 3 <= bytes_b))
        fail_msg("inference layout %zu bytes, training layout %zu", bytes_a, bytes_b);
    assert_int_equal(bytes_a, N * 4 * clg__net_infer_floats(a)); /* what the summary says */
    assert_int_equal(bytes_b, N * 4 * clg__net_train_floats(b));
    static const char *const names[] = {"s0", "b1", "p", "b2", "u", "cat", "r", "mix", "l5"};
    float *va = malloc(N * 6 * 64 * sizeof *va), *vb = malloc(N * 6 * 64 * sizeof *vb);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        clg_shape sa, sb;
        CLG_ASSERT_STATUS(clg_net_activations(a, x, N, names[k], va, N * 6 * 64, &sa), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_activations(b, x, N, names[k], vb, N * 6 * 64, &sb), CLG_OK);
        size_t m = N * clg_shape_numel(sa);
        assert_int_equal(m, N * clg_shape_numel(sb));
        if (memcmp(va, vb, m * sizeof *va))
            fail_msg("activations of %s differ between the layouts", names[k]);
    }
    /* training after inference: the training layout replaces the pooled buffers */
    CLG_ASSERT_STATUS(clg__net_reserve(a, 8), CLG_OK);
    assert_false(a->infer_layout);
    assert_int_equal(clg__net_buffer_bytes(a), 8 * 4 * clg__net_train_floats(a));
    free(st), free(x), free(va), free(vb);
    clg_net_destroy(a);
    clg_net_destroy(b);
}

static void model_file_round_trip_and_corruption(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("nn-model");
    char path[4096], bad[4200];
    snprintf(path, sizeof path, "%s/m.clgm", dir);
    snprintf(bad, sizeof bad, "%s/bad.clgm", dir);
    clg_net *net = parse_ok("input 3x3x1\nconv 2x2x2\nbatchnorm\nrelu\nfc 2\nsoftmax\n");
    CLG_ASSERT_STATUS(clg_net_init(net, 9), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_set_class_names(net, (const char *const[]){"cat", "dog"}, 2), CLG_OK);
    float state_vals[4] = {0.5f, -1.25f, 2.0f, 3.5f};
    CLG_ASSERT_STATUS(clg_net_set_params(net, CLG_PARAMS_STATE, state_vals, 4), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_OK);
    clg_net *back;
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &back), CLG_OK);
    size_t n, m;
    float *a = clg_test_learnables(net, &n), *b = clg_test_learnables(back, &m);
    assert_int_equal(n, m);
    assert_memory_equal(a, b, n * sizeof *a);
    float st[4];
    CLG_ASSERT_STATUS(clg_net_get_params(back, CLG_PARAMS_STATE, st, 4), CLG_OK);
    assert_memory_equal(st, state_vals, sizeof st);
    assert_string_equal(clg_net_class_name(back, 1), "dog");
    char t1[512], t2[512];
    CLG_ASSERT_STATUS(clg_net_text(net, t1, sizeof t1, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_text(back, t2, sizeof t2, NULL), CLG_OK);
    assert_string_equal(t1, t2);
    free(a);
    free(b);
    clg_net_destroy(back);

    size_t len;
    unsigned char *file = slurp(path, &len);
    for (size_t cut = 0; cut < len; cut++) { /* every truncation */
        spill(bad, file, cut);
        clg_net *x = (clg_net *)1;
        clg_status s = clg_net_load(ctx, bad, &x);
        if (s != CLG_ERR_CORRUPT)
            fail_msg("truncated to %zu of %zu bytes: %s", cut, len, clg_status_name(s));
        assert_null(x);
    }
    for (int k = 0; k < 200; k++) { /* random bit flips */
        size_t byte = (size_t)(clg_test_rng_next(&rng) % len);
        int bit = (int)(clg_test_rng_next(&rng) % 8);
        file[byte] ^= (unsigned char)(1 << bit);
        spill(bad, file, len);
        clg_net *x = (clg_net *)1;
        clg_status s = clg_net_load(ctx, bad, &x);
        if (s != CLG_ERR_CORRUPT)
            fail_msg("bit %d of byte %zu flipped: %s", bit, byte, clg_status_name(s));
        assert_null(x);
        file[byte] ^= (unsigned char)(1 << bit);
    }
    CLG_ASSERT_STATUS(clg_net_load(ctx, "/nonexistent/m.clgm", &back), CLG_ERR_IO);
    /* a failed save leaves the old file: the folder path is not writable as a file */
    CLG_ASSERT_STATUS(clg_net_save(net, dir), CLG_ERR_IO);
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &back), CLG_OK);
    clg_net_destroy(back);
    /* a network with a NaN weight (a diverged training's) is not saved over the good file */
    size_t nw = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    float *w = malloc(nw * sizeof *w);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, w, nw), CLG_OK);
    w[nw / 2] = NAN;
    CLG_ASSERT_STATUS(clg_net_set_params(net, CLG_PARAMS_LEARNABLE, w, nw), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_ERR_NUMERICS);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "1 of the network's"));
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &back), CLG_OK);
    clg_net_destroy(back);
    free(w);
    free(file);
    clg_net_destroy(net);
    clg_test_rmtree(dir);
    free(dir);
}

static int setup(void **state)
{
    (void)state;
    clg_test_fixture_setup(&ctx, &rng);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_fixture_teardown(ctx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tutorial_shapes_and_round_trip),
        cmocka_unit_test(every_option_round_trips),
        cmocka_unit_test(text_errors_name_line_and_column),
        cmocka_unit_test(builder_settings_survive_save_load_and_replication),
        cmocka_unit_test(impossible_shape_names_the_layer),
        cmocka_unit_test(init_is_seeded_and_scaled),
        cmocka_unit_test(whole_network_gradient_matches_finite_differences),
        cmocka_unit_test(graph_gradient_matches_finite_differences),
        cmocka_unit_test(mobile_activations_gradient_matches_finite_differences),
        cmocka_unit_test(silu_fused_at_inference_only),
        cmocka_unit_test(sum_fused_into_convolutions),
        cmocka_unit_test(gate_products_gradient_matches_finite_differences),
        cmocka_unit_test(gates_through_the_builder),
        cmocka_unit_test(channel_split_and_shuffle_gradient_matches_finite_differences),
        cmocka_unit_test(shuffle_permutes_channels),
        cmocka_unit_test(channel_copies_on_large_planes),
        cmocka_unit_test(padding_gradient_matches_finite_differences),
        cmocka_unit_test(transposed_convolution_gradient_matches_finite_differences),
        cmocka_unit_test(transposed_convolution_matches_its_definition),
        cmocka_unit_test(upsampling_gradient_matches_finite_differences),
        cmocka_unit_test(centre_crop_gradient_matches_finite_differences),
        cmocka_unit_test(input_normalisation),
        cmocka_unit_test(graph_text_round_trips_and_matches_the_builder),
        cmocka_unit_test(graph_errors_name_the_layers),
        cmocka_unit_test(relu_fusions_follow_the_graph),
        cmocka_unit_test(staged_loss_equals_the_blocking_one),
        cmocka_unit_test(failed_staged_loss_leaves_nothing_queued),
        cmocka_unit_test(predict_and_classify_agree),
        cmocka_unit_test(activations_of_any_layer),
        cmocka_unit_test(inference_layout_reuses_buffers_and_matches),
        cmocka_unit_test(model_file_round_trip_and_corruption),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
