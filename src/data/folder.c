/* Image-folder store (MATLAB's imageDatastore with labels from folder names): one sub-folder
 * per class, images at any depth below it; only the paths are held, each read decodes. */
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data/data_internal.h"

enum { MAX_DEPTH = 32 };

typedef struct folder_store {
    char **paths;             /* sorted within each class, classes in name order */
    int32_t *labels;
    size_t n, cap;
    clg_image_folder_options o;
    atomic_uchar *bad;        /* per file: found undecodable (skip), not decoded again */
    atomic_size_t skipped;    /* files newly found bad since the count was last reset; reads
                                 come from prefetch threads and the trainer at once */
} folder_store;

static const char *const image_ext[] = {".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm", ".pnm"};

static int is_image(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof image_ext / sizeof image_ext[0]; i++)
        if (!strcasecmp(dot, image_ext[i]))
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in dir (no . or ..), sorted; *n receives the count. NULL with *n = 0 for an empty or
 * unreadable folder (*ok = 0 when unreadable or out of memory). */
static char **list_dir(const char *dir, size_t *n, int *ok)
{
    *n = 0;
    *ok = 1;
    DIR *d = opendir(dir);
    if (!d) {
        *ok = 0;
        return NULL;
    }
    char **names = NULL;
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **bigger = clg__realloc(names, cap * sizeof *names);
            if (!bigger) {
                *ok = 0;
                break;
            }
            names = bigger;
        }
        if (!(names[*n] = clg__strdup(e->d_name))) {
            *ok = 0;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (names)
        qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

static void free_list(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

static char *join(const char *a, const char *b)
{
    size_t len = strlen(a) + strlen(b) + 2;
    char *p = clg__malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", a, b);
    return p;
}

/* Adds the images under dir (recursively, not following links to folders) with label. */
static clg_status collect(folder_store *s, const char *dir, int32_t label, int depth)
{
    size_t n;
    int ok;
    char **names = list_dir(dir, &n, &ok);
    clg_status st = ok ? CLG_OK : clg__datastore_fail(NULL, CLG_ERR_IO, "cannot read folder %s", dir);
    for (size_t i = 0; st == CLG_OK && i < n; i++) {
        char *path = join(dir, names[i]);
        struct stat sb;
        if (!path) {
            st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        } else if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            if (depth < MAX_DEPTH)
                st = collect(s, path, label, depth + 1);
        } else if (is_image(names[i]) && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 1024;
                char **p = clg__realloc(s->paths, cap * sizeof *p);
                int32_t *l = p ? clg__realloc(s->labels, cap * sizeof *l) : NULL;
                if (p)
                    s->paths = p;
                if (l)
                    s->labels = l;
                if (!p || !l) {
                    st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
                    free(path);
                    break;
                }
                s->cap = cap;
            }
            s->paths[s->n] = path;
            s->labels[s->n++] = label;
            path = NULL;
        }
        free(path);
    }
    free_list(names, n);
    return st;
}

static void folder_destroy(void *impl)
{
    folder_store *s = impl;
    if (!s)
        return;
    free_list(s->paths, s->n);
    free(s->labels);
    free(s->bad);
    free(s);
}

static clg_status folder_read_with(clg_datastore *ds, size_t index, clg__geometry_fn pick,
                                   void *user, size_t h, size_t w, float *image, void *target)
{
    int32_t *label = target;
    folder_store *s = ds->impl;
    const clg_image_folder_options *o = &s->o;
    for (size_t tries = 0; tries < s->n; tries++) {
        size_t k = (index + tries) % s->n; /* skip: the next decodable sample stands in */
        if (s->bad && atomic_load(&s->bad[k]))
            continue; /* known bad: not decoded again */
        clg_status st = image ? clg__image_read_with(s->paths[k], o->channels, pick, user, h, w,
                                                     image)
                              : CLG_OK;
        if (st == CLG_OK) {
            *label = s->labels[k];
            return CLG_OK;
        }
        if (o->bad_files == CLG_BAD_FILES_FAIL || st == CLG_ERR_OUT_OF_HOST_MEMORY || !s->bad)
            return clg__datastore_fail(ds, st, "%s", clg_last_error());
        if (!atomic_exchange(&s->bad[k], 1)) /* each file counted once */
            atomic_fetch_add(&s->skipped, 1);
    }
    return clg__datastore_fail(ds, CLG_ERR_CORRUPT, "no image of the %zu in the folder could be "
                               "decoded", s->n);
}

static clg_status folder_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    int32_t *label = target;
    folder_store *s = ds->impl;
    return folder_read_with(ds, index, clg__image_fit, &s->o.resize_shorter, s->o.height,
                            s->o.width, image, label);
}

static size_t folder_skipped(void *impl, int reset)
{
    folder_store *s = impl;
    return reset ? atomic_exchange(&s->skipped, 0) : atomic_load(&s->skipped);
}

static const char *folder_bad_file(void *impl, size_t i)
{
    folder_store *s = impl;
    for (size_t k = 0; s->bad && k < s->n; k++)
        if (atomic_load(&s->bad[k]) && i-- == 0)
            return s->paths[k];
    return NULL;
}

