/* Datastores: images read by index, as float32 NCHW, with their targets: a class label, a
 * label per pixel, or float values (an image or a vector). */
#ifndef CLGRAD_DATA_H
#define CLGRAD_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A source of labelled samples. Reads are by sample index, so that the order (shuffles,
 * shards for devices and ranks, resuming mid-epoch) belongs to the caller and is exactly
 * reproducible. A datastore is not thread-safe; use one per thread. */
typedef struct clg_datastore clg_datastore;

/** Opens an IDX pair (the MNIST / Fashion-MNIST format), plain or gzip-compressed: an
 *  unsigned-byte image file of N x H x W (or N x C x H x W) and a label file of N bytes.
 *  Pixels become floats in [0, 1]; the class count is the largest label + 1 (at least 2);
 *  class names are "0", "1", ... until clg_datastore_set_class_names.
 *  @return CLG_OK; CLG_ERR_IO (unreadable, naming the file); CLG_ERR_CORRUPT (bad magic,
 *          sizes that do not match the data, truncated data, counts that differ between the
 *          two files; the message says which); CLG_ERR_INVALID_ARG for NULL. */
CLG_API clg_status clg_datastore_open_idx(const char *images_path, const char *labels_path,
                                          clg_datastore **out);

/** Opens a folder holding the usual IDX file names: subset "train" opens
 *  train-images-idx3-ubyte[.gz] with train-labels-idx1-ubyte[.gz], "test" the t10k files.
 *  A file classes.txt in the folder (one name per line) names the classes. */
CLG_API clg_status clg_datastore_open_idx_folder(const char *dir, const char *subset,
                                          clg_datastore **out);

/** A datastore over n samples held in memory (copied): images n x C x H x W floats in the
 *  shape `sample` (n ignored), labels in [0, classes). */
CLG_API clg_status clg_datastore_from_memory(const float *images, const int32_t *labels, size_t n,
                                             clg_shape sample, size_t classes,
                                             clg_datastore **out);

/** A view of samples [first, first + count) of parent (for a validation split or a shard).
 *  It borrows parent, which must outlive it. */
CLG_API clg_status clg_datastore_subset(clg_datastore *parent, size_t first, size_t count,
                                        clg_datastore **out);

/** A view of the parent's samples indices[0..count) in that order (copied). Borrows parent. */
CLG_API clg_status clg_datastore_select(clg_datastore *parent, const size_t *indices,
                                        size_t count, clg_datastore **out);

/** Splits the parent's samples at random by seed: *first gets round(fraction * size) of them,
 *  *second the rest (training and validation sets). Both borrow parent. */
CLG_API clg_status clg_datastore_split(clg_datastore *parent, double fraction, uint64_t seed,
                                       clg_datastore **first, clg_datastore **second);

/** A view of all the parent's samples in an order that depends on seed only (MATLAB's
 *  shuffle). Borrows parent. */
CLG_API clg_status clg_datastore_shuffle(clg_datastore *parent, uint64_t seed, clg_datastore **out);

/** Part `index` of `parts` contiguous parts of the parent whose sizes differ by at most one
 *  (MATLAB's partition; a shard for a device or an MPI rank). Borrows parent. */
CLG_API clg_status clg_datastore_partition(clg_datastore *parent, size_t parts, size_t index,
                                           clg_datastore **out);

/* A datastore over the caller's own source of samples. */
typedef struct clg_datastore_callbacks {
    size_t struct_size;   /* set by clg_datastore_callbacks_default() */
    size_t count;         /* samples */
    clg_shape sample;     /* C x H x W of each (n ignored) */
    size_t classes;       /* labels are in [0, classes) */
    /* Reads sample `index` (< count) into image (C*H*W floats; NULL when only the label is
     * wanted) and *label. Returns 0, or nonzero with the reason in why (cap bytes), which the
     * store's error then names with the sample. Called from several threads at once (reader
     * workers, device groups, experiments): it must be thread-safe. */
    int (*read)(void *user, size_t index, float *image, int32_t *label, char *why, size_t cap);
    void (*close)(void *user); /* optional: called once when the store is destroyed */
    void *user;
} clg_datastore_callbacks;

