/* clgrad-bench: speed of clgrad's kernels beside a peer on the same run.
 * Subcommands: startup (program build vs cache), gemm (SGEMM GFLOP/s), conv (per algorithm and
 * pass), pool (max-pool GB/s). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "model_io.h"
#include "opts.h"
#include "text_file.h"
#include "pocl_pin.h"

/* Every option; the command is the one operand. */
typedef struct settings {
    bench_opts o;
    const char *shape, *impl, *vs, *folder, *net_file;
    size_t batch, memory_cap, limit, crop;
    int scaling;
} settings;

#define AT(field) offsetof(settings, field)

static const opt_def defs[] = {
    {OPT_INT, "runs", AT(o.runs), 1, 1000, .value = "N",
     .help = "timed repetitions; the median is printed (default 5)"},
    {OPT_FLAG, "json", AT(o.json), 0, 0, .help = "one JSON object per result line"},
    {OPT_TEXT, "filter", AT(o.filter), 0, 0, .value = "FILTER",
     .help = "device filter (default $CLGRAD_DEVICES); the first device is used"},
    {OPT_TEXT, "shape", AT(shape), 0, 0, .value = "S", .help = "gemm, conv: one shape"},
    {OPT_TEXT, "impl", AT(impl), 0, 0, .value = "builtin|clblast|openblas",
     .help = "gemm: just one implementation"},
    {OPT_TEXT, "vs", AT(vs), 0, 0, .value = "K=V,...",
     .help = "gemm: the built-in with these GEMM parameters changed (as clgrad-tune\n"
             "--set) takes turns with the rest: paired runs of two parameter sets"},
    {OPT_SIZE, "batch", AT(batch), 1, UNBOUNDED, .value = "N",
     .help = "train, cluster, infer: the mini-batch (default 64)"},
    {OPT_TEXT, "net", AT(net_file), 0, 0, .value = "FILE",
     .help = "train, cluster: another network, on synthetic data of its input shape;\n"
             "infer: the network"},
    {OPT_FLAG, "profile", AT(o.profile), 0, 0,
     .help = "train: device time per kernel and training step (launches serialised);\n"
             "infer: the layers that take longest"},
    {OPT_FLAG, "scaling", AT(scaling), 0, 0,
     .help = "train: multi-device images/s on 1 and 2 one-core sub-devices (in host memory; "
             "with copies, overlap on and off), the whole CPU, 2 POCL devices, a fast+slow "
             "pair"},
    {OPT_TEXT, "folder", AT(folder), 0, 0, .value = "DIR", .help = "data: the image folder"},
    {OPT_SIZE, "crop", AT(crop), 1, 16384, .value = "S",
     .help = "data: a folder of RGB photos, read as for ImageNet training: a random resized\n"
             "crop to S x S (area 0.08-1, aspect 3/4-4/3) and a random mirror"},
    {OPT_SIZE, "memory-cap", AT(memory_cap), 1, UNBOUNDED, .value = "MB",
     .help = "data: the decoding passes run under that data-segment limit (RLIMIT_DATA)"},
    {OPT_SIZE, "limit", AT(limit), 1, UNBOUNDED, .value = "N",
     .help = "experiments: the first N training images (default all)"},
};

static const opt_tool tool = {
    "clgrad-bench", NULL,
    "usage: clgrad-bench COMMAND [options]\n"
    "Speed of clgrad's kernels beside a peer on the same run. COMMAND is one of:\n"
    "  startup   time to build every kernel family from source vs from the binary cache\n"
    "  peak      the device's FMA peak: a plain loop of independent 16-wide FMAs\n"
    "  gemm      SGEMM GFLOP/s: built-in, CLBlast, OpenBLAS (when built with it) on sq256\n"
    "            sq512 sq1024 sq2048 (sq4096 on GPUs) conv1 conv2 fc1 fc1t\n"
    "  conv      ms and GFLOP/s per layer (c1 c2 r3 res16 res32 res64 res32s2 res64s2\n"
    "            proj32 proj64; U-Net's up32 up16 transposed, unet16 unet32), pass and\n"
    "            algorithm, beside CLBlast's convgemm forward\n"
    "  pool      max pool 2x2 on N64 C32 28x28: GB/s forward and backward\n"
    "  train     the default Fashion-MNIST network, or --net FILE (classifier, segmenter or\n"
    "            regression net, on synthetic targets): training images/s, inference\n"
    "            images/s at batch 256, per-layer forward/backward ms\n"
    "  infer     --net FILE (text, model or ONNX): inference images/s and GFLOP/s at\n"
    "            --batch N (tools/peers/bench_imported.py runs PyTorch and ONNX Runtime\n"
    "            beside it)\n"
    "  data      an image folder (e.g. from clgrad-export-images): images/s decoded and\n"
    "            augmented with 0, 1, 2 and 4 reader workers, and training images/s with\n"
    "            background dispatch off and on; with --crop S, a folder of photos\n"
    "            (tools/peers/bench_data.py runs a PyTorch DataLoader beside it)\n"
    "  experiments  2 learning rates of the default network, 1 epoch each: one after the\n"
    "            other on 1 one-core sub-device vs at once on 2; then 3 models on 2\n"
    "  cluster   under mpirun: training images/s across the ranks (one device each, e.g.\n"
    "            mpirun -np 2 -x POCL_MAX_PTHREAD_COUNT=1), bytes sent per step\n"
    "Options:\n",
    "  -h, --help, --version\n", defs, sizeof defs / sizeof defs[0], 1, 1, "one COMMAND"};

