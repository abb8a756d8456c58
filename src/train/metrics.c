/* Measures of image-to-image networks (metrics.h): segmentation metrics from a pixel confusion
 * matrix, PSNR and SSIM, and a restoration net's over a datastore. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/metrics.h"
#include "train/train_internal.h"

clg_status clg_segmentation_metrics_from(const size_t *counts, size_t K,
                                         clg_segmentation_metrics *m, double *class_acc,
                                         double *class_iou)
{
    if (!counts || !m || !K)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_segmentation_metrics_from: counts and "
                         "m must not be NULL, K >= 1");
    memset(m, 0, sizeof *m);
    double total = 0, correct = 0, acc_sum = 0, iou_sum = 0, weighted = 0;
    for (size_t k = 0; k < K * K; k++)
        total += (double)counts[k];
    for (size_t t = 0; t < K; t++) {
        double row = 0, col = 0, tp = (double)counts[t * K + t];
        for (size_t p = 0; p < K; p++) {
            row += (double)counts[t * K + p]; /* pixels of class t */
            col += (double)counts[p * K + t]; /* pixels predicted t */
        }
        correct += tp;
        double acc = row > 0 ? tp / row : NAN, iou = row > 0 ? tp / (row + col - tp) : NAN;
        if (class_acc)
            class_acc[t] = acc;
        if (class_iou)
            class_iou[t] = iou;
        if (row > 0) {
            m->classes_present++;
            acc_sum += acc;
            iou_sum += iou;
            weighted += iou * row;
        }
    }
    if (total > 0) {
        m->global_accuracy = correct / total;
        m->mean_accuracy = acc_sum / (double)m->classes_present;
        m->mean_iou = iou_sum / (double)m->classes_present;
        m->weighted_iou = weighted / total;
    }
    return CLG_OK;
}

double clg_psnr(const float *a, const float *b, size_t n, double peak)
{
    double se = 0;
    for (size_t i = 0; i < n; i++)
        se += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return se > 0 ? 10.0 * log10(peak * peak / (se / (double)n)) : INFINITY;
}

double clg_ssim(const float *a, const float *b, size_t c, size_t h, size_t w, double peak)
{
    enum { WIN = 11 };
    size_t wh = h < WIN ? h : WIN, ww = w < WIN ? w : WIN;
    double g[WIN][WIN], gsum = 0;
    for (size_t i = 0; i < wh; i++) /* the Gaussian, centred in the (cut) window */
        for (size_t j = 0; j < ww; j++) {
            double y = (double)i - (double)(wh - 1) / 2, x = (double)j - (double)(ww - 1) / 2;
            g[i][j] = exp(-(x * x + y * y) / (2 * 1.5 * 1.5));
            gsum += g[i][j];
        }
    double c1 = (0.01 * peak) * (0.01 * peak), c2 = (0.03 * peak) * (0.03 * peak), sum = 0;
    size_t count = 0;
    for (size_t ch = 0; ch < c; ch++) {
        const float *pa = a + ch * h * w, *pb = b + ch * h * w;
        for (size_t y0 = 0; y0 + wh <= h; y0++)
            for (size_t x0 = 0; x0 + ww <= w; x0++) {
                double ma = 0, mb = 0, aa = 0, bb = 0, ab = 0;
                for (size_t i = 0; i < wh; i++)
                    for (size_t j = 0; j < ww; j++) {
                        double k = g[i][j] / gsum, va = pa[(y0 + i) * w + x0 + j];
                        double vb = pb[(y0 + i) * w + x0 + j];
                        ma += k * va, mb += k * vb;
                        aa += k * va * va, bb += k * vb * vb, ab += k * va * vb;
                    }
                double sa = aa - ma * ma, sb = bb - mb * mb, sab = ab - ma * mb;
                sum += ((2 * ma * mb + c1) * (2 * sab + c2)) /
                       ((ma * ma + mb * mb + c1) * (sa + sb + c2));
                count++;
            }
    }
    return count ? sum / (double)count : 1.0;
}

clg_status clg_net_evaluate_restoration(clg_net *net, clg_datastore *ds, size_t batch,
                                        int residual, clg_restoration_quality *q)
{
    const char *call = "clg_net_evaluate_restoration";
    if (!net || !ds || !q || !batch)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG, "%s: net, ds and q must "
                         "not be NULL, batch > 0", call);
    memset(q, 0, sizeof q[0]);
    clg_status st = clg__check_data(net, ds, call);
    clg_shape s = clg_datastore_sample_shape(ds);
    if (st == CLG_OK && clg_net_output_count(net) != clg_shape_numel(s))
        st = clg__fail(net->ctx, CLG_ERR_SHAPE, "%s: the net's output is not its input's shape "
                       "(an image-to-image network)", call);
    if (st != CLG_OK)
        return st;
    size_t n = clg_datastore_size(ds), per = clg_shape_numel(s);
    batch = batch < n ? batch : (n ? n : 1);
    float *x = clg__malloc(batch * per * sizeof *x), *t = clg__malloc(batch * per * sizeof *t);
    float *y = clg__malloc(batch * per * sizeof *y);
    size_t *idx = clg__malloc(batch * sizeof *idx);
    if (!x || !t || !y || !idx)
        st = clg__oom(net->ctx, call);
    for (size_t done = 0; st == CLG_OK && done < n;) {
        size_t m = n - done < batch ? n - done : batch;
        for (size_t i = 0; i < m; i++)
            idx[i] = done + i;
        st = clg_datastore_read(ds, idx, m, x, t);
        if (st != CLG_OK)
            st = clg__fail(net->ctx, st, "%s: %s", call, clg_datastore_last_error(ds));
        if (st == CLG_OK)
            st = clg_net_predict(net, x, m, y);
        for (size_t i = 0; st == CLG_OK && i < m; i++) {
            float *xi = x + i * per, *ti = t + i * per, *yi = y + i * per;
            for (size_t k = 0; residual && k < per; k++) {
                ti[k] = xi[k] - ti[k]; /* the clean image */
                yi[k] = xi[k] - yi[k]; /* the restored one */
            }
            q->psnr += clg_psnr(yi, ti, per, 1.0);
            q->ssim += clg_ssim(yi, ti, s.c, s.h, s.w, 1.0);
            q->input_psnr += clg_psnr(xi, ti, per, 1.0);
            q->input_ssim += clg_ssim(xi, ti, s.c, s.h, s.w, 1.0);
        }
        done += m;
    }
    free(x), free(t), free(y), free(idx);
    if (st == CLG_OK && n) {
        q->images = n;
        q->psnr /= (double)n, q->ssim /= (double)n;
        q->input_psnr /= (double)n, q->input_ssim /= (double)n;
    }
    return st;
}