/** No callbacks yet; struct_size set. */
CLG_API clg_datastore_callbacks clg_datastore_callbacks_default(void);

/** A datastore reading each sample through cb->read (cb is copied). A failing read is
 *  CLG_ERR_IO naming the sample and the callback's reason; a label outside [0, classes)
 *  CLG_ERR_CORRUPT. @return CLG_OK; CLG_ERR_INVALID_ARG (no read, a zero count or size, fewer
 *  than 2 classes). */
CLG_API clg_status clg_datastore_from_callbacks(const clg_datastore_callbacks *cb,
                                                clg_datastore **out);

/* What an image-folder store does with a file it cannot decode. */
typedef enum clg_bad_files {
    CLG_BAD_FILES_FAIL = 0,  /* the read fails with CLG_ERR_CORRUPT naming the file */
    CLG_BAD_FILES_SKIP = 1   /* the next decodable sample (in index order) stands in; counted */
} clg_bad_files;

typedef struct clg_image_folder_options {
    size_t struct_size;       /* set by the _default() (README "Compatibility") */
    size_t channels;          /* 1 (gray) or 3 (RGB) */
    size_t height, width;     /* every image is resized to this; 0 0: the first image's size */
    clg_bad_files bad_files;
    size_t resize_shorter;    /* > 0: the shorter side resized to this, then the centre
                                 height x width (clg_image_read_cropped); 0: resized whole */
} clg_image_folder_options;

/** Gray, the first image's size, bad files fail. */
CLG_API clg_image_folder_options clg_image_folder_options_default(void);

/** A labelled image folder (like MATLAB's imageDatastore with labels from folder names): each
 *  sub-folder of dir is a class (names sorted; the class index is the position), holding PNG,
 *  JPEG, BMP and PNM files at any depth (other files are ignored). Only the file names are
 *  kept; each read decodes its files (clg_image_read's checks and limits apply).
 *  @return CLG_OK; CLG_ERR_IO (unreadable folder); CLG_ERR_INVALID_ARG (bad options, fewer
 *          than 2 classes, no images, or the first image unreadable when the size is 0). */
CLG_API clg_status clg_datastore_open_image_folder(const char *dir, const clg_image_folder_options *o,
                                             clg_datastore **out);

/* Images paired with targets by file name (image-to-image tasks). Every image file under the
 * input folder (at any depth, sorted as an image folder's) has its partner in the target
 * folder at the same relative path, or the same name with another image extension (x.jpg's
 * label x.png); a missing partner fails the open, naming it. Images are decoded and resized as
 * an image folder's (clg_image_folder_options: channels, height and width, 0 0 for the first
 * image's size). */

typedef struct clg_pixel_label_options {
    size_t struct_size;               /* set by the _default() (README "Compatibility") */
    clg_image_folder_options images;  /* the images' channels and size */
    int ignore_unlisted;              /* 1: label values the class list does not name are
                                         CLG_LABEL_IGNORE; 0: a read fails naming the pixel */
} clg_pixel_label_options;

/** Gray images at the first image's size; unlisted label values fail. */
CLG_API clg_pixel_label_options clg_pixel_label_options_default(void);

/** Semantic segmentation data (MATLAB's pixelLabelImageDatastore): each image with a label
 *  image of the same size holding a class per pixel, by gray value or by RGB colour (CamVid).
 *  classes_file names the classes, a line each: "name value" (0-255) or "name red green blue";
 *  '#' starts a comment. Targets: CLG_TARGET_PIXELS at the images' size (label maps resized by
 *  nearest pixel when the images are).
 *  @return CLG_OK; CLG_ERR_IO (unreadable folder or list); CLG_ERR_INVALID_ARG (a bad class
 *          list, no images, an image without a label file, bad options). A read fails with
 *          CLG_ERR_CORRUPT for a label image of another size than its image or, unless
 *          ignored, a value the list does not name. */
