/* clgrad-train's options: one table (opts.h) gives each its field, value kind, range or
 * choices and help; the checks across options follow. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "train_args.h"

#define AT(field) offsetof(cli, field)
#define ANY 0, 0 /* no range: the library's checks name what is wrong */

/* "HxW", each from 1 to 65536; 0 when not. */
static int hw(const char *v, size_t *h, size_t *w)
{
    unsigned long a = 0, b = 0;
    char x = 0, extra = 0;
    if (sscanf(v, "%lu%c%lu%c", &a, &x, &b, &extra) != 3 || x != 'x' || !a || !b ||
        a > 65536 || b > 65536)
        return 0;
    *h = a, *w = b;
    return 1;
}

static const char *image_size(void *s, const char *v)
{
    cli *c = s;
    if (!hw(v, &c->images.height, &c->images.width))
        return "expected HxW, each from 1 to 65536 (28x28)";
    c->image_options = 1;
    return NULL;
}

static const char *channels(void *s, const char *v)
{
    cli *c = s;
    if (strcmp(v, "1") && strcmp(v, "3"))
        return "the choices are 1 (gray), 3 (RGB)";
    c->images.channels = (size_t)atoi(v);
    c->image_options = 1;
    return NULL;
}

static void image_option(void *s)
{
    ((cli *)s)->image_options = 1;
}

static void augmenting(void *s)
{
    ((cli *)s)->augmenting = 1;
}

static const char *rotation(void *s, const char *v)
{
    cli *c = s;
    double deg;
    if (!opts_double(v, &deg) || deg < 0 || deg > 180)
        return "must be from 0 to 180 (degrees)";
    c->augment.rotation[0] = (float)-deg, c->augment.rotation[1] = (float)deg;
    return NULL;
}

static const char *translation(void *s, const char *v)
{
    cli *c = s;
    double px;
    if (!opts_double(v, &px) || px < 0 || px > 65536)
        return "must be a number of pixels >= 0";
    c->augment.translation_x[0] = c->augment.translation_y[0] = (float)-px;
    c->augment.translation_x[1] = c->augment.translation_y[1] = (float)px;
    return NULL;
}

/* "LO:HI" with 0 < lo <= hi <= max into r */
static const char *range(const char *v, double max, float r[2])
{
    char lo[64];
    const char *colon = strchr(v, ':');
    double a, b;
    if (!colon || (size_t)(colon - v) >= sizeof lo)
        return "must be LO:HI";
    memcpy(lo, v, (size_t)(colon - v));
    lo[colon - v] = 0;
    if (!opts_double(lo, &a) || !opts_double(colon + 1, &b) || !(a > 0) || b < a || b > max)
        return "must be LO:HI with 0 < LO <= HI";
    r[0] = (float)a, r[1] = (float)b;
    return NULL;
}

static const char *resized_crop(void *s, const char *v)
{
    cli *c = s;
    c->augment.crop = CLG_CROP_RANDOM_RESIZED;
    const char *e = range(v, 1.0, c->augment.crop_area);
    return e ? "must be LO:HI, fractions of the image's area with 0 < LO <= HI <= 1" : NULL;
}

static const char *crop_aspect(void *s, const char *v)
{
    return range(v, 1e6, ((cli *)s)->augment.crop_aspect);
}

/* "S" or "LO:HI" (0 <= LO <= HI <= 10): the noise level's range */
static const char *denoise(void *s, const char *v)
{
    cli *c = s;
    double a, b;
    const char *colon = strchr(v, ':');
    char lo[64];
    c->denoising = 1;
    if (!colon) {
        if (!opts_double(v, &a) || a < 0 || a > 10)
            return "must be a noise level S (0 to 10, pixels in [0, 1]) or a range LO:HI";
        c->denoise.sigma[0] = c->denoise.sigma[1] = (float)a;
        return NULL;
    }
    if ((size_t)(colon - v) >= sizeof lo)
        return "must be S or LO:HI";
    memcpy(lo, v, (size_t)(colon - v));
    lo[colon - v] = 0;
    if (!opts_double(lo, &a) || !opts_double(colon + 1, &b) || a < 0 || b < a || b > 10)
        return "must be S or LO:HI with 0 <= LO <= HI <= 10";
    c->denoise.sigma[0] = (float)a, c->denoise.sigma[1] = (float)b;
    return NULL;
}

