/* clgrad-train's files: the data checked for a layout it can read and every output for a
 * place to write before the first step, and the model saved even when its own path fails at
 * the end. */
#ifndef CLGRAD_TRAIN_PATHS_H
#define CLGRAD_TRAIN_PATHS_H

#include "train_args.h"

/* Whether dir/name is a folder (want_dir) or a regular file. */
int path_exists(const char *dir, const char *name, int want_dir);

/* Whether --data is a folder in a layout the tool reads (IDX files, or train/ and test/
 * image folders); prints what was looked for and the layouts accepted when not. */
int data_readable(const cli *c);

/* Whether every file the run will write (--save, --plot, --log, --results, a sweep's models)
 * and the checkpoint folder can be written; prints what cannot, naming its flag. */
int outputs_writable(const cli *c);

/* Writes net to path; where that fails, to a file of the same name in the checkpoint folder,
 * else in the current folder, saying where. Returns 0 only when path itself was written. */
int save_model(clg_net *net, const char *path, const cli *c);

#endif
