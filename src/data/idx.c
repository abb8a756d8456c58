/* IDX store (MNIST / Fashion-MNIST files, plain or gzip): both files are read into memory once
 * (Fashion-MNIST's training set is 47 MB of bytes); samples become floats on each read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/data_internal.h"

/* Larger files are refused rather than read: 8 GiB of pixels is far past any IDX set. */
#define IDX_MAX_BYTES ((size_t)8 << 30)

typedef struct idx_store {
    unsigned char *image_file, *label_file;
    clg__idx_info images, labels;
} idx_store;

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

clg_status clg__idx_parse(const unsigned char *buf, size_t len, int want_images,
                          clg__idx_info *info, char *msg, size_t msg_cap)
{
    memset(info, 0, sizeof *info);
    if (len < 4 || buf[0] != 0 || buf[1] != 0) {
        snprintf(msg, msg_cap, "not an IDX file (%zu bytes, bad magic)", len);
        return CLG_ERR_CORRUPT;
    }
    unsigned type = buf[2], dims = buf[3];
    if (type != 0x08) {
        snprintf(msg, msg_cap, "IDX element type 0x%02x is not unsigned byte (0x08)", type);
        return CLG_ERR_CORRUPT;
    }
    if (want_images ? (dims != 3 && dims != 4) : dims != 1) {
        snprintf(msg, msg_cap, "IDX %s file has %u dimensions, expected %s",
                 want_images ? "image" : "label", dims, want_images ? "3 or 4" : "1");
        return CLG_ERR_CORRUPT;
    }
    size_t header = 4 + 4 * (size_t)dims;
    if (len < header) {
        snprintf(msg, msg_cap, "IDX header truncated (%zu of %zu bytes)", len, header);
        return CLG_ERR_CORRUPT;
    }
    size_t d[4] = {1, 1, 1, 1}, total = 1;
    for (unsigned i = 0; i < dims; i++) {
        d[i] = be32(buf + 4 + 4 * i);
        if (d[i] == 0) {
            snprintf(msg, msg_cap, "IDX dimension %u is 0", i);
            return CLG_ERR_CORRUPT;
        }
        if (total > IDX_MAX_BYTES / d[i]) {
            snprintf(msg, msg_cap, "IDX sizes declare more than %zu bytes", IDX_MAX_BYTES);
            return CLG_ERR_CORRUPT;
        }
        total *= d[i];
    }
    if (len - header != total) {
        snprintf(msg, msg_cap, "IDX header declares %zu data bytes but the file holds %zu%s",
                 total, len - header, len - header < total ? " (truncated)" : "");
        return CLG_ERR_CORRUPT;
    }
    info->count = d[0];
    if (dims == 3) {
        info->c = 1, info->h = d[1], info->w = d[2];
    } else if (dims == 4) {
        info->c = d[1], info->h = d[2], info->w = d[3];
    } else {
        info->c = info->h = info->w = 1;
    }
    info->data = buf + header;
    return CLG_OK;
}

