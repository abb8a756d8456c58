/* Datastores and image decoding: IDX files plain and gzip, every malformed header refused,
 * subsets and class names, Fashion-MNIST when installed, and images (PNG/BMP/PNM/JPEG in,
 * GIF and oversized or truncated files refused). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
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
static const char *jpeg_path; /* argv[1]: tests/fuzz/corpus/image/rgb.jpg */

static char *path_of(const char *name)
{
    static char buf[4][4096];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *path, const void *p, size_t n, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, p, (unsigned)n), (int)n);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(p, 1, n, f), n);
        fclose(f);
    }
}

static size_t idx_header(unsigned char *b, unsigned type, unsigned dims, const uint32_t *d)
{
    b[0] = b[1] = 0;
    b[2] = (unsigned char)type;
    b[3] = (unsigned char)dims;
    for (unsigned i = 0; i < dims; i++) {
        b[4 + 4 * i] = (unsigned char)(d[i] >> 24);
        b[5 + 4 * i] = (unsigned char)(d[i] >> 16);
        b[6 + 4 * i] = (unsigned char)(d[i] >> 8);
        b[7 + 4 * i] = (unsigned char)d[i];
    }
    return 4 + 4 * dims;
}

/* 5 images of 3x2 with pixel value 10*s + i, labels s % 3. */
static void write_good(const char *images, const char *labels, int gz)
{
    unsigned char b[64];
    size_t h = idx_header(b, 8, 3, (uint32_t[]){5, 3, 2});
    for (int s = 0; s < 5; s++)
        for (int i = 0; i < 6; i++)
            b[h++] = (unsigned char)(10 * s + i);
    write_bytes(images, b, h, gz);
    h = idx_header(b, 8, 1, (uint32_t[]){5});
    for (int s = 0; s < 5; s++)
        b[h++] = (unsigned char)(s % 3);
    write_bytes(labels, b, h, gz);
}

static void idx_plain_and_gzip(void **state)
{
    (void)state;
    for (int gz = 0; gz < 2; gz++) {
        const char *im = path_of(gz ? "im.gz" : "im"), *lb = path_of(gz ? "lb.gz" : "lb");
        write_good(im, lb, gz);
        clg_datastore *ds;
        CLG_ASSERT_STATUS(clg_datastore_open_idx(im, lb, &ds), CLG_OK);
        assert_int_equal(clg_datastore_size(ds), 5);
        clg_shape s = clg_datastore_sample_shape(ds);
        assert_int_equal(s.c, 1);
        assert_int_equal(s.h, 3);
        assert_int_equal(s.w, 2);
        assert_int_equal(clg_datastore_class_count(ds), 3);
        assert_string_equal(clg_datastore_class_name(ds, 2), "2");
        size_t idx[2] = {4, 1};
        float x[12];
        int32_t l[2];
        clg_test_poison_nan(x, 12);
        CLG_ASSERT_STATUS(clg_datastore_read(ds, idx, 2, x, l), CLG_OK);
        for (int i = 0; i < 6; i++) {
            assert_true(x[i] == (float)(40 + i) * (1.0f / 255.0f));
            assert_true(x[6 + i] == (float)(10 + i) * (1.0f / 255.0f));
        }
        assert_int_equal(l[0], 1);
        assert_int_equal(l[1], 1);
        size_t past = 5;
        CLG_ASSERT_STATUS(clg_datastore_read(ds, &past, 1, x, l), CLG_ERR_INVALID_ARG);
        /* a subset reads the parent's samples at an offset */
        clg_datastore *sub;
        CLG_ASSERT_STATUS(clg_datastore_subset(ds, 3, 2, &sub), CLG_OK);
        size_t zero = 0;
        CLG_ASSERT_STATUS(clg_datastore_read(sub, &zero, 1, x, l), CLG_OK);
        assert_true(x[0] == 30.0f * (1.0f / 255.0f));
        assert_int_equal(l[0], 0);
        clg_datastore_destroy(sub);
        CLG_ASSERT_STATUS(clg_datastore_subset(ds, 3, 3, &sub), CLG_ERR_INVALID_ARG);
        assert_null(sub);
        const char *names[3] = {"a", "b", "c"};
        CLG_ASSERT_STATUS(clg_datastore_set_class_names(ds, names, 2), CLG_ERR_INVALID_ARG);
        CLG_ASSERT_STATUS(clg_datastore_set_class_names(ds, names, 3), CLG_OK);
        assert_string_equal(clg_datastore_class_name(ds, 1), "b");
        clg_datastore_destroy(ds);
    }
}

