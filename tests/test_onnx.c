/* ONNX export and import: every layer kind out and back in with its weights and settings bit
 * for bit (the same predictions), class names kept; broken and unsupported models refused,
 * naming what is wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/testutil.h"
#include "nn/onnx_internal.h"

static clg_ctx *ctx;
static clg_test_rng rng;
static char *dir;

/* Every layer kind and setting the format carries: asymmetric pads, strides, dilation,
 * groups, pools with ceil and padding, both average divisors, every activation, residual adds
 * (two and three inputs, with ReLU), a concat, dropout, batch norm after conv and after fc. */
static const char *const nets[] = {
    "input 13x11x3\n"
    "conv 3x3x8 pad=1,0,2,1 stride=2,1 name=c1\n"
    "batchnorm momentum=0.2 eps=0.001\n"
    "relu name=r1\n"
    "conv 3x3x8 pad=2 dilation=2 groups=2 bias=0\n"
    "leaky alpha=0.05 name=b\n"
    "conv 1x1x8 from=r1\n"
    "elu alpha=0.7 name=c\n"
    "add b relu=1 name=s\n"
    "add b,c name=t\n"
    "concat s name=cat\n"
    "maxpool 3x3 stride=2 pad=1 ceil=1\n"
    "avgpool 3x3 stride=1 pad=1 exclude-pad=1\n"
    "avgpool 2x2 stride=1 pad=0,1,0,1\n"
    "sigmoid\n"
    "conv 3x3x5 pad=same\n"
    "tanh\n"
    "fc 12\n"
    "batchnorm\n"
    "dropout 0.3\n"
    "relu\n"
    "fc 4\n"
    "softmax\n",
    "input 9x9x2\n"
    "conv 3x3x6 pad=1\n"
    "relu\n"
    "gap\n"
    "fc 3\n"
    "softmax\n",
    /* input normalisation, a mobile network's activations, a depthwise convolution,
     * squeeze-and-excitation, ShuffleNet's channel split and shuffle */
    "input 9x9x3 mean=0.485,0.456,0.406 std=0.229,0.224,0.225\n"
    "conv 3x3x8 pad=1\n"
    "clip min=0 max=6\n"
    "conv 3x3x8 pad=1 groups=8\n"
    "hardswish\n"
    "conv 1x1x8\n"
    "silu name=s\n"
    "gap\n"
    "conv 1x1x2\n"
    "relu\n"
    "conv 1x1x8\n"
    "hardsigmoid alpha=0.25 beta=0.375\n"
    "mul s\n"
    "sigmoid name=g\n"
    "mul g from=s\n"
    "clip min=-1 max=1.5 name=c\n"
    "slice 0:3 name=lo\n"
    "slice 3:8 from=c\n"
    "conv 1x1x5\n"
    "concat lo\n"
    "shuffle 4\n"
    "gap\n"
    "fc 3\n"
    "softmax\n",
    /* transposed convolutions (strides, output padding, groups, dilation, no bias) */
    "input 5x6x2\n"
    "convt 3x3x4 stride=2 pad=1 outpad=1\n"
    "relu\n"
    "convt 2x2x4 stride=2,1 pad=0,1,1,0 groups=2 bias=0\n"
    "convt 3x3x3 pad=2 dilation=2\n"
    "upsample 2 mode=bilinear\n"
    "upsample 1,2\n"
    "gap\n"
    "fc 3\n"
    "softmax\n",
    /* padding in each mode (a constant of its own, not folded into the convolution) */
    "input 7x8x2\n"
    "pad 1,1,2,2 mode=reflect\n"
    "conv 3x3x4\n"
    "pad -1,0,1,1 value=0.25\n"
    "relu\n"
    "pad 1,1,1,1 mode=edge\n"
    "conv 3x3x3\n"
    "gap\n"
    "fc 3\n"
    "softmax\n",
};

static void randomise(clg_net *net)
{
    for (int set = 0; set < 2; set++) {
        clg_param_set which = set ? CLG_PARAMS_STATE : CLG_PARAMS_LEARNABLE;
        size_t n = clg_net_param_count(net, which);
        float *p = malloc((n ? n : 1) * sizeof *p);
        assert_non_null(p);
        clg_test_fill_uniform(&rng, p, n, set ? 0.5f : -0.5f, set ? 1.5f : 0.5f); /* variances > 0 */
        CLG_ASSERT_STATUS(clg_net_set_params(net, which, p, n), CLG_OK);
        free(p);
    }
}

static float *params(clg_net *net, clg_param_set which, size_t *n)
{
    *n = clg_net_param_count(net, which);
    float *p = malloc((*n ? *n : 1) * sizeof *p);
    assert_non_null(p);
    CLG_ASSERT_STATUS(clg_net_get_params(net, which, p, *n), CLG_OK);
    return p;
}

static void round_trip_keeps_everything(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
        clg_net *net, *back;
        CLG_ASSERT_STATUS(clg_net_parse(ctx, nets[k], &net), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_init(net, 7), CLG_OK);
        randomise(net);
        size_t classes = clg_net_class_count(net);
        const char *names[4] = {"Ankle boot", "T-shirt/top", "c\\3", "d \"4\""};
        CLG_ASSERT_STATUS(clg_net_set_class_names(net, names, classes), CLG_OK);
        char path[4200];
        snprintf(path, sizeof path, "%s/net%zu.onnx", dir, k);
        CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &back), CLG_OK);
        /* the same layers with the same settings: the text forms agree */
        size_t la, lb;
        CLG_ASSERT_STATUS(clg_net_text(net, NULL, 0, &la), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_text(back, NULL, 0, &lb), CLG_OK);
        char *ta = malloc(la + 1), *tb = malloc(lb + 1);
        CLG_ASSERT_STATUS(clg_net_text(net, ta, la + 1, NULL), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_text(back, tb, lb + 1, NULL), CLG_OK);
        if (strcmp(ta, tb))
            fail_msg("net %zu: exported\n%s\nimported\n%s", k, ta, tb);
        free(ta), free(tb);
        for (int set = 0; set < 2; set++) { /* weights and batch-norm state, bit for bit */
            size_t na, nb;
            clg_param_set which = set ? CLG_PARAMS_STATE : CLG_PARAMS_LEARNABLE;
            float *a = params(net, which, &na), *b = params(back, which, &nb);
            assert_int_equal(na, nb);
            assert_memory_equal(a, b, na * sizeof *a);
            free(a), free(b);
        }
        for (size_t c = 0; c < classes; c++)
            assert_string_equal(clg_net_class_name(back, c), names[c]);
        /* hence the same predictions */
        clg_shape in = clg_net_input_shape(net);
        size_t n = 5, per = clg_shape_numel(in);
        float *x = malloc(n * per * sizeof *x), *pa = malloc(n * classes * sizeof *pa);
        float *pb = malloc(n * classes * sizeof *pb);
        clg_test_fill_uniform(&rng, x, n * per, -1.0f, 1.0f);
        clg_test_poison_nan(pa, n * classes);
        clg_test_poison_nan(pb, n * classes);
        CLG_ASSERT_STATUS(clg_net_predict(net, x, n, pa), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_predict(back, x, n, pb), CLG_OK);
        assert_memory_equal(pa, pb, n * classes * sizeof *pa);
        free(x), free(pa), free(pb);
        clg_net_destroy(net);
        clg_net_destroy(back);
    }
}

