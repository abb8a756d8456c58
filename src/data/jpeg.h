/* JPEG decoding through libjpeg-turbo (jpeg.c). */
#ifndef CLGRAD_DATA_JPEG_H
#define CLGRAD_DATA_JPEG_H

#include "data/data_internal.h"

/* Whether data starts as a JPEG does (SOI and a marker). */
int clg__is_jpeg(const unsigned char *data, size_t len);

/* The size a JPEG's header declares; CLG_ERR_CORRUPT with the reason in msg. */
clg_status clg__jpeg_size(const unsigned char *data, size_t len, int *w, int *h, char *msg,
                          size_t msg_cap);

/* Decodes into interleaved bytes (channels 1: gray, 3: RGB), malloc'd into *pix, at the
 * smallest scale that still gives at least min_w x min_h pixels (0 0: full size); *w, *h
 * receive the size decoded. CLG_ERR_CORRUPT (also for a warning: truncated or damaged data)
 * or CLG_ERR_OUT_OF_HOST_MEMORY with the reason in msg. */
clg_status clg__jpeg_decode(const unsigned char *data, size_t len, int channels, size_t min_w,
                            size_t min_h, unsigned char **pix, int *w, int *h, char *msg,
                            size_t msg_cap);

#endif
