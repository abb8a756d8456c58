/* ONNX's own backend tests (Debian's libonnx-testdata): every node test, and the
 * pytorch-converted and pytorch-operator tests, whose operators clgrad imports, run on the
 * device and compared with the outputs stored beside them. A test applies when its
 * operators are all ones clgrad imports and its first input is a 4-D float tensor (clgrad's
 * layers are 2-D over N x C x H x W: the 1-D and 3-D cases and integer tensors are out of
 * scope); the other inputs (weights, which the node tests feed as inputs) become constants.
 * A model clgrad refuses (an attribute value it lacks, e.g. a 3-D kernel or auto_pad with
 * strides) is listed with the reason; every one that imports must match. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/testutil.h"
#include "nn/onnx_internal.h"

#define DATA "/usr/share/libonnx-testdata/data"

static clg_ctx *ctx;
static clg_test_rng rng;

static const char *const ops[] = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "Gemm",
                                  "MatMul", "BatchNormalization", "Relu", "LeakyRelu", "Elu",
                                  "Sigmoid", "Tanh", "Add", "Sum", "Concat", "Flatten", "Reshape",
                                  "Dropout", "Identity", "Softmax", "Constant", "Clip",
                                  "HardSigmoid", "HardSwish", "Mul", "ReduceMean", "Pad", "ConvTranspose", "Resize", "Upsample"};

/* Operators whose result does not depend on the layout: a test of them on a 1-D to 3-D
 * input runs on that input seen as N x rest x 1 x 1 (1 x n x 1 x 1 for 1-D). */
static const char *const elementwise[] = {"Clip", "HardSigmoid", "HardSwish", "Relu",
                                          "LeakyRelu", "Elu", "Sigmoid", "Tanh", "Mul",
                                          "Identity", "Constant"};

static int is_elementwise(const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_node; i++) {
        int found = 0;
        for (size_t j = 0; j < sizeof elementwise / sizeof elementwise[0] && !found; j++)
            found = !strcmp(g->node[i]->op_type, elementwise[j]);
        if (!found)
            return 0;
    }
    return 1;
}

/* Rewrites the graph input's declared shape to the 4-D view of `dims` (rank 1 to 3); the
 * dimension array is the test's (static), put back before the model is freed. */
static Onnx__TensorShapeProto__Dimension view_dim[4], *view_dims[4];

static int view_as_4d(Onnx__ValueInfoProto *in, const int64_t *dims, size_t rank, int64_t out[4],
                      Onnx__TensorShapeProto__Dimension ***keep, size_t *keep_n)
{
    Onnx__TypeProto *t = in->type;
    if (rank < 1 || rank > 3 || !t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !t->tensor_type->shape)
        return 0;
    int64_t rest = 1;
    for (size_t i = rank == 1 ? 0 : 1; i < rank; i++)
        rest *= dims[i];
    out[0] = rank == 1 ? 1 : dims[0], out[1] = rest, out[2] = out[3] = 1;
    for (int i = 0; i < 4; i++) {
        onnx__tensor_shape_proto__dimension__init(&view_dim[i]);
        view_dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        view_dim[i].dim_value = out[i];
        view_dims[i] = &view_dim[i];
    }
    Onnx__TensorShapeProto *s = t->tensor_type->shape;
    *keep = s->dim, *keep_n = s->n_dim;
    s->dim = view_dims, s->n_dim = 4;
    return 1;
}

static int imported_op(const char *op)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i]))
            return 1;
    return 0;
}

static Onnx__TensorProto *read_tensor(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static unsigned char buf[1 << 24];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return onnx__tensor_proto__unpack(NULL, len, buf);
}

typedef struct tally {
    int pass, fail, refused, apply_not;
} tally;