CLG_API clg_status clg_datastore_open_pixel_labels(const char *image_dir, const char *label_dir,
                                                   const char *classes_file,
                                                   const clg_pixel_label_options *o,
                                                   clg_datastore **out);

/** Image-to-image regression data: each input image with a target image (CLG_TARGET_VALUES,
 *  target_channels x H x W, 0: the inputs' channels), both resized to the samples' size. */
CLG_API clg_status clg_datastore_open_paired_images(const char *input_dir, const char *target_dir,
                                                    const clg_image_folder_options *o,
                                                    size_t target_channels,
                                                    clg_datastore **out);

/** Regression targets from a CSV file beside an image folder: each line "file,v1,...,vk"
 *  (file relative to dir; k the same on every line, at most 4096; a first line that is not
 *  of this form is a header). Targets: CLG_TARGET_VALUES, k x 1 x 1.
 *  @return CLG_OK; CLG_ERR_IO; CLG_ERR_CORRUPT (a bad line, naming it); CLG_ERR_INVALID_ARG (a
 *          file that does not exist, no rows). */
CLG_API clg_status clg_datastore_open_image_values(const char *dir, const char *csv_path,
                                                   const clg_image_folder_options *o,
                                                   clg_datastore **out);

/* Denoising data, like MATLAB's denoisingImageDatastore: patches of another store's images
 * with Gaussian noise added. */
typedef enum clg_denoise_target {
    CLG_DENOISE_NOISE = 0, /* the target is the noise added (residual learning, DnCNN) */
    CLG_DENOISE_CLEAN = 1  /* the target is the clean patch */
} clg_denoise_target;

typedef struct clg_denoise_options {
    size_t struct_size;         /* set by the _default() (README "Compatibility") */
    size_t patch_h, patch_w;    /* 0 0: whole images */
    size_t patches_per_image;   /* samples per image of the parent (at least 1) */
    float sigma[2];             /* noise standard deviation (pixels in [0, 1]), drawn
                                   uniformly in [lo, hi] per patch */
    clg_denoise_target target;
    uint64_t seed;              /* places, levels and noise = f(seed, epoch, sample) only */
} clg_denoise_options;

/** Whole images, one a image, sigma 0.1, the noise as target, seed 0. */
CLG_API clg_denoise_options clg_denoise_options_default(void);

/** A view of parent (any image store; its labels are not used) whose sample i is a patch of
 *  image i / patches_per_image at a random place, plus noise: the noisy patch, with the noise
 *  or the clean patch as its CLG_TARGET_VALUES target. New places and noise every epoch
 *  (clg_datastore_set_epoch). Borrows parent.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG (a patch larger than the images, naming both sizes;
 *          sigma outside [0, 10] or lo > hi; no patches). */
CLG_API clg_status clg_datastore_denoising(clg_datastore *parent, const clg_denoise_options *o,
                                           clg_datastore **out);

/** Class weights from the labels of a classification or segmentation store (read once), for
 *  clg_net_add_pixel_softmax / softmax's imbalance: mode 0 inverse frequency (w_k = total /
 *  (K x count_k)), 1 median frequency balancing (w_k = median(f) / f_k, f the frequencies of
 *  classes present). A class never seen gets 0. cap >= the class count. */
CLG_API clg_status clg_datastore_class_weights(clg_datastore *ds, int mode, float *weights,
                                               size_t cap);

/* Augmentation, like MATLAB's augmentedImageDatastore. */
typedef enum clg_crop {
    CLG_CROP_NONE = 0,    /* output size = input size */
    CLG_CROP_CENTER = 1,  /* a height x width window at the centre */
    CLG_CROP_RANDOM = 2,  /* a height x width window at a random place per sample */
    CLG_CROP_RANDOM_RESIZED = 3 /* torchvision's RandomResizedCrop: a window of a random area
                                   (crop_area of the image's) and aspect ratio (crop_aspect,
                                   width / height) at a random place, resized to height x width;
                                   from the decoded photo itself when the data is an image
                                   folder (a JPEG decodes at a reduced scale when the window is
                                   much larger than the output), else from the sample */
} clg_crop;