/* The exported model of nets[1], parsed, for the refusals below to edit. */
static Onnx__ModelProto *exported(void)
{
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, nets[1], &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/small.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    clg_net_destroy(net);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    return m;
}

static void write_model(const Onnx__ModelProto *m, const char *path)
{
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(len);
    assert_int_equal(onnx__model_proto__pack(m, buf), len);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
}

/* Writes m, imports it, expects `status` and `words` in the message. */
static void refused(const Onnx__ModelProto *m, clg_status status, const char *words)
{
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(len);
    assert_int_equal(onnx__model_proto__pack(m, buf), len);
    char path[4200];
    snprintf(path, sizeof path, "%s/edited.onnx", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
    clg_net *net = (clg_net *)&net;
    CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &net), status);
    assert_null(net);
    if (!strstr(clg_ctx_last_error(ctx), words))
        fail_msg("\"%s\" lacks \"%s\"", clg_ctx_last_error(ctx), words);
    print_message("refused: %s\n", clg_ctx_last_error(ctx));
}

static Onnx__NodeProto *node_of(Onnx__ModelProto *m, const char *op)
{
    for (size_t i = 0; i < m->graph->n_node; i++)
        if (!strcmp(m->graph->node[i]->op_type, op))
            return m->graph->node[i];
    fail_msg("no %s node", op);
    return NULL;
}

static Onnx__TensorProto *init_of(Onnx__ModelProto *m, const char *suffix)
{
    for (size_t i = 0; i < m->graph->n_initializer; i++) {
        const char *name = m->graph->initializer[i]->name;
        if (strlen(name) > strlen(suffix) && !strcmp(name + strlen(name) - strlen(suffix), suffix))
            return m->graph->initializer[i];
    }
    fail_msg("no initializer *%s", suffix);
    return NULL;
}

static void bad_models_are_refused(void **state)
{
    (void)state;
    Onnx__ModelProto *m = exported();
    /* an operator clgrad has no layer for: the node, its operator, the list */
    Onnx__NodeProto *relu = node_of(m, "Relu");
    char *op = relu->op_type;
    relu->op_type = "Gelu";
    refused(m, CLG_ERR_UNSUPPORTED, "node 1 (Gelu \"l2\"): clgrad has no layer for this operator");
    relu->op_type = op;
    /* an attribute it does not know */
    Onnx__NodeProto *conv = node_of(m, "Conv");
    char *name = conv->attribute[0]->name;
    conv->attribute[0]->name = "strange";
    refused(m, CLG_ERR_UNSUPPORTED, "attribute \"strange\" is not one clgrad has");
    conv->attribute[0]->name = name;
    /* weights shorter than their shape */
    Onnx__TensorProto *w = init_of(m, ".weight");
    w->raw_data.len -= 4;
    refused(m, CLG_ERR_CORRUPT, "holds 428 bytes of data for a shape of 108 elements");
    w->raw_data.len += 4;
    /* weights kept in another file */
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    refused(m, CLG_ERR_CORRUPT, "keeps its data in an external file");
    w->has_data_location = 0;
    /* a dimension that overflows */
    int64_t d0 = w->dims[0];
    w->dims[0] = (int64_t)1 << 50;
    refused(m, CLG_ERR_CORRUPT, "dimension 0 is");
    w->dims[0] = d0;
    /* an input that no earlier node computes (a cycle, or a dangling name) */
    char *in = relu->input[0];
    relu->input[0] = "later";
    refused(m, CLG_ERR_CORRUPT, "input 0 (\"later\") is not defined before the node");
    relu->input[0] = in;
    /* an input of a sequence type: its union member must not be read as a tensor type */
    Onnx__TypeProto *type = m->graph->input[0]->type, inner = *type;
    Onnx__TypeProto__Sequence seq = ONNX__TYPE_PROTO__SEQUENCE__INIT;
    seq.elem_type = &inner;
    type->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    type->sequence_type = &seq;
    refused(m, CLG_ERR_UNSUPPORTED, "is not a 4-D float tensor");
    *type = inner;
    /* an opset out of range */
    int64_t v = m->opset_import[0]->version;
    m->opset_import[0]->version = 22;
    refused(m, CLG_ERR_UNSUPPORTED, "opset 22 (clgrad reads 6 to 21)");
    m->opset_import[0]->version = v;
    onnx__model_proto__free_unpacked(m, NULL);
    /* not a model at all, and a truncated one */
    char path[4200];
    snprintf(path, sizeof path, "%s/small.onnx", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char buf[4096];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/cut.onnx", dir);
    f = fopen(path, "wb");
    fwrite(buf, 1, len / 2, f);
    fclose(f);
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &net), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "is not an ONNX model"));
    snprintf(path, sizeof path, "%s/missing.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &net), CLG_ERR_IO);
}

/* Transfer learning on an imported model: its output replaced for 3 classes, the first
 * convolution frozen (lr=0) and the second at half the rate, trained on one device and on
 * two: the first keeps the imported weights bit for bit, the rest learns, and one and two
 * devices end with the same weights (no batch norm here: its batch statistics are per
 * device). */
