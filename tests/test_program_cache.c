/* Embedded kernels and the on-disk program-binary cache: cold build, warm hit, every kind of
 * bad entry rebuilt, unwritable folder harmless, concurrent fillers, build errors surfaced. */
#include <dirent.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/testutil.h"
#include "runtime/kernels_internal.h"
#include "runtime/runtime_internal.h"
#include "runtime/testing.h"

/* Families other than common.cl and headers (*_h): what clg_ctx_warm_up builds at least. */
/* The families a context on the test device uses (the GPU tiles only where it decides as a GPU). */
static unsigned family_count(void)
{
    clg_ctx *ctx = clg_test_ctx("off");
    int gpu = clg_ctx_decides_as_gpu(ctx);
    clg_ctx_destroy(ctx);
    unsigned n = 0;
    for (size_t i = 0; i < clg__kernel_source_count; i++) {
        const char *f = clg__kernel_sources[i].family;
        n += strcmp(f, "common") != 0 && !clg__kernel_source_is_header(f) &&
             (gpu || strcmp(f, "gemm_tile") != 0);
    }
    return n;
}

static clg_ctx_stats warm(const char *dir)
{
    clg_ctx *ctx = clg_test_ctx(dir);
    CLG_ASSERT_STATUS(clg_ctx_warm_up(ctx), CLG_OK);
    /* The kernels must also run correctly, whichever way they were obtained. */
    clg_tensor *t;
    float host[37];
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){37, 1, 1, 1}, &t), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_fill(t, 3.0f), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(t, host, 37), CLG_OK);
    for (int i = 0; i < 37; i++)
        assert_true(host[i] == 3.0f);
    clg_tensor_destroy(t);
    clg_ctx_stats s;
    CLG_ASSERT_STATUS(clg_ctx_get_stats(ctx, &s), CLG_OK);
    clg_ctx_destroy(ctx);
    return s;
}

/* Paths of the cache entries in dir, and the count of leftover temporary files. */
static size_t list_entries(const char *dir, char paths[][600], size_t max, size_t *tmp_files)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    *tmp_files = 0;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".bin") == 0 && n < max)
            snprintf(paths[n++], 600, "%s/%s", dir, e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0)
            (*tmp_files)++;
    }
    closedir(d);
    return n;
}

static void cold_then_warm(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("cache");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/nested/deeper", dir); /* created on demand */
    /* At least one program per family (GEMM has one per way of reading B). */
    clg_ctx_stats cold = warm(sub);
    assert_true(cold.programs_from_source >= family_count());
    assert_int_equal(cold.programs_from_cache, 0);
    assert_int_equal(cold.cache_writes, cold.programs_from_source);
    clg_ctx_stats s = warm(sub);
    assert_int_equal(s.programs_from_source, 0); /* zero builds from source */
    assert_int_equal(s.programs_from_cache, cold.programs_from_source);
    assert_int_equal(s.cache_rejected, 0);
    char paths[32][600];
    size_t tmp;
    assert_int_equal(list_entries(sub, paths, 32, &tmp), cold.programs_from_source);
    assert_int_equal(tmp, 0);
    clg_test_rmtree(dir);
    free(dir);
}

static void rewrite(const char *path, const unsigned char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*size);
    assert_int_equal(fread(data, 1, *size, f), *size);
    fclose(f);
    return data;
}

enum { HDR_KEY = 16, HDR_SIZE = 48, HDR_SHA = 56, HDR_END = 88 }; /* entry layout in bincache.c */

/* Damages the single entry in `how` ways and checks it is rebuilt, then valid again. */
static void damaged_entries_are_rebuilt(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("damage");
    warm(dir);
    char paths[32][600];
    size_t tmp, size;
    assert_true(list_entries(dir, paths, 32, &tmp) >= 1);
    unsigned char *good = slurp(paths[0], &size);
    assert_true(size > HDR_END);
    for (int how = 0; how < 6; how++) {
        unsigned char *bad = malloc(size);
        memcpy(bad, good, size);
        size_t bad_size = size;
        switch (how) {
        case 0: bad[HDR_END + (size - HDR_END) / 2] ^= 0x5a; break; /* flipped payload bit */
        case 1: bad_size = size / 2; break;                          /* truncated */
        case 2: bad_size = 5; break;                                 /* truncated header */
        case 3: bad[HDR_KEY] ^= 1; break;                            /* another key's entry */
        case 4: bad[0] = 'X'; break;                                 /* wrong magic */
        case 5: {
            /* A well-formed entry whose binary is garbage: the driver rejects it. */
            for (size_t i = HDR_END; i < size; i++)
                bad[i] = (unsigned char)(i * 7 + 1);
            struct sha256_ctx h;
            sha256_init(&h);
            sha256_update(&h, size - HDR_END, bad + HDR_END);
            sha256_digest(&h, 32, bad + HDR_SHA);
            break;
        }
        }
        rewrite(paths[0], bad, bad_size);
        free(bad);
        clg_ctx_stats s = warm(dir);
        if (s.programs_from_source != 1 || s.cache_rejected != 1)
            fail_msg("damage %d: %u from source, %u rejected", how, s.programs_from_source,
                     s.cache_rejected);
        s = warm(dir);
        assert_int_equal(s.programs_from_source, 0);
    }
    free(good);
    clg_test_rmtree(dir);
    free(dir);
}