static const char *const commands[] = {"startup", "peak", "gemm", "conv", "pool", "train",
                                       "data", "experiments", "cluster", "infer"};

/* The text of a saved model's network (a clgrad model file or ONNX), malloc'd; NULL said. */
static char *model_text(const bench_opts *o, const char *path)
{
    clg_ctx *ctx = bench_ctx(o, NULL);
    clg_net *net = NULL;
    size_t len = 0;
    char *text = NULL;
    clg_status st = ctx ? load_model(ctx, path, &net) : CLG_ERR_NO_DEVICE;
    if (st == CLG_OK && (st = clg_net_text(net, NULL, 0, &len)) == CLG_OK &&
        (text = malloc(len + 1)) != NULL)
        st = clg_net_text(net, text, len + 1, NULL);
    if (st != CLG_OK || !text) {
        fprintf(stderr, "clgrad-bench: %s: %s\n", path,
                ctx ? clg_ctx_last_error(ctx) : clg_last_error());
        free(text);
        text = NULL;
    }
    clg_net_destroy(net);
    clg_ctx_destroy(ctx);
    return text;
}

int main(int argc, char **argv)
{
    settings set = {.o = {0, 5, NULL, 0, NULL, "default"}, .batch = 64};
    size_t nops = 0;
    int parsed = opts_parse(&tool, argc, argv, &set, &nops);
    if (parsed)
        return parsed < 0 ? 0 : parsed;
    const char *cmd = argv[1];
    size_t known = 0;
    while (known < sizeof commands / sizeof commands[0] && strcmp(cmd, commands[known]))
        known++;
    if (known == sizeof commands / sizeof commands[0]) {
        fprintf(stderr, "clgrad-bench: unknown command %s (the commands are startup, peak, gemm, "
                "conv, pool, train, data, experiments, cluster, infer)\n", cmd);
        return 2;
    }
    bench_opts o = set.o;
    const char *shape = set.shape, *impl = set.impl, *folder = set.folder;
    size_t batch = set.batch, memory_cap = set.memory_cap, limit = set.limit;
    int scaling = set.scaling;
    char *net_text = NULL;
    int model = set.net_file && (is_onnx(set.net_file) || is_model_file(set.net_file));
    if (set.net_file && strcmp(cmd, "infer") && !model) { /* infer reads models: by path */
        if (!(net_text = read_text_file(set.net_file))) {
            fprintf(stderr, "clgrad-bench: cannot read %s\n", set.net_file);
            return 2;
        }
        o.net_name = set.net_file;
        o.net_text = net_text;
    }
    if (!strcmp(cmd, "gemm") && (!set.impl || !strcmp(set.impl, "openblas")))
        bench_openblas_at_best(argv); /* the peer at its best, or restarted so (no return) */
    /* before the first OpenCL call; several devices at once ran slower pinned (pocl_pin.h) */
    pocl_pin_threads(strcmp(cmd, "experiments") && strcmp(cmd, "cluster") && !scaling);
    if (model && strcmp(cmd, "infer")) { /* a model's network (its weights do not matter) */
        if (!(net_text = model_text(&o, set.net_file)))
            return 2;
        o.net_name = set.net_file;
        o.net_text = net_text;
    }
    int rc = 2;
    if (strcmp(cmd, "startup") == 0)
        rc = bench_startup(&o);
    else if (strcmp(cmd, "peak") == 0)
        rc = bench_peak(&o);
    else if (strcmp(cmd, "gemm") == 0)
        rc = bench_gemm(&o, shape, impl, set.vs);
    else if (strcmp(cmd, "conv") == 0)
        rc = bench_conv(&o, shape);
    else if (strcmp(cmd, "pool") == 0)
        rc = bench_pool(&o);
    else if (strcmp(cmd, "cluster") == 0 && batch > 0)
        rc = bench_cluster(&o, batch, &argc, &argv);
    else if (strcmp(cmd, "experiments") == 0)
        rc = bench_experiments(&o, limit);
    else if (strcmp(cmd, "data") == 0)
        rc = bench_data(&o, folder, memory_cap, set.crop);
    else if (strcmp(cmd, "infer") == 0)
        rc = bench_infer(&o, set.net_file, batch);
    else if (strcmp(cmd, "train") == 0 && batch > 0)
        rc = scaling ? bench_scaling(&o, batch, argv[0]) : bench_train(&o, batch);
    free(net_text);
    return rc;
}
