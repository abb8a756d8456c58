/* Crash-safe file writes: a temporary file beside the target, synced, then renamed over it, so
 * readers see the old file or the new one, never a mix. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/runtime_internal.h"
#include "runtime/testing.h"

int clg__make_dirs(const char *dir)
{
    char *p = clg__strdup(dir);
    if (!p) {
        errno = ENOMEM; /* callers tell "out of memory" from "cannot create" by errno */
        return 0;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return 0;
        }
        *s = '/';
    }
    int ok = mkdir(p, 0755) == 0 || errno == EEXIST;
    free(p);
    return ok;
}

static int write_all(int fd, const void *data, size_t size)
{
    const char *p = data;
    while (size > 0) {
        ssize_t w = write(fd, p, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        p += w;
        size -= (size_t)w;
    }
    return 1;
}

int clg__write_atomic(const char *path, const void *const parts[], const size_t sizes[],
                      size_t nparts)
{
    static _Thread_local unsigned counter;
    size_t n = strlen(path) + 64;
    char *tmp = clg__malloc(n);
    if (!tmp)
        return 0;
    /* Unique per process, thread and call: concurrent writers never share a temporary file. */
    snprintf(tmp, n, "%s.%ld.%p.%u.tmp", path, (long)getpid(), (void *)&counter, counter++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    int ok = fd >= 0;
    for (size_t i = 0; ok && i < nparts; i++)
        ok = write_all(fd, parts[i], sizes[i]);
    ok = ok && fsync(fd) == 0;
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (ok)
        clg__testing_atomic_point(1); /* tests end the process here and at 2 */
    ok = ok && rename(tmp, path) == 0;
    if (ok)
        clg__testing_atomic_point(2);
    int err = errno; /* the reason, kept across the clean-up */
    if (!ok && fd >= 0)
        unlink(tmp);
    free(tmp);
    errno = err;
    return ok;
}

clg_status clg__file_write_atomic(clg_ctx *ctx, const char *path, const void *data, size_t size)
{
    char *dir = clg__strdup(path);
    if (!dir)
        return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "writing %s: out of memory", path);
    char *slash = strrchr(dir, '/');
    int ok = 1, err = 0;
    if (slash && slash != dir) {
        *slash = '\0';
        ok = clg__make_dirs(dir);
        err = errno;
    }
    free(dir);
    const void *parts[1] = {data};
    size_t sizes[1] = {size};
    if (ok) {
        errno = 0;
        ok = clg__write_atomic(path, parts, sizes, 1);
        err = errno;
    }
    if (!ok)
        return clg__fail(ctx, err == ENOMEM ? CLG_ERR_OUT_OF_HOST_MEMORY : CLG_ERR_IO,
                         "cannot write %s: %s", path, strerror(err));
    return CLG_OK;
}

char *clg__read_text_file(const char *path, size_t max_bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = clg__malloc(max_bytes + 1);
    size_t n = text ? fread(text, 1, max_bytes + 1, f) : 0;
    fclose(f);
    if (!text || n > max_bytes || memchr(text, '\0', n)) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}
