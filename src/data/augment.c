/* Augmentation (like augmentedImageDatastore): random reflection, rotation, scale and
 * translation by one inverse-mapped bilinear resampling, crops to an output size (a random
 * resized crop from the decoded file where there is one), and normalisation. Each sample's
 * randomness comes from (seed, epoch, sample index) only. A label map or target image moves
 * with its image: the same geometry, labels by their nearest pixel (CLG_LABEL_IGNORE where
 * the geometry reaches outside), target images bilinearly, neither normalised. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "data/data_internal.h"

enum { MOVE_LABELS = 1, MOVE_VALUES = 2 };

typedef struct augment_store {
    clg_datastore *parent;     /* borrowed */
    clg_augment_options o;
    clg_shape in;              /* the parent's sample */
    clg_shape tin;             /* the parent's target */
    int tmode;                 /* 0: the target as it is; MOVE_LABELS, MOVE_VALUES */
    clg__buffer_pool pool;     /* buffers of the largest of the samples and targets in and out */
    /* sample buffers, one or two per thread reading at once (batch reader workers), kept */
    float mean[4], scale[4];   /* normalisation per channel: (x - mean) * scale */
    uint64_t epoch;
} augment_store;

#define mix clg__mix64

/* The k-th uniform in [0, 1) of a sample: a hash of (seed, epoch, index, k). */
static double draw(const augment_store *s, size_t index, unsigned k)
{
    uint64_t h = mix(mix(mix(s->o.seed) ^ s->epoch) ^ (uint64_t)index) ^ k;
    return (double)(mix(h) >> 11) * (1.0 / 9007199254740992.0);
}

static double between(const augment_store *s, size_t index, unsigned k, const float r[2])
{
    return r[0] + (r[1] - r[0]) * draw(s, index, k);
}

static float bilinear(const float *plane, size_t h, size_t w, double y, double x, float fill)
{
    double fy = floor(y), fx = floor(x);
    long y0 = (long)fy, x0 = (long)fx;
    double dy = y - fy, dx = x - fx, acc = 0.0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            long yy = y0 + a, xx = x0 + b;
            double wgt = (a ? dy : 1 - dy) * (b ? dx : 1 - dx);
            float v = yy < 0 || xx < 0 || yy >= (long)h || xx >= (long)w ? fill : plane[yy * (long)w + xx];
            acc += wgt * v;
        }
    return (float)acc;
}

/* torchvision's RandomResizedCrop.get_params: up to 10 draws of an area and an aspect ratio
 * whose window fits, at a random place; else the whole image clamped to the aspect range, at
 * the centre. Draws 8.. of the sample. */
static void random_window(const augment_store *s, size_t index, size_t ih, size_t iw,
                          size_t win[4])
{
    const float *ar = s->o.crop_area, *as = s->o.crop_aspect;
    double area = (double)ih * (double)iw;
    double log_lo = log(as[0]), log_hi = log(as[1]);
    for (unsigned t = 0; t < 10; t++) {
        double target = area * (ar[0] + (ar[1] - ar[0]) * draw(s, index, 8 + 4 * t));
        double aspect = exp(log_lo + (log_hi - log_lo) * draw(s, index, 9 + 4 * t));
        double w = round(sqrt(target * aspect)), h = round(sqrt(target / aspect));
        if (w >= 1 && h >= 1 && w <= (double)iw && h <= (double)ih) {
            win[2] = (size_t)h, win[3] = (size_t)w;
            win[0] = (size_t)(draw(s, index, 10 + 4 * t) * (double)(ih - win[2] + 1));
            win[1] = (size_t)(draw(s, index, 11 + 4 * t) * (double)(iw - win[3] + 1));
            return;
        }
    }
    double ratio = (double)iw / (double)ih;
    win[2] = ih, win[3] = iw;
    if (ratio < as[0])
        win[2] = (size_t)fmax(1.0, round((double)iw / as[0]));
    else if (ratio > as[1])
        win[3] = (size_t)fmax(1.0, round((double)ih * as[1]));
    win[0] = (ih - win[2]) / 2, win[1] = (iw - win[3]) / 2;
}

typedef struct window_pick {
    const augment_store *s;
    size_t index;
} window_pick;

