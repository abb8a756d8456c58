/* Shuffled and partitioned views, and the batch reader (DispatchInBackground): the same batches bit for bit with 0, 1 and 4
 * workers, every sample once per pass, a failed file coming back at its batch with its name,
 * restarts and shutdown at any moment, and host memory bounded by the queue, not the data. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/testutil.h"
#include "clgrad/data.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

static char *dir;

/* root/class_k/NNN.png: n gray 8x8 PNGs in `classes` folders, pixel values that differ per
 * image; the image with number `bad` (if < n) is garbage bytes instead. */
static void write_folder(const char *root, int n, int classes, int bad)
{
    char p[4400];
    snprintf(p, sizeof p, "mkdir -p '%s'", root);
    assert_int_equal(system(p), 0);
    for (int c = 0; c < classes; c++) {
        snprintf(p, sizeof p, "%s/class_%d", root, c);
        assert_int_equal(mkdir(p, 0755) == 0 || access(p, F_OK) == 0, 1);
    }
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/class_%d/%03d.png", root, i % classes, i);
        if (i == bad) {
            FILE *f = fopen(p, "wb");
            assert_non_null(f);
            fputs("\x89PNG\r\n\x1a\n this is not a PNG", f);
            fclose(f);
            continue;
        }
        unsigned char px[64];
        for (int k = 0; k < 64; k++)
            px[k] = (unsigned char)((i * 37 + k * 11 + (k / 8) * 5) & 255);
        assert_true(stbi_write_png(p, 8, 8, 1, px, 8));
    }
}

/* A permutation of 0..n-1 from a seed. */
static void shuffled(size_t *order, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    srand(seed);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rand() % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Every batch of one pass, concatenated. */
static void read_pass(clg_datastore *ds, size_t batch, size_t workers, size_t depth,
                      const size_t *order, size_t batches, float *images, int32_t *labels)
{
    size_t per = clg_shape_numel(clg_datastore_sample_shape(ds));
    clg_batch_reader *r;
    CLG_ASSERT_STATUS(clg_batch_reader_create(ds, batch, workers, depth, &r), CLG_OK);
    CLG_ASSERT_STATUS(clg_batch_reader_start(r, order, batches), CLG_OK);
    for (size_t b = 0; b < batches; b++)
        CLG_ASSERT_STATUS(clg_batch_reader_next(r, images + b * batch * per, labels + b * batch),
                          CLG_OK);
    float x[1];
    int32_t l[1];
    CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_ERR_INVALID_ARG); /* past the end */
    assert_int_equal(clg_batch_reader_samples_read(r), batches * batch);
    clg_batch_reader_destroy(r);
}

/* Augmented image folder (random rotation, reflection, translation and crop): the batch
 * sequence is identical bit for bit for 0, 1 and 4 workers, also with fewer queue slots than
 * workers, and equals plain reads of the same samples. */
static void same_batches_for_any_worker_count(void **state)
{
    (void)state;
    char root[4200];
    snprintf(root, sizeof root, "%s/augmented", dir);
    write_folder(root, 40, 3, 1000);
    clg_datastore *folder, *ds;
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, NULL, &folder), CLG_OK);
    clg_augment_options a = clg_augment_options_default();
    a.reflection_x = 1;
    a.rotation[0] = -20, a.rotation[1] = 20;
    a.translation_x[0] = -1, a.translation_x[1] = 1;
    a.crop = CLG_CROP_RANDOM, a.height = 6, a.width = 7;
    a.seed = 5;
    CLG_ASSERT_STATUS(clg_datastore_augment(folder, &a, &ds), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_set_epoch(ds, 3), CLG_OK);
    const size_t batch = 3, batches = 13, per = 6 * 7, n = batch * batches;
    size_t order[40];
    shuffled(order, 40, 11);
    const size_t workers[] = {0, 1, 4, 4}, depth[] = {0, 0, 0, 1};
    float *x[4], *want = malloc(n * per * sizeof *want);
    int32_t *y[4], want_y[39];
    assert_non_null(want);
    CLG_ASSERT_STATUS(clg_datastore_read(ds, order, n, want, want_y), CLG_OK);
    for (int k = 0; k < 4; k++) {
        x[k] = malloc(n * per * sizeof *x[k]);
        y[k] = malloc(n * sizeof *y[k]);
        assert_true(x[k] && y[k]);
        clg_test_poison_nan(x[k], n * per);
        read_pass(ds, batch, workers[k], depth[k], order, batches, x[k], y[k]);
        assert_memory_equal(x[k], want, n * per * sizeof *want);
        assert_memory_equal(y[k], want_y, n * sizeof *want_y);
    }
    for (int k = 0; k < 4; k++)
        free(x[k]), free(y[k]);
    free(want);
    clg_datastore_destroy(ds);
    clg_datastore_destroy(folder);
}