typedef enum clg_normalization {
    CLG_NORM_NONE = 0,
    CLG_NORM_ZERO_CENTER = 1, /* minus the per-channel mean of the whole data set */
    CLG_NORM_ZSCORE = 2       /* and divided by the per-channel standard deviation */
} clg_normalization;

typedef struct clg_augment_options {
    size_t struct_size;               /* set by the _default() (README "Compatibility") */
    int reflection_x, reflection_y;   /* 1: mirror left-right / top-bottom with probability 1/2 */
    float rotation[2];                /* degrees, uniform in [lo, hi] */
    float scale[2];                   /* uniform in [lo, hi]; 1 1: none */
    float translation_x[2], translation_y[2]; /* pixels, uniform in [lo, hi] */
    float fill;                       /* value of pixels from outside the image */
    clg_crop crop;
    size_t height, width;             /* output size of a crop */
    clg_normalization normalization;  /* statistics computed once, from every sample */
    uint64_t seed;                    /* randomness = f(seed, epoch, sample index) only */
    float crop_area[2];               /* CLG_CROP_RANDOM_RESIZED: area fraction in [lo, hi],
                                         0 < lo <= hi <= 1 (default 0.08 1) */
    float crop_aspect[2];             /* and aspect ratio in [lo, hi], drawn uniformly in its
                                         logarithm (default 3/4 4/3) */
} clg_augment_options;

/** No transformation, no crop, no normalisation, seed 0 (torchvision's area and aspect ranges
 *  for a random resized crop). */
CLG_API clg_augment_options clg_augment_options_default(void);

/** A view of parent whose samples are transformed on read: one bilinear resampling for the
 *  reflections, rotation, scale and translation about the centre, cropped (a random resized
 *  crop comes first, and the other transformations apply to its output), then normalised.
 *  Borrows parent. With normalisation, the per-channel statistics are computed now, reading
 *  every sample once. */
CLG_API clg_status clg_datastore_augment(clg_datastore *parent, const clg_augment_options *o,
                                         clg_datastore **out);

/** Sets the epoch that augmentation randomness depends on (clg_train calls it every epoch). */
CLG_API clg_status clg_datastore_set_epoch(clg_datastore *ds, uint64_t epoch);

/** Files found undecodable (CLG_BAD_FILES_SKIP) since the count was last reset, each counted
 *  once: a file found bad is not decoded again (the next good sample stands in for it). The
 *  count belongs to the store the files live in (a subset or a view reports its files').
 *  reset 1 clears it. */
CLG_API size_t clg_datastore_skipped(clg_datastore *ds, int reset);

/** The i-th file found undecodable so far (in sample order, all of them, whatever the resets
 *  of clg_datastore_skipped), or NULL past the last; borrowed from the store. */
CLG_API const char *clg_datastore_skipped_file(clg_datastore *ds, size_t i);

/** Samples the store that holds ds's samples has read from its own data so far (for an image
 *  folder: images decoded); views (subsets, selections) report their root's count. */
CLG_API uint64_t clg_datastore_decoded(const clg_datastore *ds);

/** A view of parent for several trainings that read the same samples at once (an experiment
 *  of several models): a sample read for one is kept until `consumers` reads of it have been
 *  served, so that K models decode each sample once; a reader that asks for a sample another
 *  is decoding waits for it. Kept samples take at most cap_bytes (0: 256 MiB); past that,
 *  samples are read again instead of kept. Borrows parent. */
CLG_API clg_status clg_datastore_shared(clg_datastore *parent, unsigned consumers,
                                        size_t cap_bytes, clg_datastore **out);

/** NULL is a no-op. */
CLG_API void clg_datastore_destroy(clg_datastore *ds);

