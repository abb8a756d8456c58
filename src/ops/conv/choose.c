/* Which convolution algorithm runs: what applies and fits the workspace, an explicit choice or
 * CLGRAD_CONV_ALGO, the `find` results stored per device, or a heuristic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/conv/conv_internal.h"

#define FIND_MAX_BYTES (1 << 20)
#define KEY_LEN 160

typedef struct find_entry {
    char key[KEY_LEN];
    clg_conv_algo algo;
} find_entry;

typedef struct conv_state {
    find_entry *entries;
    size_t count, cap;
    int loaded;
} conv_state;

static void state_free(void *p)
{
    conv_state *s = p;
    if (s)
        free(s->entries);
    free(s);
}

static void make_key(const clg__conv_geom *g, clg_conv_pass pass, char out[KEY_LEN])
{
    snprintf(out, KEY_LEN, "p%d n%zu c%zu h%zu w%zu k%zu r%zu s%zu st%zux%zu pad%zu,%zu,%zu,%zu dil%zux%zu g%zu",
             (int)pass, g->N, g->C, g->H, g->W, g->K, g->R, g->S, g->sh, g->sw, g->pt, g->pb, g->pl,
             g->pr, g->dh, g->dw, g->G);
}


static int remember(conv_state *s, const char *key, clg_conv_algo algo)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->entries[i].key, key) == 0) {
            s->entries[i].algo = algo;
            return 1;
        }
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        find_entry *e = clg__realloc(s->entries, cap * sizeof *e);
        if (!e)
            return 0;
        s->entries = e;
        s->cap = cap;
    }
    snprintf(s->entries[s->count].key, KEY_LEN, "%s", key);
    s->entries[s->count++].algo = algo;
    return 1;
}

/* Parses find-file text: lines "<algo name>\t<key>"; lines that do not parse are skipped (a
 * damaged file costs a new search, never an error). Returns the entries taken. */
size_t clg__conv_find_parse(void *state, const char *text)
{
    conv_state *s = state;
    size_t taken = 0;
    const char *line = text;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *tab = memchr(line, '\t', len);
        if (tab && (size_t)(tab - line) < 16 && len - (size_t)(tab - line) - 1 < KEY_LEN) {
            char name[16], key[KEY_LEN];
            memcpy(name, line, (size_t)(tab - line));
            name[tab - line] = '\0';
            size_t klen = len - (size_t)(tab - line) - 1;
            memcpy(key, tab + 1, klen);
            key[klen] = '\0';
            clg_conv_algo a = clg__conv_algo_named(name);
            if (clg__conv_algo_concrete(a) && key[0] == 'p')
                taken += (size_t)remember(s, key, a);
        }
        line = end ? end + 1 : NULL;
    }
    return taken;
}

void *clg__conv_find_state_create(void)
{
    return clg__calloc(1, sizeof(conv_state));
}

void clg__conv_find_state_destroy(void *state)
{
    state_free(state);
}

static conv_state *state_get(clg_ctx *ctx)
{
    clg__ext *e = &ctx->ext[CLG__EXT_CONV];
    if (!e->data) {
        conv_state *s = clg__calloc(1, sizeof *s);
        if (!s)
            return NULL;
        e->data = s;
        e->destroy = state_free;
    }
    conv_state *s = e->data;
    if (!s->loaded) {
        s->loaded = 1;
        char *path = clg__device_file_path(ctx, "conv", ".find");
        char *text = path ? clg__read_text_file(path, FIND_MAX_BYTES) : NULL;
        if (text)
            clg__conv_find_parse(s, text);
        free(text);
        free(path);
    }
    return s;
}

static void store(clg_ctx *ctx, conv_state *s)
{
    char *path = clg__device_file_path(ctx, "conv", ".find");
    size_t size = s->count * (KEY_LEN + 20) + 1;
    char *text = clg__malloc(size);
    if (path && text) {
        size_t used = 0;
        text[0] = '\0';
        for (size_t i = 0; i < s->count; i++)
            used += (size_t)snprintf(text + used, size - used, "%s\t%s\n",
                                     clg_conv_algo_name(s->entries[i].algo), s->entries[i].key);
        char saved[CLG__ERR_TEXT];
        memcpy(saved, ctx->last_error, sizeof saved);
        clg__file_write_atomic(ctx, path, text, used); /* a cache: failure only costs time */
        memcpy(ctx->last_error, saved, sizeof saved);
    }
    free(text);
    free(path);
}


static int fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass, clg_conv_algo a)
{
    size_t lo, hi;
    char saved[CLG__ERR_TEXT];
    memcpy(saved, ctx->last_error, sizeof saved);
    int ok = clg__conv_algo_fits(ctx, g, pass, a, &lo, &hi) == CLG_OK;
    memcpy(ctx->last_error, saved, sizeof saved); /* probing is not failing */
    return ok;
}

