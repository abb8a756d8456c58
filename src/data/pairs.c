/* Stores of images paired with a target found by file name (MATLAB's pixelLabelImageDatastore
 * and the paired datastores of image-to-image regression): a label image per image (a class
 * per pixel, by gray value or RGB colour, from a class list), a target image per image, or a
 * row of values per image from a CSV file. Only the names are held; each read decodes. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clgrad/loss.h"
#include "data/data_internal.h"

enum { PAIR_LABELS, PAIR_IMAGES, PAIR_VALUES };
enum { UNLISTED = -2 }; /* a label value not in the class list */

typedef struct pair_store {
    int kind;
    char **inputs;         /* full paths, sorted */
    char **targets;        /* label or target images, one per input (NULL for values) */
    float *values;         /* PAIR_VALUES: n x k */
    size_t n, k;
    size_t c, h, w;        /* the samples' */
    size_t target_c;       /* PAIR_IMAGES: the targets' channels */
    int colour;            /* PAIR_LABELS: classes by RGB colour, else by gray value */
    size_t classes;
    int32_t gray[256];     /* gray value -> class, or UNLISTED */
    unsigned long rgb[CLG_CLASS_WEIGHTS_MAX]; /* class -> 0xRRGGBB */
    int ignore_unlisted;
} pair_store;

static void pair_destroy(void *impl)
{
    pair_store *s = impl;
    if (!s)
        return;
    clg__image_files_free(s->inputs, s->n);
    clg__image_files_free(s->targets, s->targets ? s->n : 0);
    free(s->values);
    free(s);
}

/* The class of one label pixel (v: gray value, or 0xRRGGBB). */
static int32_t class_of(const pair_store *s, unsigned long v)
{
    if (!s->colour)
        return s->gray[v & 255];
    for (size_t k = 0; k < s->classes; k++)
        if (s->rgb[k] == v)
            return (int32_t)k;
    return UNLISTED;
}

/* The label image of sample index as classes at the samples' size (nearest pixel). */
static clg_status read_labels(clg_datastore *ds, pair_store *s, size_t index, int32_t *labels)
{
    const char *img = s->inputs[index], *lab = s->targets[index];
    size_t ih, iw, lh, lw, lc = s->colour ? 3 : 1;
    clg_status st = clg__image_size(img, &ih, &iw);
    if (st == CLG_OK)
        st = clg__image_size(lab, &lh, &lw);
    if (st != CLG_OK)
        return clg__datastore_fail(ds, st, "%s", clg_last_error());
    if (lh != ih || lw != iw)
        return clg__datastore_fail(ds, CLG_ERR_CORRUPT, "label image %s is %zux%zu, its image "
                                   "%s %zux%zu (HxW): they must be the same size", lab, lh, lw,
                                   img, ih, iw);
    float *raw = clg__malloc(lh * lw * lc * sizeof *raw);
    if (!raw)
        return clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    st = clg_image_read(lab, lc, lh, lw, raw); /* its own size: no resampling */
    for (size_t i = 0; st == CLG_OK && i < s->h; i++)
        for (size_t j = 0; st == CLG_OK && j < s->w; j++) {
            size_t y = (size_t)(((double)i + 0.5) * (double)lh / (double)s->h);
            size_t x = (size_t)(((double)j + 0.5) * (double)lw / (double)s->w);
            unsigned long v = 0;
            for (size_t c = 0; c < lc; c++) /* decoded as v / 255 */
                v = v << 8 | (unsigned long)lroundf(raw[(c * lh + y) * lw + x] * 255.0f);
            int32_t k = class_of(s, v);
            if (k == UNLISTED && !s->ignore_unlisted)
                st = clg__datastore_fail(ds, CLG_ERR_CORRUPT, "label image %s: pixel (%zu, %zu) "
                                         "has value %s%lu%s, which the class list does not "
                                         "name (unlisted values are ignored when asked)", lab, y,
                                         x, lc == 3 ? "#" : "", lc == 3 ? v : v,
                                         lc == 3 ? " (RGB hex as decimal)" : "");
            labels[i * s->w + j] = k == UNLISTED ? CLG_LABEL_IGNORE : k;
        }
    free(raw);
    if (st != CLG_OK && st != CLG_ERR_CORRUPT)
        return clg__datastore_fail(ds, st, "%s", clg_last_error());
    return st;
}