/* The geometry of a random resized crop of an image file: the window, resized to the output. */
static clg_status pick_window(void *user, size_t ih, size_t iw, size_t h, size_t w,
                              clg__image_geometry *g, char *msg, size_t msg_cap)
{
    (void)msg, (void)msg_cap;
    const window_pick *p = user;
    size_t win[4];
    random_window(p->s, p->index, ih, iw, win);
    *g = (clg__image_geometry){win[0], win[1], win[2], win[3], h, w, 0, 0};
    return CLG_OK;
}

/* Where output pixel (i, j) of a sample comes from in its input, for every plane of it. */
typedef struct warp {
    int window;                /* a random resized crop's window, else the general form */
    double wy, wx, sy, sx;     /* window: top, left, and input pixels per output pixel */
    double H1, W1;             /* window: the last row and column, for clamping */
    double ca, sa, cy, cx, ty, tx, fy, fx, oh, ow; /* rotation, scale, reflections, shift */
    int whole;                 /* only whole-pixel moves: (y0 + fy i, x0 + fx j) */
    double y0, x0;
} warp;

/* The window of a random resized crop of an H x W sample (no file below), resampled at the
 * output's pixel centres. */
static void window_warp(const augment_store *s, size_t index, clg_shape out, warp *w)
{
    size_t win[4];
    random_window(s, index, s->in.h, s->in.w, win);
    memset(w, 0, sizeof *w);
    w->window = 1;
    w->wy = (double)win[0], w->wx = (double)win[1];
    w->sy = (double)win[2] / (double)out.h, w->sx = (double)win[3] / (double)out.w;
    w->H1 = (double)(s->in.h - 1), w->W1 = (double)(s->in.w - 1);
}

/* The inverse of a rotation by angle, scaling, reflections and a translation, around the
 * centres, within the crop window (centred, or random per sample). */
static void general_warp(const augment_store *s, size_t index, clg_shape in, clg_shape out,
                         clg_crop crop, warp *w)
{
    const clg_augment_options *o = &s->o;
    size_t H = in.h, W = in.w, OH = out.h, OW = out.w;
    memset(w, 0, sizeof *w);
    double angle = between(s, index, 0, o->rotation) * 3.14159265358979323846 / 180.0;
    double sc = between(s, index, 1, o->scale);
    w->ty = between(s, index, 2, o->translation_y), w->tx = between(s, index, 3, o->translation_x);
    w->fy = o->reflection_y && draw(s, index, 4) < 0.5 ? -1.0 : 1.0;
    w->fx = o->reflection_x && draw(s, index, 5) < 0.5 ? -1.0 : 1.0;
    w->cy = (H - 1) / 2.0, w->cx = (W - 1) / 2.0;
    if (crop == CLG_CROP_RANDOM) {
        w->cy = (OH - 1) / 2.0 + floor(draw(s, index, 6) * (double)(H - OH + 1));
        w->cx = (OW - 1) / 2.0 + floor(draw(s, index, 7) * (double)(W - OW + 1));
    }
    w->ca = cos(angle) / sc, w->sa = sin(angle) / sc;
    w->oh = (OH - 1) / 2.0, w->ow = (OW - 1) / 2.0;
    w->y0 = w->cy - w->fy * w->oh - w->ty, w->x0 = w->cx - w->fx * w->ow - w->tx;
    double y1 = w->y0 + w->fy * (double)(OH - 1), x1 = w->x0 + w->fx * (double)(OW - 1);
    w->whole = angle == 0.0 && sc == 1.0 && w->y0 == floor(w->y0) && w->x0 == floor(w->x0) &&
               w->y0 >= 0 && w->x0 >= 0 && y1 >= 0 && x1 >= 0 && y1 < (double)H &&
               x1 < (double)W;
}

static void warp_point(const warp *w, size_t i, size_t j, double *y, double *x)
{
    if (w->window) {
        *y = fmin(fmax(w->wy + ((double)i + 0.5) * w->sy - 0.5, 0.0), w->H1);
        *x = fmin(fmax(w->wx + ((double)j + 0.5) * w->sx - 0.5, 0.0), w->W1);
        return;
    }
    double v = ((double)i - w->oh) * w->fy, u = ((double)j - w->ow) * w->fx;
    *y = w->ca * v - w->sa * u + w->cy - w->ty;
    *x = w->sa * v + w->ca * u + w->cx - w->tx;
}

