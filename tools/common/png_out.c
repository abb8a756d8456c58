/* Images the tools write (png_out.h): stb_image_write for the PNG encoding. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "png_out.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

int make_dir(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return 0;
            *p = '/';
        }
    struct stat sb;
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return 0;
    if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return 0;
    }
    return 1;
}

int write_png_bytes(const char *path, const unsigned char *pix, size_t c, size_t h, size_t w)
{
    return stbi_write_png(path, (int)w, (int)h, (int)c, pix, (int)(w * c)) != 0;
}

int write_png_planar(const char *path, const float *x, size_t c, size_t h, size_t w)
{
    unsigned char *pix = malloc(c * h * w);
    if (!pix)
        return 0;
    for (size_t p = 0; p < h * w; p++) /* planar floats to interleaved bytes */
        for (size_t k = 0; k < c; k++) {
            float v = x[k * h * w + p];
            v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
            pix[p * c + k] = (unsigned char)(v * 255.0f + 0.5f);
        }
    int ok = write_png_bytes(path, pix, c, h, w);
    free(pix);
    return ok;
}
