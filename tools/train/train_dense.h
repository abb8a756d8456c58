/* clgrad-train for image-to-image networks: the data layouts of segmentation, paired images,
 * regression values and denoising; class weights; and the test report (segmentation metrics,
 * RMSE, PSNR and SSIM). */
#ifndef CLGRAD_TRAIN_DENSE_H
#define CLGRAD_TRAIN_DENSE_H

#include "train_args.h"
#include "train_display.h"

typedef enum data_layout {
    LAYOUT_CLASSES, /* IDX files or class folders */
    LAYOUT_PIXELS,  /* SUBSET/images + SUBSET/labels, DIR/classes.txt */
    LAYOUT_PAIRS,   /* SUBSET/inputs + SUBSET/targets */
    LAYOUT_VALUES   /* SUBSET/images + SUBSET/values.csv */
} data_layout;

/* The layout of --data, from what its train/ (or test/) folder holds. */
data_layout data_layout_of(const cli *c);

/* The subset ("train", "test") of an image-to-image layout. */
clg_status open_dense_data(const cli *c, data_layout layout, const char *subset,
                           clg_datastore **out);

/* --denoise: *ds becomes a denoising view of itself, which moves to *base (the caller frees
 * both). The test set (test 1): whole images, one each, its noise fixed by the seed. */
clg_status denoise_view(const cli *c, int test, clg_datastore **ds, clg_datastore **base);

/* Whether the net's output layer trains on the data's kind of targets; says what to do when
 * not. */
int net_fits_task(const cli *c, clg_net *net, clg_datastore *train);

/* --class-weights on the net's pixelsoftmax from the training labels (fit) or the list. */
int apply_class_weights(const cli *c, clg_net *net, clg_datastore *fit);

/* The test report of a segmentation or regression net (json: one JSON object); a net trained
 * on patches runs on the test set's whole images. Returns the exit status. */
int report_dense(clg_net *net, clg_datastore *test, const cli *c, display *d);

#endif
