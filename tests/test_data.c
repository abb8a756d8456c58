/* Datastores and image decoding: IDX files plain and gzip, every malformed header refused,
 * subsets and class names, Fashion-MNIST when installed, and images (PNG/BMP/PNM/JPEG in,
 * GIF and oversized or truncated files refused). */
#include <math.h>
#include <sys/stat.h>
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
    if (clg_datastore_open_idx_folder(d, "test", &ds) != CLG_OK) {
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

static void make_dir(const char *path)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
}

/* A gray 3x2 PNG whose pixels are base, base+1, ... */
static void gray_png(const char *path, int base)
{
    unsigned char px[6];
    for (int i = 0; i < 6; i++)
        px[i] = (unsigned char)(base + i);
    assert_true(stbi_write_png(path, 2, 3, 1, px, 2));
}

/* Class folders sorted by name, images at any depth, other files ignored, the size from the
 * first image, bad files failing or skipped, and seeded splits. */
static void image_folders_scan_read_and_split(void **state)
{
    (void)state;
    char root[4096], p[4200];
    snprintf(root, sizeof root, "%s/folder", dir);
    const char *sub[] = {"b_bag/deep", "a_ankle", "c_coat"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", root, sub[i]);
        make_dir(p);
    }
    snprintf(p, sizeof p, "%s/a_ankle/2.png", root), gray_png(p, 20);
    snprintf(p, sizeof p, "%s/a_ankle/1.PNG", root), gray_png(p, 10);
    snprintf(p, sizeof p, "%s/b_bag/deep/3.png", root), gray_png(p, 30);
    snprintf(p, sizeof p, "%s/b_bag/notes.txt", root), write_bytes(p, "not an image", 12, 0);
    snprintf(p, sizeof p, "%s/c_coat/4.pgm", root), write_bytes(p, "P5\n2 3\n255\n()*+,-", 17, 0);
    snprintf(p, sizeof p, "%s/README", root), write_bytes(p, "x", 1, 0); /* not a class */
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, NULL, &ds), CLG_OK);
    assert_int_equal(clg_datastore_size(ds), 4);
    assert_int_equal(clg_datastore_class_count(ds), 3);
    assert_string_equal(clg_datastore_class_name(ds, 0), "a_ankle");
    assert_string_equal(clg_datastore_class_name(ds, 2), "c_coat");
    clg_shape s = clg_datastore_sample_shape(ds);
    assert_true(s.c == 1 && s.h == 3 && s.w == 2);
    const int base[4] = {10, 20, 30, 40}, label[4] = {0, 0, 1, 2}; /* "1.PNG" < "2.png" */
    for (size_t i = 0; i < 4; i++) {
        float x[6];
        int32_t l;
        clg_test_poison_nan(x, 6);
        CLG_ASSERT_STATUS(clg_datastore_read(ds, &i, 1, x, &l), CLG_OK);
        assert_int_equal(l, label[i]);
        for (int k = 0; k < 6; k++)
            assert_true(x[k] == (float)(base[i] + k) * (1.0f / 255.0f));
    }
    /* splits: disjoint, together everything, the same for the same seed */
    clg_datastore *a, *b, *a2, *b2;
    CLG_ASSERT_STATUS(clg_datastore_split(ds, 0.5, 7, &a, &b), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_split(ds, 0.5, 7, &a2, &b2), CLG_OK);
    assert_int_equal(clg_datastore_size(a), 2);
    assert_int_equal(clg_datastore_size(b), 2);
    int seen = 0;
    for (size_t i = 0; i < 4; i++) {
        clg_datastore *part = i < 2 ? a : b, *again = i < 2 ? a2 : b2;
        size_t k = i % 2;
        float v[6], w[6];
        int32_t la, lb;
        CLG_ASSERT_STATUS(clg_datastore_read(part, &k, 1, v, &la), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_read(again, &k, 1, w, &lb), CLG_OK);
        assert_memory_equal(v, w, sizeof v);
        seen |= 1 << ((int)(v[0] * 255.0f + 0.5f) / 10 - 1); /* first pixels 10, 20, 30, 40 */
    }
    assert_int_equal(seen, 15);
    clg_datastore *parts[4] = {a, b, a2, b2};
    for (int i = 0; i < 4; i++)
        clg_datastore_destroy(parts[i]);
    /* a bad file: fail names it; skip lets the next one stand in and counts it */
    snprintf(p, sizeof p, "%s/b_bag/deep/4_bad.png", root);
    write_bytes(p, "\x89PNG\r\n\x1a\n broken", 16, 0);
    clg_datastore_destroy(ds);
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, NULL, &ds), CLG_OK);
    size_t bad = 3; /* after b_bag/deep/3.png */
    float x[6];
    int32_t l;
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &bad, 1, x, &l), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_datastore_last_error(ds), "4_bad.png"));
    clg_datastore_destroy(ds);
    clg_image_folder_options o = clg_image_folder_options_default();
    o.bad_files = CLG_BAD_FILES_SKIP;
    o.channels = 3;
    o.height = 4;
    o.width = 4;
    /* two bad files side by side: each counted once, however often reads land on them, and
     * named */
    snprintf(p, sizeof p, "%s/b_bag/deep/4_bad2.png", root);
    write_bytes(p, "", 0, 0);
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, &o, &ds), CLG_OK);
    float big[48];
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &bad, 1, big, &l), CLG_OK);
    assert_int_equal(l, 2); /* c_coat/4.pgm stood in for both */
    size_t next = bad + 1;
    for (int again = 0; again < 3; again++) {
        CLG_ASSERT_STATUS(clg_datastore_read(ds, &bad, 1, big, &l), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_read(ds, &next, 1, big, &l), CLG_OK);
        assert_int_equal(l, 2);
    }
    assert_int_equal(clg_datastore_skipped(ds, 1), 2);
    assert_int_equal(clg_datastore_skipped(ds, 0), 0);
    assert_non_null(strstr(clg_datastore_skipped_file(ds, 0), "b_bag/deep/4_bad.png"));
    assert_non_null(strstr(clg_datastore_skipped_file(ds, 1), "b_bag/deep/4_bad2.png"));
    assert_null(clg_datastore_skipped_file(ds, 2));
    clg_datastore *half;
    CLG_ASSERT_STATUS(clg_datastore_subset(ds, 1, 4, &half), CLG_OK); /* views name them too */
    assert_non_null(strstr(clg_datastore_skipped_file(half, 1), "4_bad2.png"));
    clg_datastore_destroy(half);
    clg_datastore_destroy(ds);
    remove(p);
    /* refused: one class only, no images, a missing folder */
    snprintf(p, sizeof p, "%s/one/only", dir);
    make_dir(p);
    snprintf(p, sizeof p, "%s/one", dir);
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(p, NULL, &ds), CLG_ERR_INVALID_ARG);
    snprintf(p, sizeof p, "%s/none", dir);
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(p, NULL, &ds), CLG_ERR_IO);
}

