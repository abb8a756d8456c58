/* Photos: JPEG through libjpeg-turbo (full size, decoded at a reduced scale and resized,
 * damaged files refused), an image's window resized exactly as asked, and the random resized
 * crop (torchvision's RandomResizedCrop): from a file, and from samples already decoded, with
 * windows inside the drawn ranges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include "common/testutil.h"
#include "clgrad/data.h"
#include "data/data_internal.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#include <stb/stb_image_write.h>
#include <stb/stb_image_resize.h>
#pragma GCC diagnostic pop

static char *dir;

static char *path_of(const char *name)
{
    static char buf[4][4096];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

/* n floats of NaN: an element the decoder does not write fails the comparison */
static float *poisoned(size_t n)
{
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    clg_test_poison_nan(x, n);
    return x;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* A smooth RGB image (JPEG keeps it closely): w x h interleaved bytes, malloc'd. */
static unsigned char *smooth_rgb(int w, int h, unsigned seed)
{
    unsigned char *p = malloc((size_t)w * (size_t)h * 3);
    double a = 1.0 + seed % 7, b = 2.0 + seed % 5;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                double v = 128 + 90 * sin(a * x / w * 3.1 + c) * cos(b * y / h * 2.3 - c);
                p[((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)c] = (unsigned char)lround(v);
            }
    return p;
}

/* The JPEG of an RGB image at quality 95 without chroma subsampling, written to path; its
 * length returned and its bytes in *out when out is not NULL (malloc'd). */
static size_t write_jpeg(const char *path, const unsigned char *rgb, int w, int h,
                         unsigned char **out)
{
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long len = 0;
    assert_int_equal(tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, &jpeg, &len, TJSAMP_444, 95, 0), 0);
    tjDestroy(tj);
    write_file(path, jpeg, len);
    if (out) {
        *out = malloc(len);
        memcpy(*out, jpeg, len);
    }
    tjFree(jpeg);
    return len;
}

/* Mean and largest absolute difference of a planar float image from interleaved bytes / 255. */
static void compare(const float *planar, const double *ref, size_t c, size_t n, double *mean,
                    double *worst)
{
    double sum = 0;
    *worst = 0;
    for (size_t ch = 0; ch < c; ch++)
        for (size_t i = 0; i < n; i++) {
            double d = fabs(planar[ch * n + i] - ref[i * c + ch]);
            sum += d;
            *worst = d > *worst ? d : *worst;
        }
    *mean = sum / (double)(c * n);
}

/* Full size: RGB within JPEG's loss of the pixels, gray within it of their luma; an awkward
 * 61x47 (not a multiple of the 8x8 blocks). */
static void jpeg_decodes_to_its_pixels(void **state)
{
    (void)state;
    enum { W = 61, H = 47 };
    unsigned char *rgb = smooth_rgb(W, H, 3);
    write_jpeg(path_of("s.jpg"), rgb, W, H, NULL);
    float *x = poisoned(3 * W * H);
    double *ref = malloc(sizeof *ref * 3 * W * H), *luma = malloc(sizeof *luma * W * H);
    for (int i = 0; i < W * H; i++) {
        for (int c = 0; c < 3; c++)
            ref[i * 3 + c] = rgb[i * 3 + c] / 255.0;
        luma[i] = 0.299 * ref[i * 3] + 0.587 * ref[i * 3 + 1] + 0.114 * ref[i * 3 + 2];
    }
    double mean, worst;
    CLG_ASSERT_STATUS(clg_image_read(path_of("s.jpg"), 3, H, W, x), CLG_OK);
    compare(x, ref, 3, W * H, &mean, &worst);
    assert_true(mean < 2.0 / 255 && worst < 12.0 / 255); /* quality 95, 4:4:4: 1.4, 8 */
    CLG_ASSERT_STATUS(clg_image_read(path_of("s.jpg"), 1, H, W, x), CLG_OK);
    compare(x, luma, 1, W * H, &mean, &worst);
    assert_true(mean < 1.5 / 255 && worst < 12.0 / 255);
    free(rgb);
    free(ref);
    free(luma);
    free(x);
}

/* Box average of an interleaved RGB image onto an oh x ow grid, in double: the area each
 * output pixel covers. */