/* Each sample's pixels hold its index: a pass with 3 workers delivers every sample of the
 * order once, in order, and a second pass on the same reader does again. */
static void every_sample_once_per_pass(void **state)
{
    (void)state;
    enum { N = 50, BATCH = 7, BATCHES = 7 };
    float images[N * 2];
    int32_t labels[N];
    for (int i = 0; i < N; i++)
        images[2 * i] = (float)i, images[2 * i + 1] = (float)-i, labels[i] = i % 4;
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(images, labels, N, (clg_shape){1, 2, 1, 1}, 4,
                                                &ds), CLG_OK);
    clg_batch_reader *r;
    CLG_ASSERT_STATUS(clg_batch_reader_create(ds, BATCH, 3, 0, &r), CLG_OK);
    for (unsigned pass = 0; pass < 2; pass++) {
        size_t order[N];
        shuffled(order, N, 100 + pass);
        CLG_ASSERT_STATUS(clg_batch_reader_start(r, order, BATCHES), CLG_OK);
        int seen[N] = {0};
        for (size_t b = 0; b < BATCHES; b++) {
            float x[BATCH * 2];
            int32_t l[BATCH];
            clg_test_poison_nan(x, BATCH * 2);
            CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_OK);
            for (size_t i = 0; i < BATCH; i++) {
                size_t id = (size_t)x[2 * i];
                assert_int_equal(id, order[b * BATCH + i]);
                assert_true(x[2 * i + 1] == -x[2 * i]);
                assert_int_equal(l[i], (int32_t)(id % 4));
                seen[id]++;
            }
        }
        int total = 0;
        for (int i = 0; i < N; i++) {
            assert_true(seen[i] <= 1);
            total += seen[i];
        }
        assert_int_equal(total, BATCH * BATCHES);
    }
    clg_batch_reader_destroy(r);
    clg_datastore_destroy(ds);
}

/* A corrupt file under policy fail: the batches before it arrive, its batch fails naming the
 * file (at the same batch for 0 and 4 workers), later calls fail at once instead of waiting,
 * and a new pass works. Under policy skip every batch arrives and the file is counted once. */
static void failed_file_comes_back_at_its_batch(void **state)
{
    (void)state;
    char root[4200];
    snprintf(root, sizeof root, "%s/bad", dir);
    write_folder(root, 24, 2, 9); /* class_1/009.png is garbage: sample 4 + 12 = 16 sorted */
    for (int policy = 0; policy < 2; policy++) {
        clg_image_folder_options fo = clg_image_folder_options_default();
        fo.height = fo.width = 8;
        fo.bad_files = policy ? CLG_BAD_FILES_SKIP : CLG_BAD_FILES_FAIL;
        clg_datastore *ds;
        CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, &fo, &ds), CLG_OK);
        size_t order[24];
        for (size_t i = 0; i < 24; i++)
            order[i] = i;
        for (size_t workers = 0; workers <= 4; workers += 4) {
            clg_batch_reader *r;
            CLG_ASSERT_STATUS(clg_batch_reader_create(ds, 2, workers, 0, &r), CLG_OK);
            CLG_ASSERT_STATUS(clg_batch_reader_start(r, order, 12), CLG_OK);
            float x[2 * 64];
            int32_t l[2];
            for (size_t b = 0; b < 12; b++) {
                clg_status st = clg_batch_reader_next(r, x, l);
                if (policy == 1 || b < 8) {
                    CLG_ASSERT_STATUS(st, CLG_OK);
                } else if (b == 8) {
                    CLG_ASSERT_STATUS(st, CLG_ERR_CORRUPT);
                    assert_non_null(strstr(clg_batch_reader_last_error(r), "009.png"));
                } else { /* read before the failure, or refused at once: never a wait forever */
                    assert_true(st == CLG_OK || st == CLG_ERR_IO);
                }
            }
            size_t good[4] = {0, 1, 2, 3};
            CLG_ASSERT_STATUS(clg_batch_reader_start(r, good, 2), CLG_OK);
            CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_OK);
            CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_OK);
            clg_batch_reader_destroy(r);
        }
        /* once: the second reader skips the file it knows to be bad without decoding it */
        assert_int_equal(clg_datastore_skipped(ds, 1), policy ? 1 : 0);
        clg_datastore_destroy(ds);
    }
}