static void fine_tuning_an_imported_model(void **state)
{
    (void)state;
    enum { N = 96, S = 8 };
    float *x = malloc(N * S * S * sizeof *x);
    int32_t y[N];
    for (int i = 0; i < N; i++) { /* class k: a bright band across rows 2k..2k+2 */
        y[i] = i % 3;
        for (int p = 0; p < S * S; p++)
            x[i * S * S + p] = (p / S / 2 == y[i] ? 0.7f : 0.0f) + clg_test_uniform(&rng, 0, 0.3f);
    }
    clg_datastore *data;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(x, y, N, (clg_shape){1, 1, S, S}, 3, &data),
                      CLG_OK);
    free(x);
    clg_net *net, *imported, *tuned;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 8x8x1\nconv 3x3x4 pad=1 name=c\nrelu\n"
                                         "conv 1x1x4 name=d\nrelu\nfc 10 name=out\nsoftmax\n",
                                    &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 11), CLG_OK);
    randomise(net);
    /* Positive weights and biases in the kept layers: random signs could leave every ReLU of
     * the frozen convolution dead for some seeds, and then nothing can learn. */
    size_t nl;
    float *w = params(net, CLG_PARAMS_LEARNABLE, &nl);
    for (size_t i = 0; i < 60; i++)
        w[i] = fabsf(w[i]);
    CLG_ASSERT_STATUS(clg_net_set_params(net, CLG_PARAMS_LEARNABLE, w, nl), CLG_OK);
    free(w);
    char path[4200];
    snprintf(path, sizeof path, "%s/ten.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &imported), CLG_OK);
    size_t n0, n1;
    float *start = params(imported, CLG_PARAMS_LEARNABLE, &n0);
    const size_t kept = 36 + 4 + 16 + 4; /* both convolutions' weights and biases */
    float *final[2];
    clg_ctx *second = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
    for (int devices = 1; devices <= 2; devices++) {
        CLG_ASSERT_STATUS(clg_net_replace_output(imported, 3, 5, &tuned), CLG_OK);
        assert_int_equal(clg_net_class_count(tuned), 3);
        float *now = params(tuned, CLG_PARAMS_LEARNABLE, &n1);
        assert_int_equal(n1, kept + 4 * 8 * 8 * 3 + 3); /* and the new fc's */
        assert_memory_equal(now, start, kept * sizeof *now); /* the rest kept */
        free(now);
        CLG_ASSERT_STATUS(clg_net_set_learn_rate_factor(tuned, "c", 0.0f), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_set_learn_rate_factor(tuned, "d", 0.5f), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_set_learn_rate_factor(tuned, "nope", 0.5f), CLG_ERR_INVALID_ARG);
        char text[512];
        CLG_ASSERT_STATUS(clg_net_text(tuned, text, sizeof text, NULL), CLG_OK);
        assert_non_null(strstr(text, "name=c lr=0\n"));
        assert_non_null(strstr(text, "name=d lr=0.5\n"));
        assert_non_null(strstr(text, "fc 3 name=out\n"));
        clg_train_options o = clg_train_options_default();
        clg_exec_options ex = clg_exec_options_default();
        clg_ctx *both[2] = {ctx, second};
        static const float load[2] = {1, 1};
        if (devices == 2) {
            ex.contexts = both, ex.context_count = 2;
            ex.worker_load = load, ex.worker_load_count = 2;
            o.execution = &ex;
        }
        o.solver = CLG_SOLVER_ADAM;
        o.initial_learn_rate = 0.02f;
        o.mini_batch_size = 16;
        o.max_epochs = 3;
        o.seed = 9;
        CLG_ASSERT_STATUS(clg_train(tuned, data, NULL, &o, NULL), CLG_OK);
        double loss, acc;
        CLG_ASSERT_STATUS(clg_net_evaluate(tuned, data, 32, &loss, &acc), CLG_OK);
        final[devices - 1] = params(tuned, CLG_PARAMS_LEARNABLE, &n1);
        print_message("%d device%s: accuracy %.3f, loss %.4f\n", devices, devices > 1 ? "s" : "",
                      acc, loss);
        assert_memory_equal(final[devices - 1], start, 40 * sizeof(float)); /* frozen */
        assert_true(clg_test_max_abs_diff(final[devices - 1] + 40, start + 40, 20) > 1e-4);
        assert_true(acc > 0.6); /* the new output learnt the three classes */
        clg_net_destroy(tuned);
    }
    double d = clg_test_max_abs_diff(final[0], final[1], n1);
    print_message("1 against 2 devices: max |w1 - w2| %.3g\n", d);
    assert_true(d < 1e-4); /* the sums of shards round differently: float tolerance */
    free(final[0]), free(final[1]), free(start);
    clg_ctx_destroy(second);
    clg_net_destroy(imported);
    clg_net_destroy(net);
    clg_datastore_destroy(data);
}

/* Imports the edited model m and expects the layers `text` and (net not NULL) the
 * predictions of `net` on x, bit for bit (the same layers run the same kernels). */
static void imports_as(const Onnx__ModelProto *m, clg_net *net, const char *text, const float *x,
                       size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/current.onnx", dir);
    write_model(m, path);
    clg_net *back;
    CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &back), CLG_OK);
    char got[1024];
    CLG_ASSERT_STATUS(clg_net_text(back, got, sizeof got, NULL), CLG_OK);
    if (!strstr(got, text))
        fail_msg("imported as\n%s\nwithout \"%s\"", got, text);
    size_t classes = net ? clg_net_class_count(net) : 0;
    if (!net)
        n = 0;
    float *pa = malloc(n * classes * sizeof *pa + 1), *pb = malloc(n * classes * sizeof *pb + 1);
    clg_test_poison_nan(pb, n * classes);
    if (net) {
        CLG_ASSERT_STATUS(clg_net_predict(net, x, n, pa), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_predict(back, x, n, pb), CLG_OK);
        assert_memory_equal(pa, pb, n * classes * sizeof *pa);
    }
    free(pa), free(pb);
    clg_net_destroy(back);
}

static Onnx__NodeProto *node_named(Onnx__ModelProto *m, const char *op, size_t *at)
{
    for (size_t i = 0; i < m->graph->n_node; i++)
        if (!strcmp(m->graph->node[i]->op_type, op))
            return *at = i, m->graph->node[i];
    fail_msg("no %s node", op);
    return NULL;
}

/* The forms current exporters write, each edited into clgrad's own export of the same
 * network and imported to the same layers and predictions: opsets 18 to 21; Clip's bounds
 * as attributes (opsets 6 to 10) and from Constant nodes; an Identity of an initializer;
 * ReduceMean over H and W with its axes as an attribute (to opset 17) and as an input (18-);
 * a one-input Concat; x * Sigmoid(x) either way round. */
