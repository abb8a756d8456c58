/* The stb_image and stb_image_resize implementations, in a file of their own so that the
 * sanitizer builds can leave UndefinedBehaviorSanitizer off for this third-party code alone
 * (src/CMakeLists.txt; AddressSanitizer still checks it): Debian's stb_image 2.27 shifts an
 * unsigned int by 32 in its JPEG bit reader (stbi__grow_buffer_unsafe) on some corrupt
 * streams, found by fuzzing; on the targets we build for that feeds garbage bits into a stream
 * that is corrupt anyway, with no memory access. The bugs that do reach memory are refused in
 * image.c before stb sees the file. */
#include <stdlib.h>

#include "data/data_internal.h"
#include "data/stb.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_ONLY_PNM
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS CLG_IMAGE_MAX_SIDE
/* Zeroed: stb's PNM reader ignores a short read, which would leave uninitialised pixels. */
#define STBI_MALLOC(n) clg__calloc(1, n)
#define STBI_REALLOC(p, n) clg__realloc(p, n)
#define STBI_FREE(p) free(p)
#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
/* stb_image_resize 0.97 asserts that each output pixel's downsampling coefficients sum to 0.9
 * .. 1.1 and then rescales them to sum to 1, the sum's only use; with the triangle filter some
 * ratios (64x48 to 60x45 in test_photos) sum a little outside that, which a Debug build would abort on. */
#define STBIR_ASSERT(x) ((void)0)
#define STBIR_MALLOC(n, c) ((void)(c), clg__malloc(n))
#define STBIR_FREE(p, c) ((void)(c), free(p))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" /* its memory-stream context, on its own */
#endif
#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>
#pragma GCC diagnostic pop

int clg__stbi_info(const unsigned char *data, int len, int *w, int *h, int *channels)
{
    return stbi_info_from_memory(data, len, w, h, channels);
}

int clg__stbi_is_16_bit(const unsigned char *data, int len)
{
    return stbi_is_16_bit_from_memory(data, len);
}

unsigned char *clg__stbi_load(const unsigned char *data, int len, int *w, int *h, int *channels,
                              int want)
{
    return stbi_load_from_memory(data, len, w, h, channels, want);
}

const char *clg__stbi_failure_reason(void)
{
    return stbi_failure_reason();
}

int clg__stbir_resize(const unsigned char *in, int iw, int ih, int in_stride, unsigned char *out,
                      int ow, int oh, int out_stride, int channels)
{
    /* the triangle filter: PIL's and so torchvision's bilinear resize (widened when shrinking,
     * so that it averages), and half the taps of stb's default Catmull-Rom / Mitchell */
    return stbir_resize_uint8_generic(in, iw, ih, in_stride, out, ow, oh, out_stride, channels,
                                      -1, 0, STBIR_EDGE_CLAMP, STBIR_FILTER_TRIANGLE,
                                      STBIR_COLORSPACE_LINEAR, NULL);
}
