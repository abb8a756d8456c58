/* clg_tensor: create/destroy, host transfers, fill, copy and batch views. */
#include <stdint.h>
#include <stdlib.h>
#include "tensor_internal.h"

size_t clg_shape_numel(clg_shape s)
{
    size_t dims[4] = {s.n, s.c, s.h, s.w}, total = 1;
    for (int i = 0; i < 4; i++) {
        if (dims[i] != 0 && total > SIZE_MAX / dims[i])
            return 0;
        total *= dims[i];
    }
    return total;
}

clg_status clg_tensor_create(clg_ctx *ctx, clg_shape shape, clg_tensor **out)
{
    if (!out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_tensor_create: out must not be NULL");
    *out = NULL;
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_tensor_create: ctx is NULL");
    size_t numel = clg_shape_numel(shape);
    if (numel == 0 || numel > SIZE_MAX / sizeof(float))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_tensor_create: shape %zux%zux%zux%zu must have no zero dimension "
                         "and fit in memory", shape.n, shape.c, shape.h, shape.w);
    size_t bytes = numel * sizeof(float);
    const clg_device_info *d = &ctx->device;
    if (bytes > d->max_alloc_bytes || bytes > d->global_mem_bytes)
        return clg__fail(ctx, CLG_ERR_OUT_OF_DEVICE_MEMORY,
                         "clg_tensor_create: %zux%zux%zux%zu needs %zu bytes; %s allows at most "
                         "%llu bytes per buffer (%llu in all)", shape.n, shape.c, shape.h,
                         shape.w, bytes, d->name, (unsigned long long)d->max_alloc_bytes,
                         (unsigned long long)d->global_mem_bytes);
    clg_tensor *t = clg__calloc(1, sizeof *t);
    if (!t)
        return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_tensor_create: out of memory");
    cl_int err;
    t->mem = clg__create_buffer(ctx, bytes, &err);
    if (err != CL_SUCCESS) {
        free(t);
        return clg__fail_cl(ctx, err, "clg_tensor_create: allocating %zu bytes on %s", bytes,
                            d->name);
    }
    t->ctx = ctx;
    t->shape = shape;
    *out = t;
    return CLG_OK;
}

void clg_tensor_destroy(clg_tensor *t)
{
    if (!t)
        return;
    clReleaseMemObject(t->mem);
    free(t);
}

clg_shape clg_tensor_shape(const clg_tensor *t)
{
    clg_shape none = {0, 0, 0, 0};
    return t ? t->shape : none;
}

size_t clg_tensor_numel(const clg_tensor *t)
{
    return t ? clg_shape_numel(t->shape) : 0;
}

void *clg_tensor_cl_buffer(const clg_tensor *t, size_t *offset)
{
    if (offset)
        *offset = t ? t->offset : 0;
    return t ? (void *)t->mem : NULL;
}

clg_ctx *clg_tensor_ctx(const clg_tensor *t)
{
    return t ? t->ctx : NULL;
}

clg_status clg_tensor_upload(clg_tensor *t, const float *host, size_t count)
{
    if (!t || !host)
        return clg__fail(t ? t->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_tensor_upload: NULL %s",
                         t ? "host" : "tensor");
    size_t numel = clg_tensor_numel(t);
    if (count != numel)
        return clg__fail(t->ctx, CLG_ERR_SHAPE,
                         "clg_tensor_upload: %zu floats given for a %zux%zux%zux%zu tensor (%zu)",
                         count, t->shape.n, t->shape.c, t->shape.h, t->shape.w, numel);
    cl_int err = clEnqueueWriteBuffer(t->ctx->queue, t->mem, CL_TRUE, t->offset * sizeof(float),
                                      numel * sizeof(float), host, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return clg__fail_cl(t->ctx, err, "clg_tensor_upload of %zu floats", numel);
    return CLG_OK;
}

clg_status clg_tensor_download(const clg_tensor *t, float *host, size_t capacity)
{
    if (!t || !host)
        return clg__fail(t ? t->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_tensor_download: NULL %s",
                         t ? "host" : "tensor");
    size_t numel = clg_tensor_numel(t);
    if (capacity < numel)
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG,
                         "clg_tensor_download: host buffer holds %zu floats, tensor has %zu",
                         capacity, numel);
    cl_int err = clEnqueueReadBuffer(t->ctx->queue, t->mem, CL_TRUE, t->offset * sizeof(float),
                                     numel * sizeof(float), host, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return clg__fail_cl(t->ctx, err, "clg_tensor_download of %zu floats", numel);
    return CLG_OK;
}

/* An elementwise kernel (x, offset, n, value) over the whole tensor; the public function has
 * the kernel's name. */
static clg_status elementwise(clg_tensor *t, const char *kernel, float value)
{
    if (!t)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "%s: tensor is NULL", kernel);
    clg__launch l;
    clg_status st = clg__launch_begin(t->ctx, "tensor", CLG__TENSOR_OPTIONS, kernel, &l);
    if (st != CLG_OK)
        return st;
    size_t n = clg_tensor_numel(t);
    clg__arg_mem(&l, t->mem);
    clg__arg_u64(&l, t->offset);
    clg__arg_u64(&l, n);
    clg__arg_f32(&l, value);
    return clg__launch_elementwise(&l, n);
}