static double *box_average(const unsigned char *rgb, int w, int h, int ow, int oh)
{
    double *r = calloc((size_t)ow * (size_t)oh * 3, sizeof *r);
    for (int i = 0; i < oh; i++)
        for (int j = 0; j < ow; j++) {
            double y0 = (double)i * h / oh, y1 = (double)(i + 1) * h / oh;
            double x0 = (double)j * w / ow, x1 = (double)(j + 1) * w / ow;
            double acc[3] = {0}, area = 0;
            for (int y = (int)y0; y < (int)ceil(y1); y++)
                for (int x = (int)x0; x < (int)ceil(x1); x++) {
                    double a = (fmin(y + 1, y1) - fmax(y, y0)) * (fmin(x + 1, x1) - fmax(x, x0));
                    for (int c = 0; c < 3; c++)
                        acc[c] += a * rgb[((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)c];
                    area += a;
                }
            for (int c = 0; c < 3; c++)
                r[((size_t)i * (size_t)ow + (size_t)j) * 3 + (size_t)c] = acc[c] / area / 255.0;
        }
    return r;
}

/* A 512x384 JPEG read small decodes at 1/8 (64x48 exactly, or resized from there to 60x45):
 * both within JPEG's loss of the box average of the full-size pixels. */
static void jpeg_reads_small_from_a_reduced_scale(void **state)
{
    (void)state;
    enum { W = 512, H = 384 };
    unsigned char *rgb = smooth_rgb(W, H, 5);
    write_jpeg(path_of("big.jpg"), rgb, W, H, NULL);
    const int sizes[][2] = {{64, 48}, {60, 45}, {200, 150}};
    for (size_t k = 0; k < 3; k++) {
        int ow = sizes[k][0], oh = sizes[k][1];
        float *x = poisoned((size_t)(3 * ow * oh));
        double *ref = box_average(rgb, W, H, ow, oh), mean, worst;
        CLG_ASSERT_STATUS(clg_image_read(path_of("big.jpg"), 3, (size_t)oh, (size_t)ow, x), CLG_OK);
        compare(x, ref, 3, (size_t)(ow * oh), &mean, &worst);
        /* seen: means 0.46-0.65, worst 2.8 (of 255); half an output pixel off would be ~5 */
        assert_true(mean < 1.2 / 255 && worst < 8.0 / 255);
        free(ref);
        free(x);
    }
    free(rgb);
}

/* Damaged JPEGs: truncated, garbage after the start marker, a frame of 20000 x 300 pixels. */
static void jpeg_damage_refused(void **state)
{
    (void)state;
    unsigned char *rgb = smooth_rgb(64, 48, 1), *jpeg;
    size_t len = write_jpeg(path_of("ok.jpg"), rgb, 64, 48, &jpeg);
    float x[3 * 48 * 64];
    write_file(path_of("cut.jpg"), jpeg, len / 2);
    CLG_ASSERT_STATUS(clg_image_read(path_of("cut.jpg"), 3, 48, 64, x), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_last_error(), "cut.jpg"));
    assert_non_null(strstr(clg_last_error(), "corrupt JPEG"));
    write_file(path_of("junk.jpg"), "\xFF\xD8\xFF\x12\x34\x56\x78\x9a", 8);
    CLG_ASSERT_STATUS(clg_image_read(path_of("junk.jpg"), 3, 4, 4, x), CLG_ERR_CORRUPT);
    for (size_t i = 2; i + 9 < len; i++)
        if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) { /* the frame: height, then width */
            jpeg[i + 5] = 300 >> 8, jpeg[i + 6] = 300 & 255;
            jpeg[i + 7] = 20000 >> 8, jpeg[i + 8] = 20000 & 255;
            break;
        }
    write_file(path_of("huge.jpg"), jpeg, len);
    CLG_ASSERT_STATUS(clg_image_read(path_of("huge.jpg"), 3, 4, 4, x), CLG_ERR_CORRUPT);
    assert_non_null(strstr(clg_last_error(), "too large"));
    free(jpeg);
    free(rgb);
}

typedef struct fixed_window {
    clg__image_geometry g;
} fixed_window;