static void current_exporters_forms_import(void **state)
{
    (void)state;
    static const char text[] = "input 7x7x3\nconv 3x3x4 pad=1\nclip min=0 max=6\nsilu\n"
                               "gap\nfc 3\nsoftmax\n";
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, text, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 5), CLG_OK);
    randomise(net);
    char path[4200];
    snprintf(path, sizeof path, "%s/mobile.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__GraphProto *g = m->graph;
    enum { N = 3 };
    float x[N * 7 * 7 * 3];
    clg_test_fill_uniform(&rng, x, N * 7 * 7 * 3, -8, 8); /* past ReLU6's ends */
    for (int64_t v = 18; v <= 21; v++) {
        m->opset_import[0]->version = v;
        imports_as(m, net, "clip min=0 max=6\nsilu\ngap\n", x, N);
    }
    m->opset_import[0]->version = 13;
    size_t at;
    /* Clip's bounds as attributes, as opsets 6 to 10 have them */
    Onnx__NodeProto *clip = node_named(m, "Clip", &at);
    Onnx__AttributeProto lo = ONNX__ATTRIBUTE_PROTO__INIT, hi = ONNX__ATTRIBUTE_PROTO__INIT;
    lo.name = "min", lo.has_f = 1, lo.f = 0.0f, lo.has_type = hi.has_type = 1;
    hi.name = "max", hi.has_f = 1, hi.f = 6.0f;
    lo.type = hi.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    Onnx__AttributeProto *bounds[2] = {&lo, &hi};
    clip->attribute = bounds, clip->n_attribute = 2, clip->n_input = 1;
    m->opset_import[0]->version = 9;
    imports_as(m, net, "clip min=0 max=6\n", x, N);
    /* ... or only the lower one of 0: a ReLU (other predictions: inputs reach past 6) */
    clip->n_attribute = 1;
    imports_as(m, NULL, "conv 3x3x4 pad=1\nrelu\nsilu\n", x, N);
    clip->attribute = NULL, clip->n_attribute = 0, clip->n_input = 3;
    m->opset_import[0]->version = 13;
    /* the bounds from Constant nodes (a float tensor and a value_float), and the convolution's
     * weights through an Identity */
    Onnx__NodeProto *conv = node_named(m, "Conv", &at);
    char *min_name = clip->input[1], *max_name = clip->input[2], *w_name = conv->input[1];
    float six = 6.0f;
    Onnx__TensorProto six_t = ONNX__TENSOR_PROTO__INIT;
    six_t.has_data_type = 1, six_t.data_type = 1, six_t.n_float_data = 1, six_t.float_data = &six;
    Onnx__AttributeProto v_max = ONNX__ATTRIBUTE_PROTO__INIT, v_min = ONNX__ATTRIBUTE_PROTO__INIT;
    v_max.name = "value", v_max.has_type = 1, v_max.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    v_max.t = &six_t;
    v_min.name = "value_float", v_min.has_type = 1, v_min.has_f = 1, v_min.f = 0.0f;
    v_min.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    Onnx__AttributeProto *a_min[1] = {&v_min}, *a_max[1] = {&v_max};
    char *c_min_out[1] = {"made.min"}, *c_max_out[1] = {"made.max"}, *id_in[1] = {w_name};
    char *id_out[1] = {"w.alias"};
    Onnx__NodeProto c_min = ONNX__NODE_PROTO__INIT, c_max = ONNX__NODE_PROTO__INIT;
    Onnx__NodeProto ident = ONNX__NODE_PROTO__INIT;
    c_min.op_type = c_max.op_type = "Constant", ident.op_type = "Identity";
    c_min.attribute = a_min, c_max.attribute = a_max, c_min.n_attribute = c_max.n_attribute = 1;
    c_min.output = c_min_out, c_max.output = c_max_out, ident.output = id_out;
    c_min.n_output = c_max.n_output = ident.n_output = 1;
    ident.input = id_in, ident.n_input = 1;
    size_t nn = g->n_node;
    Onnx__NodeProto **nodes = g->node, **more = malloc((nn + 3) * sizeof *more);
    more[0] = &c_min, more[1] = &c_max, more[2] = &ident;
    memcpy(more + 3, nodes, nn * sizeof *more);
    g->node = more, g->n_node = nn + 3;
    clip->input[1] = "made.min", clip->input[2] = "made.max", conv->input[1] = "w.alias";
    imports_as(m, net, "clip min=0 max=6\n", x, N);
    clip->input[1] = min_name, clip->input[2] = max_name, conv->input[1] = w_name;
    g->node = nodes, g->n_node = nn;
    /* a one-input Concat between the convolution and the Clip */
    char *conv_out = conv->output[0], *cat_in[1] = {conv_out}, *cat_out[1] = {"conv.cat"};
    Onnx__NodeProto cat = ONNX__NODE_PROTO__INIT;
    cat.op_type = "Concat", cat.input = cat_in, cat.n_input = 1, cat.output = cat_out;
    cat.n_output = 1;
    Onnx__AttributeProto axis = ONNX__ATTRIBUTE_PROTO__INIT, *a_axis[1] = {&axis};
    axis.name = "axis", axis.has_type = 1, axis.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    axis.has_i = 1, axis.i = 1;
    cat.attribute = a_axis, cat.n_attribute = 1;
    node_named(m, "Clip", &at);
    memcpy(more, nodes, at * sizeof *more);
    more[at] = &cat;
    memcpy(more + at + 1, nodes + at, (nn - at) * sizeof *more);
    g->node = more, g->n_node = nn + 1;
    char *clip_in = clip->input[0];
    clip->input[0] = "conv.cat";
    imports_as(m, net, "conv 3x3x4 pad=1\nclip min=0 max=6\n", x, N);
    clip->input[0] = clip_in;
    g->node = nodes, g->n_node = nn;
    /* x * Sigmoid(x) written the other way round */
    Onnx__NodeProto *mul = node_named(m, "Mul", &at);
    char *m0 = mul->input[0];
    mul->input[0] = mul->input[1], mul->input[1] = m0;
    imports_as(m, net, "silu\n", x, N);
    mul->input[1] = mul->input[0], mul->input[0] = m0;
    /* ReduceMean over H and W for the global average pool: axes an attribute, keepdims 0
     * (the Flatten after it then has nothing to do), then axes an input (opset 18) */
    Onnx__NodeProto *gap = node_named(m, "GlobalAveragePool", &at);
    int64_t hw[2] = {2, 3}, hw_neg[2] = {-1, -2};
    Onnx__AttributeProto axes = ONNX__ATTRIBUTE_PROTO__INIT, keep = ONNX__ATTRIBUTE_PROTO__INIT;
    axes.name = "axes", axes.has_type = 1, axes.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    axes.ints = hw, axes.n_ints = 2;
    keep.name = "keepdims", keep.has_type = 1, keep.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    keep.has_i = 1, keep.i = 0;
    Onnx__AttributeProto *r_attrs[2] = {&axes, &keep};
    char *gap_op = gap->op_type;
    gap->op_type = "ReduceMean", gap->attribute = r_attrs, gap->n_attribute = 2;
    imports_as(m, net, "silu\ngap\nfc 3\n", x, N);
    Onnx__TensorProto axes_t = ONNX__TENSOR_PROTO__INIT;
    axes_t.name = "hw.axes", axes_t.has_data_type = 1, axes_t.data_type = 7;
    int64_t two = 2;
    axes_t.dims = &two, axes_t.n_dims = 1, axes_t.int64_data = hw_neg, axes_t.n_int64_data = 2;
    size_t ni = g->n_initializer;
    Onnx__TensorProto **inits = g->initializer, **more_inits = malloc((ni + 1) * sizeof *more_inits);
    memcpy(more_inits, inits, ni * sizeof *more_inits);
    more_inits[ni] = &axes_t;
    g->initializer = more_inits, g->n_initializer = ni + 1;
    char **gap_in = gap->input, *r_in[2] = {gap_in[0], "hw.axes"};
    gap->input = r_in, gap->n_input = 2, gap->attribute = &r_attrs[1], gap->n_attribute = 1;
    m->opset_import[0]->version = 18;
    imports_as(m, net, "silu\ngap\nfc 3\n", x, N);
    /* a mean over other axes is refused, naming them */
    hw_neg[1] = 1;
    refused(m, CLG_ERR_UNSUPPORTED, "a mean over 2 axes (clgrad's is over H and W");
    gap->input = gap_in, gap->n_input = 1, gap->attribute = NULL, gap->n_attribute = 0;
    gap->op_type = gap_op;
    g->initializer = inits, g->n_initializer = ni;
    free(more), free(more_inits);
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* The input's normalisation goes out as a Sub and a Div (round trip above) and comes back
 * from a Div alone (a mean of 0); a Div by two values for three channels is refused. */
static void input_normalisation_forms(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 6x6x3 mean=0 std=2,4,0.5\nconv 3x3x2\nfc 3\n"
                                         "softmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 4), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/norm.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__GraphProto *g = m->graph;
    size_t at;
    Onnx__NodeProto *sub = node_named(m, "Sub", &at), *div = node_named(m, "Div", &at);
    assert_int_equal(at, 1);
    char *div_in = div->input[0];
    div->input[0] = sub->input[0]; /* the Div reads the input; the Sub goes */
    g->node++, g->n_node--;
    enum { N = 2 };
    float x[N * 108];
    clg_test_fill_uniform(&rng, x, N * 108, 0, 1);
    imports_as(m, net, "input 6x6x3 mean=0 std=2,4,0.5\n", x, N);
    Onnx__TensorProto *sd = init_of(m, ".std");
    int64_t d1 = sd->dims[1];
    sd->dims[1] = 2, sd->raw_data.len = 8;
    refused(m, CLG_ERR_UNSUPPORTED, "the input divided by 2 values (clgrad normalises by one, or "
                                    "one per channel: 3)");
    sd->dims[1] = d1, sd->raw_data.len = 12;
    g->node--, g->n_node++;
    div->input[0] = div_in;
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* A Concat of more inputs than a layer takes (DenseNet's of 25): parts of 16, the same
 * predictions as the two concats clgrad exported before the edit joined them. */
static void long_concats_import_in_parts(void **state)
{
    (void)state;
    char text[2048] = "input 5x5x2\n", *at = text + strlen(text);
    for (int b = 1; b <= 20; b++)
        at += sprintf(at, "conv 1x1x1 name=b%d from=input\n", b);
    at += sprintf(at, "concat b2");
    for (int b = 3; b <= 16; b++)
        at += sprintf(at, ",b%d", b);
    sprintf(at, " from=b1 name=p\nconcat b17,b18,b19,b20 from=p\nfc 3\nsoftmax\n");
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, text, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 8), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/long.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__GraphProto *g = m->graph;
    size_t first = 0, second;
    Onnx__NodeProto *p = node_named(m, "Concat", &first);
    Onnx__NodeProto *q = g->node[first + 1];
    assert_string_equal(q->op_type, "Concat");
    second = first + 1;
    char *joined[20], **q_in = q->input;
    size_t q_n = q->n_input;
    memcpy(joined, p->input, 16 * sizeof *joined);
    memcpy(joined + 16, q->input + 1, 4 * sizeof *joined);
    q->input = joined, q->n_input = 20;
    Onnx__NodeProto **nodes = g->node, **fewer = malloc(g->n_node * sizeof *fewer);
    size_t nn = g->n_node;
    memcpy(fewer, nodes, first * sizeof *fewer);
    memcpy(fewer + first, nodes + second, (nn - second) * sizeof *fewer);
    g->node = fewer, g->n_node = nn - 1;
    enum { N = 2 };
    float x[N * 50];
    clg_test_fill_uniform(&rng, x, N * 50, -1, 1);
    imports_as(m, net, "_part1 from=b1,b2,b3,b4,b5,b6,b7,b8,b9,b10,b11,b12,b13,b14,b15,b16\nconcat b17,b18,b19,b20\nfc 3\n", x, N);
    g->node = nodes, g->n_node = nn;
    q->input = q_in, q->n_input = q_n;
    free(fewer);
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* The shape arithmetic PyTorch's opset-13 exporter writes for a channel split, folded into
 * constants: a Slice's end as Cast(Concat(Unsqueeze(Squeeze(Div(Add(Gather(Shape(layer),
 * [1]), [1]), [2]))))) = (6 + 1) / 2 = 3, the same layer and predictions as the constant 3. */