/* Each malformed pair is refused with CLG_ERR_CORRUPT and the reason. */
static void idx_bad_headers(void **state)
{
    (void)state;
    const char *im = path_of("bad-im"), *lb = path_of("bad-lb");
    unsigned char good_lb[16];
    size_t lh = idx_header(good_lb, 8, 1, (uint32_t[]){2});
    good_lb[lh++] = 0;
    good_lb[lh++] = 1;
    static const struct {
        unsigned type, dims;
        uint32_t d[4];
        size_t data;      /* bytes after the header */
        const char *why;
    } cases[] = {
        {8, 3, {2, 2, 2}, 7, "truncated"},             /* one pixel short */
        {8, 3, {3, 2, 2}, 8, "declares 12"},           /* count says 3 images, data holds 2 */
        {8, 3, {2, 2, 2}, 9, "holds 9"},               /* trailing junk */
        {0x0d, 3, {2, 2, 2}, 8, "type"},               /* float elements */
        {8, 2, {2, 4}, 8, "dimensions"},
        {8, 3, {2, 0, 2}, 0, "is 0"},
        {8, 3, {0xffffffffu, 0xffffffffu, 0xffffffffu}, 0, "more than"},
        {8, 3, {3, 2, 2}, 12, "3 images but"},         /* label count differs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char b[64] = {0};
        size_t h = idx_header(b, cases[i].type, cases[i].dims, cases[i].d) + cases[i].data;
        write_bytes(im, b, h, i % 2);
        write_bytes(lb, good_lb, lh, 0);
        clg_datastore *ds = (clg_datastore *)1;
        clg_status st = clg_datastore_open_idx(im, lb, &ds);
        if (st != CLG_ERR_CORRUPT || !strstr(clg_last_error(), cases[i].why))
            fail_msg("case %zu: %s \"%s\", wanted CLG_ERR_CORRUPT with \"%s\"", i,
                     clg_status_name(st), clg_last_error(), cases[i].why);
        assert_null(ds);
    }
    write_bytes(im, "", 0, 0); /* empty */
    CLG_ASSERT_STATUS(clg_datastore_open_idx(im, lb, &(clg_datastore *){NULL}), CLG_ERR_CORRUPT);
    write_bytes(im, "\x1f\x8b\x08\x00garbage", 11, 0); /* a broken gzip stream */
    clg_datastore *ds = NULL;
    clg_status st = clg_datastore_open_idx(im, lb, &ds);
    assert_true(st == CLG_ERR_CORRUPT);
    CLG_ASSERT_STATUS(clg_datastore_open_idx(path_of("missing"), lb, &ds), CLG_ERR_IO);
    assert_non_null(strstr(clg_last_error(), "missing"));
}

static void fashion_mnist_when_installed(void **state)
{
    (void)state;
    const char *d = "/usr/share/datasets/fashion-mnist";
    clg_datastore *ds;
    if (clg_datastore_open_dir(d, "test", &ds) != CLG_OK) {
        print_message("skipped: %s (package dataset-fashion-mnist) is not installed\n", d);
        skip();
    }
    assert_int_equal(clg_datastore_size(ds), 10000);
    assert_int_equal(clg_datastore_sample_shape(ds).h, 28);
    assert_int_equal(clg_datastore_class_count(ds), 10);
    size_t idx = 0;
    int32_t l;
    float x[784];
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &idx, 1, x, &l), CLG_OK);
    assert_int_equal(l, 9); /* the first test image is an ankle boot */
    clg_datastore_destroy(ds);
}