clg_status clg_tensor_fill(clg_tensor *t, float value)
{
    return elementwise(t, "clg_tensor_fill", value);
}

clg_status clg_tensor_scale(clg_tensor *t, float alpha)
{
    return elementwise(t, "clg_tensor_scale", alpha);
}

/* Whole-tensor reductions: work-groups enough to fill a GPU, few enough to add on the host. */
enum { REDUCE_GROUPS = 256, REDUCE_LOCAL = CLG__REDUCE_LOCAL };

/* Runs a reduction kernel (x, offset, n, partial) and reads its per-group partials (4-byte
 * floats or uints) into host; *groups receives how many there are. */
static clg_status reduce_partials(const clg_tensor *t, const char *kernel, void *host,
                                  size_t *groups)
{
    size_t n = clg_tensor_numel(t);
    *groups = (n + REDUCE_LOCAL - 1) / REDUCE_LOCAL;
    *groups = *groups < REDUCE_GROUPS ? *groups : REDUCE_GROUPS;
    cl_mem partial;
    clg_status st = clg__scratch_get(t->ctx, CLG__SCRATCH_REDUCE, REDUCE_GROUPS * 4, &partial);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(t->ctx, "tensor", CLG__TENSOR_OPTIONS, kernel, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, t->mem);
    clg__arg_u64(&l, t->offset);
    clg__arg_u64(&l, n);
    clg__arg_mem(&l, partial);
    size_t global[3] = {*groups * REDUCE_LOCAL, 1, 1}, local[3] = {REDUCE_LOCAL, 1, 1};
    st = clg__launch_run(&l, global, local);
    if (st == CLG_OK && *groups) {
        cl_int err = clEnqueueReadBuffer(t->ctx->queue, partial, CL_TRUE, 0, *groups * 4, host,
                                         0, NULL, NULL);
        if (err != CL_SUCCESS)
            st = clg__fail_cl(t->ctx, err, "%s: reading the partial results", kernel);
    }
    return st;
}

clg_status clg_tensor_sum_squares(const clg_tensor *t, double *out)
{
    if (!t || !out)
        return clg__fail(t ? t->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_tensor_sum_squares: tensor and out must not be NULL");
    float host[REDUCE_GROUPS];
    size_t groups = 0;
    clg_status st = reduce_partials(t, "clg_tensor_sumsq", host, &groups);
    double sum = 0.0;
    for (size_t g = 0; st == CLG_OK && g < groups; g++)
        sum += host[g];
    *out = st == CLG_OK ? sum : 0.0;
    return st;
}

clg_status clg_tensor_count_nonfinite(const clg_tensor *t, size_t *count)
{
    if (!t || !count)
        return clg__fail(t ? t->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_tensor_count_nonfinite: tensor and count must not be NULL");
    cl_uint host[REDUCE_GROUPS];
    size_t groups = 0, total = 0;
    clg_status st = reduce_partials(t, "clg_tensor_nonfinite", host, &groups);
    for (size_t g = 0; st == CLG_OK && g < groups; g++)
        total += host[g];
    *count = st == CLG_OK ? total : 0;
    return st;
}

int clg__shape_equal(clg_shape a, clg_shape b)
{
    return a.n == b.n && a.c == b.c && a.h == b.h && a.w == b.w;
}

clg_status clg__tensors_check(clg_ctx *ctx, const char *call, const clg_tensor *const *t, size_t n)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "%s: ctx is NULL", call);
    for (size_t i = 0; i < n; i++) {
        if (!t[i])
            return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: tensor argument %zu is NULL", call, i + 1);
        if (t[i]->ctx != ctx)
            return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: tensor argument %zu lives on another context",
                             call, i + 1);
    }
    return CLG_OK;
}

