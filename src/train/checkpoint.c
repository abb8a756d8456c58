/* Checkpoint files: <dir>/checkpoint-eEEEE-iIIIIIIII.clgm (the epoch and iteration training
 * goes on from), written atomically; after each, the newest three in the folder up to it are
 * kept, whichever run wrote them (a run and the runs it resumed from share a folder). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/train_internal.h"

enum { KEEP = 3 };

/* Whether name is a checkpoint file's name as clg__checkpoint_write makes it. */
static int is_checkpoint(const char *name)
{
    static const char pattern[] = "checkpoint-e####-i########.clgm"; /* #: a digit */
    if (strlen(name) != sizeof pattern - 1)
        return 0;
    for (size_t i = 0; pattern[i]; i++)
        if (pattern[i] == '#' ? name[i] < '0' || name[i] > '9' : name[i] != pattern[i])
            return 0;
    return 1;
}

static int newest_first(const void *a, const void *b)
{
    return -strcmp(*(char *const *)a, *(char *const *)b);
}

int clg__checkpoint_list(const char *dir, int written_only, char ***list, size_t *n)
{
    *list = NULL, *n = 0;
    DIR *d = opendir(dir);
    size_t cap = 0;
    int ok = 1;
    for (struct dirent *e; ok && d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (written_only ? !is_checkpoint(e->d_name)
                         : strncmp(e->d_name, "checkpoint-", 11) || len <= 5 ||
                               strcmp(e->d_name + len - 5, ".clgm"))
            continue;
        if (*n == cap) {
            char **grown = clg__realloc(*list, (cap = cap ? 2 * cap : 16) * sizeof **list);
            ok = grown != NULL;
            *list = grown ? grown : *list;
        }
        size_t size = strlen(dir) + len + 2;
        char *full = ok ? clg__malloc(size) : NULL;
        if ((ok = full != NULL)) {
            snprintf(full, size, "%s/%s", dir, e->d_name);
            (*list)[(*n)++] = full;
        }
    }
    if (d)
        closedir(d);
    if (ok)
        qsort(*list, *n, sizeof **list, newest_first);
    return ok;
}

void clg__checkpoint_list_free(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

/* Removes the checkpoints of dir older than the KEEP newest up to `upto` (a name: files that
 * sort after it belong to a run that went further, and are left alone). Best effort: a file
 * that cannot be listed or removed stays. */
static void prune(const char *dir, const char *upto)
{
    char **list;
    size_t n, kept = 0;
    if (!clg__checkpoint_list(dir, 1, &list, &n))
        n = 0; /* out of memory: nothing removed */
    for (size_t i = 0; i < n; i++) {
        const char *name = list[i] + strlen(dir) + 1;
        if (strcmp(name, upto) <= 0 && kept++ >= KEEP)
            unlink(list[i]); /* only after the newer files are safely in place */
    }
    clg__checkpoint_list_free(list, n);
}

clg_status clg__checkpoint_write(clg__trainer *t, char *path, size_t cap, int *io_failed)
{
    *io_failed = 0;
    unsigned char *blob = NULL;
    size_t len = 0;
    clg_status st = t->strategy->sync(t);
    if (st == CLG_OK)
        st = clg__train_state_save(t, &blob, &len);
    char name[64]; /* at an epoch's end, named after the epoch done, whatever the unit */
    snprintf(name, sizeof name, "checkpoint-e%04d-i%08llu.clgm",
             t->epoch + (t->next_iter >= t->iters_per_epoch), (unsigned long long)t->step);
    snprintf(path, cap, "%s/%s", t->o.checkpoint_path, name);
    if (st == CLG_OK) {
        st = clg__model_save(t->net, path, blob, len);
        *io_failed = st != CLG_OK; /* the file's: the training itself is sound */
    }
    free(blob);
    if (st == CLG_OK)
        prune(t->o.checkpoint_path, name);
    return st;
}
