/* Image decoding: JPEG through libjpeg-turbo (jpeg.c), PNG, BMP and PNM through stb_image
 * (compiled in stb.c; Debian's stb_image 2.27 has unfixed bugs in its other decoders, e.g. GIF,
 * and inputs that trip its known bugs are refused here), sizes checked from the header before
 * any pixel is decoded; resizing through stb_image_resize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"
#include "data/jpeg.h"
#include "data/stb.h"


/* stb 2.27 reads PNM header numbers into an int without an overflow check (undefined
 * behaviour, found by fuzzing). Its reading of the width, height and maximum is mirrored here
 * (whitespace, '#' comments, digits, reading 0 past the end) and a number of 10 or more digits
 * is refused before stb sees the file. */
static int pnm_header_ok(const unsigned char *p, size_t len)
{
    if (len < 2 || p[0] != 'P' || (p[1] != '5' && p[1] != '6'))
        return 1;
    size_t at = 2;
#define PNM_EOF (at >= len)
#define PNM_GET (at < len ? (char)p[at++] : (char)0)
    char c = PNM_GET;
    for (int k = 0; k < 3; k++) {
        for (;;) {
            while (!PNM_EOF && (c == ' ' || (c >= '\t' && c <= '\r')))
                c = PNM_GET;
            if (PNM_EOF || c != '#')
                break;
            while (!PNM_EOF && c != '\n' && c != '\r')
                c = PNM_GET;
        }
        for (int digits = 0; !PNM_EOF && c >= '0' && c <= '9'; c = PNM_GET)
            if (++digits > 9)
                return 0;
    }
#undef PNM_EOF
#undef PNM_GET
    return 1;
}

/* Two PNG chunk problems of stb 2.27 found by fuzzing, refused here: it offsets a NULL pointer
 * for an empty IDAT chunk before any image data (undefined behaviour), and it allocates what a
 * chunk's length field claims before reading it (gigabytes for a few bytes of file). */
static int png_chunks_ok(const unsigned char *p, size_t len)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len < 8 || memcmp(p, sig, 8))
        return 1;
    int seen_data = 0;
    for (size_t at = 8; at + 8 <= len;) {
        size_t n = (size_t)p[at] << 24 | (size_t)p[at + 1] << 16 | (size_t)p[at + 2] << 8 | p[at + 3];
        if (!memcmp(p + at + 4, "IDAT", 4)) {
            if (!n && !seen_data)
                return 0;
            seen_data |= n > 0;
        }
        if (n > len - at - 8)
            return 0; /* longer than what is left of the file */
        if (!memcmp(p + at + 4, "IEND", 4))
            break;
        at += 12 + n;
    }
    return 1;
}

static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* The size a PNG or BMP header declares, read where stb refuses the image (stb says
 * only that it failed: a size over its own limits reads as "not an image"). 0 when none. */
static int declared_size(const unsigned char *d, size_t len, unsigned long *w, unsigned long *h)
{
    if (len >= 24 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8) && !memcmp(d + 12, "IHDR", 4)) {
        *w = be32(d + 16), *h = be32(d + 20);
        return 1;
    }
    if (len >= 26 && d[0] == 'B' && d[1] == 'M') {
        *w = (unsigned long)d[18] | (unsigned long)d[19] << 8 | (unsigned long)d[20] << 16 |
             (unsigned long)d[21] << 24;
        unsigned long hh = (unsigned long)d[22] | (unsigned long)d[23] << 8 |
                           (unsigned long)d[24] << 16 | (unsigned long)d[25] << 24;
        *h = hh & 0x80000000ul ? 0x100000000ul - hh : hh; /* negative: top-down rows */
        return 1;
    }
    return 0;
}

/* The checks before decoding: a readable header of an image within the limits, its size
 * into *iw, *ih, *ic; else CLG_ERR_CORRUPT with the reason in msg. */