static clg_status pair_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    pair_store *s = ds->impl;
    clg_status st = image ? clg_image_read(s->inputs[index], s->c, s->h, s->w, image) : CLG_OK;
    if (st != CLG_OK)
        return clg__datastore_fail(ds, st, "%s", clg_last_error());
    if (s->kind == PAIR_VALUES) {
        memcpy(target, s->values + index * s->k, s->k * sizeof *s->values);
        return CLG_OK;
    }
    if (s->kind == PAIR_LABELS)
        return read_labels(ds, s, index, target);
    st = clg_image_read(s->targets[index], s->target_c, s->h, s->w, target);
    return st == CLG_OK ? st : clg__datastore_fail(ds, st, "%s", clg_last_error());
}

static const clg__datastore_ops pair_ops = {.read = pair_read, .destroy = pair_destroy};

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The file in target_dir for input (under input_dir): the same relative name, or the same
 * with another image extension (a JPEG photo's PNG label) into *out. */
static clg_status partner(const char *input_dir, const char *input, const char *target_dir,
                          char **out)
{
    static const char *const ext[] = {".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm", ".pnm"};
    const char *rel = input + strlen(input_dir);
    rel += *rel == '/';
    const char *dot = strrchr(rel, '.'), *slash = strrchr(rel, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - rel) : strlen(rel);
    size_t cap = strlen(target_dir) + strlen(rel) + 16;
    char *path = clg__malloc(cap);
    if (!path)
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(path, cap, "%s/%s", target_dir, rel);
    for (size_t e = 0; !is_file(path) && e < sizeof ext / sizeof *ext; e++)
        snprintf(path, cap, "%s/%.*s%s", target_dir, (int)stem, rel, ext[e]);
    if (is_file(path)) {
        *out = path;
        return CLG_OK;
    }
    free(path);
    return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "the target folder %s has no file for "
                               "%s (looked for %s/%s and the same name with another image "
                               "extension)", target_dir, input, target_dir, rel);
}

/* The images under input_dir, each with its partner in target_dir (target_dir NULL: none). */
static clg_status list_pairs(pair_store *s, const char *input_dir, const char *target_dir)
{
    clg_status st = clg__image_files(input_dir, &s->inputs, &s->n);
    if (st == CLG_OK && !s->n)
        st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "folder %s holds no PNG, JPEG, BMP "
                                 "or PNM files", input_dir);
    if (st != CLG_OK || !target_dir)
        return st;
    s->targets = clg__calloc(s->n, sizeof *s->targets);
    if (!s->targets)
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; st == CLG_OK && i < s->n; i++)
        st = partner(input_dir, s->inputs[i], target_dir, &s->targets[i]);
    return st;
}

/* The samples' size: given, or the first image's. */
static clg_status sample_size(pair_store *s, const clg_image_folder_options *o)
{
    s->c = o->channels, s->h = o->height, s->w = o->width;
    return s->h ? CLG_OK : clg__image_size(s->inputs[0], &s->h, &s->w);
}

static clg_status check_options(const char *call, const clg_image_folder_options *o)
{
    if ((o->channels != 1 && o->channels != 3) || !o->height != !o->width ||
        o->height > CLG_IMAGE_MAX_SIDE || o->width > CLG_IMAGE_MAX_SIDE || o->resize_shorter)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: channels 1 or 3; height and "
                                   "width both 0 (the first image's) or both 1..%d; no "
                                   "resize_shorter", call, CLG_IMAGE_MAX_SIDE);
    return CLG_OK;
}

/* Makes the store around s (freed on failure) with its targets. */
static clg_status finish(pair_store *s, clg_status st, size_t classes, clg_target_kind kind,
                         clg_shape target, clg_datastore **out)
{
    if (st != CLG_OK) {
        pair_destroy(s);
        return st;
    }
    st = clg__datastore_new(&pair_ops, s, s->n, (clg_shape){1, s->c, s->h, s->w}, classes, out);
    if (st == CLG_OK)
        clg__datastore_set_target(*out, kind, target);
    return st;
}

/* Splits a line of the class list at blanks and commas: words into w (at most max). */
static size_t words(char *line, char **w, size_t max)
{
    size_t n = 0;
    for (char *p = strtok(line, " \t,\r\n"); p && n < max; p = strtok(NULL, " \t,\r\n"))
        w[n++] = p;
    return n;
}

static int number(const char *s, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return *s && !*end && !errno && *v >= 0 && *v <= 255;
}

/* The class list: a line per class, "name value" (gray) or "name r g b" (colour); '#' starts
 * a comment. Fills the store's maps and names (names[k] malloc'd). */