/* The caller's own source: samples generated from their index (a user's format stands in),
 * one of them failing on purpose; the close callback counted. */
typedef struct generator {
    size_t fail_at;        /* this sample's read fails (count: none) */
    _Atomic size_t reads;  /* called from worker threads at once */
    int closed;
} generator;

static int generate(void *user, size_t index, float *image, int32_t *label, char *why, size_t cap)
{
    generator *g = user;
    g->reads++;
    if (index == g->fail_at) {
        snprintf(why, cap, "record %zu of the user's file is damaged", index);
        return 1;
    }
    for (size_t k = 0; image && k < 2 * 5 * 4; k++)
        image[k] = (float)index + 0.01f * (float)k;
    *label = (int32_t)(index % 3);
    return 0;
}

static void count_close(void *user)
{
    ((generator *)user)->closed++;
}

/* A callback store gives what a memory store of the same samples gives: every read, through
 * views (shuffle, partition), augmentation and the batch reader with 0 and 4 workers; a
 * failing sample is CLG_ERR_IO naming it and the callback's reason, and nothing crashes. */
static void callbacks_store_reads_like_memory(void **state)
{
    (void)state;
    enum { N = 30, PER = 40 };
    generator g = {.fail_at = N};
    clg_datastore_callbacks cb = clg_datastore_callbacks_default();
    cb.count = N, cb.sample = (clg_shape){1, 2, 5, 4}, cb.classes = 3;
    cb.read = generate, cb.close = count_close, cb.user = &g;
    clg_datastore *gen, *mem;
    CLG_ASSERT_STATUS(clg_datastore_from_callbacks(&cb, &gen), CLG_OK);
    float *all = malloc(N * PER * sizeof *all);
    int32_t labels[N];
    char why[128];
    for (size_t i = 0; i < N; i++)
        assert_int_equal(generate(&g, i, all + i * PER, &labels[i], why, sizeof why), 0);
    CLG_ASSERT_STATUS(clg_datastore_from_memory(all, labels, N, cb.sample, 3, &mem), CLG_OK);
    clg_augment_options a = clg_augment_options_default();
    a.reflection_x = 1, a.rotation[0] = -10, a.rotation[1] = 10, a.seed = 2;
    clg_datastore *views[2][3] = {{gen}, {mem}};
    for (int k = 0; k < 2; k++) {
        CLG_ASSERT_STATUS(clg_datastore_shuffle(views[k][0], 9, &views[k][1]), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_augment(views[k][1], &a, &views[k][2]), CLG_OK);
    }
    size_t order[N];
    shuffled(order, N, 4);
    float *x[2] = {malloc(N * PER * sizeof(float)), malloc(N * PER * sizeof(float))};
    int32_t y[2][N];
    for (int v = 0; v < 3; v++)
        for (size_t workers = 0; workers <= 4; workers += 4) {
            for (int k = 0; k < 2; k++)
                read_pass(views[k][v], 5, workers, 0, order, N / 5, x[k], y[k]);
            assert_memory_equal(x[0], x[1], N * PER * sizeof(float));
            assert_memory_equal(y[0], y[1], sizeof y[0]);
        }
    for (int k = 0; k < 2; k++)
        for (int v = 2; v > 0; v--)
            clg_datastore_destroy(views[k][v]);
    /* sample 17 fails: at its batch, with the reason, whatever the worker count */
    g.fail_at = 17;
    for (size_t workers = 0; workers <= 4; workers += 4) {
        clg_batch_reader *r;
        CLG_ASSERT_STATUS(clg_batch_reader_create(gen, 5, workers, 0, &r), CLG_OK);
        size_t plain[N];
        for (size_t i = 0; i < N; i++)
            plain[i] = i;
        CLG_ASSERT_STATUS(clg_batch_reader_start(r, plain, N / 5), CLG_OK);
        for (size_t b = 0; b < 3; b++)
            CLG_ASSERT_STATUS(clg_batch_reader_next(r, x[0], y[0]), CLG_OK);
        CLG_ASSERT_STATUS(clg_batch_reader_next(r, x[0], y[0]), CLG_ERR_IO);
        assert_non_null(strstr(clg_batch_reader_last_error(r), "sample 17"));
        assert_non_null(strstr(clg_batch_reader_last_error(r), "record 17 of the user's file"));
        clg_batch_reader_destroy(r);
    }
    assert_true(g.reads > 2 * N);
    assert_int_equal(g.closed, 0);
    clg_datastore_destroy(gen);
    assert_int_equal(g.closed, 1);
    clg_datastore_destroy(mem);
    cb.classes = 1; /* bad arguments: nothing made, nothing closed */
    CLG_ASSERT_STATUS(clg_datastore_from_callbacks(&cb, &gen), CLG_ERR_INVALID_ARG);
    assert_null(gen);
    cb = clg_datastore_callbacks_default();
    CLG_ASSERT_STATUS(clg_datastore_from_callbacks(&cb, &gen), CLG_ERR_INVALID_ARG);
    assert_int_equal(g.closed, 1);
    free(all), free(x[0]), free(x[1]);
}

