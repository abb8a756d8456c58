/* clgrad-bench: speed of clgrad's kernels beside a peer on the same run.
 * Subcommands: startup (program build vs cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: clgrad-bench startup [--runs N] [--json] [--filter FILTER]\n"
               "  startup   time to build every kernel family from source vs from the binary cache\n"
               "  --runs N  timed repetitions; the median is printed (default 5)\n"
               "  --json    one JSON object per result line\n"
               "  --filter  device filter (default $CLGRAD_DEVICES); the first device is used\n");
}

int main(int argc, char **argv)
{
    bench_opts o = {0, 5, NULL};
    const char *cmd = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            o.json = 1;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            o.runs = atoi(argv[++i]);
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
    if (strcmp(cmd, "startup") == 0)
        return bench_startup(&o);
    usage(stderr);
    return 2;
}
