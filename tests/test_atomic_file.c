/* Crash-safe writes: a child process rewrites a file through clg__write_atomic in a loop and is
 * killed (SIGKILL) at random moments; the file must always be one whole version, never a mix or
 * a truncation. Also: failures leave the old file, and no temporary files pile up in normal
 * use. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/testutil.h"
#include "runtime/runtime_internal.h"

enum { SIZE = 1 << 20 }; /* 1 MiB: big enough for a kill to land mid-write */

/* Version v: every byte is (v + i) & 0xff, and the first 4 bytes hold v. */
static void make_version(unsigned char *buf, unsigned v)
{
    for (size_t i = 0; i < SIZE; i++)
        buf[i] = (unsigned char)(v + i);
    memcpy(buf, &v, sizeof v);
}

static int whole_version(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char *buf = malloc(SIZE + 1);
    size_t n = fread(buf, 1, SIZE + 1, f);
    fclose(f);
    int ok = n == SIZE;
    unsigned v = 0;
    if (ok)
        memcpy(&v, buf, sizeof v);
    for (size_t i = sizeof v; ok && i < SIZE; i++)
        ok = buf[i] == (unsigned char)(v + i);
    free(buf);
    return ok;
}

static void writer(const char *path)
{
    unsigned char *buf = malloc(SIZE);
    for (unsigned v = 1;; v++) {
        make_version(buf, v);
        const void *parts[2] = {buf, buf + 1000};
        size_t sizes[2] = {1000, SIZE - 1000}; /* two parts, as the cache writes them */
        clg__write_atomic(path, parts, sizes, 2);
    }
}

static void killed_writers_leave_a_whole_file(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("atomic");
    char path[600];
    snprintf(path, sizeof path, "%s/model.bin", dir);
    unsigned char *first = malloc(SIZE);
    make_version(first, 0);
    const void *parts[1] = {first};
    size_t sizes[1] = {SIZE};
    assert_true(clg__write_atomic(path, parts, sizes, 1));
    clg_test_rng rng;
    clg_test_rng_init(&rng, clg_test_seed());
    for (int round = 0; round < 40; round++) {
        fflush(stdout);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            writer(path);
            _exit(0);
        }
        /* Kill after 0.1 to 20 ms: sometimes before the first rename, mostly mid-write. */
        struct timespec ts = {0, (long)(100000 + clg_test_rng_next(&rng) % 20000000)};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (!whole_version(path))
            fail_msg("round %d: %s is not one whole version", round, path);
    }
    /* Killed writers leave their temporary files behind (nobody can clean up after SIGKILL);
     * they never replace the real file. */
    free(first);
    clg_test_rmtree(dir);
    free(dir);
}

static void failed_writes_keep_the_old_file(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("atomic-fail");
    char path[600], bad[700];
    snprintf(path, sizeof path, "%s/f", dir);
    const void *p1[1] = {"old"};
    size_t s1[1] = {3};
    assert_true(clg__write_atomic(path, p1, s1, 1));
    /* A target in a folder that does not exist: nothing is written. */
    snprintf(bad, sizeof bad, "%s/missing/f", dir);
    assert_false(clg__write_atomic(bad, p1, s1, 1));
    /* Host allocation failure inside the writer: the old file stays. */
    const void *p2[1] = {"new"};
    clg__fault_inject(1, 0);
    int ok = clg__write_atomic(path, p2, s1, 1);
    clg__fault_inject(0, 0);
    assert_false(ok);
    char got[8] = {0};
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof got, f), 3);
    fclose(f);
    assert_string_equal(got, "old");
    /* A successful write leaves exactly the target in the folder. */
    assert_true(clg__write_atomic(path, p2, s1, 1));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    clg_test_rmtree(dir);
    free(dir);
}

/* Model files through the same writer, from another process (a fresh exec of this test, so
 * that it gets its own OpenCL): every value of version v's parameters is v. */
static const char model_net[] = "input 4x4x1\nfc 3\nsoftmax\n";

static _Thread_local int crash_point;

/* Ends the process where the writer reaches the point asked for, as a power cut would. */
static void crash_hook(int point)
{
    if (point == crash_point)
        _exit(99);
}

static int model_writer(const char *path, const char *crash)
{
    clg_ctx *ctx = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
    clg_net *net;
    if (clg_net_parse(ctx, model_net, &net) != CLG_OK)
        return 1;
    size_t n = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    float *w = malloc(n * sizeof *w);
    for (unsigned v = 1;; v++) {
        for (size_t i = 0; i < n; i++)
            w[i] = (float)v;
        clg_net_set_params(net, CLG_PARAMS_LEARNABLE, w, n);
        if (crash) { /* one save that dies at the given point */
            crash_point = !strcmp(crash, "before-rename") ? 1 : 2;
            clg__testing_set_atomic_hook(crash_hook);
        }
        clg_net_save(net, path);
        if (crash)
            return 1; /* the hook should have ended the process */
    }
}

static unsigned loaded_version(clg_ctx *ctx, const char *path)
{
    clg_net *net = NULL;
    CLG_ASSERT_STATUS(clg_net_load(ctx, path, &net), CLG_OK);
    size_t n = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    float *w = malloc(n * sizeof *w);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, w, n), CLG_OK);
    for (size_t i = 1; i < n; i++)
        assert_true(w[i] == w[0]);
    unsigned v = (unsigned)w[0];
    free(w);
    clg_net_destroy(net);
    return v;
}

static const char *self;

static pid_t spawn_writer(const char *path, const char *crash)
{
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(self, self, "--model-writer", path, crash, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void killed_model_saves_leave_a_loadable_model(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("model-kill");
    char path[600];
    snprintf(path, sizeof path, "%s/m.clgm", dir);
    clg_ctx *ctx = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
    clg_net *net;
    CLG_ASSERT_STATUS(clg_net_parse(ctx, model_net, &net), CLG_OK);
    CLG_ASSERT_STATUS(clg_net_save(net, path), CLG_OK); /* version 0 */
    clg_net_destroy(net);
    /* Exactly before and after the rename: the old file, then the new one. */
    int status;
    pid_t pid = spawn_writer(path, "before-rename");
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 99);
    assert_int_equal(loaded_version(ctx, path), 0);
    pid = spawn_writer(path, "after-rename");
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 99);
    assert_int_equal(loaded_version(ctx, path), 1);
    /* Killed at random moments while saving over and over. */
    clg_test_rng rng;
    clg_test_rng_init(&rng, clg_test_seed());
    unsigned last = 1, newer = 0;
    for (int round = 0; round < 12; round++) {
        pid = spawn_writer(path, NULL);
        struct timespec ts = {0, (long)(150000000 + clg_test_rng_next(&rng) % 150000000)};
        nanosleep(&ts, NULL); /* past the writer's start-up, into its saves */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        unsigned v = loaded_version(ctx, path);
        newer += v != last;
        last = v;
    }
    print_message("%u of 12 killed writers had replaced the model; every file loaded whole\n", newer);
    clg_test_fixture_teardown(ctx);
    clg_test_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--model-writer"))
        return model_writer(argv[2], argc > 3 ? argv[3] : NULL);
    self = argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(killed_writers_leave_a_whole_file),
        cmocka_unit_test(failed_writes_keep_the_old_file),
        cmocka_unit_test(killed_model_saves_leave_a_loadable_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