static const clg__datastore_ops folder_ops = {
    .read = folder_read, .destroy = folder_destroy, .skipped = folder_skipped,
    .bad_file = folder_bad_file, .read_with = folder_read_with};

clg_image_folder_options clg_image_folder_options_default(void)
{
    clg_image_folder_options o = {sizeof o, 1, 0, 0, CLG_BAD_FILES_FAIL, 0};
    return o;
}

clg_status clg_datastore_open_image_folder(const char *dir, const clg_image_folder_options *o,
                                     clg_datastore **out)
{
    if (out)
        *out = NULL;
    clg_image_folder_options def = clg_image_folder_options_default();
    if (o && clg__options_read(&def, o, sizeof def, "clg_datastore_open_image_folder") != CLG_OK)
        return CLG_ERR_INVALID_ARG;
    o = &def;
    if (!dir || !out || (o->channels != 1 && o->channels != 3) || (!o->height != !o->width) ||
        o->height > CLG_IMAGE_MAX_SIDE || o->width > CLG_IMAGE_MAX_SIDE ||
        (o->bad_files != CLG_BAD_FILES_FAIL && o->bad_files != CLG_BAD_FILES_SKIP) ||
        (o->resize_shorter && (!o->height || o->resize_shorter < o->height ||
                               o->resize_shorter < o->width)))
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_open_image_folder: dir and "
                                   "out must not be NULL; channels 1 or 3; height and width both "
                                   "0 or both 1..%d; bad_files fail or skip; resize_shorter 0 or "
                                   "at least the height and width given", CLG_IMAGE_MAX_SIDE);
    size_t nclass_entries;
    int ok;
    char **entries = list_dir(dir, &nclass_entries, &ok);
    if (!ok) {
        free_list(entries, nclass_entries);
        return clg__datastore_fail(NULL, CLG_ERR_IO, "cannot read folder %s", dir);
    }
    folder_store *s = clg__calloc(1, sizeof *s);
    const char **classes = clg__calloc(nclass_entries + 1, sizeof *classes);
    clg_status st = s && classes ? CLG_OK
                                 : clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t nclasses = 0;
    for (size_t i = 0; st == CLG_OK && i < nclass_entries; i++) {
        char *path = join(dir, entries[i]);
        struct stat sb;
        if (!path)
            st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        else if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            classes[nclasses] = entries[i];
            st = collect(s, path, (int32_t)nclasses, 1);
            nclasses++;
        }
        free(path);
    }
    if (st == CLG_OK && nclasses < 2)
        st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "image folder %s has %zu class "
                                 "folders; it needs one sub-folder per class, at least 2", dir,
                                 nclasses);
    if (st == CLG_OK && !s->n)
        st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "image folder %s holds no PNG, JPEG, "
                                 "BMP or PNM files", dir);
    if (st == CLG_OK && o->bad_files == CLG_BAD_FILES_SKIP &&
        !(s->bad = clg__calloc(s->n, sizeof *s->bad)))
        st = clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (st == CLG_OK) {
        s->o = *o;
        if (!s->o.height) { /* the first image's size (skipping: the first readable one's) */
            size_t k = 0;
            st = clg__image_size(s->paths[0], &s->o.height, &s->o.width);
            while (st != CLG_OK && o->bad_files == CLG_BAD_FILES_SKIP && ++k < s->n)
                st = clg__image_size(s->paths[k], &s->o.height, &s->o.width);
            if (st != CLG_OK && k == s->n)
                st = clg__datastore_fail(NULL, CLG_ERR_CORRUPT, "image folder %s: none of its "
                                         "%zu images is readable (the first: %s)", dir, s->n,
                                         s->paths[0]);
            else if (st != CLG_OK)
                st = clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "the size of the images "
                                         "comes from the first one, which fails (--bad-files "
                                         "skip takes the first readable one; --image-size HxW "
                                         "sets it): %s", clg_last_error());
        }
    }
    clg_datastore *ds = NULL;
    if (st == CLG_OK) {
        clg_shape sample = {1, s->o.channels, s->o.height, s->o.width};
        st = clg__datastore_new(&folder_ops, s, s->n, sample, nclasses, &ds);
        s = NULL; /* owned by ds now, or freed on failure */
    }
    if (st == CLG_OK)
        st = clg_datastore_set_class_names(ds, classes, nclasses);
    free(classes);
    free_list(entries, nclass_entries);
    folder_destroy(s);
    if (st != CLG_OK) {
        clg_datastore_destroy(ds);
        return st;
    }
    *out = ds;
    return CLG_OK;
}

clg_status clg__image_files(const char *dir, char ***paths, size_t *n)
{
    folder_store s;
    memset(&s, 0, sizeof s);
    clg_status st = collect(&s, dir, 0, 1);
    free(s.labels);
    if (st != CLG_OK) {
        free_list(s.paths, s.n);
        return st;
    }
    *paths = s.paths;
    *n = s.n;
    return CLG_OK;
}

void clg__image_files_free(char **paths, size_t n)
{
    free_list(paths, n);
}