/* Fashion-MNIST written as PNG folders gives exactly the IDX pixels. */
static void folder_and_idx_agree_on_fashion_mnist(void **state)
{
    (void)state;
    clg_datastore *idx, *folder;
    if (clg_datastore_open_idx_folder("/usr/share/datasets/fashion-mnist", "test", &idx) != CLG_OK) {
        print_message("skipped: dataset-fashion-mnist is not installed\n");
        skip();
    }
    char root[4096], p[4200];
    snprintf(root, sizeof root, "%s/fashion", dir);
    float x[20][784];
    int32_t y[20];
    size_t ids[20];
    for (size_t i = 0; i < 20; i++)
        ids[i] = i;
    CLG_ASSERT_STATUS(clg_datastore_read(idx, ids, 20, &x[0][0], y), CLG_OK);
    for (int c = 0; c < 10; c++) {
        snprintf(p, sizeof p, "%s/class%d", root, c);
        make_dir(p);
    }
    for (int i = 0; i < 20; i++) {
        unsigned char px[784];
        for (int k = 0; k < 784; k++)
            px[k] = (unsigned char)(x[i][k] * 255.0f + 0.5f);
        snprintf(p, sizeof p, "%s/class%d/%02d.png", root, y[i], i);
        assert_true(stbi_write_png(p, 28, 28, 1, px, 28));
    }
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(root, NULL, &folder), CLG_OK);
    assert_int_equal(clg_datastore_size(folder), 20);
    for (size_t i = 0; i < 20; i++) { /* folder order: by class, then by name */
        float v[784];
        int32_t l;
        CLG_ASSERT_STATUS(clg_datastore_read(folder, &i, 1, v, &l), CLG_OK);
        int found = 0;
        for (int j = 0; j < 20 && !found; j++)
            found = y[j] == l && !memcmp(v, x[j], sizeof v);
        assert_true(found);
    }
    clg_datastore_destroy(folder);
    clg_datastore_destroy(idx);
}