static const char *patch(void *s, const char *v)
{
    cli *c = s;
    return hw(v, &c->denoise.patch_h, &c->denoise.patch_w) ? NULL : "expected HxW (e.g. 40x40)";
}

static const char *environment(void *s, const char *v)
{
    cli *c = s;
    c->env = v;
    return clg_exec_env_parse(v, &c->x.environment) == CLG_OK
               ? NULL : "the choices are auto, cpu, gpu, multi-gpu, parallel";
}

static const char *split_cpu(void *s, const char *v)
{
    size_t n;
    if (!opts_size(v, &n) || n < 1 || n > 16)
        return "must be from 1 to 16";
    ((cli *)s)->split_cpu = (unsigned)n;
    return NULL;
}

static const char *worker_load(void *s, const char *v)
{
    cli *c = s;
    char *copy = strdup(v), *save = NULL;
    const char *why = NULL;
    c->worker_load_count = 0;
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; !why && tok;
         tok = strtok_r(NULL, ",", &save)) {
        double w;
        if (c->worker_load_count == MAX_DEVICES)
            why = "more values than devices a group holds (64)";
        else if (!opts_double(tok, &w) || w < 0)
            why = "expected numbers >= 0, separated by commas (3,1)";
        else
            c->worker_load[c->worker_load_count++] = (float)w;
    }
    if (!why && (!copy || !c->worker_load_count))
        why = "expected numbers >= 0, separated by commas (3,1)";
    free(copy);
    return why;
}

static const char *rank_load(void *s, const char *v)
{
    double w;
    if (!opts_double(v, &w) || w <= 0)
        return "must be a number > 0";
    ((cli *)s)->x.rank_load = (float)w;
    return NULL;
}

static void in_background(void *s)
{
    ((cli *)s)->x.dispatch_in_background = 1;
}

static void quiet(void *s)
{
    ((cli *)s)->quiet = 1; /* stdout holds the JSON alone */
}

static const int solvers[] = {CLG_SOLVER_SGDM, CLG_SOLVER_ADAM, CLG_SOLVER_RMSPROP,
                              CLG_SOLVER_ADAMW};
static const int schedules[] = {CLG_LR_NONE, CLG_LR_PIECEWISE, CLG_LR_COSINE, CLG_LR_PLATEAU};
static const int clip_methods[] = {CLG_GRAD_L2NORM, CLG_GRAD_GLOBAL_L2NORM};
static const int shuffles[] = {CLG_SHUFFLE_ONCE, CLG_SHUFFLE_EVERY_EPOCH, CLG_SHUFFLE_NEVER};
static const int outputs[] = {CLG_OUTPUT_LAST, CLG_OUTPUT_BEST_VALIDATION};
static const int units[] = {CLG_CHECKPOINT_EPOCHS, CLG_CHECKPOINT_ITERATIONS};
static const int bad_files[] = {CLG_BAD_FILES_FAIL, CLG_BAD_FILES_SKIP};
static const int faults[] = {CLG_FAULT_STOP, CLG_FAULT_CONTINUE};
static const int normalizations[] = {0, 1, 2};
static const int denoise_targets[] = {CLG_DENOISE_NOISE, CLG_DENOISE_CLEAN};
static const int bn_statistics[] = {CLG_BN_POPULATION, CLG_BN_MOVING};

#define BIG UNBOUNDED