static clg_status pick_fixed(void *user, size_t ih, size_t iw, size_t h, size_t w,
                             clg__image_geometry *g, char *msg, size_t msg_cap)
{
    (void)ih, (void)iw, (void)h, (void)w, (void)msg, (void)msg_cap;
    *g = ((const fixed_window *)user)->g;
    return CLG_OK;
}

/* stb_image_resize with the triangle filter (PIL's bilinear), as clgrad resizes */
static void triangle_resize(const unsigned char *in, int iw, int ih, unsigned char *out, int ow,
                            int oh)
{
    assert_true(stbir_resize_uint8_generic(in, iw, ih, 0, out, ow, oh, 0, 3, -1, 0,
                                           STBIR_EDGE_CLAMP, STBIR_FILTER_TRIANGLE,
                                           STBIR_COLORSPACE_LINEAR, NULL));
}

/* A window of a PNG (lossless): taken at its size it is the pixels themselves; resized, it is
 * stb_image_resize's result on those pixels, byte for byte. */
static void window_of_an_image_exact(void **state)
{
    (void)state;
    enum { W = 40, H = 30 };
    unsigned char rgb[W * H * 3], win[20 * 30 * 3], small[10 * 15 * 3];
    clg_test_rng r;
    clg_test_rng_init(&r, clg_test_seed());
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (unsigned char)(clg_test_rng_next(&r) >> 56);
    int len = 0;
    unsigned char *png = stbi_write_png_to_mem(rgb, W * 3, W, H, 3, &len);
    assert_non_null(png);
    for (int y = 0; y < 20; y++)
        memcpy(win + y * 30 * 3, rgb + ((5 + y) * W + 7) * 3, 30 * 3);
    fixed_window f = {{5, 7, 20, 30, 20, 30, 0, 0}};
    float *x = poisoned(3 * 20 * 30);
    char msg[256];
    CLG_ASSERT_STATUS(clg__image_decode_with(png, (size_t)len, 3, pick_fixed, &f, 20, 30, x, msg,
                                             sizeof msg), CLG_OK);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 20 * 30; i++)
            assert_true(x[c * 600 + i] == (float)win[i * 3 + c] * (1.0f / 255.0f));
    triangle_resize(win, 30, 20, small, 15, 10);
    f.g.resized_h = 10, f.g.resized_w = 15;
    CLG_ASSERT_STATUS(clg__image_decode_with(png, (size_t)len, 3, pick_fixed, &f, 10, 15, x, msg,
                                             sizeof msg), CLG_OK);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 10 * 15; i++)
            assert_true(x[c * 150 + i] == (float)small[i * 3 + c] * (1.0f / 255.0f));
    /* resized larger and a part of that taken (crop_top, crop_left) */
    unsigned char large[50 * 60 * 3];
    triangle_resize(win, 30, 20, large, 60, 50);
    f.g.resized_h = 50, f.g.resized_w = 60, f.g.crop_top = 3, f.g.crop_left = 4;
    CLG_ASSERT_STATUS(clg__image_decode_with(png, (size_t)len, 3, pick_fixed, &f, 20, 30, x, msg,
                                             sizeof msg), CLG_OK);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 20; i++)
            for (int j = 0; j < 30; j++)
                assert_true(x[(c * 20 + i) * 30 + j] ==
                            (float)large[((3 + i) * 60 + 4 + j) * 3 + c] * (1.0f / 255.0f));
    free(png);
    free(x);
}

/* An image folder of two classes, two RGB photos each (PNG: lossless), 40x30. */
static void photo_folder(void)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/photos/a' '%s/photos/b'", dir, dir);
    assert_int_equal(system(cmd), 0);
    const char *names[] = {"photos/a/1.png", "photos/a/2.png", "photos/b/1.png", "photos/b/2.png"};
    for (unsigned k = 0; k < 4; k++) {
        unsigned char *rgb = smooth_rgb(40, 30, k + 2);
        assert_true(stbi_write_png(path_of(names[k]), 40, 30, 3, rgb, 40 * 3));
        free(rgb);
    }
}

/* From a folder, a window of the whole image (area 1, the image's own aspect) is the image
 * resized to the output, bit for bit as clg_image_read gives it; mirroring applies after. */
