/* Image decoding, the only file that compiles stb_image (and stb_image_resize): PNG, JPEG,
 * BMP and PNM only (Debian's stb_image 2.27 has unfixed bugs in its other decoders, e.g. GIF),
 * sizes checked with stbi_info before any pixel is decoded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_PNM
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS CLG_IMAGE_MAX_SIDE
#define STBI_MALLOC(n) clg__malloc(n)
#define STBI_REALLOC(p, n) clg__realloc(p, n)
#define STBI_FREE(p) free(p)
#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STBIR_MALLOC(n, c) ((void)(c), clg__malloc(n))
#define STBIR_FREE(p, c) ((void)(c), free(p))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>
#pragma GCC diagnostic pop

clg_status clg__image_decode(const unsigned char *data, size_t len, size_t c, size_t h, size_t w,
                             float *out, char *msg, size_t msg_cap)
{
    int iw, ih, ic;
    if (len == 0) {
        snprintf(msg, msg_cap, "empty file");
        return CLG_ERR_CORRUPT;
    }
    if (len > (size_t)CLG_IMAGE_MAX_FILE || !stbi_info_from_memory(data, (int)len, &iw, &ih, &ic)) {
        snprintf(msg, msg_cap, "not a PNG, JPEG, BMP or PNM image%s",
                 len > (size_t)CLG_IMAGE_MAX_FILE ? " (file too large)" : "");
        return CLG_ERR_CORRUPT;
    }
    if (iw < 1 || ih < 1 || iw > CLG_IMAGE_MAX_SIDE || ih > CLG_IMAGE_MAX_SIDE ||
        (size_t)iw * (size_t)ih > CLG_IMAGE_MAX_PIXELS) {
        snprintf(msg, msg_cap, "declared size %dx%d is over the limit (%d per side, %llu pixels)",
                 iw, ih, CLG_IMAGE_MAX_SIDE, (unsigned long long)CLG_IMAGE_MAX_PIXELS);
        return CLG_ERR_CORRUPT;
    }
    int want = c == 1 ? 1 : 3;
    unsigned char *pix = stbi_load_from_memory(data, (int)len, &iw, &ih, &ic, want);
    if (!pix) {
        snprintf(msg, msg_cap, "cannot decode: %s", stbi_failure_reason());
        return CLG_ERR_CORRUPT;
    }
    unsigned char *sized = pix;
    if ((size_t)iw != w || (size_t)ih != h) {
        sized = clg__malloc(w * h * (size_t)want);
        if (!sized || !stbir_resize_uint8(pix, iw, ih, 0, sized, (int)w, (int)h, 0, want)) {
            free(sized);
            free(pix);
            snprintf(msg, msg_cap, "out of host memory resizing %dx%d to %zux%zu", iw, ih, w, h);
            return CLG_ERR_OUT_OF_HOST_MEMORY;
        }
    }
    for (size_t ch = 0; ch < c; ch++) /* interleaved HWC bytes to planar CHW floats */
        for (size_t i = 0; i < h * w; i++)
            out[ch * h * w + i] = (float)sized[i * (size_t)want + ch] * (1.0f / 255.0f);
    if (sized != pix)
        free(sized);
    free(pix);
    return CLG_OK;
}

clg_status clg_image_read(const char *path, size_t c, size_t h, size_t w, float *out)
{
    if (!path || !out || (c != 1 && c != 3) || !h || !w || h > CLG_IMAGE_MAX_SIDE ||
        w > CLG_IMAGE_MAX_SIDE)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_image_read: path and out must "
                                   "not be NULL, channels 1 or 3, sizes 1..%d", CLG_IMAGE_MAX_SIDE);
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
    if (st == CLG_OK) {
        char msg[256];
        st = clg__image_decode(data, len, c, h, w, out, msg, sizeof msg);
        if (st != CLG_OK)
            clg__datastore_fail(NULL, st, "image %s: %s", path, msg);
    }
    free(data);
    return st;
}