static const opt_def defs[] = {
    {OPT_HEADING, .help = "The network and the data:"},
    {OPT_TEXT, "net", AT(net_file), ANY, .value = "FILE",
     .help = "network text file (see README), a saved model (.clgm) or an ONNX model: a\n"
             "model's weights are kept and trained on; for data of another class count\n"
             "its last fully connected layer starts afresh; default: the tutorial network,\n"
             "its output sized to the data's classes"},
    {OPT_FLOAT, "base-lr-factor", AT(base_lr_factor), 0, 1e6, .value = "F",
     .help = "layers before the output learn at F x the rate (0 freezes them: transfer\n"
             "learning)"},
    {OPT_TEXT, "data", AT(data), ANY, .value = "DIR",
     .help = "folder with train-/t10k- IDX files (.gz or plain), or with train/ and test/\n"
             "image folders (one sub-folder per class), or for image-to-image networks\n"
             "train/ and test/ each holding images/ and labels/ (segmentation, with\n"
             "DIR/classes.txt), inputs/ and targets/ (paired images), or images/ and\n"
             "values.csv (regression); default " DEFAULT_DATA},
    {OPT_CALL, "denoise", 0, ANY, .value = "S|LO:HI", .parse = denoise,
     .help = "train a denoiser: each image (patch) with Gaussian noise of level S (or drawn\n"
             "in LO:HI per patch; pixels in [0, 1]) as input, the noise as target (MATLAB's\n"
             "denoisingImageDatastore); the test set's noise is fixed"},
    {OPT_CALL, "patch", 0, ANY, .value = "HxW", .parse = patch,
     .help = "--denoise: training patches of HxW at random places (default: whole images)"},
    {OPT_SIZE, "patches", AT(denoise.patches_per_image), 1, 1024, .value = "N",
     .help = "--denoise: patches per training image and epoch (default 1)"},
    {OPT_CHOICE, "denoise-target", AT(denoise.target), ANY, "noise|clean", denoise_targets,
     .help = "--denoise: the network learns the noise (residual, DnCNN; default) or the\n"
             "clean image"},
    {OPT_TEXT, "class-weights", AT(class_weights), ANY, .value = "inverse|median|W1,...",
     .help = "segmentation: the per-pixel loss's class weights, from the training labels'\n"
             "frequencies (inverse, or median frequency balancing) or given"},
    {OPT_CALL, "image-size", 0, ANY, .value = "HxW", .parse = image_size,
     .help = "image folders: the size images are read at (default: the first image's)"},
    {OPT_CALL, "channels", 0, ANY, .value = "1|3", .parse = channels,
     .help = "image folders: gray or RGB (default 1)"},
    {OPT_SIZE, "resize-shorter", AT(images.resize_shorter), 1, 16384, .value = "S",
     .then = image_option, .help = "image folders: resize each image's shorter side to S, then\n"
                                  "take the centre at --image-size (torchvision's Resize +\n"
                                  "CenterCrop); default: the whole image resized"},
    {OPT_CHOICE, "bad-files", AT(images.bad_files), ANY, "fail|skip", bad_files,
     .help = "image folders: stop at an undecodable file, or skip it"},
    {OPT_CHOICE, "normalize", AT(normalize), ANY, "none|zerocenter|zscore", normalizations,
     .help = "the network's input normalisation from the training images' per-channel mean\n"
             "(and standard deviation), kept with the model (MATLAB's imageInputLayer)"},
    {OPT_FLAG, "augment-reflect-x", AT(augment.reflection_x), ANY, .then = augmenting,
     .help = "random mirroring of the training images (per sample and epoch)"},
    {OPT_CALL, "augment-rotation", 0, ANY, .value = "DEG", .parse = rotation,
     .then = augmenting, .help = "random rotation in [-DEG, DEG]"},
    {OPT_CALL, "augment-translation", 0, ANY, .value = "PIXELS", .parse = translation,
     .then = augmenting, .help = "random shifts in [-PIXELS, PIXELS]"},
    {OPT_CALL, "augment-resized-crop", 0, ANY, .value = "LO:HI", .parse = resized_crop,
     .then = augmenting,
     .help = "random resized crop (torchvision's RandomResizedCrop, e.g. 0.08:1): a window\n"
             "of LO to HI of the image's area, resized to --image-size; from the photo\n"
             "itself for image folders (validation and test: --resize-shorter or resize)"},
    {OPT_CALL, "augment-crop-aspect", 0, ANY, .value = "LO:HI", .parse = crop_aspect,
     .help = "the window's width/height range for --augment-resized-crop (default 0.75:1.333)"},
    {OPT_SIZE, "limit-train", AT(limit_train), 1, BIG, .value = "N",
     .help = "use only the first N training images (quick tries)"},
    {OPT_SIZE, "limit-test", AT(limit_test), 1, BIG, .value = "N",
     .help = "use only the first N test images"},
    {OPT_HEADING, .help = "What to do (default: train, evaluate on the test set, save):"},
    {OPT_TEXT, "save", AT(save), ANY, .value = "FILE",
     .help = "model file to write (default: clgrad-model.clgm)"},
    {OPT_TEXT, "export-onnx", AT(export_onnx), ANY, .value = "FILE",
     .help = "the trained (or --evaluate'd) model as ONNX (opset 13) as well"},
    {OPT_TEXT, "resume", AT(resume), ANY, .value = "PATH",
     .help = "continue from a checkpoint file, or the newest in a folder"},
    {OPT_TEXT, "evaluate", AT(evaluate), ANY, .value = "MODEL",
     .help = "only evaluate a saved model (.clgm or .onnx) on the test set: accuracy, the\n"
             "confusion matrix, per-class precision, recall and accuracy (segmentation:\n"
             "IoU per class and their means; regression: RMSE, PSNR and SSIM)"},
    {OPT_FLAG, "json", AT(json), ANY, .then = quiet,
     .help = "with --evaluate: the report as one JSON object"},
    {OPT_FLAG, "summary", AT(summary), ANY,
     .help = "print every layer of the network the other options name (inputs, output\n"
             "shape, parameters, FLOPs) and the totals, then stop"},
    {OPT_HEADING, .help = "The solver (MATLAB's trainingOptions):"},
    {OPT_CHOICE, "solver", AT(o.solver), ANY, "sgdm|adam|rmsprop|adamw", solvers,
     .help = "(default adam)"},
    {OPT_FLOAT, "learn-rate", AT(o.initial_learn_rate), ANY, .value = "R",
     .help = "initial learning rate (default 0.001)"},
    {OPT_CHOICE, "lr-schedule", AT(o.learn_rate_schedule), ANY,
     "none|piecewise|cosine|plateau", schedules,
     .help = "piecewise: times --lr-drop-factor every --lr-drop-period epochs; cosine:\n"
             "annealed to 0 over the run (after warm-up); plateau: times the factor after\n"
             "--lr-plateau-patience validations without a lower validation loss"},
    {OPT_FLOAT, "lr-drop-factor", AT(o.learn_rate_drop_factor), ANY, .value = "F",
     .help = "(default 0.1)"},
    {OPT_INT, "lr-drop-period", AT(o.learn_rate_drop_period), ANY, .value = "EPOCHS",
     .help = "(default 10)"},
    {OPT_INT, "lr-plateau-patience", AT(o.learn_rate_plateau_patience), ANY, .value = "N",
     .help = "(default 3)"},
    {OPT_SIZE, "warmup", AT(o.warmup_iterations), ANY, .value = "ITERATIONS",
     .help = "linear learning-rate warm-up"},
    {OPT_SIZE, "lr-reference-batch", AT(o.learn_rate_reference_batch), ANY, .value = "N",
     .help = "linear scaling rule: rate x batch / N"},
    {OPT_FLOAT, "momentum", AT(o.momentum), ANY, .value = "M", .help = "(default 0.9)"},
    {OPT_FLOAT, "l2", AT(o.l2_regularization), ANY, .value = "L", .help = "(default 0.0001)"},
    {OPT_FLOAT, "epsilon", AT(o.epsilon), ANY, .value = "E", .help = "(default 1e-8)"},
    {OPT_FLOAT, "gradient-decay", AT(o.gradient_decay_factor), ANY, .value = "B1",
     .help = "(default 0.9)"},
    {OPT_FLOAT, "squared-gradient-decay", AT(o.squared_gradient_decay_factor), ANY,
     .value = "B2", .help = "(default: adam 0.999, rmsprop 0.9)"},
    {OPT_FLOAT, "gradient-threshold", AT(o.gradient_threshold), ANY, .value = "T",
     .help = "clip gradients (default: off)"},
    {OPT_CHOICE, "gradient-threshold-method", AT(o.gradient_threshold_method), ANY,
     "l2norm|global-l2norm", clip_methods, .help = "each tensor's norm, or all together"},
    {OPT_INT, "epochs", AT(o.max_epochs), ANY, .value = "N", .help = "(default 2)"},
    {OPT_SIZE, "batch", AT(o.mini_batch_size), ANY, .value = "N", .help = "(default 64)"},
    {OPT_CHOICE, "shuffle", AT(o.shuffle), ANY, "once|every-epoch|never", shuffles,
     .help = "(default every-epoch)"},
    {OPT_U64, "seed", AT(o.seed), ANY, .value = "N", .help = "(default 1)"},
    {OPT_HEADING, .help = "Validation, progress and checkpoints:"},
    {OPT_DOUBLE, "validation-split", AT(val_split), 0, 0.999999, .value = "F",
     .help = "hold out the last fraction F of the training set (default 0)"},
    {OPT_FLAG, "validate-on-test", AT(val_on_test), ANY,
     .help = "use the test set as validation data (as the TensorFlow tutorial)"},
    {OPT_SIZE, "validation-frequency", AT(o.validation_frequency), ANY, .value = "N",
     .help = "(default 50)"},
    {OPT_INT, "validation-patience", AT(o.validation_patience), ANY, .value = "N",
     .help = "(default 0: off)"},
    {OPT_CHOICE, "output-network", AT(o.output_network), ANY, "last|best-validation", outputs,
     .help = "the network training returns (default last; best: lowest validation loss)"},
    {OPT_CHOICE, "batchnorm-statistics", AT(o.batchnorm_statistics), ANY, "population|moving",
     bn_statistics,
     .help = "batch norm's statistics in the trained network: the mean of every training\n"
             "batch's under the final weights (one forward pass over the training data at\n"
             "the end; default, MATLAB's trainNetwork) or the moving averages of the last\n"
             "steps"},
    {OPT_SIZE, "verbose-frequency", AT(table_every), 1, BIG, .value = "N",
     .help = "table row every N iterations (default 50)"},
    {OPT_TEXT, "checkpoint-path", AT(o.checkpoint_path), ANY, .value = "DIR",
     .help = "write checkpoints (network, solver state, position) there"},
    {OPT_INT, "checkpoint-frequency", AT(o.checkpoint_frequency), ANY, .value = "N",
     .help = "(default 1)"},
    {OPT_CHOICE, "checkpoint-unit", AT(o.checkpoint_frequency_unit), ANY, "epoch|iteration",
     units, .help = "a checkpoint every --checkpoint-frequency of these (default 1 epoch);\n"
                    "the newest three in the folder are kept"},
    {OPT_TEXT, "log", AT(o.metrics_log), ANY, .value = "FILE.csv",
     .help = "metrics of every iteration and validation"},
    {OPT_TEXT, "plot", AT(plot), ANY, .value = "FILE.png",
     .help = "training-progress plot, redrawn every epoch"},
    {OPT_FLAG, "quiet", AT(quiet), ANY, .help = "no table, only the result"},
    {OPT_HEADING, .help = "Where it runs:"},
    {OPT_CALL, "execution-environment", 0, ANY, .value = "auto|cpu|gpu|multi-gpu|parallel",
     .parse = environment, .help = "(default auto)"},
    {OPT_TEXT, "devices", AT(devices), ANY, .value = "FILTER",
     .help = "device filter (index, type, vendor or name; see clgrad-devices)"},
    {OPT_CALL, "split-cpu", 0, ANY, .value = "N", .parse = split_cpu,
     .help = "train on the first CPU split into N sub-devices"},
    {OPT_CALL, "worker-load", 0, ANY, .value = "W1,W2,...", .parse = worker_load,
     .help = "share of each device's mini-batch (default: by measured speed); one value\n"
             "in (0, 1]: the fraction of the devices that train"},
    {OPT_CHOICE, "on-device-fault", AT(x.device_fault_policy), ANY, "stop|continue", faults,
     .help = "(default stop; continue redoes the step on the others)"},
    {OPT_FLAG, "dispatch-in-background", AT(x.dispatch_in_background), ANY,
     .help = "worker threads read the next mini-batches during each step"},
    {OPT_SIZE, "dispatch-workers", AT(x.dispatch_workers), 1, 64, .value = "N",
     .then = in_background, .help = "that many worker threads (default 1; implies the above)"},
    {OPT_CALL, "rank-load", 0, ANY, .value = "W", .parse = rank_load,
     .help = "parallel: this rank's weight in the split of each batch over the ranks\n"
             "(default: its device count)"},
    {OPT_HEADING, .help = "Several experiments at once:"},
    {OPT_TEXT, "sweep", AT(sweep), ANY, .value = "FILE",
     .help = "train several experiments at once, one per device: a line each, NAME\n"
             "NET|default [options], the options above applied over the command line's"},
    {OPT_TEXT, "results", AT(results), ANY, .value = "FILE",
     .help = "with --sweep: the results as CSV"},
    {OPT_TEXT, "save-models", AT(save_models), ANY, .value = "DIR",
     .help = "with --sweep: each experiment's model as DIR/NAME.clgm (default\n"
             DEFAULT_SWEEP_MODELS ")"},
};