static clg_status read_classes(pair_store *s, const char *path, char **names)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return clg__datastore_fail(NULL, CLG_ERR_IO, "cannot read the class list %s: %s", path,
                                   strerror(errno));
    for (int v = 0; v < 256; v++)
        s->gray[v] = UNLISTED;
    char line[1024], *w[8];
    clg_status st = CLG_OK;
    int mode = 0; /* 1 gray, 3 colour */
    for (size_t ln = 1; st == CLG_OK && fgets(line, sizeof line, f); ln++) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        size_t n = words(line, w, 8);
        long v[3];
        int m = n == 2 ? 1 : n == 4 ? 3 : 0;
        for (int i = 0; i < m; i++)
            m = number(w[n - (size_t)m + (size_t)i], &v[i]) ? m : -1;
        if (!n)
            continue;
        if (m <= 0 || (mode && m != mode) || s->classes == CLG_CLASS_WEIGHTS_MAX) {
            st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "class list %s, line %zu: "
                                     "expected \"name value\" or \"name red green blue\" (0-255, "
                                     "the same form on every line, at most %d classes)", path,
                                     ln, CLG_CLASS_WEIGHTS_MAX);
            break;
        }
        mode = m;
        unsigned long key = m == 1 ? (unsigned long)v[0]
                                   : (unsigned long)(v[0] << 16 | v[1] << 8 | v[2]);
        if (class_of(s, key) != UNLISTED && (m == 3 || s->gray[key] != UNLISTED)) {
            st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "class list %s, line %zu: the "
                                     "value of \"%s\" is another class's too", path, ln, w[0]);
            break;
        }
        if (m == 1)
            s->gray[key] = (int32_t)s->classes;
        else
            s->rgb[s->classes] = key;
        if (!(names[s->classes] = clg__strdup(w[0])))
            st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        else
            s->classes++;
        s->colour = m == 3;
    }
    fclose(f);
    if (st == CLG_OK && s->classes < 2)
        st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "class list %s names %zu classes; "
                                 "it needs at least 2", path, s->classes);
    return st;
}

clg_pixel_label_options clg_pixel_label_options_default(void)
{
    clg_pixel_label_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.images = clg_image_folder_options_default();
    return o;
}

clg_status clg_datastore_open_pixel_labels(const char *image_dir, const char *label_dir,
                                           const char *classes_file,
                                           const clg_pixel_label_options *o,
                                           clg_datastore **out)
{
    const char *call = "clg_datastore_open_pixel_labels";
    if (out)
        *out = NULL;
    clg_pixel_label_options def = clg_pixel_label_options_default();
    if (o && clg__options_read(&def, o, sizeof def, call) != CLG_OK)
        return CLG_ERR_INVALID_ARG;
    if (!image_dir || !label_dir || !classes_file || !out)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: folders, class list and out "
                                   "must not be NULL", call);
    clg_status st = check_options(call, &def.images);
    pair_store *s = st == CLG_OK ? clg__calloc(1, sizeof *s) : NULL;
    char *names[CLG_CLASS_WEIGHTS_MAX] = {0};
    if (st == CLG_OK && !s)
        st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (!s)
        return st;
    s->kind = PAIR_LABELS;
    s->ignore_unlisted = def.ignore_unlisted;
    st = read_classes(s, classes_file, names);
    if (st == CLG_OK)
        st = list_pairs(s, image_dir, label_dir);
    if (st == CLG_OK)
        st = sample_size(s, &def.images);
    size_t classes = s->classes;
    st = finish(s, st, classes, CLG_TARGET_PIXELS, (clg_shape){1, 1, s->h, s->w}, out);
    if (st == CLG_OK && (st = clg_datastore_set_class_names(*out, (const char *const *)names,
                                                            classes)) != CLG_OK) {
        clg_datastore_destroy(*out);
        *out = NULL;
    }
    for (size_t k = 0; k < CLG_CLASS_WEIGHTS_MAX; k++)
        free(names[k]);
    return st;
}

clg_status clg_datastore_open_paired_images(const char *input_dir, const char *target_dir,
                                            const clg_image_folder_options *o,
                                            size_t target_channels, clg_datastore **out)
{
    const char *call = "clg_datastore_open_paired_images";
    if (out)
        *out = NULL;
    clg_image_folder_options def = clg_image_folder_options_default();
    if (o && clg__options_read(&def, o, sizeof def, call) != CLG_OK)
        return CLG_ERR_INVALID_ARG;
    if (!input_dir || !target_dir || !out || (target_channels > 3 || target_channels == 2))
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: folders and out must not be "
                                   "NULL; target channels 0 (the inputs'), 1 or 3", call);
    clg_status st = check_options(call, &def);
    pair_store *s = st == CLG_OK ? clg__calloc(1, sizeof *s) : NULL;
    if (!s)
        return st == CLG_OK ? clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY,
                                                  "out of host memory")
                            : st;
    s->kind = PAIR_IMAGES;
    st = list_pairs(s, input_dir, target_dir);
    if (st == CLG_OK)
        st = sample_size(s, &def);
    s->target_c = target_channels ? target_channels : s->c;
    return finish(s, st, 0, CLG_TARGET_VALUES, (clg_shape){1, s->target_c, s->h, s->w}, out);
}