/* Whole file through zlib (which reads plain files as they are). */
static clg_status read_file(const char *path, unsigned char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return clg__datastore_fail(NULL, CLG_ERR_IO, "cannot open %s: %s", path,
                                   errno ? strerror(errno) : "out of memory");
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = clg__malloc(cap);
    clg_status st = buf ? CLG_OK : CLG_ERR_OUT_OF_HOST_MEMORY;
    while (st == CLG_OK) {
        if (n == cap) {
            if (cap >= IDX_MAX_BYTES) {
                st = clg__datastore_fail(NULL, CLG_ERR_CORRUPT, "%s is larger than %zu bytes",
                                         path, IDX_MAX_BYTES);
                break;
            }
            unsigned char *bigger = clg__realloc(buf, cap * 2);
            if (!bigger) {
                st = CLG_ERR_OUT_OF_HOST_MEMORY;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t want = cap - n < (1u << 30) ? cap - n : (1u << 30);
        int got = gzread(f, buf + n, (unsigned)want);
        if (got < 0) {
            int zerr = 0;
            const char *why = gzerror(f, &zerr);
            st = clg__datastore_fail(NULL, zerr == Z_ERRNO ? CLG_ERR_IO : CLG_ERR_CORRUPT,
                                     "cannot read %s: %s", path, why);
        } else if (got == 0) {
            break;
        }
        n += got > 0 ? (size_t)got : 0;
    }
    gzclose(f);
    if (st == CLG_ERR_OUT_OF_HOST_MEMORY)
        clg__datastore_fail(NULL, st, "out of host memory reading %s", path);
    if (st != CLG_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *len = n;
    return CLG_OK;
}

static void idx_destroy(void *impl)
{
    idx_store *s = impl;
    if (!s)
        return;
    free(s->image_file);
    free(s->label_file);
    free(s);
}

static clg_status idx_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    int32_t *label = target;
    const idx_store *s = ds->impl;
    if (image) {
        size_t per = s->images.c * s->images.h * s->images.w;
        const unsigned char *p = s->images.data + index * per;
        for (size_t i = 0; i < per; i++)
            image[i] = (float)p[i] * (1.0f / 255.0f);
    }
    *label = s->labels.data[index];
    return CLG_OK;
}

static const clg__datastore_ops idx_ops = {.read = idx_read, .destroy = idx_destroy};

static clg_status load_part(const char *path, int images, unsigned char **file,
                            clg__idx_info *info)
{
    size_t len;
    clg_status st = read_file(path, file, &len);
    if (st != CLG_OK)
        return st;
    char msg[256];
    st = clg__idx_parse(*file, len, images, info, msg, sizeof msg);
    if (st != CLG_OK)
        return clg__datastore_fail(NULL, st, "%s: %s", path, msg);
    return CLG_OK;
}

clg_status clg_datastore_open_idx(const char *images_path, const char *labels_path,
                                  clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!images_path || !labels_path || !out)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_open_idx: paths and out must not be NULL");
    idx_store *s = clg__calloc(1, sizeof *s);
    if (!s)
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_open_idx: out of host memory");
    clg_status st = load_part(images_path, 1, &s->image_file, &s->images);
    if (st == CLG_OK)
        st = load_part(labels_path, 0, &s->label_file, &s->labels);
    if (st == CLG_OK && s->images.count != s->labels.count)
        st = clg__datastore_fail(NULL, CLG_ERR_CORRUPT, "%s holds %zu images but %s %zu labels",
                                 images_path, s->images.count, labels_path, s->labels.count);
    size_t classes = 2;
    for (size_t i = 0; st == CLG_OK && i < s->labels.count; i++)
        if ((size_t)s->labels.data[i] + 1 > classes)
            classes = (size_t)s->labels.data[i] + 1;
    if (st != CLG_OK) {
        idx_destroy(s);
        return st;
    }
    clg_shape sample = {1, s->images.c, s->images.h, s->images.w};
    return clg__datastore_new(&idx_ops, s, s->images.count, sample, classes, out);
}

/* path of dir/name or dir/name.gz, whichever exists (plain first); malloc'd. */
static char *find_part(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 8;
    char *path = clg__malloc(len);
    if (!path)
        return NULL;
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        snprintf(path, len, "%s/%s.gz", dir, name);
    else
        fclose(f);
    return path;
}

static clg_status read_class_names(clg_datastore *ds, const char *dir)
{
    size_t len = strlen(dir) + 16;
    char *path = clg__malloc(len);
    if (!path)
        return clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(path, len, "%s/classes.txt", dir);
    char *text = clg__read_text_file(path, 1 << 20);
    free(path);
    if (!text)
        return CLG_OK;
    const char **names = clg__calloc(ds->classes, sizeof *names);
    size_t n = 0;
    for (char *line = text, *next; names && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line[strcspn(line, "\r")] = '\0';
        if (*line && n < ds->classes)
            names[n] = line;
        n += *line != '\0';
    }
    clg_status st = CLG_OK;
    if (!names)
        st = clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    else if (n != ds->classes)
        st = clg__datastore_fail(ds, CLG_ERR_CORRUPT, "%s/classes.txt names %zu classes, the "
                                 "labels have %zu", dir, n, ds->classes);
    else
        st = clg_datastore_set_class_names(ds, names, n);
    free(names);
    free(text);
    return st;
}

clg_status clg_datastore_open_idx_folder(const char *dir, const char *subset, clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!dir || !subset || !out)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_open_idx_folder: dir, subset and out must not be NULL");
    const char *prefix = !strcmp(subset, "train") ? "train" : !strcmp(subset, "test") ? "t10k" : NULL;
    if (!prefix)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_open_idx_folder: subset \"%s\" is not train or test",
                                   subset);
    char images[64], labels[64];
    snprintf(images, sizeof images, "%s-images-idx3-ubyte", prefix);
    snprintf(labels, sizeof labels, "%s-labels-idx1-ubyte", prefix);
    char *ip = find_part(dir, images), *lp = find_part(dir, labels);
    clg_status st = ip && lp ? clg_datastore_open_idx(ip, lp, out)
                             : clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY,
                                                   "out of host memory");
    free(ip);
    free(lp);
    if (st == CLG_OK) {
        st = read_class_names(*out, dir);
        if (st != CLG_OK) {
            clg_datastore_destroy(*out);
            *out = NULL;
        }
    }
    return st;
}