static void images_decode_resize_and_refuse(void **state)
{
    (void)state;
    unsigned char rgb[4 * 3 * 3];
    for (int i = 0; i < 36; i++)
        rgb[i] = (unsigned char)(7 * i);
    const char *png = path_of("a.png"), *bmp = path_of("a.bmp");
    assert_true(stbi_write_png(png, 4, 3, 3, rgb, 12));
    assert_true(stbi_write_bmp(bmp, 4, 3, 3, rgb));
    float x[36], y[36];
    CLG_ASSERT_STATUS(clg_image_read(png, 3, 3, 4, x), CLG_OK);
    for (int c = 0; c < 3; c++) /* planar CHW from interleaved bytes, exactly */
        for (int p = 0; p < 12; p++)
            assert_true(x[c * 12 + p] == (float)rgb[p * 3 + c] * (1.0f / 255.0f));
    CLG_ASSERT_STATUS(clg_image_read(bmp, 3, 3, 4, y), CLG_OK);
    assert_memory_equal(x, y, sizeof x);
    /* JPEG: a committed file (stb's JPEG writer has undefined behaviour UBSan stops at) of a
     * 5x3 RGB image whose byte i is 5 i; lossy, so close rather than equal. */
    if (jpeg_path) {
        float z[45];
        CLG_ASSERT_STATUS(clg_image_read(jpeg_path, 3, 3, 5, z), CLG_OK);
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < 15; p++)
                assert_true(fabsf(z[c * 15 + p] - (float)((p * 3 + c) * 5) / 255.0f) < 0.1f);
    }
    float big[48];
    CLG_ASSERT_STATUS(clg_image_read(png, 1, 6, 8, big), CLG_OK); /* gray, resized */
    for (int i = 0; i < 48; i++)
        assert_true(big[i] >= 0.0f && big[i] <= 1.0f);
    /* PNM by hand: a 2x1 gray P5 */
    const char *pgm = path_of("a.pgm");
    write_bytes(pgm, "P5\n2 1\n255\n\x10\x20", 13, 0);
    CLG_ASSERT_STATUS(clg_image_read(pgm, 1, 1, 2, y), CLG_OK);
    assert_true(y[0] == 16.0f * (1.0f / 255.0f) && y[1] == 32.0f * (1.0f / 255.0f));

    /* refused: empty, truncated, GIF, a PNG declaring 100000 x 100000 pixels, missing */
    const char *bad = path_of("bad.png");
    write_bytes(bad, "", 0, 0);
    CLG_ASSERT_STATUS(clg_image_read(bad, 1, 2, 2, y), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_last_error(), "empty"));
    FILE *f = fopen(png, "rb");
    unsigned char buf[512];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    write_bytes(bad, buf, n / 2, 0);
    CLG_ASSERT_STATUS(clg_image_read(bad, 3, 3, 4, y), CLG_ERR_CORRUPT);
    write_bytes(bad, "GIF89a\x02\x00\x01\x00\x80\x00\x00", 13, 0);
    CLG_ASSERT_STATUS(clg_image_read(bad, 1, 1, 2, y), CLG_ERR_CORRUPT);
    memcpy(buf + 16, "\x00\x01\x86\xa0\x00\x01\x86\xa0", 8); /* IHDR width and height */
    write_bytes(bad, buf, n, 0);
    CLG_ASSERT_STATUS(clg_image_read(bad, 3, 3, 4, y), CLG_ERR_CORRUPT);
    CLG_ASSERT_STATUS(clg_image_read(path_of("none.png"), 1, 2, 2, y), CLG_ERR_IO);
}

static int setup(void **state)
{
    (void)state;
    dir = clg_test_tempdir("data");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_rmtree(dir);
    free(dir);
    return 0;
}

int main(int argc, char **argv)
{
    jpeg_path = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idx_plain_and_gzip),
        cmocka_unit_test(idx_bad_headers),
        cmocka_unit_test(fashion_mnist_when_installed),
        cmocka_unit_test(images_decode_resize_and_refuse),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