/* Without measurements: 1x1 goes straight to GEMM. On CPUs, 3x3 and 5x5 stride-1 layers with
 * enough channels to fill the vector lanes and amortise the transforms use Winograd (4x and
 * 2.78x fewer multiplications; measured on c2 at 1.5x the implicit algorithm in all three
 * passes), other layers whose lanes (output channels; input channels for backward-data)
 * fill at least half a vector the implicit shifted-row products (1.3-2x im2col on c2: no
 * column matrix to write and read back; ResNet-20's 3x3 stride-2 layers 1.3-2x in every
 * pass). Both keep whole register blocks per work-item, a CPU's way. GPUs take Winograd for
 * such layers with 32 or more channels in and out (its 36 products are then GEMMs large
 * enough for the tiles; by count, on c2-like layers at batch 256, a quarter of the
 * multiplications for about twice the memory traffic of a pass, which a GPU's 10-15 FLOP per
 * byte easily pays), else the implicit GEMM on local-memory tiles (no column matrix
 * either), except a strided layer's data gradient, where most of its taps are zeros
 * (im2col's col2im visits only the real ones). (GPU choices not measured yet: no GPU was at
 * hand; `find` measures them.) The rest im2col when its workspace fits. */
static clg_conv_algo heuristic(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    if (fits(ctx, g, pass, CLG_CONV_ALGO_DEPTHWISE)) /* MobileNet-v2's: 2-10x the others */
        return CLG_CONV_ALGO_DEPTHWISE;
    if (fits(ctx, g, pass, CLG_CONV_ALGO_GEMM))
        return CLG_CONV_ALGO_GEMM;
    int cpu = !clg_ctx_decides_as_gpu(ctx);
    int strided = g->sh > 1 || g->sw > 1;
    if (!cpu && g->Cg >= 32 && g->Kg >= 32 && fits(ctx, g, pass, CLG_CONV_ALGO_WINOGRAD))
        return CLG_CONV_ALGO_WINOGRAD;
    if (!cpu && !(pass == CLG_CONV_BWD_DATA && strided && fits(ctx, g, pass, CLG_CONV_ALGO_IM2COL)))
        return CLG_CONV_ALGO_IMPLICIT;
    if (cpu && g->Cg >= 16 && g->Kg >= 16 && fits(ctx, g, pass, CLG_CONV_ALGO_WINOGRAD))
        return CLG_CONV_ALGO_WINOGRAD;
    /* a first layer's forward pass (up to 4 channels in) has a kernel of its own in the
     * implicit algorithm (stem.c: MobileNet-v2's 3x3 stride-2 layer at batch 32 12.8 ms by
     * im2col against 8.5-9.3 by it, alternating runs on a Zen 4) */
    if (cpu && clg__conv_stem_applies(g, pass))
        return CLG_CONV_ALGO_IMPLICIT;
    size_t lanes = pass == CLG_CONV_BWD_DATA ? g->Cg : g->Kg;
    /* a forward pass over 1 to 3 input channels in groups sums too few channels per tap in
     * the shifted-row products: im2col's one product over every tap instead (the default
     * network's first layer, before the first-layer kernel: 1.6 against 3.7 ms) */
    int few_inputs = pass == CLG_CONV_FWD && g->Cg < 4;
    /* a strided 1x1 layer (a projection shortcut) uses a quarter of its input: im2col gathers
     * just that, where the shifted rows' padded copy copies it all (ResNet-20's: 0.25-0.3
     * against 0.42-0.49 ms forward) */
    int strided_1x1 = (g->sh > 1 || g->sw > 1) && g->R == 1 && g->S == 1 &&
                      pass != CLG_CONV_BWD_WEIGHTS;
    /* the data gradient of a strided layer whose windows do not overlap (a 2x2 stride-2
     * down-sampling; a transposed convolution's forward pass): im2col's col2im visits each
     * tap once, where the shifted rows also compute the zeros between the taps (U-Net's
     * up-sampling at batch 32: 1.6 and 2.3 against 2.7 and 5.2 ms) */
    int disjoint_bwd = pass == CLG_CONV_BWD_DATA && strided && g->R <= g->sh && g->S <= g->sw;
    /* a strided layer's forward pass whose weights fill much of a core's L2 (over 512 KiB):
     * the shifted rows' pixel-row products stream the weights again for every few pixels,
     * where im2col's product reads each column of them once an image (ResNet-50's 3x3
     * stride-2 layers at batch 32, Xeon VM family 6 model 207, ms: 256 channels 56x56 ->
     * 28x28 430-438 against 310-362, 28 -> 14 97-112 against 54-61, 512 14 -> 7 114-177
     * against 45-72; 128 channels, 590 KiB, 56 -> 28: 32.9-33.1 against 29.4 once im2col
     * copied stride-2 rows as vectors) */
    int big_strided = pass == CLG_CONV_FWD && strided &&
                      g->Cg * g->R * g->S * g->Kg * sizeof(float) > ((size_t)1 << 19);
    if (cpu && lanes >= 16 && !few_inputs && !strided_1x1 && !disjoint_bwd && !big_strided &&
        clg__conv_implicit_fits(ctx, g, pass))
        return CLG_CONV_ALGO_IMPLICIT;
    if (fits(ctx, g, pass, CLG_CONV_ALGO_IM2COL))
        return CLG_CONV_ALGO_IM2COL;
    return CLG_CONV_ALGO_IMPLICIT;
}