/* The C planes of src (in's H x W) resampled into image (out's), each value then (v - mean[c])
 * * scale[c] (NULL: as they are). */
static void warp_planes(const warp *w, const float *src, clg_shape in, clg_shape out, size_t C,
                        float fill, const float *mean, const float *scale, float *image)
{
    size_t H = in.h, W = in.w, OH = out.h, OW = out.w;
    for (size_t c = 0; c < C; c++) {
        const float *plane = src + c * H * W;
        float *o = image + c * OH * OW, m = mean ? mean[c] : 0.0f, k = scale ? scale[c] : 1.0f;
        for (size_t i = 0; i < OH; i++) {
            if (w->whole) { /* whole-pixel moves only (mirrors, crops): a copy, the same values
                               bilinear gives */
                const float *row = plane + (size_t)(w->y0 + w->fy * (double)i) * W;
                long sx = (long)w->x0, dx = (long)w->fx;
                for (size_t j = 0; j < OW; j++)
                    o[i * OW + j] = (row[sx + dx * (long)j] - m) * k;
                continue;
            }
            for (size_t j = 0; j < OW; j++) {
                double y, x;
                warp_point(w, i, j, &y, &x);
                o[i * OW + j] = (bilinear(plane, H, W, y, x, fill) - m) * k;
            }
        }
    }
}

/* A label map (in's H x W) resampled by nearest pixel into out's; outside: ignored. */
static void warp_labels(const warp *w, const int32_t *src, clg_shape in, clg_shape out,
                        int32_t *labels)
{
    for (size_t i = 0; i < out.h; i++)
        for (size_t j = 0; j < out.w; j++) {
            double y, x;
            warp_point(w, i, j, &y, &x);
            double ry = floor(y + 0.5), rx = floor(x + 0.5);
            labels[i * out.w + j] = ry < 0 || rx < 0 || ry >= (double)in.h || rx >= (double)in.w
                                        ? CLG_LABEL_IGNORE
                                        : src[(size_t)ry * in.w + (size_t)rx];
        }
}

/* The target (of shape tin) moved with the image by w into out's size (a label map or a
 * target image), or else copied. */
static void warp_target(const augment_store *s, const warp *w, const void *src, clg_shape tin,
                        clg_shape out, void *target, size_t target_bytes)
{
    clg_shape tout = {1, tin.c, out.h, out.w};
    if (s->tmode == MOVE_LABELS)
        warp_labels(w, src, tin, tout, target);
    else if (s->tmode == MOVE_VALUES)
        warp_planes(w, src, tin, tout, tin.c, s->o.fill, NULL, NULL, target);
    else
        memcpy(target, src, target_bytes);
}