/* Augmentation geometry on synthetic images: a mirrored gradient is the reversed gradient, a
 * 90 degree rotation is the exact rotation, a centre crop is the middle, randomness depends on
 * (seed, epoch, index) only, and z-scores have mean 0 and deviation 1. */
static void augmentation_geometry(void **state)
{
    (void)state;
    enum { N = 16, S = 5 };
    float img[N * S * S];
    int32_t lab[N];
    for (int n = 0; n < N; n++) {
        lab[n] = n % 2;
        for (int i = 0; i < S * S; i++)
            img[n * S * S + i] = n < 8 ? (float)(i % S) : (float)((i * 7 + n) % 11) / 11.0f;
    }
    clg_datastore *base, *aug;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(img, lab, N, (clg_shape){1, 1, S, S}, 2, &base), CLG_OK);
    /* reflection: each gradient image comes back as it is or exactly reversed, both seen */
    clg_augment_options o = clg_augment_options_default();
    o.reflection_x = 1;
    o.seed = 3;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_OK);
    int kept = 0, mirrored = 0;
    for (size_t k = 0; k < 8; k++) {
        float x[S * S];
        int32_t l;
        CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, x, &l), CLG_OK);
        assert_int_equal(l, (int)k % 2);
        int same = 1, rev = 1;
        for (int i = 0; i < S * S; i++) {
            same &= x[i] == (float)(i % S);
            rev &= x[i] == (float)(S - 1 - i % S);
        }
        assert_true(same || rev);
        kept += same;
        mirrored += rev;
    }
    assert_true(kept > 0 && mirrored > 0);
    clg_datastore_destroy(aug);
    /* rotation by exactly 90 degrees: out[i][j] = in[S-1-j][i] */
    o = clg_augment_options_default();
    o.rotation[0] = o.rotation[1] = 90.0f;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_OK);
    size_t k = 9;
    float x[S * S];
    int32_t l;
    CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, x, &l), CLG_OK);
    for (int i = 0; i < S; i++)
        for (int j = 0; j < S; j++)
            assert_true(fabsf(x[i * S + j] - img[9 * S * S + (S - 1 - j) * S + i]) < 1e-5f);
    clg_datastore_destroy(aug);
    /* centre crop 3x3 of 5x5 */
    o = clg_augment_options_default();
    o.crop = CLG_CROP_CENTER;
    o.height = o.width = 3;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_OK);
    assert_int_equal(clg_datastore_sample_shape(aug).h, 3);
    CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, x, &l), CLG_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(x[i * 3 + j] == img[9 * S * S + (i + 1) * S + j + 1]);
    clg_datastore_destroy(aug);
    /* randomness: a function of (seed, epoch, index) */
    o = clg_augment_options_default();
    o.rotation[0] = -30.0f, o.rotation[1] = 30.0f;
    o.translation_x[0] = -1.0f, o.translation_x[1] = 1.0f;
    o.crop = CLG_CROP_RANDOM;
    o.height = o.width = 4;
    o.seed = 11;
    clg_datastore *twin;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &twin), CLG_OK);
    float a1[16], a2[16], a3[16];
    CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, a1, &l), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(aug, (size_t[]){3}, 1, a3, &l), CLG_OK); /* in between */
    CLG_ASSERT_STATUS(clg_datastore_read(twin, &k, 1, a2, &l), CLG_OK);
    assert_memory_equal(a1, a2, sizeof a1);
    CLG_ASSERT_STATUS(clg_datastore_set_epoch(aug, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, a3, &l), CLG_OK);
    assert_true(memcmp(a1, a3, sizeof a1) != 0);
    clg_datastore_destroy(aug);
    clg_datastore_destroy(twin);
    /* z-score: mean 0 and deviation 1 over the data set */
    o = clg_augment_options_default();
    o.normalization = CLG_NORM_ZSCORE;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_OK);
    double sum = 0, sq = 0;
    for (size_t n = 0; n < N; n++) {
        CLG_ASSERT_STATUS(clg_datastore_read(aug, &n, 1, x, &l), CLG_OK);
        for (int i = 0; i < S * S; i++)
            sum += x[i], sq += (double)x[i] * x[i];
    }
    double mean = sum / (N * S * S), var = sq / (N * S * S) - mean * mean;
    assert_true(fabs(mean) < 1e-5 && fabs(var - 1.0) < 1e-4);
    clg_datastore_destroy(aug);
    o.crop = CLG_CROP_CENTER; /* a crop larger than the input is refused */
    o.height = o.width = 6;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_ERR_INVALID_ARG);
    clg_datastore_destroy(base);
}

