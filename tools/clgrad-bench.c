/* clgrad-bench: speed of clgrad's kernels beside a peer on the same run.
 * Subcommands: startup (program build vs cache), gemm (SGEMM GFLOP/s), conv (per algorithm and
 * pass), pool (max-pool GB/s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "text_file.h"
#include "pocl_pin.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: clgrad-bench startup|peak|gemm|conv|pool|train|data|experiments|cluster [--runs N]\n"
               "                    [--json]\n"
               "                    [--filter FILTER] [--shape S] [--impl I] [--batch N] [--net FILE]\n"
               "                    [--folder DIR] [--memory-cap MB]\n"
               "  startup   time to build every kernel family from source vs from the binary cache\n"
               "  peak      the device's FMA peak: a plain loop of independent 16-wide FMAs\n"
               "  gemm      SGEMM GFLOP/s: built-in, CLBlast, OpenBLAS (when built with it) on\n"
               "            sq256 sq512 sq1024 sq2048 (sq4096 on GPUs) conv1 conv2 fc1 fc1t (--shape: one;\n"
               "            --impl builtin|clblast|openblas: just one implementation)\n"
               "  conv      ms and GFLOP/s per layer (c1 c2 r3 res16 res32 res64 res32s2 res64s2\n            proj32 proj64; --shape:\n"
               "            one), pass and algorithm, beside CLBlast's convgemm forward\n"
               "  pool      max pool 2x2 on N64 C32 28x28: GB/s forward and backward\n"
               "  train     the default Fashion-MNIST network (--net FILE: another, on synthetic\n"
               "            data of its input shape): training images/s (--batch, default\n"
               "            64), inference images/s at batch 256, per-layer forward/backward ms;\n"
               "            --profile: device time per kernel and training step (launches are\n"
               "            serialised to measure them); --scaling: multi-device images/s on\n"
               "            1 and 2 one-core sub-devices (in host memory; with copies, overlap\n"
               "            on and off), the whole CPU, 2 POCL devices, a fast+slow pair\n"
               "  data      an image folder (--folder DIR, e.g. from clgrad-export-images): images/s\n"
               "            decoded and augmented with 0, 1, 2 and 4 reader workers, and training\n"
               "            images/s with background dispatch off and on; --memory-cap MB: the\n"
               "            decoding passes run under that data-segment limit (RLIMIT_DATA)\n"
               "  experiments  2 learning rates of the default network, 1 epoch each: one after\n"
               "            the other on 1 one-core sub-device vs at once on 2; then 3 models on 2\n"
               "            (--limit N: the first N training images, default all)\n"
               "  cluster   under mpirun: training images/s across the ranks (one device each,\n"
               "            e.g. mpirun -np 2 -x POCL_MAX_PTHREAD_COUNT=1), bytes sent per step\n"
               "  --runs N  timed repetitions; the median is printed (default 5)\n"
               "  --json    one JSON object per result line\n"
               "  --filter  device filter (default $CLGRAD_DEVICES); the first device is used\n");
}

int main(int argc, char **argv)
{
    bench_opts o = {0, 5, NULL, 0, NULL, "default"};
    char *net_text = NULL;
    const char *cmd = NULL, *shape = NULL, *impl = NULL, *folder = NULL;
    size_t batch = 64, memory_cap = 0, limit = 0;
    int scaling = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            o.json = 1;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            o.runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--impl") == 0 && i + 1 < argc) {
            impl = argv[++i];
        } else if (strcmp(argv[i], "--scaling") == 0) {
            scaling = 1;
        } else if (strcmp(argv[i], "--profile") == 0) {
            o.profile = 1;
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            batch = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--folder") == 0 && i + 1 < argc) {
            folder = argv[++i];
        } else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
            limit = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--memory-cap") == 0 && i + 1 < argc) {
            memory_cap = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            shape = argv[++i];
        } else if (strcmp(argv[i], "--net") == 0 && i + 1 < argc) {
            o.net_name = argv[++i];
            free(net_text);
            if (!(net_text = read_text_file(o.net_name))) {
                fprintf(stderr, "clgrad-bench: cannot read %s\n", o.net_name);
                return 2;
            }
            o.net_text = net_text;
        } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            o.filter = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("clgrad-bench %s\n", clg_version());
            return 0;
        } else if (!cmd && argv[i][0] != '-') {
            cmd = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!cmd || o.runs < 1) {
        usage(stderr);
        return 2;
    }
    /* before the first OpenCL call; several devices at once ran slower pinned (pocl_pin.h) */
    pocl_pin_threads(strcmp(cmd, "experiments") && strcmp(cmd, "cluster") && !scaling);
    int rc = 2;
    if (strcmp(cmd, "startup") == 0)
        rc = bench_startup(&o);
    else if (strcmp(cmd, "peak") == 0)
        rc = bench_peak(&o);
    else if (strcmp(cmd, "gemm") == 0)
        rc = bench_gemm(&o, shape, impl);
    else if (strcmp(cmd, "conv") == 0)
        rc = bench_conv(&o, shape);
    else if (strcmp(cmd, "pool") == 0)
        rc = bench_pool(&o);
    else if (strcmp(cmd, "cluster") == 0 && batch > 0)
        rc = bench_cluster(&o, batch, &argc, &argv);
    else if (strcmp(cmd, "experiments") == 0)
        rc = bench_experiments(&o, limit);
    else if (strcmp(cmd, "data") == 0)
        rc = bench_data(&o, folder, memory_cap);
    else if (strcmp(cmd, "train") == 0 && batch > 0)
        rc = scaling ? bench_scaling(&o, batch, argv[0]) : bench_train(&o, batch);
    else
        usage(stderr);
    free(net_text);
    return rc;
}