static const opt_tool tool = {
    "clgrad-train", NULL,
    "usage: clgrad-train [options]\n"
    "Trains a network (default: the TensorFlow CNN tutorial network) on an IDX data set\n"
    "or image folders, evaluates it on the test set and saves it. Ctrl-C stops after the\n"
    "current step, saving the network (a second Ctrl-C stops at once).\n",
    "  -h, --help, --version\n",
    defs, sizeof defs / sizeof defs[0], 0, 0, NULL};

/* The library's option checks name its fields; the user typed flags. */
static const struct {
    const char *field, *flag;
} field_flags[] = {{"squared_gradient_decay_factor", "--squared-gradient-decay"},
                   {"learn_rate_plateau_patience", "--lr-plateau-patience"},
                   {"learn_rate_reference_batch", "--lr-reference-batch"},
                   {"gradient_threshold_method", "--gradient-threshold-method"},
                   {"learn_rate_drop_factor", "--lr-drop-factor"},
                   {"learn_rate_drop_period", "--lr-drop-period"},
                   {"gradient_decay_factor", "--gradient-decay"},
                   {"validation_frequency", "--validation-frequency"},
                   {"checkpoint_frequency", "--checkpoint-frequency"},
                   {"validation_patience", "--validation-patience"},
                   {"learn_rate_schedule", "--lr-schedule"},
                   {"initial_learn_rate", "--learn-rate"},
                   {"gradient_threshold", "--gradient-threshold"},
                   {"l2_regularization", "--l2"},
                   {"warmup_iterations", "--warmup"},
                   {"mini_batch_size", "--batch"},
                   {"max_epochs", "--epochs"},
                   {"momentum", "--momentum"},
                   {"epsilon", "--epsilon"},
                   {"worker_load", "--worker-load"},
                   {"dispatch_workers", "--dispatch-workers"},
                   {"batchnorm_statistics", "--batchnorm-statistics"}};