static void random_resized_crop_from_files(void **state)
{
    (void)state;
    photo_folder();
    clg_image_folder_options fo = clg_image_folder_options_default();
    fo.channels = 3, fo.height = 30, fo.width = 40;
    clg_datastore *folder, *aug;
    CLG_ASSERT_STATUS(clg_datastore_open_image_folder(path_of("photos"), &fo, &folder), CLG_OK);
    clg_augment_options o = clg_augment_options_default();
    o.crop = CLG_CROP_RANDOM_RESIZED;
    o.height = 12, o.width = 16;
    o.crop_area[0] = o.crop_area[1] = 1.0f;
    o.crop_aspect[0] = o.crop_aspect[1] = 40.0f / 30.0f;
    CLG_ASSERT_STATUS(clg_datastore_augment(folder, &o, &aug), CLG_OK);
    clg_shape s = clg_datastore_sample_shape(aug);
    assert_true(s.c == 3 && s.h == 12 && s.w == 16);
    float got[3 * 12 * 16], want[3 * 12 * 16];
    int32_t label;
    for (size_t i = 0; i < 4; i++) {
        CLG_ASSERT_STATUS(clg_datastore_read(aug, &i, 1, got, &label), CLG_OK);
        assert_int_equal(label, (int32_t)(i / 2));
        const char *names[] = {"photos/a/1.png", "photos/a/2.png", "photos/b/1.png", "photos/b/2.png"};
        CLG_ASSERT_STATUS(clg_image_read(path_of(names[i]), 3, 12, 16, want), CLG_OK);
        assert_memory_equal(got, want, sizeof got);
    }
    clg_datastore_destroy(aug);
    o.reflection_x = 1; /* mirrored or not, per sample; both occur over the epochs */
    CLG_ASSERT_STATUS(clg_datastore_augment(folder, &o, &aug), CLG_OK);
    size_t zero = 0;
    int mirrored = 0, kept = 0;
    CLG_ASSERT_STATUS(clg_image_read(path_of("photos/a/1.png"), 3, 12, 16, want), CLG_OK);
    for (uint64_t e = 0; e < 16; e++) {
        CLG_ASSERT_STATUS(clg_datastore_set_epoch(aug, e), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_read(aug, &zero, 1, got, &label), CLG_OK);
        int same = 1, rev = 1;
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < 12; y++)
                for (int x = 0; x < 16; x++) {
                    float v = got[(c * 12 + y) * 16 + x];
                    same &= fabsf(v - want[(c * 12 + y) * 16 + x]) < 1e-6f;
                    rev &= fabsf(v - want[(c * 12 + y) * 16 + 15 - x]) < 1e-6f;
                }
        assert_true(same || rev);
        kept += same, mirrored += rev;
    }
    assert_true(kept > 0 && mirrored > 0);
    clg_datastore_destroy(aug);
    /* bad ranges refused */
    const float bad[][4] = {{0, 1, 0.75f, 1.33f}, {0.5f, 0.2f, 0.75f, 1.33f},
                            {0.1f, 1.5f, 0.75f, 1.33f}, {0.1f, 1, 0, 1}, {0.1f, 1, 2, 1}};
    for (size_t k = 0; k < 5; k++) {
        o = clg_augment_options_default();
        o.crop = CLG_CROP_RANDOM_RESIZED, o.height = o.width = 8;
        o.crop_area[0] = bad[k][0], o.crop_area[1] = bad[k][1];
        o.crop_aspect[0] = bad[k][2], o.crop_aspect[1] = bad[k][3];
        CLG_ASSERT_STATUS(clg_datastore_augment(folder, &o, &aug), CLG_ERR_INVALID_ARG);
        assert_null(aug);
    }
    clg_datastore_destroy(folder);
}

/* From samples in memory whose two channels are their own x and y coordinates (bilinear
 * sampling reproduces them exactly), each output tells its window: inside the image, its
 * area and aspect within the ranges (up to the rounding of its sides to whole pixels), the
 * area's mean that of a uniform draw, and places spread over the image; a function of (seed,
 * epoch, index). */