/* Times every algorithm that applies (a warm-up run, then a timed one) on the caller's tensors
 * and returns the fastest. */
static clg_status find_best(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                            const clg_tensor *a, const clg_tensor *b, clg_tensor *out,
                            clg_conv_algo *best)
{
    double best_t = 0;
    *best = CLG_CONV_ALGO_IMPLICIT;
    for (int i = CLG_CONV_ALGO_IM2COL; i <= CLG_CONV_ALGO_DEPTHWISE; i++) {
        clg_conv_algo algo = (clg_conv_algo)i;
        if (!clg__conv_algo_concrete(i) || !fits(ctx, g, pass, algo))
            continue;
        double t = 0;
        for (int rep = 0; rep < 2; rep++) {
            double t0 = clg__now();
            clg_status st = clg__conv_run(ctx, g, pass, algo, a, b, out);
            if (st == CLG_OK)
                st = clg_ctx_finish(ctx);
            if (st != CLG_OK)
                return st;
            t = clg__now() - t0;
        }
        if (best_t == 0 || t < best_t) {
            best_t = t;
            *best = algo;
        }
    }
    return CLG_OK;
}

clg_status clg__conv_resolve(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                             const clg__conv_geom *g, const clg_tensor *a, const clg_tensor *b,
                             clg_tensor *out, clg_conv_algo *algo)
{
    clg_conv_algo want = d->algo;
    const char *env = ctx->env.conv_algo;
    if (want == CLG_CONV_ALGO_AUTO && *env) {
        want = clg__conv_algo_named(env);
        if ((int)want < 0)
            return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                             "CLGRAD_CONV_ALGO=%s: expected auto, find, im2col, implicit, winograd, gemm or depthwise", env);
    }
    if (clg__conv_algo_concrete(want)) {
        size_t lo = 0, hi = 0;
        clg_status st = clg__conv_algo_fits(ctx, g, pass, want, &lo, &hi);
        if (st == CLG_OK) {
            *algo = want;
            return CLG_OK;
        }
        if (lo > g->workspace_limit && st == CLG_ERR_UNSUPPORTED && want != CLG_CONV_ALGO_GEMM) {
            *algo = CLG_CONV_ALGO_IMPLICIT; /* too big for the workspace: one that needs none */
            return CLG_OK;
        }
        return st;
    }
    conv_state *s = state_get(ctx);
    char key[KEY_LEN];
    make_key(g, pass, key);
    for (size_t i = 0; s && i < s->count; i++)
        if (strcmp(s->entries[i].key, key) == 0 && fits(ctx, g, pass, s->entries[i].algo)) {
            *algo = s->entries[i].algo;
            return CLG_OK;
        }
    if (want != CLG_CONV_ALGO_FIND || !a) {
        *algo = heuristic(ctx, g, pass);
        return CLG_OK;
    }
    clg_status st = find_best(ctx, g, pass, a, b, out, algo);
    if (st == CLG_OK && s && remember(s, key, *algo))
        store(ctx, s);
    return st;
}

clg_status clg_conv2d_choose(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                             clg_shape x, clg_shape w, clg_conv_algo *out)
{
    if (!ctx || !out || (unsigned)pass > CLG_CONV_BWD_WEIGHTS)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_conv2d_choose: bad argument");
    clg__conv_geom g = {0};
    clg_status st = clg__conv_geom_make(ctx, d, x, w, &g);
    if (st != CLG_OK)
        return st;
    /* FIND needs tensors to time on: make scratch ones of the right shapes. */
    clg_tensor *t[3] = {NULL, NULL, NULL};
    if (d->algo == CLG_CONV_ALGO_FIND) {
        clg_shape y = {g.N, g.K, g.P, g.Q};
        clg_shape shapes[3][3] = {{x, w, y}, {y, w, x}, {x, y, w}};
        for (int i = 0; i < 3 && st == CLG_OK; i++) {
            st = clg_tensor_create(ctx, shapes[pass][i], &t[i]);
            if (st == CLG_OK)
                st = clg_tensor_fill(t[i], 0.5f);
        }
    }
    if (st == CLG_OK)
        st = clg__conv_resolve(ctx, d, pass, &g, t[0], t[1], t[2], out);
    for (int i = 0; i < 3; i++)
        clg_tensor_destroy(t[i]);
    return st;
}