/* msg with its first field name (a whole word) replaced by the flag, and the library's
 * "training options: " / "execution options: " lead dropped. */
static void flag_named(const char *msg, char *out, size_t cap)
{
    const char *lead[] = {"training options: ", "execution options: "};
    for (int i = 0; i < 2; i++)
        if (!strncmp(msg, lead[i], strlen(lead[i])))
            msg += strlen(lead[i]);
    for (size_t i = 0; i < sizeof field_flags / sizeof field_flags[0]; i++) {
        size_t len = strlen(field_flags[i].field);
        for (const char *at = strstr(msg, field_flags[i].field); at;
             at = strstr(at + 1, field_flags[i].field)) {
            int word = (at == msg || !(isalnum((unsigned char)at[-1]) || at[-1] == '_')) &&
                       !(isalnum((unsigned char)at[len]) || at[len] == '_');
            if (word) {
                snprintf(out, cap, "%.*s%s%s", (int)(at - msg), msg, field_flags[i].flag,
                         at + len);
                return;
            }
        }
    }
    snprintf(out, cap, "%s", msg);
}

/* Options that would be silently ignored together: refused, naming the conflict. */
static int options_agree(const cli *c)
{
    int val = c->val_on_test || c->val_split > 0;
    const struct {
        int clash;
        const char *why;
    } rules[] = {
        {c->evaluate && c->resume, "--evaluate and --resume exclude each other (evaluate the "
                                   "checkpoint with --evaluate FILE)"},
        {c->sweep && c->resume, "--sweep and --resume exclude each other"},
        {c->normalize && c->resume, "--normalize and --resume exclude each other (the "
                                    "checkpoint's network keeps its normalisation)"},
        {c->normalize && c->evaluate, "--normalize and --evaluate exclude each other (a model "
                                      "keeps the normalisation it was trained with)"},
        {c->sweep && c->evaluate, "--sweep and --evaluate exclude each other"},
        {c->results && !c->sweep, "--results is the CSV of a --sweep: give --sweep FILE"},
        {c->json && !c->evaluate, "--json is --evaluate's report: give --evaluate MODEL"},
        {!c->denoising && (c->denoise.patch_h || c->denoise.patches_per_image != 1 ||
                           c->denoise.target != CLG_DENOISE_NOISE),
         "--patch, --patches and --denoise-target shape --denoise's data: give --denoise S"},
        {!val && c->o.output_network == CLG_OUTPUT_BEST_VALIDATION,
         "--output-network best-validation needs validation data (--validation-split F or "
         "--validate-on-test)"},
        {!val && c->o.validation_patience > 0,
         "--validation-patience needs validation data (--validation-split F or "
         "--validate-on-test)"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].clash) {
            fprintf(stderr, "clgrad-train: %s\n", rules[i].why);
            return 0;
        }
    return 1;
}

