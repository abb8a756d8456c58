/* Images the tools write: folders made as needed, and PNGs from planar floats or labels. */
#ifndef CLGRAD_TOOLS_PNG_OUT_H
#define CLGRAD_TOOLS_PNG_OUT_H

#include <stddef.h>
#include <stdint.h>

/* mkdir -p; 0 (errno set) unless path is a folder at the end. */
int make_dir(const char *path);

/* c x h x w floats (planar, 1 or 3 channels), clamped to [0, 1], as an 8-bit PNG; 0 when it
 * cannot be written. */
int write_png_planar(const char *path, const float *x, size_t c, size_t h, size_t w);

/* h x w interleaved bytes of c channels as a PNG; 0 when it cannot be written. */
int write_png_bytes(const char *path, const unsigned char *pix, size_t c, size_t h, size_t w);

#endif
