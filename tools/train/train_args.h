/* The command line of clgrad-train: every option, its default, and the parsed settings. */
#ifndef CLGRAD_TRAIN_ARGS_H
#define CLGRAD_TRAIN_ARGS_H

#include "clgrad/clgrad.h"
#include "text_file.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
#define DEFAULT_SWEEP_MODELS "clgrad-sweep-models"
#define MAX_DEVICES 64 /* as many as one device group holds */

typedef struct cli {
    const char *net_file, *data, *save, *resume, *evaluate, *plot, *devices, *env;
    const char *sweep, *results;  /* --sweep FILE: several experiments; --results: their CSV */
    const char *save_models;      /* with --sweep: the folder of every experiment's model */
    const char *export_onnx;      /* --export-onnx FILE: the trained model as ONNX too */
    float base_lr_factor;         /* --base-lr-factor F (layers before the output), or -1 */
    double val_split;
    int val_on_test;
    size_t limit_train, limit_test;
    unsigned split_cpu;
    clg_image_folder_options images;
    clg_augment_options augment;
    int augmenting;
    int normalize;                /* --normalize: 0 none, 1 zerocenter, 2 zscore (from the data) */
    float worker_load[MAX_DEVICES];
    size_t worker_load_count;
    size_t table_every;
    int quiet;
    int summary;                  /* --summary: print the network's layers and stop */
    int json;                     /* --json: --evaluate's report as one JSON object */
    int image_options;            /* --image-size or --channels given (image folders only) */
    int denoising;                /* --denoise: the images become (noisy patch, target) pairs */
    clg_denoise_options denoise;
    const char *class_weights;    /* --class-weights inverse|median|W1,W2,...: pixelsoftmax */
    clg_train_options o;   /* o.execution is set where training starts: cli is copied */
    clg_exec_options x;
} cli;

/* Fills c from the arguments (defaults for the rest). Returns 0 to go on, -1 after --help or
 * --version (exit 0), else the exit code (2 for usage errors). */
int cli_parse(int argc, char **argv, cli *c);


/* The network of TensorFlow's CNN tutorial, used for Fashion-MNIST. */
extern const char default_net[];

#endif
