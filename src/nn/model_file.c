/* Model files: a versioned container of sections (network text, class names, parameters,
 * batch-norm state, the training layer's state) closed by a SHA-256 of everything before it.
 * Written atomically; verified whole before anything is built from it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nettle/sha2.h>

#include "nn/nn_internal.h"

#define MODEL_MAX_BYTES ((size_t)16 << 30)


typedef struct buf {
    unsigned char *p;
    size_t len, cap;
    int failed;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *bigger = clg__realloc(b->p, cap);
        if (!bigger) {
            b->failed = 1;
            return;
        }
        b->p = bigger;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_u32(buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(b, x, 4);
}

static void put_u64(buf *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void put_section(buf *b, uint32_t tag, const void *data, size_t n)
{
    put_u32(b, tag);
    put_u64(b, n);
    put(b, data, n);
}

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Floats of a parameter set, downloaded; NULL (with a status) on failure. */
static float *params_of(clg_net *net, clg_param_set which, size_t *n, clg_status *st)
{
    *n = clg_net_param_count(net, which);
    float *p = clg__malloc((*n ? *n : 1) * sizeof *p);
    if (!p) {
        *st = clg__oom(net->ctx, "model save");
        return NULL;
    }
    *st = *n ? clg_net_get_params(net, which, p, *n) : CLG_OK;
    if (*st != CLG_OK) {
        free(p);
        return NULL;
    }
    return p;
}

clg_status clg__model_save(clg_net *net, const char *path, const void *train_blob,
                           size_t train_len)
{
    if (!little_endian())
        return clg__fail(net->ctx, CLG_ERR_UNSUPPORTED, "model files need a little-endian host");
    size_t text_len, nl, ns;
    clg_status st = clg_net_text(net, NULL, 0, &text_len);
    char *text = st == CLG_OK ? clg__malloc(text_len + 1) : NULL;
    if (st == CLG_OK && !text)
        st = clg__oom(net->ctx, "model save");
    if (st == CLG_OK)
        st = clg_net_text(net, text, text_len + 1, NULL);
    float *learn = st == CLG_OK ? params_of(net, CLG_PARAMS_LEARNABLE, &nl, &st) : NULL;
    float *state = st == CLG_OK ? params_of(net, CLG_PARAMS_STATE, &ns, &st) : NULL;
    size_t bad = 0; /* a diverged network's: a file of them would only mislead */
    for (size_t i = 0; st == CLG_OK && i < nl; i++)
        bad += !isfinite(learn[i]);
    for (size_t i = 0; st == CLG_OK && i < ns; i++)
        bad += !isfinite(state[i]);
    if (st == CLG_OK && bad)
        st = clg__fail(net->ctx, CLG_ERR_NUMERICS, "%s not written: %zu of the network's %zu "
                       "weights and statistics are NaN or infinite (its training diverged?)",
                       path, bad, nl + ns);
    buf b = {0};
    if (st == CLG_OK) {
        put(&b, CLG__MODEL_MAGIC, 8);
        put_u32(&b, clg__net_is_graph(net) ? CLG__MODEL_VERSION_GRAPH : CLG__MODEL_VERSION);
        put_u32(&b, 0);
        put_u64(&b, 0); /* payload length, patched below */
        put_section(&b, CLG__SEC_NET, text, text_len);
        buf names = {0};
        for (size_t i = 0; i < net->classes; i++) {
            const char *name = clg_net_class_name(net, i);
            put(&names, name, strlen(name));
            put(&names, "\n", 1);
        }
        put_section(&b, CLG__SEC_CLASSES, names.p, names.len);
        b.failed |= names.failed;
        free(names.p);
        put_section(&b, CLG__SEC_LEARNABLE, learn, nl * sizeof(float));
        put_section(&b, CLG__SEC_STATE, state, ns * sizeof(float));
        buf meta = {0};
        put_u64(&meta, net->dropout_seed);
        put_section(&b, CLG__SEC_META, meta.p, meta.len);
        b.failed |= meta.failed;
        free(meta.p);
        if (train_blob)
            put_section(&b, CLG__SEC_TRAIN, train_blob, train_len);
        if (!b.failed) {
            uint64_t payload = b.len - CLG__MODEL_HEADER;
            for (int i = 0; i < 8; i++)
                b.p[16 + i] = (unsigned char)(payload >> (8 * i));
            struct sha256_ctx h;
            unsigned char digest[SHA256_DIGEST_SIZE];
            sha256_init(&h);
            sha256_update(&h, b.len, b.p);
            sha256_digest(&h, sizeof digest, digest);
            put(&b, digest, sizeof digest);
        }
        if (b.failed)
            st = clg__oom(net->ctx, "model save");
    }
    if (st == CLG_OK)
        st = clg__file_write_atomic(net->ctx, path, b.p, b.len);
    free(b.p);
    free(text);
    free(learn);
    free(state);
    return st;
}