/* A CSV line "path,v1,...,vk" into its path and values; 0 for a header or a bad line. */
static int csv_row(char *line, char **path, float *v, size_t cap, size_t *k)
{
    char *comma = strchr(line, ',');
    if (!comma)
        return 0;
    *comma = '\0';
    *path = line;
    *k = 0;
    for (char *p = comma + 1; *p && *p != '\n' && *p != '\r';) {
        char *end;
        double d = strtod(p, &end);
        if (end == p || *k == cap || !isfinite(d))
            return 0;
        v[(*k)++] = (float)d;
        p = end + (*end == ',');
    }
    return *k > 0;
}

clg_status clg_datastore_open_image_values(const char *dir, const char *csv_path,
                                           const clg_image_folder_options *o,
                                           clg_datastore **out)
{
    const char *call = "clg_datastore_open_image_values";
    enum { MAX_VALUES = 4096 };
    if (out)
        *out = NULL;
    clg_image_folder_options def = clg_image_folder_options_default();
    if (o && clg__options_read(&def, o, sizeof def, call) != CLG_OK)
        return CLG_ERR_INVALID_ARG;
    if (!dir || !csv_path || !out)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: folder, CSV and out must not "
                                   "be NULL", call);
    clg_status st = check_options(call, &def);
    if (st != CLG_OK)
        return st;
    FILE *f = fopen(csv_path, "r");
    if (!f)
        return clg__datastore_fail(NULL, CLG_ERR_IO, "cannot read %s: %s", csv_path,
                                   strerror(errno));
    pair_store *s = clg__calloc(1, sizeof *s);
    float *row = clg__malloc(MAX_VALUES * sizeof *row);
    char *line = clg__malloc(65536);
    size_t cap = 0;
    st = s && row && line ? CLG_OK
                          : clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of memory");
    if (s)
        s->kind = PAIR_VALUES;
    for (size_t ln = 1; st == CLG_OK && fgets(line, 65536, f); ln++) {
        char *path = NULL;
        size_t k = 0;
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (!csv_row(line, &path, row, MAX_VALUES, &k)) {
            if (ln == 1)
                continue; /* a header */
            st = clg__datastore_fail(NULL, CLG_ERR_CORRUPT, "%s, line %zu: expected "
                                     "\"file,value,...\" (at most %d values)", csv_path, ln,
                                     MAX_VALUES);
        } else if (s->n && k != s->k) {
            st = clg__datastore_fail(NULL, CLG_ERR_CORRUPT, "%s, line %zu: %zu values, the "
                                     "first row has %zu", csv_path, ln, k, s->k);
        } else if (s->n == cap) {
            cap = cap ? 2 * cap : 256;
            char **p = clg__realloc(s->inputs, cap * sizeof *p);
            s->inputs = p ? p : s->inputs;
            float *v = p ? clg__realloc(s->values, cap * k * sizeof *v) : NULL;
            s->values = v ? v : s->values;
            if (!p || !v)
                st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of memory");
        }
        if (st != CLG_OK)
            continue;
        size_t len = strlen(dir) + strlen(path) + 2;
        char *full = clg__malloc(len);
        if (!full) {
            st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of memory");
            continue;
        }
        snprintf(full, len, "%s/%s", dir, path);
        if (!is_file(full)) {
            st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s, line %zu: no file %s", csv_path,
                                     ln, full);
            free(full);
            continue;
        }
        s->k = k;
        s->inputs[s->n] = full;
        memcpy(s->values + s->n * k, row, k * sizeof *row);
        s->n++;
    }
    fclose(f);
    free(row);
    free(line);
    if (st == CLG_OK && (!s || !s->n))
        st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s names no image with values",
                                 csv_path);
    if (st == CLG_OK)
        st = sample_size(s, &def);
    if (!s)
        return st;
    return finish(s, st, 0, CLG_TARGET_VALUES, (clg_shape){1, s->k, 1, 1}, out);
}
