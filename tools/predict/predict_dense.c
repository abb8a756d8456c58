/* clgrad-predict for image-to-image models (predict_dense.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "png_out.h"
#include "predict_dense.h"
#include "tool_error.h"

/* A colour per class for overlays: evenly spaced hues, background (class 0) left as is. */
static void class_colour(size_t k, float rgb[3])
{
    float h = (float)((k * 0.61803398875) - (size_t)(k * 0.61803398875)) * 6.0f;
    int i = (int)h;
    float f = h - (float)i, q = 1 - f;
    const float t[6][3] = {{1, f, 0}, {q, 1, 0}, {0, 1, f}, {0, q, 1}, {f, 0, 1}, {1, 0, q}};
    memcpy(rgb, t[i % 6], sizeof t[0]);
}

/* OUT_DIR/<base name of path without its extension><suffix>.png */
static void out_path(const char *dir, const char *path, const char *suffix, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    int len = dot ? (int)(dot - base) : (int)strlen(base);
    snprintf(out, cap, "%s/%.*s%s.png", dir, len, base, suffix);
}

/* The segmentation's outputs: the label map (class as gray value) and the overlay. */
static int write_labels(const dense_settings *s, const char *path, const float *img,
                        const float *probs, size_t K, clg_shape in, size_t *counts)
{
    size_t HW = in.h * in.w;
    unsigned char *map = malloc(HW), *rgb = s->overlay ? malloc(3 * HW) : NULL;
    if (!map || (s->overlay && !rgb)) {
        free(map), free(rgb);
        return 0;
    }
    for (size_t p = 0; p < HW; p++) {
        size_t best = 0;
        for (size_t k = 1; k < K; k++)
            best = probs[k * HW + p] > probs[best * HW + p] ? k : best;
        map[p] = (unsigned char)(best < 255 ? best : 255);
        counts[best]++;
        for (size_t c = 0; rgb && c < 3; c++) { /* the image, half tinted by the class */
            float colour[3], v = img[(in.c == 3 ? c : 0) * HW + p];
            class_colour(best, colour);
            v = best ? 0.5f * v + 0.5f * colour[c] : v;
            rgb[3 * p + c] = (unsigned char)(255.0f * (v < 0 ? 0 : v > 1 ? 1 : v) + 0.5f);
        }
    }
    char file[4352];
    out_path(s->out_dir, path, "", file, sizeof file);
    int ok = write_png_bytes(file, map, 1, in.h, in.w);
    if (ok && rgb) {
        out_path(s->out_dir, path, "-overlay", file, sizeof file);
        ok = write_png_bytes(file, rgb, 3, in.h, in.w);
    }
    if (!ok)
        fprintf(stderr, "clgrad-predict: cannot write %s\n", file);
    free(map), free(rgb);
    return ok;
}

/* The net for an h x w image: the model itself at its own size, else a copy at this size
 * (kept in *sized for the next image of that size). */
static clg_net *net_for(clg_net *net, clg_net **sized, size_t h, size_t w)
{
    clg_shape in = clg_net_input_shape(net);
    if (in.h == h && in.w == w)
        return net;
    clg_shape have = *sized ? clg_net_input_shape(*sized) : in;
    if (*sized && have.h == h && have.w == w)
        return *sized;
    clg_net_destroy(*sized);
    *sized = NULL;
    clg_status st = clg_net_resized(net, h, w, sized);
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-predict: %s\n", tool_message(st, clg_ctx_last_error(clg_net_ctx(net))));
    return st == CLG_OK ? *sized : NULL;
}

int predict_dense(clg_net *model, char *const *paths, size_t n, const dense_settings *s)
{
    if (!s->out_dir) {
        fprintf(stderr, "clgrad-predict: this model maps images to images: give --out-dir DIR "
                "for its results\n");
        return 2;
    }
    if (!make_dir(s->out_dir)) {
        fprintf(stderr, "clgrad-predict: cannot create %s: %s\n", s->out_dir, strerror(errno));
        return 1;
    }
    int seg = clg_net_task(model) == CLG_TASK_SEGMENTATION, rc = 0;
    size_t K = clg_net_class_count(model), failed = 0;
    size_t *counts = calloc(K ? K : 1, sizeof *counts);
    clg_net *sized = NULL;
    if (s->json)
        printf("[");
    for (size_t i = 0; counts && i < n; i++) {
        clg_shape in = clg_net_input_shape(model);
        size_t h, w;
        clg_status st = clg_image_size(paths[i], &h, &w);
        float *x = st == CLG_OK ? malloc(in.c * h * w * sizeof *x) : NULL;
        if (st == CLG_OK && !x)
            st = CLG_ERR_OUT_OF_HOST_MEMORY;
        if (st == CLG_OK)
            st = clg_image_read(paths[i], in.c, h, w, x);
        clg_net *net = st == CLG_OK ? net_for(model, &sized, h, w) : NULL;
        size_t out = net ? clg_net_output_count(net) : 0;
        float *y = net ? malloc(out * sizeof *y) : NULL;
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-predict: %s: %s\n", paths[i], tool_message(st, clg_last_error()));
            failed++;
        } else if (!net || !y || clg_net_predict(net, x, 1, y) != CLG_OK) {
            if (net && y)
                fprintf(stderr, "clgrad-predict: %s: %s\n", paths[i],
                        clg_ctx_last_error(clg_net_ctx(net)));
            rc = 1;
        } else {
            clg_shape o = clg_net_output_shape(net);
            memset(counts, 0, K * sizeof *counts);
            int ok;
            if (seg) {
                ok = write_labels(s, paths[i], x, y, K, (clg_shape){1, in.c, h, w}, counts);
            } else {
                for (size_t k = 0; s->residual && k < out && out == in.c * h * w; k++)
                    y[k] = x[k] - y[k];
                char file[4352];
                out_path(s->out_dir, paths[i], "", file, sizeof file);
                ok = (o.c == 1 || o.c == 3) && write_png_planar(file, y, o.c, o.h, o.w);
                if (!ok)
                    fprintf(stderr, "clgrad-predict: cannot write %s (%zu channels)\n", file, o.c);
            }
            rc |= !ok;
            if (s->json) {
                printf("%s{\"image\":", i ? "," : "");
                json_string(paths[i]);
                if (seg) {
                    printf(",\"pixels\":{");
                    for (size_t k = 0, first = 1; k < K; k++)
                        if (counts[k]) {
                            printf("%s", first ? "" : ",");
                            json_string(clg_net_class_name(model, k));
                            printf(":%zu", counts[k]);
                            first = 0;
                        }
                    printf("}");
                }
                printf("}");
            } else {
                printf("%s: %zux%zu", paths[i], h, w);
                for (size_t k = 0; seg && k < K; k++)
                    if (counts[k] && k) /* the classes found, by their share of the pixels */
                        printf(" %s %.1f%%", clg_net_class_name(model, k),
                               100.0 * (double)counts[k] / (double)(h * w));
                printf("\n");
            }
        }
        free(x), free(y);
    }
    if (s->json)
        printf("]\n");
    if (!counts)
        fprintf(stderr, "clgrad-predict: out of memory\n");
    if (failed)
        fprintf(stderr, "clgrad-predict: %zu of %zu image%s could not be read\n", failed, n,
                n == 1 ? "" : "s");
    clg_net_destroy(sized);
    free(counts);
    return rc || failed || !counts ? 1 : 0;
}
