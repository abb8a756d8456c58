/* Measures of image-to-image networks: segmentation (MATLAB's evaluateSemanticSegmentation)
 * and image restoration (PSNR, SSIM). */
#ifndef CLGRAD_METRICS_H
#define CLGRAD_METRICS_H

#include <stddef.h>
#include "clgrad/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MATLAB's semanticSegmentationMetrics from a confusion matrix of pixels. */
typedef struct clg_segmentation_metrics {
    double global_accuracy;  /* correct pixels / pixels */
    double mean_accuracy;    /* the mean over classes of correct / pixels of the class */
    double mean_iou;         /* the mean over classes of TP / (TP + FP + FN) */
    double weighted_iou;     /* the classes' IoU weighted by their pixels */
    size_t classes_present;  /* classes with pixels (the means are over these) */
} clg_segmentation_metrics;

/** From counts[t * K + p] (pixels of true class t predicted as p; clg_net_evaluate_confusion
 *  of a segmentation net): the metrics and, where not NULL, each class's accuracy and IoU (K
 *  values; NaN for a class with no pixels, which the means leave out, as MATLAB does). */
CLG_API clg_status clg_segmentation_metrics_from(const size_t *counts, size_t K,
                                                 clg_segmentation_metrics *m, double *class_acc,
                                                 double *class_iou);

/** Peak signal-to-noise ratio of a against the reference b (n values): 10 log10(peak^2 / MSE),
 *  in dB; infinity for identical images. */
CLG_API double clg_psnr(const float *a, const float *b, size_t n, double peak);

/** Structural similarity of a against b (C x H x W), as Wang et al. 2004 and MATLAB's ssim: an
 *  11 x 11 Gaussian window of sigma 1.5, K1 0.01, K2 0.03, the map averaged over the pixels
 *  whose window fits (and over the channels). Images under 11 pixels a side use the window
 *  cut to their size. */
CLG_API double clg_ssim(const float *a, const float *b, size_t c, size_t h, size_t w,
                        double peak);

typedef struct clg_restoration_quality {
    double psnr, ssim;             /* the network's output against the clean images, means */
    double input_psnr, input_ssim; /* the degraded inputs against them */
    size_t images;
} clg_restoration_quality;

/** An image-to-image regression net (clg_net_task CLG_TASK_REGRESSION, output the input's
 *  shape) on every sample of ds (inputs: degraded images; targets: the clean images, or with
 *  residual 1 the degradation, as clg_datastore_denoising's CLG_DENOISE_NOISE, so that clean
 *  = input - target and the restored image = input - output): PSNR and SSIM (peak 1), each
 *  image's averaged. */
CLG_API clg_status clg_net_evaluate_restoration(clg_net *net, clg_datastore *ds, size_t batch,
                                                int residual, clg_restoration_quality *q);

#ifdef __cplusplus
}
#endif
#endif