/* Restarting in the middle of a pass gives the new pass's batches; destroying with workers in
 * the middle of reads, or right after creation, ends cleanly (the sanitizer builds watch). */
static void restart_and_shutdown_at_any_moment(void **state)
{
    (void)state;
    char root[4200];
    snprintf(root, sizeof root, "%s/many", dir);
    write_folder(root, 60, 3, 1000);
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, NULL, &ds), CLG_OK);
    size_t rev[60], id[60];
    for (size_t i = 0; i < 60; i++)
        rev[i] = 59 - i, id[i] = i;
    float x[5 * 64], want[5 * 64];
    int32_t l[5], want_l[5];
    for (int moment = 0; moment < 3; moment++) {
        clg_batch_reader *r;
        CLG_ASSERT_STATUS(clg_batch_reader_create(ds, 5, 4, 3, &r), CLG_OK);
        if (moment >= 1)
            CLG_ASSERT_STATUS(clg_batch_reader_start(r, rev, 12), CLG_OK);
        if (moment == 2) {
            CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_OK);
            CLG_ASSERT_STATUS(clg_batch_reader_start(r, id, 12), CLG_OK);
            for (size_t b = 0; b < 3; b++) {
                CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_OK);
                CLG_ASSERT_STATUS(clg_datastore_read(ds, id + 5 * b, 5, want, want_l), CLG_OK);
                assert_memory_equal(x, want, sizeof x);
                assert_memory_equal(l, want_l, sizeof l);
            }
        }
        clg_batch_reader_destroy(r); /* workers still reading ahead */
    }
    clg_datastore_destroy(ds);
}

static void bad_arguments(void **state)
{
    (void)state;
    float img[4] = {1, 2, 3, 4};
    int32_t lab[4] = {0, 1, 0, 1};
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(img, lab, 4, (clg_shape){1, 1, 1, 1}, 2, &ds),
                      CLG_OK);
    clg_batch_reader *r = (clg_batch_reader *)&r;
    CLG_ASSERT_STATUS(clg_batch_reader_create(ds, 0, 1, 0, &r), CLG_ERR_INVALID_ARG);
    assert_null(r);
    CLG_ASSERT_STATUS(clg_batch_reader_create(NULL, 1, 1, 0, &r), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_batch_reader_create(ds, 1, 65, 0, &r), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_batch_reader_create(ds, 1, 1, 5000, &r), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_batch_reader_create(ds, 2, 2, 0, &r), CLG_OK);
    size_t order[4] = {0, 1, 2, 4};
    CLG_ASSERT_STATUS(clg_batch_reader_start(r, order, 2), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_batch_reader_last_error(r), "sample 4"));
    CLG_ASSERT_STATUS(clg_batch_reader_start(r, NULL, 1), CLG_ERR_INVALID_ARG);
    float x[2];
    int32_t l[2];
    CLG_ASSERT_STATUS(clg_batch_reader_next(r, x, l), CLG_ERR_INVALID_ARG); /* no pass */
    CLG_ASSERT_STATUS(clg_batch_reader_next(r, NULL, l), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_batch_reader_start(NULL, order, 1), CLG_ERR_INVALID_ARG);
    assert_int_equal(clg_batch_reader_samples_read(NULL), 0);
    assert_string_equal(clg_batch_reader_last_error(NULL), "");
    clg_batch_reader_destroy(r);
    clg_batch_reader_destroy(NULL);
    clg_datastore_destroy(ds);
}

