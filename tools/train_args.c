/* clgrad-train's options: usage text, parsing and checking. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_args.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: clgrad-train [options]\n"
"Trains a network (default: the TensorFlow CNN tutorial network) on an IDX data set\n"
"(default: " DEFAULT_DATA "), evaluates it on the test set and saves it.\n"
"  --net FILE                network text file (see README), or an ONNX model (FILE.onnx:\n"
"                            its weights are kept and trained on; for data of another\n"
"                            class count its last fully connected layer starts afresh);\n"
"                            default: the tutorial network\n"
"  --base-lr-factor F        layers before the output learn at F x the rate (0 freezes\n"
"                            them: transfer learning)\n"
"  --data DIR                folder with train-/t10k- IDX files (.gz or plain), or with\n"
"                            train/ and test/ image folders (one sub-folder per class)\n"
"  --image-size HxW, --channels 1|3   image folders: size and colour (default: the first\n"
"                            image's size, gray)\n"
"  --bad-files fail|skip     image folders: stop at an undecodable file, or skip it\n"
"  --augment-reflect-x, --augment-rotation DEG, --augment-translation PIXELS\n"
"                            random mirroring, rotation in [-DEG, DEG], shifts in\n"
"                            [-PIXELS, PIXELS] of the training images (per sample and epoch)\n"
"  --save FILE               model file to write (default: clgrad-model.clgm)\n"
"  --export-onnx FILE        the trained model as ONNX (opset 13) as well\n"
"  --resume PATH             continue from a checkpoint file, or the newest in a folder\n"
"  --evaluate MODEL          only evaluate a saved model (.clgm or .onnx) on the test set:\n"
"                            accuracy, the confusion matrix, per-class precision, recall\n"
"                            and accuracy (--json: one JSON object; --plot FILE.png: a\n"
"                            heat map)\n"
"  --solver sgdm|adam|rmsprop|adamw   (default adam)\n"
"  --learn-rate R            initial learning rate (default 0.001)\n"
"  --lr-schedule none|piecewise|cosine|plateau\n"
"                            piecewise: times --lr-drop-factor F (0.1) every\n"
"                            --lr-drop-period EPOCHS (10); cosine: annealed to 0 over\n"
"                            the run (after warm-up); plateau: times F after\n"
"                            --lr-plateau-patience N (3) validations without a lower\n"
"                            validation loss (needs validation data)\n"
"  --warmup ITERATIONS       linear learning-rate warm-up\n"
"  --lr-reference-batch N    linear scaling rule: rate x batch / N\n"
"  --momentum M (0.9), --l2 L (0.0001), --epsilon E (1e-8)\n"
"  --gradient-decay B1 (0.9), --squared-gradient-decay B2 (adam 0.999, rmsprop 0.9)\n"
"  --gradient-threshold T, --gradient-threshold-method l2norm|global-l2norm\n"
"  --epochs N (default 2), --batch N (default 64)\n"
"  --shuffle once|every-epoch|never   (default every-epoch)\n"
"  --validation-split F      hold out the last fraction F of the training set (default 0)\n"
"  --limit-train N, --limit-test N   use only the first N images (quick tries)\n"
"  --validate-on-test        use the test set as validation data (as the TensorFlow tutorial)\n"
"  --validation-frequency N (50), --validation-patience N (0: off)\n"
"  --output-network last|best-validation\n"
"  --verbose-frequency N     table row every N iterations (default 50)\n"
"  --checkpoint-path DIR, --checkpoint-frequency N, --checkpoint-unit epoch|iteration\n"
"  --log FILE.csv            metrics of every iteration and validation\n"
"  --plot FILE.png           training-progress plot, redrawn every epoch\n"
"  --execution-environment auto|cpu|gpu|multi-gpu|parallel   (default auto)\n"
"  --devices FILTER          device filter (index, type, vendor or name; see clgrad-devices)\n"
"  --split-cpu N             train on the first CPU split into N sub-devices\n"
"  --worker-load W1,W2,...   share of each device's mini-batch (default: by measured speed);\n"
"                            one value in (0, 1]: the fraction of the devices that train\n"
"  --on-device-fault stop|continue   (default stop; continue redoes the step on the others)\n"
"  --dispatch-in-background  worker threads read the next mini-batches during each step\n"
"  --dispatch-workers N      that many worker threads (default 1; implies the above)\n"
"  --seed N                  (default 1)\n"
"  --rank-load W             parallel: this rank's weight in the split of each batch\n"
"                            over the ranks (default: its device count)\n"
"  --sweep FILE              train several experiments at once, one per device: a line\n"
"                            each, NAME NET|default [options], the options above\n"
"                            applied over the command line's (see the README)\n"
"  --results FILE            with --sweep: the results as CSV\n"
"  --save-models DIR         with --sweep: each experiment's model as DIR/NAME.clgm\n"
"                            (default " DEFAULT_SWEEP_MODELS ")\n"
"  --quiet                   no table, only the result\n"
"  --summary                 print every layer (inputs, output shape, parameters, FLOPs)\n"
"                            and the totals, then stop\n"
"  --help, --version\n");
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || *end || end == s)
        return 0;
    *out = (size_t)v;
    return 1;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || end == s || v < -1000000000 || v > 1000000000)
        return 0;
    *out = (int)v;
    return 1;
}

static int parse_float(const char *s, float *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || end == s)
        return 0;
    *out = (float)v;
    return 1;
}

enum { O_NET = 256, O_DATA, O_SAVE, O_RESUME, O_EVAL, O_SOLVER, O_LR, O_SCHED, O_DROPF, O_DROPP,
       O_WARM, O_MOM, O_L2, O_EPS, O_B1, O_B2, O_GT, O_GTM, O_EPOCHS, O_BATCH, O_SHUF, O_VSPLIT,
       O_VFREQ, O_VPAT, O_OUTNET, O_VERB, O_CKP, O_CKF, O_CKU, O_LOG, O_PLOT, O_ENV, O_DEV,
       O_SEED, O_QUIET, O_HELP, O_VERSION, O_VTEST, O_LTRAIN, O_LTEST, O_SPLIT, O_WLOAD, O_FAULT, O_BG, O_BGW, O_LRREF, O_IMSIZE, O_CHAN, O_BAD, O_AUGX, O_AUGR, O_AUGT, O_SWEEP, O_RESULTS, O_RLOAD, O_SUMMARY, O_SMODELS, O_PLAT, O_JSON, O_ONNX, O_BASELR };

static const struct option long_options[] = {
    {"net", 1, 0, O_NET}, {"data", 1, 0, O_DATA}, {"save", 1, 0, O_SAVE},
    {"resume", 1, 0, O_RESUME}, {"evaluate", 1, 0, O_EVAL}, {"solver", 1, 0, O_SOLVER},
    {"learn-rate", 1, 0, O_LR}, {"lr-schedule", 1, 0, O_SCHED}, {"lr-drop-factor", 1, 0, O_DROPF},
    {"lr-drop-period", 1, 0, O_DROPP}, {"lr-plateau-patience", 1, 0, O_PLAT}, {"warmup", 1, 0, O_WARM}, {"momentum", 1, 0, O_MOM},
    {"l2", 1, 0, O_L2}, {"epsilon", 1, 0, O_EPS}, {"gradient-decay", 1, 0, O_B1},
    {"squared-gradient-decay", 1, 0, O_B2}, {"gradient-threshold", 1, 0, O_GT},
    {"gradient-threshold-method", 1, 0, O_GTM}, {"epochs", 1, 0, O_EPOCHS},
    {"batch", 1, 0, O_BATCH}, {"shuffle", 1, 0, O_SHUF}, {"validation-split", 1, 0, O_VSPLIT},
    {"validate-on-test", 0, 0, O_VTEST}, {"limit-train", 1, 0, O_LTRAIN},
    {"limit-test", 1, 0, O_LTEST}, {"split-cpu", 1, 0, O_SPLIT}, {"worker-load", 1, 0, O_WLOAD},
    {"on-device-fault", 1, 0, O_FAULT}, {"dispatch-in-background", 0, 0, O_BG},
    {"dispatch-workers", 1, 0, O_BGW},
    {"lr-reference-batch", 1, 0, O_LRREF}, {"image-size", 1, 0, O_IMSIZE},
    {"channels", 1, 0, O_CHAN}, {"bad-files", 1, 0, O_BAD},
    {"augment-reflect-x", 0, 0, O_AUGX}, {"augment-rotation", 1, 0, O_AUGR},
    {"augment-translation", 1, 0, O_AUGT},
    {"validation-frequency", 1, 0, O_VFREQ}, {"validation-patience", 1, 0, O_VPAT},
    {"output-network", 1, 0, O_OUTNET}, {"verbose-frequency", 1, 0, O_VERB},
    {"checkpoint-path", 1, 0, O_CKP}, {"checkpoint-frequency", 1, 0, O_CKF},
    {"checkpoint-unit", 1, 0, O_CKU}, {"log", 1, 0, O_LOG}, {"plot", 1, 0, O_PLOT},
    {"execution-environment", 1, 0, O_ENV}, {"devices", 1, 0, O_DEV}, {"seed", 1, 0, O_SEED},
    {"sweep", 1, 0, O_SWEEP}, {"results", 1, 0, O_RESULTS}, {"rank-load", 1, 0, O_RLOAD},
    {"save-models", 1, 0, O_SMODELS}, {"export-onnx", 1, 0, O_ONNX},
    {"base-lr-factor", 1, 0, O_BASELR},
    {"quiet", 0, 0, O_QUIET}, {"json", 0, 0, O_JSON}, {"summary", 0, 0, O_SUMMARY}, {"help", 0, 0, O_HELP}, {"version", 0, 0, O_VERSION}, {0, 0, 0, 0}};

/* The values an enumerated flag takes, for its error message. */
static const struct {
    const char *flag, *values;
} choices[] = {{"solver", "sgdm, adam, rmsprop, adamw"},
               {"shuffle", "once, every-epoch, never"},
               {"gradient-threshold-method", "l2norm, global-l2norm"},
               {"output-network", "last, best-validation"},
               {"checkpoint-unit", "epoch, iteration"},
               {"bad-files", "fail, skip"},
               {"on-device-fault", "stop, continue"},
               {"execution-environment", "auto, cpu, gpu, multi-gpu, parallel"}};

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
                   {"dispatch_workers", "--dispatch-workers"}};

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
        {c->sweep && c->evaluate, "--sweep and --evaluate exclude each other"},
        {c->results && !c->sweep, "--results is the CSV of a --sweep: give --sweep FILE"},
        {c->json && !c->evaluate, "--json is --evaluate's report: give --evaluate MODEL"},
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
    c->o.solver = CLG_SOLVER_ADAM;
    c->o.initial_learn_rate = 0.001f;
    c->o.max_epochs = 2;
    c->o.mini_batch_size = 64;
    c->o.shuffle = CLG_SHUFFLE_EVERY_EPOCH;
    c->o.seed = 1;
    int opt, ok = 1, which = 0;
    opterr = 0;
    optind = 0; /* glibc: start over (a sweep parses one command line per experiment) */
    while (ok && (opt = getopt_long(argc, argv, ":", long_options, &which)) != -1) {
        const char *a = optarg;
        clg_train_options *o = &c->o;
        switch (opt) {
        case O_NET: c->net_file = a; break;
        case O_DATA: c->data = a; break;
        case O_SAVE: c->save = a; break;
        case O_RESUME: c->resume = a; break;
        case O_EVAL: c->evaluate = a; break;
        case O_SOLVER: ok = clg_solver_parse(a, &o->solver) == CLG_OK; break;
        case O_LR: ok = parse_float(a, &o->initial_learn_rate); break;
        case O_SCHED: {
            static const char *const names[] = {"none", "piecewise", "cosine", "plateau"};
            ok = 0;
            for (int k = 0; k < 4; k++)
                if (!strcmp(a, names[k]))
                    o->learn_rate_schedule = (clg_lr_schedule)k, ok = 1;
            if (!ok) {
                fprintf(stderr, "clgrad-train: --lr-schedule %s: the schedules are none, "
                        "piecewise, cosine and plateau\n", a);
                return 2;
            }
            break;
        }
        case O_PLAT: ok = parse_int(a, &o->learn_rate_plateau_patience); break;
        case O_DROPF: ok = parse_float(a, &o->learn_rate_drop_factor); break;
        case O_DROPP: ok = parse_int(a, &o->learn_rate_drop_period); break;
        case O_WARM: ok = parse_size(a, &o->warmup_iterations); break;
        case O_MOM: ok = parse_float(a, &o->momentum); break;
        case O_L2: ok = parse_float(a, &o->l2_regularization); break;
        case O_EPS: ok = parse_float(a, &o->epsilon); break;
        case O_B1: ok = parse_float(a, &o->gradient_decay_factor); break;
        case O_B2: ok = parse_float(a, &o->squared_gradient_decay_factor); break;
        case O_GT: ok = parse_float(a, &o->gradient_threshold); break;
        case O_GTM:
            ok = !strcmp(a, "l2norm") || !strcmp(a, "global-l2norm");
            o->gradient_threshold_method = !strcmp(a, "l2norm") ? CLG_GRAD_L2NORM : CLG_GRAD_GLOBAL_L2NORM;
            break;
        case O_EPOCHS: ok = parse_int(a, &o->max_epochs); break;
        case O_BATCH: ok = parse_size(a, &o->mini_batch_size); break;
        case O_SHUF:
            ok = !strcmp(a, "once") || !strcmp(a, "every-epoch") || !strcmp(a, "never");
            o->shuffle = !strcmp(a, "once") ? CLG_SHUFFLE_ONCE
                         : !strcmp(a, "never") ? CLG_SHUFFLE_NEVER : CLG_SHUFFLE_EVERY_EPOCH;
            break;
        case O_VSPLIT: {
            float f = 0;
            ok = parse_float(a, &f) && f >= 0 && f < 1;
            c->val_split = f;
            break;
        }
        case O_VTEST: c->val_on_test = 1; break;
        case O_LTRAIN: ok = parse_size(a, &c->limit_train) && c->limit_train > 0; break;
        case O_LTEST: ok = parse_size(a, &c->limit_test) && c->limit_test > 0; break;
        case O_BG: c->x.dispatch_in_background = 1; break;
        case O_BGW:
            ok = parse_size(a, &c->x.dispatch_workers) && c->x.dispatch_workers >= 1;
            c->x.dispatch_in_background = 1;
            break;
        case O_LRREF: ok = parse_size(a, &o->learn_rate_reference_batch); break;
        case O_IMSIZE: {
            unsigned long h = 0, w = 0;
            char x = 0, extra = 0;
            ok = sscanf(a, "%lu%c%lu%c", &h, &x, &w, &extra) == 3 && x == 'x' && h && w;
            c->images.height = h;
            c->images.width = w;
            c->image_options = 1;
            break;
        }
        case O_CHAN:
            ok = !strcmp(a, "1") || !strcmp(a, "3");
            c->images.channels = (size_t)atoi(a);
            c->image_options = 1;
            break;
        case O_AUGX:
            c->augment.reflection_x = c->augmenting = 1;
            break;
        case O_AUGR: {
            float deg = 0;
            ok = parse_float(a, &deg) && deg >= 0;
            c->augment.rotation[0] = -deg, c->augment.rotation[1] = deg;
            c->augmenting = 1;
            break;
        }
        case O_AUGT: {
            float px = 0;
            ok = parse_float(a, &px) && px >= 0;
            c->augment.translation_x[0] = c->augment.translation_y[0] = -px;
            c->augment.translation_x[1] = c->augment.translation_y[1] = px;
            c->augmenting = 1;
            break;
        }
        case O_BAD:
            ok = !strcmp(a, "fail") || !strcmp(a, "skip");
            c->images.bad_files = !strcmp(a, "skip") ? CLG_BAD_FILES_SKIP : CLG_BAD_FILES_FAIL;
            break;
        case O_FAULT:
            ok = !strcmp(a, "stop") || !strcmp(a, "continue");
            c->x.device_fault_policy = !strcmp(a, "continue") ? CLG_FAULT_CONTINUE : CLG_FAULT_STOP;
            break;
        case O_SPLIT: {
            size_t n = 0;
            ok = parse_size(a, &n) && n >= 1 && n <= 16;
            c->split_cpu = (unsigned)n;
            break;
        }
        case O_WLOAD: { /* comma-separated weights */
            char *copy = strdup(a), *save = NULL;
            c->worker_load_count = 0;
            for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; ok && tok;
                 tok = strtok_r(NULL, ",", &save))
                ok = c->worker_load_count < MAX_DEVICES && parse_float(tok, &c->worker_load[c->worker_load_count++]);
            ok = ok && copy && c->worker_load_count > 0;
            free(copy);
            break;
        }
        case O_VFREQ: ok = parse_size(a, &o->validation_frequency); break;
        case O_VPAT: ok = parse_int(a, &o->validation_patience); break;
        case O_OUTNET:
            ok = !strcmp(a, "last") || !strcmp(a, "best-validation");
            o->output_network = !strcmp(a, "last") ? CLG_OUTPUT_LAST : CLG_OUTPUT_BEST_VALIDATION;
            break;
        case O_VERB: ok = parse_size(a, &c->table_every) && c->table_every > 0; break;
        case O_CKP: o->checkpoint_path = a; break;
        case O_CKF: ok = parse_int(a, &o->checkpoint_frequency); break;
        case O_CKU:
            ok = !strcmp(a, "epoch") || !strcmp(a, "iteration");
            o->checkpoint_frequency_unit = !strcmp(a, "iteration") ? CLG_CHECKPOINT_ITERATIONS
                                                                   : CLG_CHECKPOINT_EPOCHS;
            break;
        case O_LOG: o->metrics_log = a; break;
        case O_PLOT: c->plot = a; break;
        case O_ENV: c->env = a; ok = clg_exec_env_parse(a, &c->x.environment) == CLG_OK; break;
        case O_DEV: c->devices = a; break;
        case O_SEED: {
            size_t s = 0;
            ok = parse_size(a, &s);
            o->seed = s;
            break;
        }
        case O_QUIET: c->quiet = 1; break;
        case O_JSON: c->json = c->quiet = 1; break; /* stdout holds the JSON alone */
        case O_SUMMARY: c->summary = 1; break;
        case O_SWEEP: c->sweep = a; break;
        case O_RLOAD: ok = parse_float(a, &c->x.rank_load) && c->x.rank_load > 0; break;
        case O_RESULTS: c->results = a; break;
        case O_SMODELS: c->save_models = a; break;
        case O_ONNX: c->export_onnx = a; break;
        case O_BASELR: ok = parse_float(a, &c->base_lr_factor) && c->base_lr_factor >= 0; break;
        case O_HELP: usage(stdout); return -1;
        case O_VERSION: printf("clgrad-train %s\n", clg_version()); return -1;
        case ':':
            fprintf(stderr, "clgrad-train: %s needs a value (clgrad-train --help lists the "
                    "options)\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "clgrad-train: unknown option %s (clgrad-train --help lists the "
                    "options)\n", argv[optind - 1]);
            return 2;
        }
        if (!ok) {
            const char *values = NULL;
            for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++)
                if (!strcmp(choices[i].flag, long_options[which].name))
                    values = choices[i].values;
            if (values)
                fprintf(stderr, "clgrad-train: --%s %s: the choices are %s\n",
                        long_options[which].name, a, values);
            else
                fprintf(stderr, "clgrad-train: bad value \"%s\" for --%s\n", a,
                        long_options[which].name);
            return 2;
        }
    }
    if (c->val_on_test && c->val_split > 0) {
        fprintf(stderr, "clgrad-train: --validate-on-test and --validation-split exclude each other\n");
        return 2;
    }
    if (!options_agree(c))
        return 2;
    if (optind < argc) {
        fprintf(stderr, "clgrad-train: unexpected argument %s\n", argv[optind]);
        return 2;
    }
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