static void shape_arithmetic_is_folded(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 6x6x2\nconv 3x3x6 pad=1 name=c\nslice 0:3\nfc 3\n"
                                         "softmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 2), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/fold.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__GraphProto *g = m->graph;
    size_t at = 0;
    Onnx__NodeProto *slice = node_named(m, "Slice", &at);
    /* constants: [1] (Gather's index, Add's), 2 */
    int64_t one = 1, two = 2, d1 = 1;
    Onnx__TensorProto c1 = ONNX__TENSOR_PROTO__INIT, c2 = ONNX__TENSOR_PROTO__INIT;
    c1.name = "k.one", c2.name = "k.two";
    c1.has_data_type = c2.has_data_type = 1, c1.data_type = c2.data_type = 7;
    /* k.two a scalar, as PyTorch writes Div's divisor: no dims at all (a NULL pointer) */
    c1.dims = &d1, c1.n_dims = 1;
    c1.int64_data = &one, c2.int64_data = &two, c1.n_int64_data = c2.n_int64_data = 1;
    static char *ins[8][2] = {{"c"}, {"f.shape", "k.one"}, {"f.ch", "k.one"}, {"f.ch1", "k.two"},
                              {"f.half"}, {"f.s", "k.one"}, {"f.u"}, {"f.cat"}};
    static char *outs[8][1] = {{"f.shape"}, {"f.ch"}, {"f.ch1"}, {"f.half"}, {"f.s"}, {"f.u"},
                               {"f.cat"}, {"f.end"}};
    static const char *const op[8] = {"Shape", "Gather", "Add", "Div", "Squeeze", "Unsqueeze",
                                       "Concat", "Cast"};
    static const size_t nins[8] = {1, 2, 2, 2, 1, 2, 1, 1};
    Onnx__NodeProto fold[8];
    Onnx__NodeProto *chain[8];
    Onnx__AttributeProto axis0 = ONNX__ATTRIBUTE_PROTO__INIT, to = ONNX__ATTRIBUTE_PROTO__INIT;
    axis0.name = "axis", axis0.has_type = 1, axis0.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    axis0.has_i = 1, axis0.i = 0;
    to.name = "to", to.has_type = 1, to.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    to.has_i = 1, to.i = 7;
    Onnx__AttributeProto *a_axis[1] = {&axis0}, *a_to[1] = {&to};
    for (int i = 0; i < 8; i++) {
        onnx__node_proto__init(&fold[i]);
        fold[i].op_type = (char *)op[i], fold[i].input = ins[i], fold[i].n_input = nins[i];
        fold[i].output = outs[i], fold[i].n_output = 1;
        chain[i] = &fold[i];
    }
    fold[6].attribute = a_axis, fold[6].n_attribute = 1;
    fold[7].attribute = a_to, fold[7].n_attribute = 1;
    ins[0][0] = g->node[0]->output[0]; /* the convolution's output */
    size_t nn = g->n_node, ni = g->n_initializer;
    Onnx__NodeProto **nodes = g->node, **more = malloc((nn + 8) * sizeof *more);
    memcpy(more, nodes, at * sizeof *more);
    memcpy(more + at, chain, 8 * sizeof *more);
    memcpy(more + at + 8, nodes + at, (nn - at) * sizeof *more);
    Onnx__TensorProto **inits = g->initializer, **more_inits = malloc((ni + 2) * sizeof *more_inits);
    memcpy(more_inits, inits, ni * sizeof *more_inits);
    more_inits[ni] = &c1, more_inits[ni + 1] = &c2;
    g->node = more, g->n_node = nn + 8, g->initializer = more_inits, g->n_initializer = ni + 2;
    char *end = slice->input[2];
    slice->input[2] = "f.end";
    enum { N = 2 };
    float x[N * 72];
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    imports_as(m, net, "slice 0:3\nfc 3\n", x, N);
    /* a division by zero is no shape: refused, naming the operator */
    two = 0;
    refused(m, CLG_ERR_UNSUPPORTED, "Div of constants in a form clgrad does not fold");
    slice->input[2] = end;
    g->node = nodes, g->n_node = nn, g->initializer = inits, g->n_initializer = ni;
    free(more), free(more_inits);
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* Split along the channels: the two Slices clgrad exports for "slice 0:3" and "slice 3:6"
 * replaced by one Split node, with num_outputs (opset 18) and with its sizes as an input
 * (opset 13): the same layers and predictions. */
static void split_forms_import(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 5x5x2\nconv 3x3x6 pad=1 name=c\nslice 0:3 name=a\n"
                                         "slice 3:6 from=c name=b\nconv 1x1x3\nadd a\nfc 3\n"
                                         "softmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 11), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/split.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__GraphProto *g = m->graph;
    size_t first = 0, nn = g->n_node;
    Onnx__NodeProto *sa = node_named(m, "Slice", &first), *sb = g->node[first + 1];
    assert_string_equal(sb->op_type, "Slice");
    char *outs[2] = {sa->output[0], sb->output[0]}, *ins[2] = {sa->input[0], "split.sizes"};
    Onnx__AttributeProto axis = ONNX__ATTRIBUTE_PROTO__INIT, parts = ONNX__ATTRIBUTE_PROTO__INIT;
    axis.name = "axis", axis.has_type = 1, axis.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    axis.has_i = 1, axis.i = 1;
    parts.name = "num_outputs", parts.has_type = 1;
    parts.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, parts.has_i = 1, parts.i = 2;
    Onnx__AttributeProto *attrs[2] = {&axis, &parts};
    Onnx__NodeProto split = ONNX__NODE_PROTO__INIT;
    split.op_type = "Split", split.input = ins, split.n_input = 1, split.output = outs;
    split.n_output = 2, split.attribute = attrs, split.n_attribute = 2;
    Onnx__NodeProto **nodes = g->node, **fewer = malloc(nn * sizeof *fewer);
    memcpy(fewer, nodes, first * sizeof *fewer);
    fewer[first] = &split;
    memcpy(fewer + first + 1, nodes + first + 2, (nn - first - 2) * sizeof *fewer);
    g->node = fewer, g->n_node = nn - 1;
    m->opset_import[0]->version = 18;
    enum { N = 2 };
    float x[N * 50];
    clg_test_fill_uniform(&rng, x, N * 50, -1, 1);
    imports_as(m, net, "slice 0:3 name=a\nslice 3:6 name=b from=c\n", x, N);
    /* opset 13: the sizes an int64 input */
    int64_t sizes[2] = {3, 3}, two = 2;
    Onnx__TensorProto st = ONNX__TENSOR_PROTO__INIT;
    st.name = "split.sizes", st.has_data_type = 1, st.data_type = 7, st.dims = &two, st.n_dims = 1;
    st.int64_data = sizes, st.n_int64_data = 2;
    size_t ni = g->n_initializer;
    Onnx__TensorProto **inits = g->initializer, **more = malloc((ni + 1) * sizeof *more);
    memcpy(more, inits, ni * sizeof *more);
    more[ni] = &st;
    g->initializer = more, g->n_initializer = ni + 1;
    split.n_input = 2, split.n_attribute = 1;
    m->opset_import[0]->version = 13;
    imports_as(m, net, "slice 0:3 name=a\nslice 3:6 name=b from=c\n", x, N);
    g->initializer = inits, g->n_initializer = ni;
    g->node = nodes, g->n_node = nn;
    free(fewer), free(more);
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* Predictions within float rounding (another convolution algorithm may run): relative L2. */
static void predicts_close(clg_net *a, clg_net *b, const float *x, size_t n)
{
    size_t k = clg_net_class_count(a);
    float *pa = malloc(n * k * sizeof *pa), *pb = malloc(n * k * sizeof *pb);
    double *ref = malloc(n * k * sizeof *ref);
    clg_test_poison_nan(pb, n * k);
    CLG_ASSERT_STATUS(clg_net_predict(a, x, n, pa), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_predict(b, x, n, pb), CLG_OK);
    for (size_t i = 0; i < n * k; i++)
        ref[i] = pa[i];
    assert_true(clg_test_rel_l2(pb, ref, n * k) < 1e-5);
    free(pa), free(pb), free(ref);
}

/* A zero Pad read only by a Conv joins the Conv's padding (no layer): the same predictions
 * within rounding; one before a pool stays a layer; Pad's attribute form (to opset 10) reads
 * the same; padding along C and the wrap mode are refused. Flatten at axis 2 of N x 1 x H x W
 * keeps N apart and imports; of N x 2 x H x W it would not, and is refused. */
static void pads_import_and_fold(void **state)
{
    (void)state;
    clg_net *net, *back;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 6x6x2\npad 1,2,0,1\nconv 3x3x4 pad=1\nrelu\n"
                                         "pad 1,1,1,1\nmaxpool 2x2\nfc 3\nsoftmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/pads.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    enum { N = 3 };
    float x[N * 72];
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    imports_as(m, NULL, "input 6x6x2\nconv 3x3x4 pad=2,3,1,2 name=node2\nrelu name=node3\n"
                        "pad 1,1,1,1 name=node4\nmaxpool", NULL, 0);
    CLG_ASSERT_STATUS(clg_net_import_onnx(ctx, path, &back), CLG_OK);
    predicts_close(net, back, x, N);
    clg_net_destroy(back);
    /* opset 10: pads and mode as attributes, one input */
    size_t at = 0;
    Onnx__NodeProto *pad = node_named(m, "Pad", &at);
    int64_t ints[8] = {0, 0, 1, 0, 0, 0, 2, 1};
    Onnx__AttributeProto pads = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = {&pads};
    pads.name = "pads", pads.has_type = 1, pads.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    pads.ints = ints, pads.n_ints = 8;
    size_t n_in = pad->n_input, n_attr = pad->n_attribute;
    Onnx__AttributeProto **old_attrs = pad->attribute;
    pad->n_input = 1, pad->attribute = attrs, pad->n_attribute = 1;
    m->opset_import[0]->version = 10;
    imports_as(m, NULL, "input 6x6x2\nconv 3x3x4 pad=2,3,1,2 name=node2\n", NULL, 0);
    /* along C: refused; the wrap mode: refused */
    ints[1] = 1;
    refused(m, CLG_ERR_UNSUPPORTED, "along N or C");
    ints[1] = 0;
    Onnx__AttributeProto mode = ONNX__ATTRIBUTE_PROTO__INIT, *two[2] = {&pads, &mode};
    mode.name = "mode", mode.has_type = 1, mode.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    mode.has_s = 1, mode.s.data = (uint8_t *)"wrap", mode.s.len = 4;
    pad->attribute = two, pad->n_attribute = 2;
    refused(m, CLG_ERR_UNSUPPORTED, "mode \"wrap\"");
    mode.s.data = (uint8_t *)"reflect", mode.s.len = 7; /* not folded: a layer */
    imports_as(m, NULL, "input 6x6x2\npad 1,2,0,1 mode=reflect\nconv 3x3x4 pad=1\n", NULL, 0);
    pad->n_input = n_in, pad->attribute = old_attrs, pad->n_attribute = n_attr;
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
    for (size_t c = 1; c <= 2; c++) {
        char text[96];
        snprintf(text, sizeof text, "input 4x5x1\nconv 3x3x%zu pad=1\nfc 3\nsoftmax\n", c);
        CLG_ASSERT_STATUS(clg_net_parse(ctx, text, &net), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_init(net, 3), CLG_OK);
        CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
        CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
        Onnx__NodeProto *flat = node_named(m, "Flatten", &at);
        assert_int_equal(flat->n_attribute, 1);
        flat->attribute[0]->i = 2;
        if (c == 1)
            imports_as(m, net, "conv 3x3x1 pad=1", x, N);
        else
            refused(m, CLG_ERR_UNSUPPORTED, "axis 2: it does not keep N apart");
        onnx__model_proto__free_unpacked(m, NULL);
        clg_net_destroy(net);
    }
}

/* A 1-D int64 initializer. */
static Onnx__TensorProto i64_tensor(const char *name, int64_t *v, int64_t *n)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.name = (char *)name, t.has_data_type = 1, t.data_type = 7, t.dims = n, t.n_dims = 1;
    t.int64_data = v, t.n_int64_data = (size_t)*n;
    return t;
}

/* The pads PyTorch's opset-13 exporter writes for F.pad(x, (left, right, top, bottom)),
 * folded: ConstantOfShape([4]) zeros, Concat after the user's four, Reshape to (4, 2), Slice
 * with step -1 (rows reversed), Transpose, Reshape to 8, Cast: the same pad layer and
 * predictions as the constant pads. */
static void pytorch_pad_arithmetic_is_folded(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 6x6x2\npad 1,2,0,1 mode=reflect\nconv 3x3x4\n"
                                         "fc 3\nsoftmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 2), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/fpad.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__GraphProto *g = m->graph;
    size_t at = 0;
    Onnx__NodeProto *pad = node_named(m, "Pad", &at);
    int64_t four = 4, user[4] = {0, 1, 1, 2}, rows[2] = {-1, 2}, start = -1,
            end = -INT64_MAX, axis = 0, step = -1, flat = -1, zero = 0;
    int64_t n1 = 1, n2 = 2, n4 = 4;
    Onnx__TensorProto k[8] = {i64_tensor("k.four", &four, &n1), i64_tensor("k.user", user, &n4),
                              i64_tensor("k.rows", rows, &n2), i64_tensor("k.start", &start, &n1),
                              i64_tensor("k.end", &end, &n1), i64_tensor("k.axis", &axis, &n1),
                              i64_tensor("k.step", &step, &n1), i64_tensor("k.flat", &flat, &n1)};
    Onnx__TensorProto zero_t = i64_tensor("", &zero, &n1);
    static char *ins[7][5] = {{"k.four"}, {"k.user", "p.zeros"}, {"p.cat", "k.rows"},
                              {"p.rows", "k.start", "k.end", "k.axis", "k.step"}, {"p.rev"},
                              {"p.t", "k.flat"}, {"p.flat"}};
    static char *outs[7][1] = {{"p.zeros"}, {"p.cat"}, {"p.rows"}, {"p.rev"}, {"p.t"},
                               {"p.flat"}, {"p.pads"}};
    static const char *const op[7] = {"ConstantOfShape", "Concat", "Reshape", "Slice",
                                       "Transpose", "Reshape", "Cast"};
    static const size_t nins[7] = {1, 2, 2, 5, 1, 2, 1};
    Onnx__AttributeProto value = ONNX__ATTRIBUTE_PROTO__INIT, axis0 = ONNX__ATTRIBUTE_PROTO__INIT;
    Onnx__AttributeProto to = ONNX__ATTRIBUTE_PROTO__INIT;
    value.name = "value", value.has_type = 1, value.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    value.t = &zero_t;
    axis0.name = "axis", axis0.has_type = 1, axis0.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    axis0.has_i = 1, axis0.i = 0;
    to.name = "to", to.has_type = 1, to.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    to.has_i = 1, to.i = 7;
    Onnx__AttributeProto *a_value[1] = {&value}, *a_axis[1] = {&axis0}, *a_to[1] = {&to};
    Onnx__NodeProto fold[7], *chain[7];
    for (int i = 0; i < 7; i++) {
        onnx__node_proto__init(&fold[i]);
        fold[i].op_type = (char *)op[i], fold[i].input = ins[i], fold[i].n_input = nins[i];
        fold[i].output = outs[i], fold[i].n_output = 1;
        chain[i] = &fold[i];
    }
    fold[0].attribute = a_value, fold[0].n_attribute = 1;
    fold[1].attribute = a_axis, fold[1].n_attribute = 1;
    fold[6].attribute = a_to, fold[6].n_attribute = 1;
    size_t nn = g->n_node, ni = g->n_initializer;
    Onnx__NodeProto **nodes = g->node, **more = malloc((nn + 7) * sizeof *more);
    memcpy(more, nodes, at * sizeof *more);
    memcpy(more + at, chain, 7 * sizeof *more);
    memcpy(more + at + 7, nodes + at, (nn - at) * sizeof *more);
    Onnx__TensorProto **inits = g->initializer, **more_inits = malloc((ni + 8) * sizeof *more_inits);
    memcpy(more_inits, inits, ni * sizeof *more_inits);
    for (int i = 0; i < 8; i++)
        more_inits[ni + (size_t)i] = &k[i];
    g->node = more, g->n_node = nn + 7, g->initializer = more_inits, g->n_initializer = ni + 8;
    char *pads = pad->input[1];
    pad->input[1] = "p.pads";
    m->opset_import[0]->version = 13;
    enum { N = 2 };
    float x[N * 72];
    clg_test_fill_uniform(&rng, x, N * 72, -1, 1);
    imports_as(m, net, "input 6x6x2\npad 1,2,0,1 mode=reflect", x, N);
    pad->input[1] = pads;
    g->node = nodes, g->n_node = nn, g->initializer = inits, g->n_initializer = ni;
    free(more), free(more_inits);
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* A centre crop exports as a Slice over H and W and comes back as a pad layer with negative
 * pads (the window it took): the same predictions, bit for bit (the same kernels). */
static void crops_export_as_slices(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 6x7x2\nconv 3x3x3 pad=1 name=enc\nconv 3x3x3\n"
                                         "crop from=enc,l2\nfc 3\nsoftmax\n", &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 4), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/crop.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    enum { N = 2 };
    float x[N * 84];
    clg_test_fill_uniform(&rng, x, N * 84, -1, 1);
    imports_as(m, net, "pad -1,-1,-1,-1", x, N); /* 6x7 to 4x5 */
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* Weights in an external file beside the model, as torch.onnx.export writes them: read at
 * their offset, the same predictions; a location outside the model's folder, an offset or
 * length past the file's end, a length other than the shape's, a missing file: refused,
 * naming the tensor. */
static void external_data_is_read(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, nets[1], &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_init(net, 6), CLG_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/ext.onnx", dir);
    CLG_ASSERT_STATUS(clg_net_export_onnx(net, path), CLG_OK);
    Onnx__ModelProto *m;
    CLG_ASSERT_STATUS(clg__onnx_read(ctx, path, &m), CLG_OK);
    Onnx__TensorProto *w = init_of(m, ".weight");
    ProtobufCBinaryData raw = w->raw_data;
    snprintf(path, sizeof path, "%s/ext.onnx.data", dir); /* 7 bytes of something else first */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite("padding", 1, 7, f), 7);
    assert_int_equal(fwrite(raw.data, 1, raw.len, f), raw.len);
    fclose(f);
    char length[32];
    snprintf(length, sizeof length, "%zu", raw.len);
    Onnx__StringStringEntryProto e[3] = {ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                         ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                         ONNX__STRING_STRING_ENTRY_PROTO__INIT};
    e[0].key = "location", e[0].value = "ext.onnx.data";
    e[1].key = "offset", e[1].value = "7";
    e[2].key = "length", e[2].value = length;
    Onnx__StringStringEntryProto *ep[3] = {&e[0], &e[1], &e[2]};
    w->has_raw_data = 0, w->raw_data = (ProtobufCBinaryData){0, NULL};
    w->external_data = ep, w->n_external_data = 3;
    w->has_data_location = 1, w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    enum { N = 3 };
    float x[N * 162];
    clg_test_fill_uniform(&rng, x, N * 162, -1, 1);
    imports_as(m, net, "conv 3x3x6 pad=1\n", x, N);
    e[0].value = "../ext.onnx.data";
    refused(m, CLG_ERR_CORRUPT, "outside the model's folder (\"../ext.onnx.data\")");
    e[0].value = "ext.onnx.data", e[1].value = "11";
    refused(m, CLG_ERR_CORRUPT, "bytes at offset 11 of");
    e[1].value = "7", e[2].value = "8";
    refused(m, CLG_ERR_CORRUPT, "8 bytes of external data for a shape of 108 elements");
    e[2].value = length, e[0].value = "gone.data";
    refused(m, CLG_ERR_IO, "cannot read its external data");
    e[0].value = "ext.onnx.data", e[1].value = "-1";
    refused(m, CLG_ERR_CORRUPT, "external data offset \"-1\"");
    w->external_data = NULL, w->n_external_data = 0, w->has_data_location = 0;
    w->has_raw_data = 1, w->raw_data = raw;
    onnx__model_proto__free_unpacked(m, NULL);
    clg_net_destroy(net);
}

/* pad=same and same-lower (ONNX's SAME_UPPER, SAME_LOWER) from the input's size, with
 * strides: output = ceil(input / stride), an odd padding's extra at the end or the start. */
static void same_padding_with_strides(void **state)
{
    (void)state;
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, "input 7x9x1\nconv 3x3x2 pad=same stride=2\n"
                                         "maxpool 2x2 pad=same-lower\nconv 2x2x2 pad=same\n"
                                         "fc 2\nsoftmax\n", &net), CLG_OK);
    char text[512];
    CLG_ASSERT_STATUS(clg_net_text(net, text, sizeof text, NULL), CLG_OK);
    /* conv: 7x9 -> 4x5, 2 rows and 2 columns of padding; pool: 4x5 -> 2x3, one column, at
     * the start; conv 2x2 stride 1 on 2x3: one row and column, at the end */
    if (!strstr(text, "conv 3x3x2 pad=1 stride=2\nmaxpool 2x2 pad=0,0,1,0\n"
                      "conv 2x2x2 pad=0,1,0,1\n"))
        fail_msg("resolved as\n%s", text);
    clg_layer_info info;
    CLG_ASSERT_STATUS(clg_net_layer_info(net, 1, &info), CLG_OK);
    assert_true(info.output.h == 2 && info.output.w == 3);
    clg_net_destroy(net);
}

static int setup(void **state)
{
    (void)state;
    clg_test_fixture_setup_dir(&ctx, &rng, &dir, "onnx");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_fixture_teardown_dir(ctx, dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_keeps_everything),
        cmocka_unit_test(bad_models_are_refused),
        cmocka_unit_test(current_exporters_forms_import),
        cmocka_unit_test(input_normalisation_forms),
        cmocka_unit_test(external_data_is_read),
        cmocka_unit_test(long_concats_import_in_parts),
        cmocka_unit_test(shape_arithmetic_is_folded),
        cmocka_unit_test(split_forms_import),
        cmocka_unit_test(pads_import_and_fold),
        cmocka_unit_test(pytorch_pad_arithmetic_is_folded),
        cmocka_unit_test(crops_export_as_slices),
        cmocka_unit_test(fine_tuning_an_imported_model),
        cmocka_unit_test(same_padding_with_strides),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
