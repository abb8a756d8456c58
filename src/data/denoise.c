/* Denoising data (MATLAB's denoisingImageDatastore): sample i is a patch of the parent's image
 * i / K (K patches an image) at a random place, with Gaussian noise of a random level added;
 * its target the noise or the clean patch. Places, levels and every noise value are hashes of
 * (seed, epoch, sample, k) only, so any reader order gives the same samples. Also class weights
 * from a store's labels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "data/data_internal.h"

typedef struct denoise_store {
    clg_datastore *parent; /* borrowed */
    clg_denoise_options o;
    clg_shape in;          /* the parent's sample */
    uint64_t epoch;
    clg__buffer_pool pool; /* parent-sized buffers kept for the next read */
} denoise_store;

#define mix clg__mix64

/* The k-th uniform in (0, 1) of sample i. */
static double draw(uint64_t base, uint64_t k)
{
    return ((double)(mix(base ^ mix(k)) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static void denoise_destroy(void *impl)
{
    denoise_store *s = impl;
    if (!s)
        return;
    clg__pool_free(&s->pool);
    free(s);
}

static clg_status denoise_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    denoise_store *s = ds->impl;
    const clg_denoise_options *o = &s->o;
    size_t src = index / o->patches_per_image, H = s->in.h, W = s->in.w, C = s->in.c;
    size_t ph = ds->sample.h, pw = ds->sample.w;
    float *full = clg__pool_take(&s->pool), *t = target;
    if (!full)
        return clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY, "denoising: out of memory");
    clg_status st = clg_datastore_read(s->parent, &src, 1, full, NULL);
    if (st != CLG_OK) {
        clg__pool_give(&s->pool, full);
        return clg__datastore_fail(ds, st, "%s", clg_datastore_last_error(s->parent));
    }
    uint64_t base = mix(mix(mix(o->seed) ^ s->epoch) ^ (uint64_t)index);
    size_t top = (size_t)(draw(base, 0) * (double)(H - ph + 1));
    size_t left = (size_t)(draw(base, 1) * (double)(W - pw + 1));
    double sigma = o->sigma[0] + (o->sigma[1] - o->sigma[0]) * draw(base, 2);
    for (size_t c = 0; c < C; c++)
        for (size_t i = 0; i < ph; i++)
            for (size_t j = 0; j < pw; j++) {
                size_t p = (c * ph + i) * pw + j;
                float clean = full[(c * H + top + i) * W + left + j];
                /* Box-Muller from two of the pixel's uniforms */
                double u = draw(base, 16 + 2 * (uint64_t)p), v = draw(base, 17 + 2 * (uint64_t)p);
                float noise = (float)(sigma * sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
                if (image)
                    image[p] = clean + noise;
                t[p] = o->target == CLG_DENOISE_NOISE ? noise : clean;
            }
    clg__pool_give(&s->pool, full);
    return CLG_OK;
}

static clg_datastore *denoise_inner(void *impl)
{
    return ((denoise_store *)impl)->parent;
}

static void denoise_set_epoch(void *impl, uint64_t epoch)
{
    ((denoise_store *)impl)->epoch = epoch;
}

static const clg__datastore_ops denoise_ops = {.read = denoise_read, .destroy = denoise_destroy,
                                               .inner = denoise_inner,
                                               .set_epoch = denoise_set_epoch};

clg_denoise_options clg_denoise_options_default(void)
{
    clg_denoise_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.patches_per_image = 1;
    o.sigma[0] = o.sigma[1] = 0.1f;
    o.target = CLG_DENOISE_NOISE;
    return o;
}

clg_status clg_datastore_denoising(clg_datastore *parent, const clg_denoise_options *o,
                                   clg_datastore **out)
{
    const char *call = "clg_datastore_denoising";
    if (out)
        *out = NULL;
    clg_denoise_options given = clg_denoise_options_default();
    if (o && clg__options_read(&given, o, sizeof given, call) != CLG_OK)
        return CLG_ERR_INVALID_ARG;
    if (!parent || !out)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: parent and out must not be "
                                   "NULL", call);
    clg_shape in = clg_datastore_sample_shape(parent);
    size_t ph = given.patch_h ? given.patch_h : in.h, pw = given.patch_w ? given.patch_w : in.w;
    if (!given.patch_h != !given.patch_w || ph > in.h || pw > in.w)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "%s: patches of %zux%zu do not "
                                   "fit the images' %zux%zu (HxW; 0 0: whole images)", call, ph,
                                   pw, in.h, in.w);
    if (!(given.sigma[0] >= 0 && given.sigma[1] >= given.sigma[0] && given.sigma[1] <= 10) ||
        !given.patches_per_image || (unsigned)given.target > CLG_DENOISE_CLEAN ||
        clg_datastore_size(parent) > (size_t)-1 / given.patches_per_image)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "%s: sigma in [0, 10] with low "
                                   "<= high, at least 1 patch an image, target noise or clean",
                                   call);
    denoise_store *s = clg__calloc(1, sizeof *s);
    if (!s || !clg__pool_init(&s->pool, clg_shape_numel(in))) {
        free(s);
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    }
    s->parent = parent;
    s->o = given;
    s->in = in;
    clg_shape sample = {1, in.c, ph, pw};
    clg_status st = clg__datastore_new(&denoise_ops, s,
                                       clg_datastore_size(parent) * given.patches_per_image,
                                       sample, 0, out);
    if (st == CLG_OK)
        clg__datastore_set_target(*out, CLG_TARGET_VALUES, sample);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

clg_status clg_datastore_class_weights(clg_datastore *ds, int mode, float *weights, size_t cap)
{
    const char *call = "clg_datastore_class_weights";
    size_t K = clg_datastore_class_count(ds);
    clg_shape ts;
    clg_target_kind kind = clg_datastore_target(ds, &ts);
    if (!ds || !weights || (mode != 0 && mode != 1) || kind == CLG_TARGET_VALUES || cap < K)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG, "%s: a store of labels, weights for "
                                   "its %zu classes, mode 0 (inverse frequency) or 1 (median "
                                   "frequency)", call, K);
    size_t per = clg_shape_numel(ts), n = clg_datastore_size(ds);
    int32_t *labels = clg__malloc(per * sizeof *labels);
    double *count = clg__calloc(K, sizeof *count), *f = clg__calloc(K, sizeof *f);
    clg_status st = labels && count && f ? CLG_OK
                                         : clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY,
                                                               "%s: out of memory", call);
    double total = 0;
    for (size_t i = 0; st == CLG_OK && i < n; i++) {
        st = clg_datastore_read(ds, &i, 1, NULL, labels);
        for (size_t p = 0; st == CLG_OK && p < per; p++)
            if (labels[p] >= 0 && (size_t)labels[p] < K) {
                count[labels[p]]++;
                total++;
            }
    }
    size_t present = 0;
    for (size_t k = 0; st == CLG_OK && k < K; k++)
        if (count[k] > 0)
            f[present++] = count[k] / total;
    qsort(f, present, sizeof *f, cmp_double);
    double median = !present ? 0 : present % 2 ? f[present / 2]
                                               : 0.5 * (f[present / 2 - 1] + f[present / 2]);
    for (size_t k = 0; st == CLG_OK && k < K; k++)
        weights[k] = count[k] <= 0 ? 0.0f
                     : mode == 0   ? (float)(total / ((double)K * count[k]))
                                   : (float)(median / (count[k] / total));
    free(labels);
    free(count);
    free(f);
    return st;
}
