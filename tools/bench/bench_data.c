/* clgrad-bench data: images/s decoded and augmented from an image folder by the batch reader
 * with 0 (the caller's thread), 1, 2 and 4 workers; training images/s of the default network
 * from the same folder with background dispatch off and on; and, with a memory cap, the whole
 * folder streamed under a data-segment limit smaller than its decoded size. With --crop, a
 * folder of photos read as for ImageNet training (decoding only; no network takes them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "bench_common.h"
#include "tool_error.h"

static const char default_net[] =
    "input 28x28x1\nconv 5x5x32 pad=2\nrelu\nmaxpool 2x2\nconv 5x5x64 pad=2\nrelu\nmaxpool 2x2\n"
    "fc 1024\nrelu\ndropout 0.4\nfc 10\nsoftmax\n";

#define BATCH 64

/* The folder, augmented as a user would for Fashion-MNIST: mirror, +-10 degrees, +-2 pixels;
 * or (crop > 0) for ImageNet: RGB, torchvision's RandomResizedCrop to crop x crop (its default
 * ranges) and a mirror. */
static clg_status open_augmented(const char *folder, size_t crop, clg_datastore **raw,
                                 clg_datastore **aug)
{
    clg_image_folder_options fo = clg_image_folder_options_default();
    fo.height = fo.width = crop ? crop : 28;
    fo.channels = crop ? 3 : 1;
    clg_status st = clg_datastore_open_image_folder(folder, &fo, raw);
    if (st != CLG_OK)
        return st;
    clg_augment_options a = clg_augment_options_default();
    a.reflection_x = 1;
    if (crop) {
        a.crop = CLG_CROP_RANDOM_RESIZED;
        a.height = a.width = crop;
    } else {
        a.rotation[0] = -10, a.rotation[1] = 10;
        a.translation_x[0] = a.translation_y[0] = -2;
        a.translation_x[1] = a.translation_y[1] = 2;
    }
    a.seed = 1;
    return clg_datastore_augment(*raw, &a, aug);
}