static void unwritable_or_disabled_cache_is_harmless(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("unwritable");
    char file[600], below[700];
    snprintf(file, sizeof file, "%s/a-file", dir);
    rewrite(file, (const unsigned char *)"x", 1);
    snprintf(below, sizeof below, "%s/cache", file); /* a folder under a file cannot exist */
    clg_ctx_stats s = warm(below);
    assert_true(s.programs_from_source >= family_count());
    assert_int_equal(s.cache_writes, 0);

    clg_ctx *ctx = clg_test_ctx("off");
    assert_null(clg_ctx_cache_dir(ctx));
    clg_ctx_destroy(ctx);
    s = warm("off");
    assert_int_equal(s.cache_writes, 0);
    clg_test_rmtree(dir);
    free(dir);
}

static void concurrent_processes_fill_one_cache(void **state)
{
    (void)state;
    char *dir = clg_test_tempdir("concurrent");
    enum { KIDS = 4 };
    pid_t pids[KIDS];
    fflush(stdout);
    for (int i = 0; i < KIDS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            /* A fresh process (exec, not just fork: OpenCL runtimes do not survive fork). */
            execl("/proc/self/exe", "test_program_cache", "--child-warm", dir, (char *)NULL);
            _exit(3);
        }
    }
    for (int i = 0; i < KIDS; i++) {
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    clg_ctx_stats s = warm(dir);
    assert_int_equal(s.programs_from_source, 0);
    char paths[32][600];
    size_t tmp;
    assert_int_equal(list_entries(dir, paths, 32, &tmp), s.programs_from_cache);
    assert_int_equal(tmp, 0);
    clg_test_rmtree(dir);
    free(dir);
}

/* Where the driver keeps compiled kernels itself (POCL with its kernel cache on) clgrad's
 * cache keeps only a word that each program was built: a second context counts them as from
 * the cache and announces no build. With POCL_KERNEL_CACHE=0 the words are misses and
 * binaries replace them. */
static void pocl_keeps_its_own_kernels(void **state)
{
    (void)state;
    clg__testing_set_bincache_always(0);
    int pocl = clg_test_device_is_pocl();
    char *dir = clg_test_tempdir("driver-caches");
    const char *was = getenv("POCL_KERNEL_CACHE");
    char *saved = was ? strdup(was) : NULL;
    unsetenv("POCL_KERNEL_CACHE");
    clg_ctx_stats s = warm(dir);
    char paths[32][600];
    size_t tmp, n;
    assert_true(s.programs_from_source >= family_count());
    assert_int_equal(s.cache_writes, s.programs_from_source);
    if (pocl) {
        unsigned built = s.programs_from_source;
        assert_int_equal(n = list_entries(dir, paths, 32, &tmp), built);
        for (size_t i = 0; i < n; i++) { /* a header and a line, no binary */
            size_t size;
            free(slurp(paths[i], &size));
            assert_true(size < 256);
        }
        s = warm(dir);
        assert_int_equal(s.programs_from_source, 0);
        assert_int_equal(s.programs_from_cache, built);
        assert_int_equal(s.cache_writes, 0);
        setenv("POCL_KERNEL_CACHE", "0", 1); /* read by clgrad at each context, by POCL once */
        s = warm(dir);
        assert_int_equal(s.programs_from_source, built);
        assert_int_equal(s.cache_writes, built);
        assert_int_equal(s.cache_rejected, 0); /* a word is a miss, not a bad entry */
        s = warm(dir);
        assert_int_equal(s.programs_from_cache, built); /* binaries now */
    } else {
        printf("skipped: the driver-caches half applies to POCL only (this platform: %s)\n",
               clg_test_device()->platform);
    }
    if (saved)
        setenv("POCL_KERNEL_CACHE", saved, 1);
    else
        unsetenv("POCL_KERNEL_CACHE");
    free(saved);
    clg__testing_set_bincache_always(1);
    clg_test_rmtree(dir);
    free(dir);
}

