/* On-disk cache of compiled program binaries. Every failure is a miss: the cache can only
 * ever save time, never cause an error. Entries are written with clg__write_atomic, so readers
 * (other processes too) see a whole entry or none. */
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

#define CACHE_MAGIC "CLGRBIN\0"
#define CACHE_FORMAT 1u
#define MAX_ENTRY_BYTES (512u << 20)

typedef struct entry_header {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    unsigned char key[32];
    uint64_t size;
    unsigned char payload_sha[32];
} entry_header;

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = clg__malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

char *clg__cache_dir_resolve(const char *explicit_dir)
{
    const char *dir = explicit_dir ? explicit_dir : getenv("CLGRAD_CACHE_DIR");
    if (dir && *dir)
        return strcmp(dir, "off") == 0 ? NULL : clg__strdup(dir);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg)
        return join(xdg, "/clgrad");
    const char *home = getenv("HOME");
    if (home && *home)
        return join(home, "/.cache/clgrad");
    return NULL;
}

int clg__driver_caches(const clg_device_info *dev)
{
    const char *off = getenv("POCL_KERNEL_CACHE"); /* POCL's own switch, on unless 0 */
    return strstr(dev->platform, "Portable Computing Language") != NULL &&
           !(off && strcmp(off, "0") == 0);
}

void clg__hex32(const unsigned char digest[32], char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[64] = '\0';
}

static void hash_field(struct sha256_ctx *h, const char *s)
{
    /* Fields end with NUL so that ("ab","c") and ("a","bc") hash differently. */
    sha256_update(h, strlen(s) + 1, (const uint8_t *)s);
}

void clg__bincache_key(const clg_ctx *ctx, const char *source_sha256, const char *options,
                       unsigned char key[32])
{
    struct sha256_ctx h;
    char format[16];
    snprintf(format, sizeof format, "%u", CACHE_FORMAT);
    sha256_init(&h);
    hash_field(&h, "clgrad program cache");
    hash_field(&h, format);
    hash_field(&h, clg_version());
    hash_field(&h, source_sha256);
    hash_field(&h, options ? options : "");
    hash_field(&h, ctx->device.name);
    hash_field(&h, ctx->device.vendor);
    hash_field(&h, ctx->device.driver_version);
    hash_field(&h, ctx->device.platform_version);
    sha256_digest(&h, 32, key);
}

static char *entry_path(const char *dir, const unsigned char key[32], const char *suffix)
{
    char hex[65];
    clg__hex32(key, hex);
    size_t n = strlen(dir) + 80 + strlen(suffix);
    char *p = clg__malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, hex, suffix);
    return p;
}

static void sha256_of(const unsigned char *data, size_t size, unsigned char out[32])
{
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, size, data);
    sha256_digest(&h, 32, out);
}

unsigned char *clg__bincache_load(const char *dir, const unsigned char key[32], size_t *size,
                                  int *found)
{
    *size = 0;
    *found = 0;
    char *path = entry_path(dir, key, ".bin");
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!f)
        return NULL;
    *found = 1;
    entry_header hdr;
    unsigned char *bin = NULL;
    if (fread(&hdr, sizeof hdr, 1, f) != 1 || memcmp(hdr.magic, CACHE_MAGIC, 8) != 0 ||
        hdr.format != CACHE_FORMAT || memcmp(hdr.key, key, 32) != 0 || hdr.size == 0 ||
        hdr.size > MAX_ENTRY_BYTES)
        goto miss;
    bin = clg__malloc((size_t)hdr.size);
    if (!bin || fread(bin, 1, (size_t)hdr.size, f) != hdr.size || fgetc(f) != EOF)
        goto miss;
    unsigned char sha[32];
    sha256_of(bin, (size_t)hdr.size, sha);
    if (memcmp(sha, hdr.payload_sha, 32) != 0)
        goto miss;
    fclose(f);
    *size = (size_t)hdr.size;
    return bin;
miss:
    free(bin);
    fclose(f);
    return NULL;
}

int clg__bincache_store(const char *dir, const unsigned char key[32], const unsigned char *bin,
                        size_t size)
{
    if (size == 0 || size > MAX_ENTRY_BYTES || !clg__make_dirs(dir))
        return 0;
    char *final = entry_path(dir, key, ".bin");
    if (!final)
        return 0;
    entry_header hdr;
    memset(&hdr, 0, sizeof hdr);
    memcpy(hdr.magic, CACHE_MAGIC, 8);
    hdr.format = CACHE_FORMAT;
    memcpy(hdr.key, key, 32);
    hdr.size = size;
    sha256_of(bin, size, hdr.payload_sha);
    const void *parts[2] = {&hdr, bin};
    size_t sizes[2] = {sizeof hdr, size};
    int ok = clg__write_atomic(final, parts, sizes, 2);
    free(final);
    return ok;
}

char *clg__device_file_path(const clg_ctx *ctx, const char *prefix, const char *suffix)
{
    if (!ctx->cache_dir)
        return NULL;
    /* One file per device model and driver: the name is a hash of what identifies them. */
    struct sha256_ctx h;
    unsigned char d[32];
    char hex[65];
    const clg_device_info *dev = &ctx->device;
    sha256_init(&h);
    hash_field(&h, dev->name);
    hash_field(&h, dev->vendor);
    hash_field(&h, dev->driver_version);
    sha256_update(&h, sizeof dev->compute_units, (const uint8_t *)&dev->compute_units);
    if (ctx->gpu_profile) /* its tuning and measured choices are not the CPU's */
        hash_field(&h, "gpu-profile");
    sha256_digest(&h, 32, d);
    clg__hex32(d, hex);
    hex[16] = '\0';
    size_t n = strlen(ctx->cache_dir) + strlen(prefix) + strlen(suffix) + 24;
    char *path = clg__malloc(n);
    if (path)
        snprintf(path, n, "%s/%s-%s%s", ctx->cache_dir, prefix, hex, suffix);
    return path;
}