static clg_status probe(const unsigned char *data, size_t len, int *iw, int *ih, int *ic,
                        char *msg, size_t msg_cap)
{
    if (len == 0) {
        snprintf(msg, msg_cap, "empty file");
        return CLG_ERR_CORRUPT;
    }
    if (!png_chunks_ok(data, len)) {
        snprintf(msg, msg_cap, "corrupt PNG: a chunk longer than the file, or an empty IDAT "
                 "chunk before the image data");
        return CLG_ERR_CORRUPT;
    }
    if (!pnm_header_ok(data, len)) {
        snprintf(msg, msg_cap, "corrupt PNM: a header number has 10 or more digits");
        return CLG_ERR_CORRUPT;
    }
    unsigned long dw, dh;
    if (len <= (size_t)CLG_IMAGE_MAX_FILE && clg__is_jpeg(data, len)) {
        clg_status st = clg__jpeg_size(data, len, iw, ih, msg, msg_cap);
        if (st != CLG_OK)
            return st;
        *ic = 3;
    } else if (len > (size_t)CLG_IMAGE_MAX_FILE || !clg__stbi_info(data, (int)len, iw, ih, ic)) {
        if (len <= (size_t)CLG_IMAGE_MAX_FILE && declared_size(data, len, &dw, &dh) &&
            (dw > CLG_IMAGE_MAX_SIDE || dh > CLG_IMAGE_MAX_SIDE)) {
            snprintf(msg, msg_cap, "%lux%lu pixels, too large: clgrad reads images of at most "
                     "%d per side and %llu pixels", dw, dh, CLG_IMAGE_MAX_SIDE,
                     (unsigned long long)CLG_IMAGE_MAX_PIXELS);
            return CLG_ERR_CORRUPT;
        }
        snprintf(msg, msg_cap, "not a PNG, JPEG, BMP or PNM image%s",
                 len > (size_t)CLG_IMAGE_MAX_FILE ? " (file too large)" : "");
        return CLG_ERR_CORRUPT;
    }
    if (*iw < 1 || *ih < 1 || *iw > CLG_IMAGE_MAX_SIDE || *ih > CLG_IMAGE_MAX_SIDE ||
        (size_t)*iw * (size_t)*ih > CLG_IMAGE_MAX_PIXELS) {
        snprintf(msg, msg_cap, "%dx%d pixels, too large: clgrad reads images of at most %d per "
                 "side and %llu pixels", *iw, *ih, CLG_IMAGE_MAX_SIDE,
                 (unsigned long long)CLG_IMAGE_MAX_PIXELS);
        return CLG_ERR_CORRUPT;
    }
    return CLG_OK;
}

/* torchvision's centre crop offset: round((size - crop) / 2) as Python rounds (half to
 * even). */
static size_t crop_at(size_t size, size_t crop)
{
    size_t d = size - crop, half = d / 2;
    return d % 2 && half % 2 ? half + 1 : half;
}

clg_status clg__image_fit(void *user, size_t ih, size_t iw, size_t h, size_t w,
                          clg__image_geometry *g, char *msg, size_t msg_cap)
{
    size_t shorter = *(const size_t *)user;
    *g = (clg__image_geometry){0, 0, ih, iw, h, w, 0, 0};
    if (!shorter)
        return CLG_OK;
    int tall = ih > iw;
    size_t lo = tall ? iw : ih, hi = tall ? ih : iw;
    size_t longer = (size_t)((double)shorter * (double)hi / (double)lo);
    g->resized_h = tall ? longer : shorter, g->resized_w = tall ? shorter : longer;
    if (g->resized_h < h || g->resized_w < w || g->resized_h > CLG_IMAGE_MAX_SIDE ||
        g->resized_w > CLG_IMAGE_MAX_SIDE) {
        snprintf(msg, msg_cap, "%zux%zu resized to %zux%zu (shorter side %zu) is not at least the "
                 "%zux%zu crop", iw, ih, g->resized_w, g->resized_h, shorter, w, h);
        return CLG_ERR_CORRUPT;
    }
    g->crop_top = crop_at(g->resized_h, h), g->crop_left = crop_at(g->resized_w, w);
    return CLG_OK;
}