/* Classes matched by name: a folder's sorted names against a model's order, labels moved to
 * the model's positions; numbered sides keep labels; a name without a match, two classes on
 * one name, or too many numbered classes are refused with both lists; augmentation under the
 * view still follows the epoch, and skipped files are counted through it. */
static void classes_matched_by_name(void **state)
{
    (void)state;
    enum { N = 6 };
    float img[N];
    int32_t lab[N] = {0, 1, 2, 2, 1, 0};
    for (int i = 0; i < N; i++)
        img[i] = (float)i + 0.5f;
    clg_datastore *base, *view;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(img, lab, N, (clg_shape){1, 1, 1, 1}, 3, &base),
                      CLG_OK);
    const char *folder[] = {"Ankle_boot", "Bag", "T-shirt_top"};
    const char *model[] = {"T-shirt/top", "Trouser", "Bag", "ankle boot"};
    /* numbered data: labels as they are, within the model's count */
    CLG_ASSERT_STATUS(clg_datastore_match_classes(base, model, 4, &view), CLG_OK);
    for (size_t i = 0; i < N; i++) {
        int32_t l;
        CLG_ASSERT_STATUS(clg_datastore_read(view, &i, 1, NULL, &l), CLG_OK);
        assert_int_equal(l, lab[i]);
    }
    assert_string_equal(clg_datastore_class_name(view, 3), "ankle boot");
    clg_datastore_destroy(view);
    CLG_ASSERT_STATUS(clg_datastore_match_classes(base, model, 2, &view), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "3 classes against 2"));
    assert_null(view);
    /* named: Ankle_boot -> 3, Bag -> 2, T-shirt_top -> 0; pixels untouched */
    CLG_ASSERT_STATUS(clg_datastore_set_class_names(base, folder, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_match_classes(base, model, 4, &view), CLG_OK);
    assert_int_equal(clg_datastore_class_count(view), 4);
    const int32_t want[3] = {3, 2, 0};
    for (size_t i = 0; i < N; i++) {
        int32_t l;
        float x;
        CLG_ASSERT_STATUS(clg_datastore_read(view, &i, 1, &x, &l), CLG_OK);
        assert_int_equal(l, want[lab[i]]);
        assert_true(x == img[i]);
    }
    clg_datastore_destroy(view);
    const char *other[] = {"T-shirt/top", "Trouser", "Boot", "Bag"};
    CLG_ASSERT_STATUS(clg_datastore_match_classes(base, other, 4, &view), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "\"Ankle_boot\" is not among the model's"));
    assert_non_null(strstr(clg_last_error(), "the data's: Ankle_boot, Bag, T-shirt_top"));
    assert_non_null(strstr(clg_last_error(), "the model's: T-shirt/top, Trouser, Boot, Bag"));
    const char *twice[] = {"Ankle boot", "bag", "BAG"};
    const char *folder2[] = {"Bag", "bag_", "Ankle boot"};
    CLG_ASSERT_STATUS(clg_datastore_set_class_names(base, folder2, 3), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_match_classes(base, twice, 3, &view), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "\"Bag\" and \"bag_\" are both \"bag\""));
    /* augmentation below the view still draws per epoch */
    CLG_ASSERT_STATUS(clg_datastore_set_class_names(base, folder, 3), CLG_OK);
    clg_augment_options o = clg_augment_options_default();
    o.translation_x[0] = -1.0f, o.translation_x[1] = 1.0f;
    o.seed = 5;
    clg_datastore *aug;
    CLG_ASSERT_STATUS(clg_datastore_augment(base, &o, &aug), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_match_classes(aug, model, 4, &view), CLG_OK);
    float seen[8];
    int differ = 0;
    for (uint64_t e = 0; e < 8; e++) {
        size_t i = 1;
        CLG_ASSERT_STATUS(clg_datastore_set_epoch(view, e), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_read(view, &i, 1, &seen[e], NULL), CLG_OK);
        differ |= seen[e] != seen[0];
    }
    assert_true(differ);
    assert_int_equal(clg_datastore_skipped(view, 0), 0);
    clg_datastore_destroy(view);
    clg_datastore_destroy(aug);
    clg_datastore_destroy(base);
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

