/* stb_image and stb_image_resize (Debian's libstb), compiled in stb.c alone: the few calls
 * image.c makes, under clg__ names (stb's own stay static, so they cannot clash with an
 * application's copy of stb). */
#ifndef CLGRAD_DATA_STB_H
#define CLGRAD_DATA_STB_H

int clg__stbi_info(const unsigned char *data, int len, int *w, int *h, int *channels);
int clg__stbi_is_16_bit(const unsigned char *data, int len);
/* Pixels malloc'd (free with free()), interleaved, `want` channels; NULL on failure. */
unsigned char *clg__stbi_load(const unsigned char *data, int len, int *w, int *h, int *channels,
                              int want);
const char *clg__stbi_failure_reason(void);
int clg__stbir_resize(const unsigned char *in, int iw, int ih, int in_stride, unsigned char *out,
                      int ow, int oh, int out_stride, int channels);

#endif