static int geometry_ok(const clg__image_geometry *g, size_t ih, size_t iw, size_t h, size_t w)
{
    return g->height && g->width && g->top <= ih && g->height <= ih - g->top && g->left <= iw &&
           g->width <= iw - g->left && g->resized_h <= CLG_IMAGE_MAX_SIDE &&
           g->resized_w <= CLG_IMAGE_MAX_SIDE && g->crop_top <= g->resized_h &&
           h <= g->resized_h - g->crop_top && g->crop_left <= g->resized_w &&
           w <= g->resized_w - g->crop_left;
}

/* The pixels of the image: a JPEG at the smallest scale at which the part g takes still has
 * g's resized size; *dw, *dh receive the size decoded. */
static clg_status decode_pixels(const unsigned char *data, size_t len, int want, size_t ih,
                                size_t iw, const clg__image_geometry *g, unsigned char **pix,
                                int *dw, int *dh, char *msg, size_t msg_cap)
{
    if (clg__is_jpeg(data, len)) {
        size_t min_w = (g->resized_w * iw + g->width - 1) / g->width;
        size_t min_h = (g->resized_h * ih + g->height - 1) / g->height;
        return clg__jpeg_decode(data, len, want, min_w, min_h, pix, dw, dh, msg, msg_cap);
    }
    /* stb 2.27 converts 16-bit PNM data it never checked was all there (a heap overflow found
     * by fuzzing): 16-bit images are refused outright. */
    if (clg__stbi_is_16_bit(data, (int)len)) {
        snprintf(msg, msg_cap, "16-bit images are not supported (convert to 8 bits per channel)");
        return CLG_ERR_CORRUPT;
    }
    int ic;
    *pix = clg__stbi_load(data, (int)len, dw, dh, &ic, want);
    if (!*pix) {
        snprintf(msg, msg_cap, "cannot decode: %s", clg__stbi_failure_reason());
        return CLG_ERR_CORRUPT;
    }
    return CLG_OK;
}

clg_status clg__image_decode_with(const unsigned char *data, size_t len, size_t c,
                                  clg__geometry_fn pick, void *user, size_t h, size_t w,
                                  float *out, char *msg, size_t msg_cap)
{
    int iw, ih, ic, dw, dh;
    clg_status st = probe(data, len, &iw, &ih, &ic, msg, msg_cap);
    clg__image_geometry g;
    if (st == CLG_OK)
        st = pick(user, (size_t)ih, (size_t)iw, h, w, &g, msg, msg_cap);
    if (st == CLG_OK && !geometry_ok(&g, (size_t)ih, (size_t)iw, h, w)) {
        snprintf(msg, msg_cap, "internal error: an image geometry outside the %dx%d image", iw, ih);
        st = CLG_ERR_INTERNAL;
    }
    int want = c == 1 ? 1 : 3;
    unsigned char *pix = NULL;
    if (st == CLG_OK)
        st = decode_pixels(data, len, want, (size_t)ih, (size_t)iw, &g, &pix, &dw, &dh, msg,
                           msg_cap);
    if (st != CLG_OK)
        return st;
    /* the part taken, in decoded pixels (a JPEG may have decoded smaller) */
    size_t top = g.top * (size_t)dh / (size_t)ih, left = g.left * (size_t)dw / (size_t)iw;
    size_t ph = (g.height * (size_t)dh + (size_t)ih / 2) / (size_t)ih;
    size_t pw = (g.width * (size_t)dw + (size_t)iw / 2) / (size_t)iw;
    ph = ph < 1 ? 1 : ph > (size_t)dh - top ? (size_t)dh - top : ph;
    pw = pw < 1 ? 1 : pw > (size_t)dw - left ? (size_t)dw - left : pw;
    size_t stride = (size_t)dw * (size_t)want, rh = g.resized_h, rw = g.resized_w;
    const unsigned char *part = pix + top * stride + left * (size_t)want;
    unsigned char *sized = NULL;
    if (pw != rw || ph != rh) {
        sized = clg__malloc(rw * rh * (size_t)want);
        if (!sized || !clg__stbir_resize(part, (int)pw, (int)ph, (int)stride, sized, (int)rw,
                                         (int)rh, 0, want)) {
            free(sized);
            free(pix);
            snprintf(msg, msg_cap, "out of host memory resizing %zux%zu to %zux%zu", pw, ph, rw, rh);
            return CLG_ERR_OUT_OF_HOST_MEMORY;
        }
        part = sized, stride = rw * (size_t)want;
    }
    part += g.crop_top * stride + g.crop_left * (size_t)want;
    for (size_t ch = 0; ch < c; ch++) /* interleaved HWC bytes to planar CHW floats */
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                out[(ch * h + y) * w + x] =
                    (float)part[y * stride + x * (size_t)want + ch] * (1.0f / 255.0f);
    free(sized);
    free(pix);
    return CLG_OK;
}