static void shuffle(size_t *order, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t j = (size_t)((seed >> 33) % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* One pass over `batches` batches of order with `workers` reader threads: images/s. */
static double decode_rate(clg_datastore *ds, const size_t *order, size_t batches, size_t workers,
                          float *x, int32_t *y)
{
    clg_batch_reader *r;
    if (clg_batch_reader_create(ds, BATCH, workers, 0, &r) != CLG_OK) {
        fprintf(stderr, "clgrad-bench data: %s\n", clg_last_error());
        return -1.0;
    }
    double t0 = tool_now();
    clg_status st = clg_batch_reader_start(r, order, batches);
    for (size_t b = 0; st == CLG_OK && b < batches; b++)
        st = clg_batch_reader_next(r, x, y);
    double t = tool_now() - t0;
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-bench data: %s\n", clg_batch_reader_last_error(r));
    clg_batch_reader_destroy(r);
    return st == CLG_OK ? (double)(batches * BATCH) / t : -1.0;
}

typedef struct step_clock {
    double start, end;
    size_t skip, seen;
} step_clock;

static int clock_steps(const clg_train_progress *p, void *user)
{
    step_clock *c = user;
    if (p->kind != CLG_PROGRESS_ITERATION)
        return 0;
    if (++c->seen == c->skip)
        c->start = p->elapsed_s;
    c->end = p->elapsed_s;
    return 0;
}

/* Training images/s of the default network on the first `iters` batches of ds (shuffled),
 * timed after 5 warm-up steps. */
static double train_rate(clg_ctx *ctx, clg_datastore *ds, size_t iters, size_t workers)
{
    clg_datastore *sub;
    clg_net *net = NULL;
    if (clg_datastore_subset(ds, 0, iters * BATCH, &sub) != CLG_OK)
        return -1.0;
    step_clock c = {0, 0, 5, 0};
    clg_train_options o = clg_train_options_default();
    o.solver = CLG_SOLVER_ADAM;
    o.initial_learn_rate = 1e-3f;
    o.mini_batch_size = BATCH;
    o.max_epochs = 1;
    o.verbose_frequency = 1;
    clg_exec_options x = clg_exec_options_default();
    x.dispatch_in_background = workers > 0;
    x.dispatch_workers = workers;
    o.execution = &x;
    o.progress = clock_steps;
    o.progress_user = &c;
    clg_status st = clg_net_parse(ctx, default_net, &net);
    if (st == CLG_OK)
        st = clg_net_init(net, 1);
    if (st == CLG_OK)
        st = clg_train(net, sub, NULL, &o, NULL);
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-bench data: %s\n", tool_message(st, clg_last_error()));
    clg_net_destroy(net);
    clg_datastore_destroy(sub);
    return st == CLG_OK && c.end > c.start ? (double)((c.seen - c.skip) * BATCH) / (c.end - c.start)
                                           : -1.0;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* The kernel's data-segment size of this process (what RLIMIT_DATA limits), in bytes. */
static size_t vm_data(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmData: %zu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

/* After a failed pass under a cap: the data segment now and when capped, against the cap
 * (which side ran out: the cap or the machine). */
static void say_data_segment(size_t cap_mb, size_t at_cap)
{
    if (cap_mb)
        fprintf(stderr, "clgrad-bench data: data segment %.1f MB (%.1f MB when capped) under a "
                "%zu MB cap\n", (double)vm_data() / (1 << 20), (double)at_cap / (1 << 20),
                cap_mb);
}

int bench_data(const bench_opts *o, const char *folder, size_t memory_cap_mb, size_t crop)
{
    if (!folder) {
        fprintf(stderr, "clgrad-bench data needs --folder DIR, an image folder such as Fashion-MNIST "
                "exported by\n  clgrad-export-images /usr/share/datasets/fashion-mnist/"
                "train-images-idx3-ubyte.gz \\\n    /usr/share/datasets/fashion-mnist/"
                "train-labels-idx1-ubyte.gz /tmp/fashion-folder\n");
        return 2;
    }
    clg_datastore *raw = NULL, *ds = NULL;
    clg_status st = open_augmented(folder, crop, &raw, &ds);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-bench data: %s\n", tool_message(st, clg_last_error()));
        clg_datastore_destroy(raw);
        return 1;
    }
    size_t n = clg_datastore_size(ds), batches = n / BATCH;
    size_t *order = malloc((batches ? batches : 1) * BATCH * sizeof *order);
    clg_shape sample = clg_datastore_sample_shape(ds);
    float *x = malloc(BATCH * clg_shape_numel(sample) * sizeof *x);
    int32_t *y = malloc(BATCH * sizeof *y);
    int rc = order && x && y && batches ? 0 : 1;
    if (rc == 0)
        shuffle(order, batches * BATCH, 7);
    struct rlimit old;
    getrlimit(RLIMIT_DATA, &old);
    if (rc == 0 && memory_cap_mb) { /* only around the decoding passes, not OpenCL's compiler */
        struct rlimit rl = old;
        size_t base = vm_data();
        rl.rlim_cur = base + memory_cap_mb * ((size_t)1 << 20);
        if (!base) /* a cap without the base would count what is already mapped */
            rc = 1, fprintf(stderr, "clgrad-bench data: cannot read this process's data-segment "
                            "size (VmData in /proc/self/status) to set the memory cap\n");
        else if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
            rc = 1, fprintf(stderr, "clgrad-bench data: the memory cap is above this process's "
                            "hard data-segment limit\n");
        else if (setrlimit(RLIMIT_DATA, &rl) != 0)
            rc = 1, fprintf(stderr, "clgrad-bench data: cannot set the memory cap\n");
    }
    size_t data_at_cap = vm_data();
    double decoded_mb = (double)(batches * BATCH) * (double)clg_shape_numel(sample) *
                        sizeof(float) / (1 << 20);
    if (!o->json && rc == 0)
        printf("%s: %zu images (%.0f MB as floats), batch %d, augmented (%s)%s\n", folder,
               batches * BATCH, decoded_mb, BATCH,
               crop ? "random resized crop, mirror" : "mirror, +-10 deg, +-2 px",
               memory_cap_mb ? ", under a data-segment cap" : "");
    const size_t workers[] = {0, 1, 2, 4};
    for (size_t w = 0; rc == 0 && w < 4; w++) {
        double v[16];
        int runs = o->runs < 16 ? o->runs : 16;
        for (int k = 0; k < runs; k++)
            v[k] = decode_rate(ds, order, batches, workers[w], x, y);
        double med = bench_min(v, (size_t)runs) < 0 ? -1.0 : bench_median(v, (size_t)runs);
        if (med < 0) {
            rc = 1;
            say_data_segment(memory_cap_mb, data_at_cap);
        } else if (o->json)
            printf("{\"bench\":\"data\",\"workers\":%zu,\"images_per_s\":%.0f,\"runs\":%d}\n",
                   workers[w], med, runs);
        else
            printf("decode+augment  %zu worker%s%s  %8.0f images/s  (median of %d)\n", workers[w],
                   workers[w] == 1 ? " " : "s", workers[w] ? "" : " (caller's thread)", med, runs);
    }
    if (memory_cap_mb) /* lifted again, also after a failure: OpenBLAS's exit handler allocates */
        setrlimit(RLIMIT_DATA, &old);
    if (memory_cap_mb && rc == 0) {
        if (o->json)
            printf("{\"bench\":\"data-memory\",\"cap_mb\":%zu,\"decoded_mb\":%.0f,\"peak_rss_mb\":%.0f}\n",
                   memory_cap_mb, decoded_mb, peak_rss_mb());
        else
            printf("streamed %.0f MB of decoded images under a %zu MB cap; peak RSS %.0f MB\n",
                   decoded_mb, memory_cap_mb, peak_rss_mb());
    }
    clg_ctx *ctx = rc == 0 && !crop ? bench_ctx(o, NULL) : NULL;
    size_t iters = batches < 100 ? batches : 100;
    const size_t train_workers[] = {0, 1, 2};
    for (size_t w = 0; ctx && rc == 0 && w < 3 && iters > 10; w++) {
        double v[16];
        int runs = o->runs < 16 ? o->runs : 16;
        for (int k = 0; k < runs; k++)
            v[k] = train_rate(ctx, ds, iters, train_workers[w]);
        double med = bench_min(v, (size_t)runs) < 0 ? -1.0 : bench_median(v, (size_t)runs);
        if (med < 0) {
            rc = 1;
            say_data_segment(memory_cap_mb, data_at_cap);
        } else if (o->json)
            printf("{\"bench\":\"data-train\",\"dispatch_workers\":%zu,\"images_per_s\":%.0f,"
                   "\"runs\":%d}\n", train_workers[w], med, runs);
        else
            printf("training from the folder, background dispatch %s: %6.0f images/s\n",
                   w == 0 ? "off          " : w == 1 ? "on, 1 worker " : "on, 2 workers", med);
    }
    if (rc == 0 && !ctx && !crop)
        rc = 1;
    clg_ctx_destroy(ctx);
    free(order);
    free(x);
    free(y);
    clg_datastore_destroy(ds);
    clg_datastore_destroy(raw);
    return rc;
}