static clg_status augment_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    augment_store *s = ds->impl;
    size_t tb = clg__target_bytes(ds), C = s->in.c;
    if (!image && !s->tmode) {
        clg_status st = clg_datastore_read(s->parent, &index, 1, NULL, target);
        return st == CLG_OK ? st : clg__datastore_fail(ds, st, "%s", clg_last_error());
    }
    int resized = s->o.crop == CLG_CROP_RANDOM_RESIZED;
    clg_shape out = ds->sample, tout = {1, s->tin.c, out.h, out.w};
    float *src = clg__pool_take(&s->pool), *tsrc = clg__pool_take(&s->pool);
    float *crop = resized ? clg__pool_take(&s->pool) : NULL, *tcrop = resized ? clg__pool_take(&s->pool) : NULL;
    clg_status st = src && tsrc && (!resized || (crop && tcrop)) ? CLG_OK
                                                                 : CLG_ERR_OUT_OF_HOST_MEMORY;
    warp w;
    if (st != CLG_OK) {
        clg__datastore_fail(ds, st, "augment: out of host memory");
    } else if (resized && image && !s->tmode) { /* from the file, decoded at a reduced scale */
        window_pick p = {s, index};
        st = clg__datastore_read_with(s->parent, index, pick_window, &p, out.h, out.w, crop,
                                      tcrop);
    } else {
        st = CLG_ERR_UNSUPPORTED;
    }
    if (st == CLG_ERR_UNSUPPORTED) { /* from the sample (and its target) */
        st = clg_datastore_read(s->parent, &index, 1, image ? src : NULL, tsrc);
        if (st == CLG_OK && resized) { /* the window, resampled to the output's size */
            window_warp(s, index, out, &w);
            if (image)
                warp_planes(&w, src, s->in, out, C, 0.0f, NULL, NULL, crop);
            warp_target(s, &w, tsrc, s->tin, out, tcrop, tb);
        }
    }
    if (st == CLG_OK) { /* the other transformations (of the crop), then normalisation */
        clg_shape from = resized ? out : s->in, tfrom = resized ? tout : s->tin;
        general_warp(s, index, from, out, resized ? CLG_CROP_NONE : s->o.crop, &w);
        warp_target(s, &w, resized ? tcrop : tsrc, tfrom, out, target, tb);
        if (image)
            warp_planes(&w, resized ? crop : src, from, out, C, s->o.fill, s->mean, s->scale,
                        image);
    } else if (st != CLG_ERR_OUT_OF_HOST_MEMORY) {
        clg__datastore_fail(ds, st, "%s", clg_last_error());
    }
    float *bufs[4] = {src, tsrc, crop, tcrop};
    for (int b = 0; b < 4; b++)
        if (bufs[b])
            clg__pool_give(&s->pool, bufs[b]);
    return st;
}

static void augment_destroy(void *impl)
{
    augment_store *s = impl;
    if (!s)
        return;
    clg__pool_free(&s->pool);
    free(s);
}

static clg_datastore *augment_inner(void *impl)
{
    return ((augment_store *)impl)->parent;
}

static const clg__datastore_ops augment_ops = {
    .read = augment_read, .destroy = augment_destroy, .inner = augment_inner};

clg_augment_options clg_augment_options_default(void)
{
    clg_augment_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.scale[0] = o.scale[1] = 1.0f;
    o.crop = CLG_CROP_NONE;
    o.normalization = CLG_NORM_NONE;
    o.crop_area[0] = 0.08f, o.crop_area[1] = 1.0f;
    o.crop_aspect[0] = 3.0f / 4.0f, o.crop_aspect[1] = 4.0f / 3.0f;
    return o;
}

/* Per-channel mean and standard deviation over every sample of the parent, in double. */
static clg_status statistics(augment_store *s, clg_datastore *parent)
{
    size_t n = clg_datastore_size(parent), C = s->in.c, HW = s->in.h * s->in.w;
    double sum[4] = {0}, sq[4] = {0};
    float *buf = clg__pool_take(&s->pool);
    if (!buf)
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "augment: out of host memory");
    for (size_t i = 0; i < n; i++) {
        clg_status st = clg_datastore_read(parent, &i, 1, buf, NULL);
        if (st != CLG_OK) {
            clg__pool_give(&s->pool, buf);
            return clg__datastore_fail(NULL, st, "augment statistics: %s", clg_datastore_last_error(parent));
        }
        for (size_t c = 0; c < C; c++)
            for (size_t k = 0; k < HW; k++) {
                double v = buf[c * HW + k];
                sum[c] += v;
                sq[c] += v * v;
            }
    }
    clg__pool_give(&s->pool, buf);
    for (size_t c = 0; c < C; c++) {
        double count = (double)n * (double)HW, mean = sum[c] / count;
        double var = sq[c] / count - mean * mean;
        s->mean[c] = (float)mean;
        s->scale[c] = s->o.normalization == CLG_NORM_ZSCORE && var > 0 ? (float)(1.0 / sqrt(var)) : 1.0f;
    }
    return CLG_OK;
}

