/* The datastore struct and the interface each kind of store implements. */
#ifndef CLGRAD_DATA_INTERNAL_H
#define CLGRAD_DATA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "clgrad/data.h"
#include "runtime/runtime_internal.h"

/* Where an image's output pixels come from: the part [left, left + width) x [top, top + height)
 * of the image (in its own pixels) is resized to resized_w x resized_h, and the output is the
 * part of that at (crop_top, crop_left). */
typedef struct clg__image_geometry {
    size_t top, left, height, width;
    size_t resized_h, resized_w;
    size_t crop_top, crop_left;
} clg__image_geometry;

/* Chooses the geometry for an ih x iw image and an output of h x w; CLG_ERR_CORRUPT with the
 * reason in msg when the image cannot give it (e.g. too small for the crop). */
typedef clg_status (*clg__geometry_fn)(void *user, size_t ih, size_t iw, size_t h, size_t w,
                                       clg__image_geometry *g, char *msg, size_t msg_cap);

typedef struct clg__datastore_ops {
    /* Reads sample `index` (already checked < size) into image (C*H*W floats; NULL: only the
     * target) and target (the store's target: one int32 label for a classification store). */
    clg_status (*read)(clg_datastore *ds, size_t index, float *image, void *target);
    void (*destroy)(void *impl);
    /* Optional: files skipped as undecodable so far (reset 1 clears the count). */
    size_t (*skipped)(void *impl, int reset);
    /* Views with a store of their own: the store they read from (borrowed), or NULL. */
    clg_datastore *(*inner)(void *impl);
    /* Optional, with skipped: the i-th file found undecodable, in sample order, or NULL. */
    const char *(*bad_file)(void *impl, size_t i);
    /* Optional, stores of image files: read, decoding with pick's geometry into h x w. */
    clg_status (*read_with)(clg_datastore *ds, size_t index, clg__geometry_fn pick, void *user,
                            size_t h, size_t w, float *image, void *target);
    /* Optional: the epoch that the store's randomness depends on (clg_datastore_set_epoch). */
    void (*set_epoch)(void *impl, uint64_t epoch);
} clg__datastore_ops;

struct clg_datastore {
    const clg__datastore_ops *ops;
    void *impl;
    clg_datastore *parent;  /* subsets: samples come from parent at offset `first` */
    size_t first;
    size_t *map;            /* selections: sample i is the parent's map[i] (owned), or NULL */
    size_t size;
    clg_shape sample;       /* n = 1 */
    size_t classes;
    clg_target_kind target; /* what samples are paired with (new stores: a class label) */
    clg_shape target_shape; /* per sample, n = 1 */
    char **class_names;     /* classes entries, owned */
    char last_error[CLG__ERR_TEXT];
    atomic_int error_lock;  /* reads may fail on several threads at once (batch reader) */
    atomic_uint_fast64_t decoded; /* samples read from this store's own data (roots only) */
};

/* Makes a datastore around impl (owned from here on, destroyed with it even on failure), with
 * class names "0", "1", ... */
clg_status clg__datastore_new(const clg__datastore_ops *ops, void *impl, size_t size,
                              clg_shape sample, size_t classes, clg_datastore **out);

/* Buffers of `floats` floats kept between reads by views that transform samples (buffers.c):
 * take one (malloc'd when none is kept), give it back (kept, up to 16, else freed). */
typedef struct clg__buffer_pool {
    pthread_mutex_t lock;
    float *spare[16];
    size_t n, floats;
} clg__buffer_pool;
int clg__pool_init(clg__buffer_pool *p, size_t floats); /* 0: no mutex */
float *clg__pool_take(clg__buffer_pool *p);
void clg__pool_give(clg__buffer_pool *p, float *b);     /* NULL is a no-op */
void clg__pool_free(clg__buffer_pool *p);

/* SplitMix64's finaliser: the hash views draw their randomness from (seed, epoch, sample). */
uint64_t clg__mix64(uint64_t z);

/* Sets a new store's target kind and shape (after clg__datastore_new). */
void clg__datastore_set_target(clg_datastore *ds, clg_target_kind kind, clg_shape shape);
/* Bytes of one sample's target (4 per value). */
size_t clg__target_bytes(const clg_datastore *ds);

