/* clgrad-predict for image-to-image models: each image at its own size through the fully
 * convolutional net, the result written as a PNG (a label map, with a coloured overlay on
 * request, or the restored image). */
#ifndef CLGRAD_PREDICT_DENSE_H
#define CLGRAD_PREDICT_DENSE_H

#include <stddef.h>
#include "clgrad/clgrad.h"

typedef struct dense_settings {
    const char *out_dir; /* where the PNGs go (made as needed) */
    int residual;        /* the net predicts the degradation: the result is input - output */
    int overlay;         /* segmentation: also NAME-overlay.png, the image tinted by class */
    int json;
} dense_settings;

/* Runs net on the n images (paths), writing OUT_DIR/<file name>.png for each; an unreadable
 * image is reported and the rest go on. Returns the exit status. */
int predict_dense(clg_net *net, char *const *paths, size_t n, const dense_settings *s);

#endif