/* torchvision's ImageNet geometry: the shorter side resized, then the centre cropped. A
 * 40x30 (landscape) and a 30x40 (portrait) image, shorter side 20: resized to 26x20 (the
 * longer truncated: 20 * 40 / 30 = 26.7) and 20x26, then their centre 16x12 (landscape:
 * columns 5.. (round(10 / 2) = 5), rows 4..): the same floats as the resized image read
 * whole and cropped here. Then an image folder read that way, and the refusals. */
static void images_resize_shorter_side_then_crop(void **state)
{
    (void)state;
    unsigned char pix[40 * 30 * 3];
    for (int i = 0; i < 40 * 30 * 3; i++)
        pix[i] = (unsigned char)((i * 37) % 251);
    const char *wide = path_of("wide.png"), *tall = path_of("tall.png");
    assert_true(stbi_write_png(wide, 40, 30, 3, pix, 40 * 3));
    assert_true(stbi_write_png(tall, 30, 40, 3, pix, 30 * 3));
    static const struct {
        int tall;
        size_t rh, rw, h, w, top, left;
    } cases[] = {{0, 20, 26, 12, 16, 4, 5}, {1, 26, 20, 16, 13, 5, 4}};
    for (int k = 0; k < 2; k++) {
        size_t rh = cases[k].rh, rw = cases[k].rw, h = cases[k].h, w = cases[k].w;
        const char *path = cases[k].tall ? tall : wide;
        float *whole = malloc(3 * rh * rw * sizeof *whole), *got = malloc(3 * h * w * sizeof *got);
        CLG_ASSERT_STATUS(clg_image_read(path, 3, rh, rw, whole), CLG_OK);
        for (size_t i = 0; i < 3 * h * w; i++)
            got[i] = NAN;
        CLG_ASSERT_STATUS(clg_image_read_cropped(path, 3, 20, h, w, got), CLG_OK);
        for (size_t c = 0; c < 3; c++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    if (got[(c * h + y) * w + x] !=
                        whole[(c * rh + cases[k].top + y) * rw + cases[k].left + x])
                        fail_msg("case %d: channel %zu at %zu,%zu differs", k, c, y, x);
        free(whole), free(got);
    }
    float x[3 * 12 * 16];
    CLG_ASSERT_STATUS(clg_image_read_cropped(wide, 3, 10, 12, 16, x), CLG_ERR_INVALID_ARG);
    /* an image folder the same way: each image 12x16 from the shorter side at 20 */
    char *dir = clg_test_tempdir("cropped"), path[4200];
    for (int cls = 0; cls < 2; cls++) {
        snprintf(path, sizeof path, "%s/c%d", dir, cls);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/c%d/a.png", dir, cls);
        assert_true(stbi_write_png(path, 40, 30, 3, pix, 40 * 3));
    }
    clg_image_folder_options o = clg_image_folder_options_default();
    o.channels = 3, o.height = 12, o.width = 16, o.resize_shorter = 20;
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(dir, &o, &ds), CLG_OK);
    float y[3 * 12 * 16];
    size_t first = 0;
    CLG_ASSERT_STATUS(clg_datastore_read(ds, &first, 1, y, NULL), CLG_OK);
    CLG_ASSERT_STATUS(clg_image_read_cropped(wide, 3, 20, 12, 16, x), CLG_OK);
    assert_memory_equal(x, y, sizeof x);
    clg_datastore_destroy(ds);
    o.resize_shorter = 10; /* less than the crop */
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(dir, &o, &ds), CLG_ERR_INVALID_ARG);
    clg_test_rmtree(dir);
    free(dir);
}