/** Number of samples (0 for NULL). */
CLG_API size_t clg_datastore_size(const clg_datastore *ds);

/** Shape of one sample, with n = 1. */
CLG_API clg_shape clg_datastore_sample_shape(const clg_datastore *ds);

/** Number of classes (0 for NULL). */
CLG_API size_t clg_datastore_class_count(const clg_datastore *ds);

/** Name of class i (borrowed, valid until the names change); NULL when out of range. */
CLG_API const char *clg_datastore_class_name(const clg_datastore *ds, size_t i);

/** Replaces the class names (copied); count must equal the class count. */
CLG_API clg_status clg_datastore_set_class_names(clg_datastore *ds, const char *const *names,
                                                 size_t count);

/** Whether two class names are one class: their letters and digits equal, case aside ("Ankle
 *  boot" and "ankle_boot"; "T-shirt/top" and "T-shirt_top", as a folder cannot hold '/'). */
CLG_API int clg_class_names_equal(const char *a, const char *b);

/** A view of parent whose labels are positions in names[0..count) (a model's classes, in its
 *  order): each of parent's classes is found there by name, ignoring case and everything but
 *  letters and digits ("Ankle_boot" is "Ankle boot", "T-shirt_top" is "T-shirt/top"). Where
 *  either side only has the numbers "0", "1", ... (an IDX set, an unnamed model), labels stay
 *  as they are. clg_train and clg_net_evaluate match their data this way themselves. Borrows
 *  parent; the view's class names are names.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG naming the class without a match (or two classes that
 *          match one name) and listing both sides' names, or more numbered classes than count. */
CLG_API clg_status clg_datastore_match_classes(clg_datastore *parent, const char *const *names,
                                               size_t count, clg_datastore **out);

/* What a store's samples are paired with (clg_datastore_target). */
typedef enum clg_target_kind {
    CLG_TARGET_CLASS = 0,  /* an int32 class label per sample (shape 1 x 1 x 1) */
    CLG_TARGET_PIXELS = 1, /* an int32 class label per pixel (1 x H x W), CLG_LABEL_IGNORE
                              (-1) for pixels without one */
    CLG_TARGET_VALUES = 2  /* float values (C x H x W: an image, or C x 1 x 1: a vector) */
} clg_target_kind;

/** The kind of the store's targets, and their shape per sample into *shape (n = 1; may be
 *  NULL). Each target value takes 4 bytes (int32 or float). */
CLG_API clg_target_kind clg_datastore_target(const clg_datastore *ds, clg_shape *shape);

/** A datastore over n samples and their targets held in memory (copied): images n x sample,
 *  targets n x target_shape values of the kind (int32 for classes and pixels, floats for
 *  values). classes: for CLG_TARGET_CLASS and CLG_TARGET_PIXELS, labels are in [0, classes)
 *  (pixels may also be CLG_LABEL_IGNORE); 0 for values. */
CLG_API clg_status clg_datastore_from_memory_targets(const float *images, const void *targets,
                                                     size_t n, clg_shape sample,
                                                     clg_target_kind kind,
                                                     clg_shape target_shape, size_t classes,
                                                     clg_datastore **out);

/** Reads samples indices[0..n) into images (n x C x H x W floats, sample after sample) and
 *  targets (n x the store's target shape, clg_datastore_target: n int32 labels for a
 *  classification store); either output may be NULL to skip it.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for an index >= size (naming it) or NULL arguments;
 *          CLG_ERR_IO / CLG_ERR_CORRUPT for a sample that cannot be read. */
CLG_API clg_status clg_datastore_read(clg_datastore *ds, const size_t *indices, size_t n,
                                      float *images, void *targets);

/** Per-channel mean and (population) standard deviation over every sample of ds, read once
 *  in chunks, summed in double and merged chunk by chunk (Chan et al.), for the network's
 *  input normalisation (clg_net_set_input_normalization; MATLAB computes its "zscore"
 *  statistics alike). cap: room in mean and std, at least the samples' channels. A channel of
 *  one value gets std 1 (nothing to scale). */