clg_status clg__image_decode(const unsigned char *data, size_t len, size_t c, size_t shorter,
                             size_t h, size_t w, float *out, char *msg, size_t msg_cap)
{
    return clg__image_decode_with(data, len, c, clg__image_fit, &shorter, h, w, out, msg, msg_cap);
}

clg_status clg__image_file(const char *path, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return clg__datastore_fail(NULL, CLG_ERR_IO, "cannot open image %s", path);
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;
    clg_status st = CLG_OK;
    for (;;) {
        if (len == cap) {
            if (cap >= (size_t)CLG_IMAGE_MAX_FILE) {
                st = clg__datastore_fail(NULL, CLG_ERR_CORRUPT, "image %s is larger than %d bytes",
                                         path, CLG_IMAGE_MAX_FILE);
                break;
            }
            size_t bigger_cap = cap ? 2 * cap : 1 << 16;
            unsigned char *bigger = clg__realloc(data, bigger_cap + 1);
            if (!bigger) {
                st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
                break;
            }
            data = bigger;
            cap = bigger_cap;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (!got)
            break;
    }
    if (st == CLG_OK && ferror(f))
        st = clg__datastore_fail(NULL, CLG_ERR_IO, "cannot read image %s", path);
    fclose(f);
    if (st != CLG_OK) {
        free(data);
        return st;
    }
    *out = data;
    *out_len = len;
    return CLG_OK;
}

clg_status clg_image_read(const char *path, size_t c, size_t h, size_t w, float *out)
{
    return clg_image_read_cropped(path, c, 0, h, w, out);
}

clg_status clg_image_read_cropped(const char *path, size_t c, size_t shorter, size_t h, size_t w,
                                  float *out)
{
    if (!path || !out || (c != 1 && c != 3) || !h || !w || h > CLG_IMAGE_MAX_SIDE ||
        w > CLG_IMAGE_MAX_SIDE || (shorter && (shorter < h || shorter < w)))
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_image_read: path and out must "
                                   "not be NULL, channels 1 or 3, sizes 1..%d (a shorter side "
                                   "at least the crop's)", CLG_IMAGE_MAX_SIDE);
    return clg__image_read_with(path, c, clg__image_fit, &shorter, h, w, out);
}

clg_status clg__image_read_with(const char *path, size_t c, clg__geometry_fn pick, void *user,
                                size_t h, size_t w, float *out)
{
    unsigned char *data;
    size_t len;
    clg_status st = clg__image_file(path, &data, &len);
    if (st == CLG_OK) {
        char msg[256];
        st = clg__image_decode_with(data, len, c, pick, user, h, w, out, msg, sizeof msg);
        if (st != CLG_OK)
            clg__datastore_fail(NULL, st, "image %s: %s", path, msg);
    }
    free(data);
    return st;
}

clg_status clg__image_size(const char *path, size_t *h, size_t *w)
{
    unsigned char *data;
    size_t len;
    clg_status st = clg__image_file(path, &data, &len);
    int iw = 0, ih = 0, ic = 0;
    char msg[256];
    if (st == CLG_OK && (st = probe(data, len, &iw, &ih, &ic, msg, sizeof msg)) != CLG_OK)
        clg__datastore_fail(NULL, st, "image %s: %s", path, msg);
    free(data);
    *h = (size_t)ih;
    *w = (size_t)iw;
    return st;
}

clg_status clg_image_size(const char *path, size_t *height, size_t *width)
{
    if (!path || !height || !width)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_image_size: path, height "
                                   "and width must not be NULL");
    return clg__image_size(path, height, width);
}
