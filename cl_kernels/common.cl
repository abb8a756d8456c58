/* Helpers shared by every clgrad kernel family; passed as the first source string of each
 * program. Layout conventions: tensors are float32, NCHW, row-major; every buffer argument
 * comes with an element offset so that views (batch ranges) need no sub-buffers. */

/* Index of the current work-item in a 1-D launch, as a size_t for large tensors. */
#define CLG_GID0 ((size_t)get_global_id(0))