static void build_failure_surfaces_the_log(void **state)
{
    (void)state;
    clg_ctx *ctx = clg_test_ctx("off");
    cl_program prog = NULL;
    const char *src = "__kernel void broken(__global float *x) { x[0] = undefined_thing; }\n";
    CLG_ASSERT_STATUS(clg__program_build_source(ctx, "broken_family", src, NULL, &prog),
                      CLG_ERR_BUILD);
    const char *msg = clg_ctx_last_error(ctx);
    assert_non_null(strstr(msg, "broken_family"));
    assert_non_null(strstr(msg, "undefined_thing")); /* the head of the compiler's log */
    assert_non_null(strstr(msg, "CL_BUILD_PROGRAM_FAILURE"));
    assert_string_equal(msg, clg_last_error());
    CLG_ASSERT_STATUS(clg__program_build_source(ctx, "fine", "__kernel void k(void) {}\n", NULL, &prog),
                      CLG_OK);
    clReleaseProgram(prog);
    CLG_ASSERT_STATUS(clg__program_get(ctx, "no_such_family", NULL, &prog), CLG_ERR_INTERNAL);
    clg_ctx_destroy(ctx);
}

static void embedded_sources_are_complete(void **state)
{
    (void)state;
    assert_non_null(clg__kernel_source_find("common"));
    for (size_t i = 0; i < clg__kernel_source_count; i++) {
        const clg__kernel_source *k = &clg__kernel_sources[i];
        assert_int_equal(strlen(k->text), *k->length);
        assert_int_equal(strlen(k->sha256), 64);
        assert_non_null(strstr(k->text, "/*")); /* each family opens with its comment */
    }
}

static void cache_location_follows_the_environment(void **state)
{
    (void)state;
    char *p;
    setenv("CLGRAD_CACHE_DIR", "/x/y", 1);
    assert_string_equal(p = clg__cache_dir_resolve(NULL), "/x/y");
    free(p);
    assert_string_equal(p = clg__cache_dir_resolve("/explicit"), "/explicit");
    free(p);
    setenv("CLGRAD_CACHE_DIR", "off", 1);
    assert_null(clg__cache_dir_resolve(NULL));
    unsetenv("CLGRAD_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    assert_string_equal(p = clg__cache_dir_resolve(NULL), "/xdg/clgrad");
    free(p);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    assert_string_equal(p = clg__cache_dir_resolve(NULL), "/home/u/.cache/clgrad");
    free(p);
}

/* Child mode for concurrent_processes_fill_one_cache: warm a context on DIR, exit 0 if ok. */
static int child_warm(const char *dir)
{
    clg_device_info *list;
    size_t n;
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = dir;
    clg_ctx *ctx = NULL;
    int ok = clg_devices_list(&list, &n) == CLG_OK && clg_ctx_create(&list[0], &o, &ctx) == CLG_OK &&
             clg_ctx_warm_up(ctx) == CLG_OK;
    if (!ok)
        fprintf(stderr, "child: %s\n", clg_last_error());
    clg_ctx_destroy(ctx);
    clg_devices_free(list, n);
    return ok ? 0 : 1;
}

/* -cl-std from the device's OpenCL C version: 1.2 where the device takes it (OpenCL 3.0
 * drivers report 1.2 or 3.0), nothing for older or unreadable versions. */
static void language_version_follows_the_device(void **state)
{
    (void)state;
    assert_string_equal(clg__cl_std_option("OpenCL C 1.2 pocl"), "-cl-std=CL1.2 ");
    assert_string_equal(clg__cl_std_option("OpenCL C 3.0 "), "-cl-std=CL1.2 ");
    assert_string_equal(clg__cl_std_option("OpenCL C 2.0"), "-cl-std=CL1.2 ");
    assert_string_equal(clg__cl_std_option("OpenCL C 1.1"), "");
    assert_string_equal(clg__cl_std_option("OpenCL C 1.0 beta"), "");
    assert_string_equal(clg__cl_std_option("garbage"), "");
    assert_string_equal(clg__cl_std_option(""), "");
    assert_string_equal(clg__cl_std_option(NULL), "");
}

int main(int argc, char **argv)
{
    /* The binary cache under test on every driver, POCL too (see pocl_keeps_its_own_kernels). */
    clg__testing_set_bincache_always(1);
    if (argc == 3 && strcmp(argv[1], "--child-warm") == 0)
        return child_warm(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(language_version_follows_the_device),
        cmocka_unit_test(embedded_sources_are_complete),
        cmocka_unit_test(cold_then_warm),
        cmocka_unit_test(damaged_entries_are_rebuilt),
        cmocka_unit_test(unwritable_or_disabled_cache_is_harmless),
        cmocka_unit_test(concurrent_processes_fill_one_cache),
        cmocka_unit_test(pocl_keeps_its_own_kernels),
        cmocka_unit_test(build_failure_surfaces_the_log),
        cmocka_unit_test(cache_location_follows_the_environment),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clg_test_devices_release();
    return rc;
}