clg_status clg__tensors_same_numel(clg_ctx *ctx, const char *call, const clg_tensor *const *t, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (clg_tensor_numel(t[i]) != clg_tensor_numel(t[0]))
            return clg__fail(ctx, CLG_ERR_SHAPE, "%s: tensor argument %zu has %zu elements, argument 1 has %zu",
                             call, i + 1, clg_tensor_numel(t[i]), clg_tensor_numel(t[0]));
    return CLG_OK;
}

clg_status clg__tensor_expect_shape(clg_ctx *ctx, const char *call, const char *name,
                                    const clg_tensor *t, clg_shape want)
{
    clg_shape s = t->shape;
    if (!clg__shape_equal(s, want))
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: %s is %zux%zux%zux%zu, expected %zux%zux%zux%zu", call,
                         name, s.n, s.c, s.h, s.w, want.n, want.c, want.h, want.w);
    return CLG_OK;
}

void clg__arg_tensor(clg__launch *l, const clg_tensor *t)
{
    clg__arg_mem(l, t->mem);
    clg__arg_u64(l, t->offset);
}

clg_status clg_tensor_copy(clg_tensor *dst, const clg_tensor *src)
{
    if (!dst || !src)
        return clg__fail(dst ? dst->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_tensor_copy: NULL tensor");
    if (dst->ctx != src->ctx)
        return clg__fail(dst->ctx, CLG_ERR_INVALID_ARG,
                         "clg_tensor_copy: tensors live on different contexts");
    if (!clg__shape_equal(dst->shape, src->shape))
        return clg__fail(dst->ctx, CLG_ERR_SHAPE,
                         "clg_tensor_copy: dst %zux%zux%zux%zu differs from src %zux%zux%zux%zu",
                         dst->shape.n, dst->shape.c, dst->shape.h, dst->shape.w, src->shape.n,
                         src->shape.c, src->shape.h, src->shape.w);
    if (dst->mem == src->mem && dst->offset == src->offset)
        return CLG_OK;
    size_t bytes = clg_tensor_numel(src) * sizeof(float);
    size_t so = src->offset * sizeof(float), d0 = dst->offset * sizeof(float);
    if (dst->mem == src->mem && so < d0 + bytes && d0 < so + bytes)
        return clg__fail(dst->ctx, CLG_ERR_INVALID_ARG, "clg_tensor_copy: src and dst overlap");
    cl_int err = clEnqueueCopyBuffer(dst->ctx->queue, src->mem, dst->mem, so, d0, bytes, 0, NULL,
                                     NULL);
    if (err != CL_SUCCESS)
        return clg__fail_cl(dst->ctx, err, "clg_tensor_copy of %zu bytes", bytes);
    return CLG_OK;
}

clg_status clg_tensor_view_batch(clg_tensor *t, size_t first, size_t count, clg_tensor **out)
{
    if (!out)
        return clg__fail(t ? t->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_tensor_view_batch: out is NULL");
    *out = NULL;
    if (!t)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_tensor_view_batch: tensor is NULL");
    if (count == 0 || first >= t->shape.n || count > t->shape.n - first)
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG,
                         "clg_tensor_view_batch: samples [%zu, %zu) are not inside 0..%zu",
                         first, first + count, t->shape.n);
    clg_tensor *v = clg__calloc(1, sizeof *v);
    if (!v)
        return clg__fail(t->ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_tensor_view_batch: out of memory");
    *v = *t;
    v->shape.n = count;
    v->offset = t->offset + first * (t->shape.c * t->shape.h * t->shape.w);
    clRetainMemObject(v->mem);
    *out = v;
    return CLG_OK;
}

/* out = a + b (clg_tensor_add: max(., 0) when relu) or, with a mask, where mask > 0
 * (clg_tensor_add_masked). */
static clg_status add(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                      const clg_tensor *mask, clg_tensor *out, int relu)
{
    size_t n = clg_tensor_numel(out);
    if (clg_tensor_numel(a) != n || clg_tensor_numel(b) != n || (mask && clg_tensor_numel(mask) != n))
        return clg__fail(ctx, CLG_ERR_INTERNAL, "tensor add: %zu, %zu, %zu and %zu elements",
                         clg_tensor_numel(a), clg_tensor_numel(b),
                         mask ? clg_tensor_numel(mask) : n, n);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "tensor", CLG__TENSOR_OPTIONS,
                                      mask ? "clg_tensor_add_masked" : "clg_tensor_add", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, a);
    clg__arg_tensor(&l, b);
    if (mask)
        clg__arg_tensor(&l, mask);
    clg__arg_tensor(&l, out);
    clg__arg_u64(&l, n);
    if (!mask)
        clg__arg_u32(&l, relu != 0);
    return clg__launch_elementwise(&l, n);
}

clg_status clg__tensor_add(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                           clg_tensor *out, int relu)
{
    return add(ctx, a, b, NULL, out, relu);
}

clg_status clg__tensor_add_masked(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                                  const clg_tensor *mask, clg_tensor *out)
{
    return add(ctx, a, b, mask, out, 0);
}

clg_status clg__tensor_stack(clg_ctx *ctx, clg_tensor *narrow, clg_tensor *wide, size_t at,
                             int to_wide)
{
    clg_shape s = narrow->shape, w = wide->shape;
    if (s.n != w.n || s.h != w.h || s.w != w.w || at + s.c > w.c)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "tensor stack: %zux%zux%zux%zu at channel %zu "
                         "of %zux%zux%zux%zu", s.n, s.c, s.h, s.w, at, w.n, w.c, w.h, w.w);
    size_t n = clg_tensor_numel(narrow), hw = s.h * s.w;
    clg__launch l;
    if (!clg_ctx_decides_as_gpu(ctx)) { /* CPUs: each image's block a run, in pieces */
        size_t per = s.c * hw, pieces = (per + 4095) / 4096;
        clg_status st = clg__launch_begin(ctx, "tensor", CLG__TENSOR_OPTIONS,
                                          "clg_tensor_stack_runs", &l);
        if (st != CLG_OK)
            return st;
        clg__arg_tensor(&l, narrow);
        clg__arg_tensor(&l, wide);
        clg__arg_u32(&l, s.n);
        clg__arg_u32(&l, pieces);
        clg__arg_u64(&l, per);
        clg__arg_u64(&l, w.c * hw);
        clg__arg_u64(&l, at * hw);
        clg__arg_u32(&l, to_wide != 0);
        size_t global[3] = {s.n * pieces, 1, 1}, local[3] = {1, 1, 1};
        return clg__launch_run(&l, global, local);
    }
    clg_status st = clg__launch_begin(ctx, "tensor", CLG__TENSOR_OPTIONS, "clg_tensor_stack", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, narrow);
    clg__arg_tensor(&l, wide);
    clg__arg_u64(&l, n);
    clg__arg_u64(&l, s.c * hw);
    clg__arg_u64(&l, w.c * hw);
    clg__arg_u64(&l, at * hw);
    clg__arg_u32(&l, to_wide != 0);
    return clg__launch_elementwise(&l, n);
}