/* The store ds reads its samples through: a subset's parent, or a view's inner store; NULL
 * for a store with data of its own. */
clg_datastore *clg__datastore_below(const clg_datastore *ds);

/* Whether ds's classes are names[0..count) in that order, or cannot be told apart by name
 * (either side numbered "0", "1", ...), so that its labels need no clg_datastore_match_classes
 * view. */
int clg__datastore_classes_in_order(const clg_datastore *ds, const char *const *names,
                                    size_t count);

/* to's class names become from's (same count). */
clg_status clg__datastore_copy_names(clg_datastore *to, const clg_datastore *from);

/* Records a failure in ds (may be NULL) and the thread-local last error. */
clg_status clg__datastore_fail(clg_datastore *ds, clg_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* IDX parsing on memory, for the store and the fuzzer. An image file is magic 0x0803 with 3
 * dimensions (N, H, W) or 4 (N, C, H, W); a label file is 0x0801 with 1. Fills the sizes and
 * a pointer to the first data byte inside buf; CLG_ERR_CORRUPT with the reason in msg. */
typedef struct clg__idx_info {
    size_t count, c, h, w;      /* labels: c = h = w = 1 */
    const unsigned char *data;  /* count * c * h * w bytes, inside buf */
} clg__idx_info;
clg_status clg__idx_parse(const unsigned char *buf, size_t len, int want_images,
                          clg__idx_info *info, char *msg, size_t msg_cap);

/* Image limits: per side (as stb's STBI_MAX_DIMENSIONS), in total pixels, and file bytes. */
#define CLG_IMAGE_MAX_SIDE 16384
#ifndef CLG_IMAGE_MAX_PIXELS /* fuzzing builds lower it, so that each input decodes quickly */
#define CLG_IMAGE_MAX_PIXELS ((size_t)1 << 26)
#endif
#define CLG_IMAGE_MAX_FILE (256 << 20)

/* Decodes a PNG/JPEG/BMP/PNM in memory into c x h x w floats in [0, 1] (gray or RGB) with the
 * geometry pick chooses (a JPEG decodes at the smallest scale that still covers it);
 * CLG_ERR_CORRUPT with the reason in msg. */
clg_status clg__image_decode_with(const unsigned char *data, size_t len, size_t c,
                                  clg__geometry_fn pick, void *user, size_t h, size_t w,
                                  float *out, char *msg, size_t msg_cap);

/* torchvision's Resize (+ CenterCrop): the whole image resized to h x w, or (*(size_t *)user
 * > 0) its shorter side resized to that (the longer truncated as torchvision does) and the
 * centre h x w taken. */
clg_status clg__image_fit(void *user, size_t ih, size_t iw, size_t h, size_t w,
                          clg__image_geometry *g, char *msg, size_t msg_cap);

/* clg__image_decode_with the whole image resized to h x w, or (shorter > 0) its shorter side
 * resized to that and the centre h x w taken. */
clg_status clg__image_decode(const unsigned char *data, size_t len, size_t c, size_t shorter,
                             size_t h, size_t w, float *out, char *msg, size_t msg_cap);

/* A file's bytes (at most CLG_IMAGE_MAX_FILE), malloc'd (thread-local error). */
clg_status clg__image_file(const char *path, unsigned char **out, size_t *out_len);

/* An image file decoded with clg__image_decode_with (thread-local error naming the file). */
clg_status clg__image_read_with(const char *path, size_t c, clg__geometry_fn pick, void *user,
                                size_t h, size_t w, float *out);

/* Reads sample index of ds decoded from its file with pick's geometry into h x w (the file's
 * channels) when the store at the root of ds is a file store; CLG_ERR_UNSUPPORTED (no error
 * recorded) when it is not. */
clg_status clg__datastore_read_with(clg_datastore *ds, size_t index, clg__geometry_fn pick,
                                    void *user, size_t h, size_t w, float *image, void *target);

/* Every image file (PNG, JPEG, BMP, PNM) under dir at any depth, as paths that start with dir,
 * sorted as the image-folder store sorts them (thread-local error). */
clg_status clg__image_files(const char *dir, char ***paths, size_t *n);
void clg__image_files_free(char **paths, size_t n);

/* Height and width of an image file, with the same checks as decoding (thread-local error). */
clg_status clg__image_size(const char *path, size_t *h, size_t *w);

#endif
