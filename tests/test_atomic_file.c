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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(killed_writers_leave_a_whole_file),
        cmocka_unit_test(failed_writes_keep_the_old_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
