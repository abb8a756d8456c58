/* JPEG decoding through libjpeg-turbo's TurboJPEG API: several times faster than stb_image's
 * decoder (SIMD), and it decodes at a reduced scale (1/2, 1/4, 1/8 ...) in the DCT itself when
 * the image is resized much smaller afterwards, so a large photo costs little more than a small
 * one. Warnings (a truncated file, bad data) fail the decode: a damaged photo is refused rather
 * than trained on half grey, and the number of progressive scans is limited (a file of many
 * tiny scans would take minutes). */
#include <stdio.h>
#include <stdlib.h>
#include <turbojpeg.h>

#include "data/jpeg.h"

int clg__is_jpeg(const unsigned char *data, size_t len)
{
    return len >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}

clg_status clg__jpeg_size(const unsigned char *data, size_t len, int *w, int *h, char *msg,
                          size_t msg_cap)
{
    tjhandle tj = tjInitDecompress();
    int sub, space;
    if (!tj) {
        snprintf(msg, msg_cap, "out of host memory starting the JPEG decoder");
        return CLG_ERR_OUT_OF_HOST_MEMORY;
    }
    clg_status st = CLG_OK;
    *w = *h = 0; /* a tables-only stream "succeeds" without a size (found by fuzzing) */
    if (tjDecompressHeader3(tj, data, (unsigned long)len, w, h, &sub, &space) != 0) {
        snprintf(msg, msg_cap, "corrupt JPEG: %s", tjGetErrorStr2(tj));
        st = CLG_ERR_CORRUPT;
    } else if (*w < 1 || *h < 1) {
        snprintf(msg, msg_cap, "a JPEG without an image (tables only)");
        st = CLG_ERR_CORRUPT;
    }
    tjDestroy(tj);
    return st;
}

/* The smallest scale of libjpeg-turbo's (at most 1) that still gives at least min_w x min_h
 * pixels; 1/1 when none smaller does. */
static tjscalingfactor pick_scale(int w, int h, size_t min_w, size_t min_h)
{
    int n = 0;
    tjscalingfactor *f = tjGetScalingFactors(&n), best = {1, 1};
    for (int i = 0; f && i < n; i++) {
        if (f[i].num > f[i].denom || (size_t)TJSCALED(w, f[i]) < min_w ||
            (size_t)TJSCALED(h, f[i]) < min_h)
            continue;
        if ((long)f[i].num * best.denom < (long)best.num * f[i].denom)
            best = f[i];
    }
    return best;
}

clg_status clg__jpeg_decode(const unsigned char *data, size_t len, int channels, size_t min_w,
                            size_t min_h, unsigned char **pix, int *w, int *h, char *msg,
                            size_t msg_cap)
{
    *pix = NULL;
    tjhandle tj = tjInitDecompress();
    if (!tj) {
        snprintf(msg, msg_cap, "out of host memory starting the JPEG decoder");
        return CLG_ERR_OUT_OF_HOST_MEMORY;
    }
    int iw = 0, ih = 0, sub, space;
    clg_status st = CLG_OK;
    if (tjDecompressHeader3(tj, data, (unsigned long)len, &iw, &ih, &sub, &space) != 0) {
        snprintf(msg, msg_cap, "corrupt JPEG: %s", tjGetErrorStr2(tj));
        st = CLG_ERR_CORRUPT;
    } else if (iw < 1 || ih < 1 || iw > CLG_IMAGE_MAX_SIDE || ih > CLG_IMAGE_MAX_SIDE) {
        snprintf(msg, msg_cap, "a JPEG of %dx%d pixels", iw, ih); /* the probe refused these */
        st = CLG_ERR_CORRUPT;
    }
    tjscalingfactor f = {1, 1};
    int sw = 0, sh = 0;
    if (st == CLG_OK) { /* the header's size (the caller checked it against the limits) */
        f = pick_scale(iw, ih, min_w, min_h);
        sw = TJSCALED(iw, f), sh = TJSCALED(ih, f);
    }
    unsigned char *out = st == CLG_OK ? clg__malloc((size_t)sw * (size_t)sh * (size_t)channels)
                                      : NULL;
    if (st == CLG_OK && !out) {
        snprintf(msg, msg_cap, "out of host memory decoding a %dx%d JPEG", iw, ih);
        st = CLG_ERR_OUT_OF_HOST_MEMORY;
    }
    if (st == CLG_OK &&
        tjDecompress2(tj, data, (unsigned long)len, out, sw, 0, sh,
                      channels == 1 ? TJPF_GRAY : TJPF_RGB,
                      TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
        snprintf(msg, msg_cap, "corrupt JPEG: %s", tjGetErrorStr2(tj));
        st = CLG_ERR_CORRUPT;
    }
    tjDestroy(tj);
    if (st != CLG_OK) {
        free(out);
        return st;
    }
    *pix = out;
    *w = sw;
    *h = sh;
    return CLG_OK;
}