/* One test folder: 1 pass, 0 not applicable or refused (said), -1 failed (said). */
static int run_one(const char *dir, const char *name, tally *t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
    Onnx__ModelProto *m;
    if (clg__onnx_read(ctx, path, &m) != CLG_OK) {
        t->apply_not++;
        return 0;
    }
    const Onnx__GraphProto *g = m->graph;
    int applies = g->n_node > 0 && g->n_output == 1;
    for (size_t i = 0; applies && i < g->n_node; i++)
        applies = imported_op(g->node[i]->op_type);
    /* the graph's inputs that are not initializers (older models list both) are fed from
     * input_<k>.pb in order */
    Onnx__TensorProto *in[8] = {0}, *want = NULL;
    const char *in_name[8];
    size_t nin = 0;
    for (size_t i = 0; applies && i < g->n_input && nin < 8; i++) {
        int init = 0;
        for (size_t j = 0; j < g->n_initializer && !init; j++)
            init = !strcmp(g->initializer[j]->name, g->input[i]->name);
        if (init)
            continue;
        snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_%zu.pb", dir, name, nin);
        in_name[nin] = g->input[i]->name;
        in[nin] = read_tensor(path);
        applies = in[nin++] != NULL;
    }
    snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_0.pb", dir, name);
    if (applies)
        want = read_tensor(path);
    /* the first input's shape as clgrad takes it: 4-D, or an elementwise test's view */
    int64_t shape[4] = {0, 0, 0, 0};
    Onnx__TensorShapeProto__Dimension **declared = NULL;
    size_t declared_n = 0;
    Onnx__ValueInfoProto *first = NULL;
    for (size_t i = 0; applies && i < g->n_input && !first; i++)
        if (!strcmp(g->input[i]->name, in_name[0]))
            first = g->input[i];
    if (applies && nin >= 1 && in[0]->n_dims == 4)
        memcpy(shape, in[0]->dims, sizeof shape);
    else if (applies && nin >= 1 && first && is_elementwise(g) &&
             view_as_4d(first, in[0]->dims, in[0]->n_dims, shape, &declared, &declared_n))
        ;
    else
        applies = 0;
    applies = applies && want && in[0]->data_type == 1 && want->data_type == 1;
    int result = 0;
    if (!applies && in[0] && getenv("CLG_TEST_VERBOSE")) /* its operators are clgrad's */
        print_message("n/a       %s: first input %zu-D, type %d\n", name, in[0]->n_dims,
                      in[0]->data_type);
    if (!applies) {
        t->apply_not++;
    } else {
        clg__onnx_const extra[8];
        size_t nextra = 0;
        for (size_t i = 1; i < nin; i++)
            extra[nextra++] = (clg__onnx_const){in_name[i], in[i]};
        clg_net *net = NULL; /* the other inputs are constants: the first is the network's */
        clg_status st = clg__onnx_import_model(ctx, m, extra, nextra, &net);
        float *x = NULL, *y = NULL, *ref = NULL;
        size_t nx = 0, ny = 0;
        if (st == CLG_ERR_UNSUPPORTED) {
            print_message("refused   %s: %s\n", name, clg_ctx_last_error(ctx));
            t->refused++;
        } else if (st != CLG_OK) {
            print_message("FAILED    %s: import: %s\n", name, clg_ctx_last_error(ctx));
            t->fail++, result = -1;
        } else if (clg__onnx_floats(ctx, in[0], &x, &nx) != CLG_OK ||
                   clg__onnx_floats(ctx, want, &ref, &ny) != CLG_OK) {
            print_message("FAILED    %s: test data: %s\n", name, clg_ctx_last_error(ctx));
            t->fail++, result = -1;
        } else {
            /* the model's output: the softmax it ends in, or the layer before the one
             * clgrad appended */
            size_t layers = clg_net_layer_count(net), n = (size_t)shape[0];
            clg_layer_info last, before;
            clg_net_layer_info(net, layers - 1, &last);
            clg_net_layer_info(net, layers - 2, &before);
            int own_softmax = g->node[g->n_node - 1]->op_type[0] == 'S' &&
                              !strcmp(g->node[g->n_node - 1]->op_type, "Softmax");
            const clg_layer_info *out = own_softmax ? &last : &before;
            size_t per = clg_shape_numel(out->output);
            y = malloc((n * per + 1) * sizeof *y);
            clg_test_poison_nan(y, n * per);
            st = n * per == ny ? clg_net_activations(net, x, n, out->name, y, n * per, NULL)
                               : CLG_ERR_SHAPE;
            double num = 0, den = 0;
            for (size_t i = 0; st == CLG_OK && i < ny; i++) {
                double d = (double)y[i] - ref[i];
                num += isnan(d) ? INFINITY : d * d;
                den += (double)ref[i] * ref[i];
            }
            double rel = den > 0 ? sqrt(num / den) : sqrt(num);
            /* float32 sums of up to a few hundred terms: 1e-5 of the output's norm */
            if (st != CLG_OK || !(rel < 1e-5)) {
                print_message("FAILED    %s: %s, relative L2 error %.3g (%zu values, %zu wanted)\n",
                              name, st == CLG_OK ? "values differ" : clg_ctx_last_error(ctx),
                              rel, n * per, ny);
                t->fail++, result = -1;
            } else {
                print_message("pass      %s (relative L2 error %.2g)\n", name, rel);
                t->pass++, result = 1;
            }
        }
        free(x), free(y), free(ref);
        clg_net_destroy(net);
    }
    for (size_t i = 0; i < nin; i++)
        if (in[i])
            onnx__tensor_proto__free_unpacked(in[i], NULL);
    if (want)
        onnx__tensor_proto__free_unpacked(want, NULL);
    if (declared) /* the model's own dimensions back, for protobuf-c to free */
        first->type->tensor_type->shape->dim = declared,
        first->type->tensor_type->shape->n_dim = declared_n;
    onnx__model_proto__free_unpacked(m, NULL);
    return result;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_folder(const char *sub, tally *t)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", DATA, sub);
    DIR *d = opendir(dir);
    assert_non_null(d);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(e->d_name);
        }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        run_one(dir, names[i], t);
        free(names[i]);
    }
    free(names);
}

static void conformance(void **state)
{
    (void)state;
    DIR *d = opendir(DATA);
    if (!d) {
        print_message("skipped: ONNX's test data (package libonnx-testdata) is not installed\n");
        skip();
    }
    closedir(d);
    const char *subs[] = {"node", "pytorch-converted", "pytorch-operator"};
    tally all = {0, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        tally t = {0, 0, 0, 0};
        run_folder(subs[i], &t);
        print_message("%-18s %d pass, %d fail, %d refused with a reason, %d not applicable\n",
                      subs[i], t.pass, t.fail, t.refused, t.apply_not);
        all.pass += t.pass, all.fail += t.fail, all.refused += t.refused;
    }
    print_message("ONNX conformance: %d of %d applicable tests pass (%d refused with a reason)\n",
                  all.pass, all.pass + all.fail + all.refused, all.refused);
    assert_int_equal(all.fail, 0);
    assert_true(all.pass > 0);
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(conformance)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
