/* The tools' network and model files: network text, clgrad model files and ONNX models. */
#ifndef CLGRAD_TOOLS_MODEL_IO_H
#define CLGRAD_TOOLS_MODEL_IO_H

#include "clgrad/clgrad.h"

/* Whether path names an ONNX model (ends in .onnx, any case). */
int is_onnx(const char *path);

/* Whether path is a clgrad model file (or checkpoint), by its first bytes. */
int is_model_file(const char *path);

/* A checkpoint file as given, or a folder's newest checkpoint-*.clgm, into out; 0 when the
 * folder has none. */
int newest_checkpoint(const char *path, char *out, size_t cap);

/* A saved model: a clgrad model file, or an ONNX model (imported). */
clg_status load_model(clg_ctx *ctx, const char *path, clg_net **net);

/* The network of --net: a saved model (clgrad model file, checkpoint or ONNX) with its
 * weights (*trained 1), or network text, or the given default text when path is NULL
 * (*trained 0: to be initialised). Prints what failed, naming `tool`. */
clg_status make_net(const char *tool, clg_ctx *ctx, const char *path, const char *default_text,
                    clg_net **net, int *trained);

#endif