int cli_parse(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    c->data = DEFAULT_DATA;
    c->save = "clgrad-model.clgm";
    c->save_models = DEFAULT_SWEEP_MODELS;
    c->base_lr_factor = -1;
    c->env = "auto";
    c->table_every = 50;
    c->o = clg_train_options_default();
    c->x = clg_exec_options_default();
    c->images = clg_image_folder_options_default();
    c->augment = clg_augment_options_default();
    c->denoise = clg_denoise_options_default();
    c->o.solver = CLG_SOLVER_ADAM;
    c->o.initial_learn_rate = 0.001f;
    c->o.max_epochs = 2;
    c->o.mini_batch_size = 64;
    c->o.shuffle = CLG_SHUFFLE_EVERY_EPOCH;
    c->o.seed = 1;
    c->o.batchnorm_statistics = CLG_BN_POPULATION;
    size_t n = 0;
    int rc = opts_parse(&tool, argc, argv, c, &n);
    if (rc)
        return rc;
    if (c->val_on_test && c->val_split > 0) {
        fprintf(stderr, "clgrad-train: --validate-on-test and --validation-split exclude each other\n");
        return 2;
    }
    if (!options_agree(c))
        return 2;
    c->o.verbose_frequency = 1; /* every iteration reaches the callback; the table filters */
    c->o.execution = &c->x;
    clg_status checked = clg_train_options_check(&c->o);
    c->o.execution = NULL;
    if (checked != CLG_OK) {
        char msg[1024];
        flag_named(clg_last_error(), msg, sizeof msg);
        fprintf(stderr, "clgrad-train: %s\n", msg);
        return 2;
    }
    return 0;
}

/* The network of TensorFlow's CNN tutorial, used for Fashion-MNIST. */
const char default_net[] =
    "input 28x28x1\n"
    "conv 5x5x32 pad=2\n"
    "relu\n"
    "maxpool 2x2\n"
    "conv 5x5x64 pad=2\n"
    "relu\n"
    "maxpool 2x2\n"
    "fc 1024\n"
    "relu\n"
    "dropout 0.4\n"
    "fc 10\n"
    "softmax\n";