CLG_API clg_status clg_datastore_channel_stats(clg_datastore *ds, float *mean, float *std,
                                               size_t cap);

/** Reads one image file (PNG, JPEG, BMP or PNM; other formats are refused) as c x h x w floats
 *  in [0, 1]: c = 1 for gray, 3 for RGB, resized to h x w when its size differs. Sizes are
 *  checked before decoding: over 16384 pixels per side or 2^26 pixels in all is refused.
 *  @return CLG_OK; CLG_ERR_IO (unreadable); CLG_ERR_CORRUPT (empty, truncated, unsupported or
 *          oversized image, with the reason); CLG_ERR_INVALID_ARG. */
CLG_API clg_status clg_image_read(const char *path, size_t c, size_t h, size_t w, float *out);

/** The height and width of an image file, read from its header with the checks and limits
 *  of clg_image_read (nothing is decoded). */
CLG_API clg_status clg_image_size(const char *path, size_t *height, size_t *width);

/** The same, resized the way torchvision's ImageNet preprocessing does: the shorter side to
 *  `shorter` pixels (the longer in proportion, truncated), then the centre h x w (Resize(256)
 *  then CenterCrop(224)); shorter 0 is clg_image_read. shorter >= h and w. */
CLG_API clg_status clg_image_read_cropped(const char *path, size_t c, size_t shorter, size_t h,
                                          size_t w, float *out);

/** Mini-batches read ahead by worker threads (DispatchInBackground): the workers decode and
 *  augment into a bounded queue while the caller computes, and clg_batch_reader_next hands the
 *  batches out in order, so the sequence is the same for any worker count (0 reads on the
 *  caller's thread). Host memory is bounded by the queue: depth x batch samples. */
typedef struct clg_batch_reader clg_batch_reader;

/** A reader of `batch`-sample mini-batches from ds (borrowed; clg_datastore_read must allow
 *  concurrent calls, as every store of this library does). depth 0 means 2 x workers.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG (NULL, batch 0, over 64 workers or 1024 batches
 *          queued); CLG_ERR_OUT_OF_HOST_MEMORY (also when a thread cannot start). */
CLG_API clg_status clg_batch_reader_create(clg_datastore *ds, size_t batch, size_t workers,
                                           size_t depth, clg_batch_reader **out);

/** Starts a pass over `batches` mini-batches: batch b is samples order[b*batch ..
 *  (b+1)*batch) (copied). Batches of an earlier pass not yet taken are dropped (waiting for
 *  reads in progress to end). Call clg_datastore_set_epoch before, not during, a pass. */
CLG_API clg_status clg_batch_reader_start(clg_batch_reader *r, const size_t *order,
                                          size_t batches);

/** Copies the next batch of the pass into images (batch x C x H x W) and targets (batch x
 *  the store's target: batch labels for classification),
 *  waiting for it when a worker is still reading it. A failed read comes back at the batch it
 *  belongs to, whatever the worker count, with the store's message (naming the file): the
 *  status of clg_datastore_read. CLG_ERR_INVALID_ARG past the last batch of the pass. */
CLG_API clg_status clg_batch_reader_next(clg_batch_reader *r, float *images, void *targets);

/** Samples read by this reader so far (decoded, for image stores). */
CLG_API uint64_t clg_batch_reader_samples_read(const clg_batch_reader *r);

/** Text of the reader's last failure ("" when none). */
CLG_API const char *clg_batch_reader_last_error(const clg_batch_reader *r);

/** Stops the workers (a read in progress ends first) and frees the queue; NULL is a no-op. */
CLG_API void clg_batch_reader_destroy(clg_batch_reader *r);

/** Text of the datastore's last failure ("" when none). */
CLG_API const char *clg_datastore_last_error(const clg_datastore *ds);

#ifdef __cplusplus
}
#endif

#endif