static void random_resized_crop_windows_in_range(void **state)
{
    (void)state;
    enum { N = 400, S = 80, O = 8 };
    float *img = malloc(sizeof *img * N * 2 * S * S);
    int32_t *lab = calloc(N, sizeof *lab);
    for (size_t n = 0; n < N; n++)
        for (size_t y = 0; y < S; y++)
            for (size_t x = 0; x < S; x++) {
                img[((n * 2 + 0) * S + y) * S + x] = (float)x;
                img[((n * 2 + 1) * S + y) * S + x] = (float)y;
            }
    clg_datastore *mem, *aug, *twin;
    CLG_ASSERT_STATUS(clg_datastore_from_memory(img, lab, N, (clg_shape){1, 2, S, S}, 2, &mem), CLG_OK);
    clg_augment_options o = clg_augment_options_default();
    o.crop = CLG_CROP_RANDOM_RESIZED, o.height = o.width = O;
    o.crop_area[0] = 0.1f, o.crop_area[1] = 0.5f;
    o.seed = 5;
    CLG_ASSERT_STATUS(clg_datastore_augment(mem, &o, &aug), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_augment(mem, &o, &twin), CLG_OK);
    float out[2 * O * O], again[2 * O * O];
    int32_t l;
    double area_sum = 0, place_sum = 0, log_aspect_sum = 0;
    for (size_t n = 0; n < N; n++) {
        CLG_ASSERT_STATUS(clg_datastore_read(aug, &n, 1, out, &l), CLG_OK);
        CLG_ASSERT_STATUS(clg_datastore_read(twin, &n, 1, again, &l), CLG_OK);
        assert_memory_equal(out, again, sizeof out);
        double sx = out[1] - out[0], sy = out[O * O + O] - out[O * O];
        double w = sx * O, h = sy * O, left = out[0] + 0.5 - 0.5 * sx, top = out[O * O] + 0.5 - 0.5 * sy;
        /* every pixel on the window's grid: a linear ramp in x and in y */
        for (int i = 0; i < O; i++)
            for (int j = 0; j < O; j++) {
                assert_true(fabs(out[i * O + j] - (left + (j + 0.5) * sx - 0.5)) < 1e-3);
                assert_true(fabs(out[O * O + i * O + j] - (top + (i + 0.5) * sy - 0.5)) < 1e-3);
            }
        assert_true(left > -1e-3 && top > -1e-3 && left + w < S + 1e-3 && top + h < S + 1e-3);
        /* sides rounded to whole pixels: at least 16 here, so area and aspect within 7% */
        double area = w * h / (S * S), aspect = w / h;
        assert_true(area > 0.1 * 0.93 && area < 0.5 * 1.07);
        assert_true(aspect > 0.75 * 0.93 && aspect < 4.0 / 3.0 * 1.07);
        area_sum += area;
        log_aspect_sum += log(aspect);
        place_sum += (S - w) > 0.5 ? left / (S - w) : 0.5;
    }
    /* uniform area in [0.1, 0.5]: mean 0.3, its standard error 0.006; log aspect symmetric;
     * places uniform: mean 0.5, standard error 0.015 */
    assert_true(fabs(area_sum / N - 0.3) < 0.03);
    assert_true(fabs(log_aspect_sum / N) < 0.04);
    assert_true(fabs(place_sum / N - 0.5) < 0.08);
    size_t k = 7;
    CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, out, &l), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_set_epoch(aug, 1), CLG_OK);
    CLG_ASSERT_STATUS(clg_datastore_read(aug, &k, 1, again, &l), CLG_OK);
    assert_true(memcmp(out, again, sizeof out) != 0);
    clg_datastore_destroy(aug);
    clg_datastore_destroy(twin);
    clg_datastore_destroy(mem);
    free(img);
    free(lab);
}

int main(void)
{
    dir = clg_test_tempdir("photos");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jpeg_decodes_to_its_pixels),
        cmocka_unit_test(jpeg_reads_small_from_a_reduced_scale),
        cmocka_unit_test(jpeg_damage_refused),
        cmocka_unit_test(window_of_an_image_exact),
        cmocka_unit_test(random_resized_crop_from_files),
        cmocka_unit_test(random_resized_crop_windows_in_range),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clg_test_rmtree(dir);
    return rc;
}