clg_status clg_datastore_augment(clg_datastore *parent, const clg_augment_options *o,
                                 clg_datastore **out)
{
    if (out)
        *out = NULL;
    clg_augment_options given = clg_augment_options_default();
    if (o && clg__options_read(&given, o, sizeof given, "clg_datastore_augment") != CLG_OK)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "%s", clg_last_error());
    o = o ? &given : NULL;
    clg_shape in = clg_datastore_sample_shape(parent);
    if (!parent || !o || !out || in.c > 4 || !(o->scale[0] > 0 && o->scale[1] >= o->scale[0]) ||
        o->rotation[1] < o->rotation[0] || o->translation_x[1] < o->translation_x[0] ||
        o->translation_y[1] < o->translation_y[0] || o->crop < CLG_CROP_NONE ||
        o->crop > CLG_CROP_RANDOM_RESIZED || o->normalization < CLG_NORM_NONE ||
        o->normalization > CLG_NORM_ZSCORE ||
        (o->crop != CLG_CROP_NONE && (!o->height || !o->width)) ||
        ((o->crop == CLG_CROP_CENTER || o->crop == CLG_CROP_RANDOM) &&
         (o->height > in.h || o->width > in.w)) ||
        (o->crop == CLG_CROP_RANDOM_RESIZED &&
         (o->height > CLG_IMAGE_MAX_SIDE || o->width > CLG_IMAGE_MAX_SIDE ||
          !(o->crop_area[0] > 0 && o->crop_area[1] >= o->crop_area[0] && o->crop_area[1] <= 1) ||
          !(o->crop_aspect[0] > 0 && o->crop_aspect[1] >= o->crop_aspect[0] &&
            isfinite(o->crop_aspect[1])))))
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_augment: parent, "
                                   "options and out must not be NULL; ranges low <= high, scale > 0; "
                                   "a crop needs an output size (within the input for a centre or "
                                   "random crop); a random resized crop's area in (0, 1], its "
                                   "aspect > 0; at most 4 channels");
    augment_store *s = clg__calloc(1, sizeof *s);
    if (!s)
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_datastore_augment: out of host memory");
    s->parent = parent;
    s->o = *o;
    s->in = in;
    clg_shape sample = in;
    if (o->crop != CLG_CROP_NONE)
        sample.h = o->height, sample.w = o->width;
    /* the target moves with the image when it is a map or image of the sample's size */
    clg_target_kind kind = clg_datastore_target(parent, &s->tin);
    int spatial = s->tin.h == in.h && s->tin.w == in.w && s->tin.h * s->tin.w > 1;
    s->tmode = kind == CLG_TARGET_PIXELS ? MOVE_LABELS
               : kind == CLG_TARGET_VALUES && spatial ? MOVE_VALUES : 0;
    clg_shape tout = s->tin;
    if (s->tmode)
        tout.h = sample.h, tout.w = sample.w;
    size_t sizes[4] = {clg_shape_numel(in), clg_shape_numel(sample), clg_shape_numel(s->tin),
                       clg_shape_numel(tout)}, floats = 0;
    for (int k = 0; k < 4; k++)
        floats = sizes[k] > floats ? sizes[k] : floats;
    if (!clg__pool_init(&s->pool, floats)) {
        free(s);
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_datastore_augment: no mutex");
    }
    clg__pool_give(&s->pool, clg__pool_take(&s->pool)); /* one kept from the start */
    for (int c = 0; c < 4; c++)
        s->mean[c] = 0.0f, s->scale[c] = 1.0f;
    clg_status st = o->normalization != CLG_NORM_NONE ? statistics(s, parent) : CLG_OK;
    if (st != CLG_OK) {
        augment_destroy(s);
        return st;
    }
    st = clg__datastore_new(&augment_ops, s, clg_datastore_size(parent), sample,
                            clg_datastore_class_count(parent), out);
    if (st == CLG_OK) {
        clg__datastore_set_target(*out, kind, tout);
        st = clg__datastore_copy_names(*out, parent);
        if (st != CLG_OK) {
            clg_datastore_destroy(*out);
            *out = NULL;
        }
    }
    return st;
}

clg_status clg_datastore_set_epoch(clg_datastore *ds, uint64_t epoch)
{
    if (!ds)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_set_epoch: ds is NULL");
    for (clg_datastore *d = ds; d; d = clg__datastore_below(d))
        if (d->ops == &augment_ops)
            ((augment_store *)d->impl)->epoch = epoch;
        else if (d->ops && d->ops->set_epoch)
            d->ops->set_epoch(d->impl, epoch);
    return CLG_OK;
}