clg_status clg_net_save(clg_net *net, const char *path)
{
    if (!net || !path || !*path)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_save: net and path must not be NULL or empty");
    return clg__model_save(net, path, NULL, 0);
}

static clg_status read_all(clg_ctx *ctx, const char *path, unsigned char **out, size_t *len)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return clg__fail(ctx, CLG_ERR_IO, "cannot open model file %s", path);
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = clg__malloc(cap);
    clg_status st = p ? CLG_OK : CLG_ERR_OUT_OF_HOST_MEMORY;
    while (st == CLG_OK) {
        if (n == cap) {
            unsigned char *bigger = cap < MODEL_MAX_BYTES ? clg__realloc(p, cap * 2) : NULL;
            if (!bigger) {
                st = cap < MODEL_MAX_BYTES ? CLG_ERR_OUT_OF_HOST_MEMORY : CLG_ERR_CORRUPT;
                break;
            }
            p = bigger;
            cap *= 2;
        }
        size_t got = fread(p + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (st == CLG_OK && ferror(f))
        st = CLG_ERR_IO;
    fclose(f);
    if (st != CLG_OK) {
        free(p);
        return clg__fail(ctx, st, "cannot read model file %s%s", path,
                         st == CLG_ERR_CORRUPT ? ": too large" : "");
    }
    *out = p;
    *len = n;
    return CLG_OK;
}

static clg_status corrupt(clg_ctx *ctx, const char *path, const char *why)
{
    return clg__fail(ctx, CLG_ERR_CORRUPT, "model file %s is corrupt: %s", path, why);
}

/* Checks the envelope (magic, version, length, checksum) and splits the sections. */
clg_status clg__model_verify(clg_ctx *ctx, const char *path, const unsigned char *p, size_t len,
                             clg__model_sections *s)
{
    char why[160];
    if (len < 8 || memcmp(p, CLG__MODEL_MAGIC, 8))
        return corrupt(ctx, path, "not a clgrad model file (bad magic)");
    if (len < CLG__MODEL_HEADER + SHA256_DIGEST_SIZE)
        return corrupt(ctx, path, "truncated header");
    uint32_t version = get_u32(p + 8);
    if (version != CLG__MODEL_VERSION && version != CLG__MODEL_VERSION_GRAPH) {
        snprintf(why, sizeof why, "version %u, this library reads versions %u and %u", version,
                 CLG__MODEL_VERSION, CLG__MODEL_VERSION_GRAPH);
        return corrupt(ctx, path, why);
    }
    uint64_t payload = get_u64(p + 16);
    if (payload != len - CLG__MODEL_HEADER - SHA256_DIGEST_SIZE) {
        snprintf(why, sizeof why, "%zu bytes where the header promises %llu (truncated or "
                 "extended)", len, (unsigned long long)(payload + CLG__MODEL_HEADER + SHA256_DIGEST_SIZE));
        return corrupt(ctx, path, why);
    }
    struct sha256_ctx h;
    unsigned char digest[SHA256_DIGEST_SIZE];
    sha256_init(&h);
    sha256_update(&h, len - SHA256_DIGEST_SIZE, p);
    sha256_digest(&h, sizeof digest, digest);
    if (memcmp(digest, p + len - SHA256_DIGEST_SIZE, SHA256_DIGEST_SIZE))
        return corrupt(ctx, path, "checksum mismatch");
    memset(s, 0, sizeof *s);
    size_t at = CLG__MODEL_HEADER, end = len - SHA256_DIGEST_SIZE;
    while (at < end) {
        if (end - at < 12)
            return corrupt(ctx, path, "truncated section header");
        uint32_t tag = get_u32(p + at);
        uint64_t n = get_u64(p + at + 4);
        at += 12;
        if (n > end - at)
            return corrupt(ctx, path, "section longer than the file");
        if (tag >= 1 && tag <= 6) {
            if (s->data[tag])
                return corrupt(ctx, path, "repeated section");
            s->data[tag] = p + at;
            s->len[tag] = (size_t)n;
        }
        at += (size_t)n; /* unknown sections are skipped: later minor additions */
    }
    if (!s->data[CLG__SEC_NET] || !s->data[CLG__SEC_LEARNABLE] || !s->data[CLG__SEC_STATE])
        return corrupt(ctx, path, "a required section is missing");
    return CLG_OK;
}

/* Class names: one per line, exactly the class count. */
static clg_status load_classes(clg_net *net, const char *path, const clg__model_sections *s)
{
    if (!s->data[CLG__SEC_CLASSES])
        return CLG_OK;
    char *text = clg__malloc(s->len[CLG__SEC_CLASSES] + 1);
    const char **names = clg__calloc(net->classes + 1, sizeof *names);
    clg_status st = text && names ? CLG_OK
                                  : clg__fail(net->ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t n = 0;
    if (st == CLG_OK) {
        memcpy(text, s->data[CLG__SEC_CLASSES], s->len[CLG__SEC_CLASSES]);
        text[s->len[CLG__SEC_CLASSES]] = '\0';
        for (char *line = text, *nl; *line && n <= net->classes; line = nl + 1) {
            nl = strchr(line, '\n');
            if (!nl)
                break;
            *nl = '\0';
            if (n < net->classes)
                names[n] = line;
            n++;
        }
        size_t len = s->len[CLG__SEC_CLASSES]; /* no NUL inside the names */
        if (n != net->classes || (len && memchr(text, '\0', len) != text + strlen(text)))
            st = corrupt(net->ctx, path, "class names do not match the class count");
    }
    if (st == CLG_OK && n) /* a regression net has none */
        st = clg_net_set_class_names(net, names, n);
    if (st != CLG_OK && st != CLG_ERR_OUT_OF_HOST_MEMORY)
        st = corrupt(net->ctx, path, "bad class names");
    free(text);
    free(names);
    return st;
}

clg_status clg__model_load(clg_ctx *ctx, const char *path, clg_net **out, void **train_blob,
                           size_t *train_len)
{
    *out = NULL;
    if (train_blob)
        *train_blob = NULL, *train_len = 0;
    if (!little_endian())
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "model files need a little-endian host");
    unsigned char *p;
    size_t len = 0;
    clg_status st = read_all(ctx, path, &p, &len);
    if (st != CLG_OK)
        return st;
    clg__model_sections s;
    clg_net *net = NULL;
    st = clg__model_verify(ctx, path, p, len, &s);
    char *text = NULL;
    if (st == CLG_OK) {
        text = clg__malloc(s.len[CLG__SEC_NET] + 1);
        if (!text)
            st = clg__oom(ctx, "model load");
    }
    if (st == CLG_OK) {
        memcpy(text, s.data[CLG__SEC_NET], s.len[CLG__SEC_NET]);
        text[s.len[CLG__SEC_NET]] = '\0';
        st = clg_net_parse(ctx, text, &net);
        if (st != CLG_OK && st != CLG_ERR_OUT_OF_HOST_MEMORY && st != CLG_ERR_OUT_OF_DEVICE_MEMORY)
            st = clg__fail(ctx, CLG_ERR_CORRUPT, "model file %s is corrupt: its network: %s", path,
                           clg_ctx_last_error(ctx));
    }
    size_t nl = net ? clg_net_param_count(net, CLG_PARAMS_LEARNABLE) : 0;
    size_t ns = net ? clg_net_param_count(net, CLG_PARAMS_STATE) : 0;
    if (st == CLG_OK && (s.len[CLG__SEC_LEARNABLE] != nl * sizeof(float) ||
                         s.len[CLG__SEC_STATE] != ns * sizeof(float)))
        st = corrupt(ctx, path, "parameter sizes do not match the network");
    if (st == CLG_OK && s.data[CLG__SEC_META] && s.len[CLG__SEC_META] >= 8)
        net->dropout_seed = get_u64(s.data[CLG__SEC_META]);
    /* Parameters go through aligned copies: sections sit at any byte offset. */
    float *tmp = st == CLG_OK ? clg__malloc((nl > ns ? nl : ns) * sizeof(float) + 4) : NULL;
    if (st == CLG_OK && !tmp)
        st = clg__oom(ctx, "model load");
    if (st == CLG_OK && nl) {
        memcpy(tmp, s.data[CLG__SEC_LEARNABLE], nl * sizeof(float));
        st = clg_net_set_params(net, CLG_PARAMS_LEARNABLE, tmp, nl);
    }
    if (st == CLG_OK && ns) {
        memcpy(tmp, s.data[CLG__SEC_STATE], ns * sizeof(float));
        st = clg_net_set_params(net, CLG_PARAMS_STATE, tmp, ns);
    }
    free(tmp);
    if (st == CLG_OK)
        st = load_classes(net, path, &s);
    if (st == CLG_OK && train_blob && s.data[CLG__SEC_TRAIN]) {
        *train_blob = clg__malloc(s.len[CLG__SEC_TRAIN] ? s.len[CLG__SEC_TRAIN] : 1);
        if (!*train_blob)
            st = clg__oom(ctx, "model load");
        else {
            memcpy(*train_blob, s.data[CLG__SEC_TRAIN], s.len[CLG__SEC_TRAIN]);
            *train_len = s.len[CLG__SEC_TRAIN];
        }
    }
    free(text);
    free(p);
    if (st != CLG_OK) {
        clg_net_destroy(net);
        return st;
    }
    *out = net;
    return CLG_OK;
}

clg_status clg_net_load(clg_ctx *ctx, const char *path, clg_net **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !path || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_net_load: ctx, path and out must not be NULL");
    return clg__model_load(ctx, path, out, NULL, NULL);
}