clg_status clg__tensor_shuffle(clg_ctx *ctx, const clg_tensor *x, clg_tensor *y, size_t groups)
{
    clg_shape s = x->shape;
    if (!groups || s.c % groups || !clg__shape_equal(s, y->shape))
        return clg__fail(ctx, CLG_ERR_INTERNAL, "tensor shuffle: %zu groups of %zux%zux%zux%zu",
                         groups, s.n, s.c, s.h, s.w);
    size_t n = clg_tensor_numel(x), hw = s.h * s.w, planes = s.n * s.c;
    clg__launch l;
    if (!clg_ctx_decides_as_gpu(ctx)) { /* CPUs: whole planes, at least 2,048 values an item */
        size_t per = clg__runs_per_item(ctx, planes, hw, 2048);
        clg_status st = clg__launch_begin(ctx, "tensor", CLG__TENSOR_OPTIONS,
                                          "clg_tensor_shuffle_planes", &l);
        if (st != CLG_OK)
            return st;
        clg__arg_tensor(&l, x);
        clg__arg_tensor(&l, y);
        clg__arg_u32(&l, planes);
        clg__arg_u32(&l, per);
        clg__arg_u32(&l, s.c);
        clg__arg_u32(&l, groups);
        clg__arg_u32(&l, hw);
        return clg__launch_runs(&l, planes, per);
    }
    clg_status st = clg__launch_begin(ctx, "tensor", CLG__TENSOR_OPTIONS, "clg_tensor_shuffle", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, y);
    clg__arg_u64(&l, n);
    clg__arg_u32(&l, s.c);
    clg__arg_u32(&l, groups);
    clg__arg_u32(&l, s.h * s.w);
    return clg__launch_elementwise(&l, n);
}