/* Shuffled views are permutations fixed by the seed; partitions are contiguous, cover every
 * sample once, differ in size by at most one, and may be empty. */
static void shuffle_and_partition(void **state)
{
    (void)state;
    enum { N = 10 };
    float img[N];
    int32_t lab[N];
    for (int i = 0; i < N; i++)
        img[i] = (float)i, lab[i] = i % 2;
    clg_datastore *ds, *a, *b, *c;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(img, lab, N, (clg_shape){1, 1, 1, 1}, 2, &ds),
                      CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_shuffle(ds, 3, &a), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_shuffle(ds, 3, &b), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_shuffle(ds, 4, &c), CLG_OK);
    size_t all[N];
    for (size_t i = 0; i < N; i++)
        all[i] = i;
    float xa[N], xb[N], xc[N];
    CLG_ASSERT_STATUS(clg_datastore_read(a, all, N, xa, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(b, all, N, xb, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(c, all, N, xc, NULL), CLG_OK);
    assert_memory_equal(xa, xb, sizeof xa);
    assert_true(memcmp(xa, xc, sizeof xa) != 0 && memcmp(xa, img, sizeof xa) != 0);
    int seen[N] = {0};
    for (int i = 0; i < N; i++)
        seen[(int)xa[i]]++;
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
    clg_datastore_destroy(a), clg_datastore_destroy(b), clg_datastore_destroy(c);
    const size_t want[3] = {3, 3, 4};
    size_t next = 0;
    for (size_t p = 0; p < 3; p++) {
        CLG_ASSERT_STATUS(clg_datastore_partition(ds, 3, p, &a), CLG_OK);
        assert_int_equal(clg_datastore_size(a), want[p]);
        float x[4];
        CLG_ASSERT_STATUS(clg_datastore_read(a, all, want[p], x, NULL), CLG_OK);
        for (size_t i = 0; i < want[p]; i++)
            assert_true(x[i] == (float)next++);
        clg_datastore_destroy(a);
    }
    assert_int_equal(next, N);
    CLG_ASSERT_STATUS(clg_datastore_partition(ds, 20, 0, &a), CLG_OK); /* more parts than samples */
    assert_int_equal(clg_datastore_size(a), 0);
    clg_datastore_destroy(a);
    a = (clg_datastore *)&a;
    CLG_ASSERT_STATUS(clg_datastore_partition(ds, 0, 0, &a), CLG_ERR_INVALID_ARG);
    assert_null(a);
    CLG_ASSERT_STATUS(clg_datastore_partition(ds, 3, 3, &a), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_datastore_shuffle(NULL, 1, &a), CLG_ERR_INVALID_ARG);
    clg_datastore_destroy(ds);
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

/* A folder of 8 images in 2 classes at dir/name (its path in root), then fork(): 0 in the
 * child, which runs a check under limits of its own and _exits with 0 for success. */
static pid_t fork_with_folder(const char *name, char *root, size_t size)
{
    snprintf(root, size, "%s/%s", dir, name);
    write_folder(root, 8, 2, 1000);
    pid_t pid = fork();
    assert_true(pid >= 0);
    return pid;
}

static void child_succeeded(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Streaming: a data set of 320 samples of 3x256x256 floats (240 MiB decoded) passes through a
 * 4-worker reader in a child process whose data segment is capped at 96 MiB above its start.
 * That the cap bites is checked too: holding the decoded set at once is refused. */
static void memory_bounded_by_the_queue(void **state)
{
    (void)state;
#ifdef CLG_TEST_SANITIZED
    printf("skipped: sanitizer runtimes keep freed memory (quarantine), so a memory cap says "
           "nothing about the reader there\n");
    return;
#endif
    char root[4200];
    pid_t pid = fork_with_folder("stream", root, sizeof root);
    if (pid == 0) {
        enum { N = 320, BATCH = 4 };
        const size_t per = 3 * 256 * 256, cap = (size_t)96 << 20;
        clg_image_folder_options fo = clg_image_folder_options_default();
        fo.channels = 3, fo.height = 256, fo.width = 256; /* small files, large samples */
        clg_datastore *folder, *ds;
        size_t *idx = malloc(N * sizeof *idx);
        float *x = malloc(BATCH * per * sizeof *x);
        int32_t l[BATCH];
        if (!idx || !x || clg_datastore_open_image_folder(root, &fo, &folder) != CLG_OK)
            _exit(10);
        for (size_t i = 0; i < N; i++)
            idx[i] = i % 8;
        if (clg_datastore_select(folder, idx, N, &ds) != CLG_OK)
            _exit(11);
        for (size_t i = 0; i < N; i++)
            idx[i] = i;
        struct rlimit rl;
        getrlimit(RLIMIT_DATA, &rl);
        rl.rlim_cur = vm_data() + cap;
        if (setrlimit(RLIMIT_DATA, &rl) != 0)
            _exit(12);
        void *all = malloc(N * per * sizeof(float));
        if (all)
            _exit(13); /* the cap does not hold the data set: the check would mean nothing */
        clg_batch_reader *r;
        if (clg_batch_reader_create(ds, BATCH, 4, 8, &r) != CLG_OK ||
            clg_batch_reader_start(r, idx, N / BATCH) != CLG_OK)
            _exit(14);
        double sum = 0.0;
        for (size_t b = 0; b < N / BATCH; b++) {
            if (clg_batch_reader_next(r, x, l) != CLG_OK)
                _exit(15);
            for (size_t k = 0; k < BATCH * per; k += 997)
                sum += x[k];
        }
        uint64_t read = clg_batch_reader_samples_read(r);
        clg_batch_reader_destroy(r);
        _exit(sum > 0.0 && read == N ? 0 : 16);
    }
    child_succeeded(pid);
}

/* Reader threads that cannot all start (a child process capped 5 MiB above its start: 64
 * stacks of 2 MiB do not fit, even with the C library's cache of stacks from earlier tests): a
 * clear error naming the thread, the started ones joined, and a reader once the cap lifts. */
static void threads_that_cannot_start(void **state)
{
    (void)state;
#ifdef CLG_TEST_SANITIZED
    printf("skipped: sanitizer runtimes cannot live under a data-segment cap of a few MiB\n");
    return;
#endif
    char root[4200];
    pid_t pid = fork_with_folder("capped", root, sizeof root);
    if (pid == 0) {
        clg_image_folder_options fo = clg_image_folder_options_default();
        clg_datastore *ds;
        if (clg_datastore_open_image_folder(root, &fo, &ds) != CLG_OK)
            _exit(10);
        struct rlimit rl, old;
        getrlimit(RLIMIT_DATA, &old);
        rl = old;
        rl.rlim_cur = vm_data() + ((size_t)5 << 20);
        if (setrlimit(RLIMIT_DATA, &rl) != 0)
            _exit(11);
        clg_batch_reader *r = (clg_batch_reader *)1;
        clg_status st = clg_batch_reader_create(ds, 2, 64, 0, &r);
        if (st != CLG_ERR_OUT_OF_HOST_MEMORY || r != NULL)
            _exit(12);
        unsigned failed_at = 0;
        const char *m = strstr(clg_last_error(), "cannot start reader thread ");
        if (!m || sscanf(m, "cannot start reader thread %u of 64 (", &failed_at) != 1 ||
            failed_at < 2) {
            fprintf(stderr, "unexpected message: %s\n", clg_last_error());
            _exit(13);
        }
        setrlimit(RLIMIT_DATA, &old);
        size_t order[8] = {7, 6, 5, 4, 3, 2, 1, 0};
        float x[2 * 8 * 8];
        int32_t y[2];
        if (clg_batch_reader_create(ds, 2, 8, 0, &r) != CLG_OK ||
            clg_batch_reader_start(r, order, 4) != CLG_OK || clg_batch_reader_next(r, x, y) != CLG_OK)
            _exit(14);
        clg_batch_reader_destroy(r);
        clg_datastore_destroy(ds);
        _exit(0);
    }
    child_succeeded(pid);
}

static int setup(void **state)
{
    (void)state;
    dir = clg_test_tempdir("reader");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_rmtree(dir);
    free(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_batches_for_any_worker_count),
        cmocka_unit_test(every_sample_once_per_pass),
        cmocka_unit_test(failed_file_comes_back_at_its_batch),
        cmocka_unit_test(restart_and_shutdown_at_any_moment),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(callbacks_store_reads_like_memory),
        cmocka_unit_test(shuffle_and_partition),
        cmocka_unit_test(memory_bounded_by_the_queue),
        cmocka_unit_test(threads_that_cannot_start),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