/* Channel statistics over a whole store against a two-pass double reference: values offset
 * by 1000 (where a sum of squares less a squared sum would lose every digit), 3 channels, a
 * sample count that is not a multiple of the chunks read; a constant channel gets std 1. */
static void channel_statistics(void **state)
{
    (void)state;
    enum { N = 150, C = 3, HW = 7 * 5 };
    float *x = malloc(N * C * HW * sizeof *x);
    int32_t *y = calloc(N, sizeof *y);
    uint64_t r = 12345;
    for (size_t i = 0; i < N * C * HW; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        size_t c = (i / HW) % C;
        x[i] = c == 2 ? 0.5f : 1000.0f * (float)c + (float)((r >> 40) % 1000) / 997.0f;
    }
    clg_datastore *ds;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(x, y, N, (clg_shape){1, C, 7, 5}, 2, &ds), CLG_OK);
    float mean[C], sd[C];
    CLG_ASSERT_STATUS(clg_datastore_channel_stats(ds, mean, sd, 2), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_datastore_channel_stats(ds, mean, sd, C), CLG_OK);
    for (size_t c = 0; c < C; c++) {
        double m = 0, q = 0;
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < HW; j++)
                m += x[(i * C + c) * HW + j];
        m /= N * HW;
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < HW; j++)
                q += (x[(i * C + c) * HW + j] - m) * (x[(i * C + c) * HW + j] - m);
        double want_sd = c == 2 ? 1.0 : sqrt(q / (N * HW));
        /* both in double, rounded to float once: equal within an ulp of each */
        if (fabs(mean[c] - m) > 0x1p-23 * fabs(m) || fabs(sd[c] - want_sd) > 0x1p-22 * want_sd)
            fail_msg("channel %zu: mean %.9g std %.9g, expected %.9g %.9g", c, mean[c], sd[c], m,
                     want_sd);
    }
    clg_datastore_destroy(ds);
    free(x), free(y);
}

int main(int argc, char **argv)
{
    jpeg_path = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idx_plain_and_gzip),
        cmocka_unit_test(idx_bad_headers),
        cmocka_unit_test(fashion_mnist_when_installed),
        cmocka_unit_test(images_decode_resize_and_refuse),
        cmocka_unit_test(image_folders_scan_read_and_split),
        cmocka_unit_test(folder_and_idx_agree_on_fashion_mnist),
        cmocka_unit_test(augmentation_geometry),
        cmocka_unit_test(classes_matched_by_name),
        cmocka_unit_test(channel_statistics),
        cmocka_unit_test(images_resize_shorter_side_then_crop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
