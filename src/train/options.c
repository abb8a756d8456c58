/* Training options: MATLAB's trainingOptions defaults, validation, solver names. */
#include <math.h>
#include <string.h>

#include "clgrad/train.h"
#include "runtime/runtime_internal.h"
#include "train/train_internal.h"

clg_train_options clg_train_options_default(void)
{
    clg_train_options o;
    memset(&o, 0, sizeof o);
    o.solver = CLG_SOLVER_SGDM;
    o.initial_learn_rate = 0.01f;
    o.learn_rate_schedule = CLG_LR_NONE;
    o.learn_rate_drop_factor = 0.1f;
    o.learn_rate_drop_period = 10;
    o.learn_rate_plateau_patience = 3;
    o.momentum = 0.9f;
    o.gradient_decay_factor = 0.9f;
    o.epsilon = 1e-8f;
    o.l2_regularization = 1e-4f;
    o.gradient_threshold = INFINITY;
    o.gradient_threshold_method = CLG_GRAD_L2NORM;
    o.max_epochs = 30;
    o.mini_batch_size = 128;
    o.shuffle = CLG_SHUFFLE_ONCE;
    o.validation_frequency = 50;
    o.output_network = CLG_OUTPUT_LAST;
    o.verbose_frequency = 50;
    o.checkpoint_frequency = 1;
    o.struct_size = sizeof o;
    return o;
}

clg_exec_options clg_exec_options_default(void)
{
    clg_exec_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.environment = CLG_ENV_AUTO;
    o.device_fault_policy = CLG_FAULT_STOP;
    o.overlap = o.zero_copy = o.early_update = CLG_SWITCH_AUTO;
    return o;
}

static const char *const solver_names[] = {"sgdm", "adam", "rmsprop", "adamw"};

const char *clg_solver_name(clg_solver s)
{
    return s >= CLG_SOLVER_SGDM && s <= CLG_SOLVER_ADAMW ? solver_names[s] : NULL;
}

clg_status clg_solver_parse(const char *name, clg_solver *out)
{
    for (int i = 0; name && out && i < 4; i++)
        if (!strcmp(name, solver_names[i])) {
            *out = (clg_solver)i;
            return CLG_OK;
        }
    return clg__fail(NULL, CLG_ERR_INVALID_ARG, "unknown solver \"%s\" (sgdm, adam, rmsprop, adamw)",
                     name ? name : "(null)");
}

#define BAD(...) return clg__fail(NULL, CLG_ERR_INVALID_ARG, "training options: " __VA_ARGS__)

/* The caller's struct over the defaults, as far as it reaches (see README "Compatibility"). */
static clg_status read_train(const clg_train_options *given, clg_train_options *o)
{
    if (!given)
        BAD("options are NULL");
    *o = clg_train_options_default();
    return clg__options_read(o, given, sizeof *o, "training options");
}

static clg_status check_train(const clg_train_options *o)
{
    if (!clg_solver_name(o->solver))
        BAD("unknown solver %d (sgdm, adam, rmsprop, adamw)", (int)o->solver);
    if (!(o->initial_learn_rate > 0.0f) || !isfinite(o->initial_learn_rate))
        BAD("initial_learn_rate %g must be a finite number > 0", (double)o->initial_learn_rate);
    if (o->learn_rate_schedule < CLG_LR_NONE || o->learn_rate_schedule > CLG_LR_PLATEAU)
        BAD("unknown learn_rate_schedule %d (none, piecewise, cosine, plateau)",
            (int)o->learn_rate_schedule);
    if (o->learn_rate_plateau_patience < 1)
        BAD("learn_rate_plateau_patience %d must be >= 1 validation",
            o->learn_rate_plateau_patience);
    if (!(o->learn_rate_drop_factor >= 0.0f && o->learn_rate_drop_factor <= 1.0f))
        BAD("learn_rate_drop_factor %g must be in [0, 1]", (double)o->learn_rate_drop_factor);
    if (o->learn_rate_drop_period < 1)
        BAD("learn_rate_drop_period %d must be >= 1 epoch", o->learn_rate_drop_period);
    if (!(o->momentum >= 0.0f && o->momentum < 1.0f))
        BAD("momentum %g must be in [0, 1)", (double)o->momentum);
    if (!(o->gradient_decay_factor >= 0.0f && o->gradient_decay_factor < 1.0f))
        BAD("gradient_decay_factor %g must be in [0, 1)", (double)o->gradient_decay_factor);
    if (!(o->squared_gradient_decay_factor >= 0.0f && o->squared_gradient_decay_factor < 1.0f))
        BAD("squared_gradient_decay_factor %g must be in [0, 1) (0: the solver's default)",
            (double)o->squared_gradient_decay_factor);
    if (!(o->epsilon > 0.0f))
        BAD("epsilon %g must be > 0", (double)o->epsilon);
    if (!(o->l2_regularization >= 0.0f) || !isfinite(o->l2_regularization))
        BAD("l2_regularization %g must be >= 0", (double)o->l2_regularization);
    if (!(o->gradient_threshold >= 0.0f))
        BAD("gradient_threshold %g must be >= 0 (0 or infinity: off)", (double)o->gradient_threshold);
    if (o->gradient_threshold_method != CLG_GRAD_L2NORM &&
        o->gradient_threshold_method != CLG_GRAD_GLOBAL_L2NORM)
        BAD("unknown gradient_threshold_method %d (l2norm, global-l2norm)",
            (int)o->gradient_threshold_method);
    if (o->max_epochs < 1)
        BAD("max_epochs %d must be >= 1", o->max_epochs);
    if (o->mini_batch_size < 1)
        BAD("mini_batch_size must be >= 1");
    if (o->shuffle < CLG_SHUFFLE_ONCE || o->shuffle > CLG_SHUFFLE_NEVER)
        BAD("unknown shuffle %d (once, every-epoch, never)", (int)o->shuffle);
    if (o->validation_frequency < 1)
        BAD("validation_frequency must be >= 1 iteration");
    if (o->validation_patience < 0)
        BAD("validation_patience %d must be >= 0 (0: never stop early)", o->validation_patience);
    if (o->output_network != CLG_OUTPUT_LAST && o->output_network != CLG_OUTPUT_BEST_VALIDATION)
        BAD("unknown output_network %d (last, best-validation)", (int)o->output_network);
    if (o->batchnorm_statistics != CLG_BN_MOVING && o->batchnorm_statistics != CLG_BN_POPULATION)
        BAD("unknown batchnorm_statistics %d (moving, population)", (int)o->batchnorm_statistics);
    if (o->verbose_frequency < 1)
        BAD("verbose_frequency must be >= 1 iteration");
    if (o->checkpoint_frequency < 1)
        BAD("checkpoint_frequency %d must be >= 1", o->checkpoint_frequency);
    if (o->checkpoint_frequency_unit != CLG_CHECKPOINT_EPOCHS &&
        o->checkpoint_frequency_unit != CLG_CHECKPOINT_ITERATIONS)
        BAD("unknown checkpoint_frequency_unit %d (epochs, iterations)",
            (int)o->checkpoint_frequency_unit);
    if (o->checkpoint_path && !*o->checkpoint_path)
        BAD("checkpoint_path is empty (NULL: no checkpoints)");
    return CLG_OK;
}

clg_status clg_train_options_check(const clg_train_options *given)
{
    clg_train_options o;
    clg_exec_options x;
    return clg__train_options_read(given, &o, &x);
}

#undef BAD
#define BAD(...) return clg__fail(NULL, CLG_ERR_INVALID_ARG, "execution options: " __VA_ARGS__)

static int switch_ok(clg_switch s)
{
    return s == CLG_SWITCH_AUTO || s == CLG_SWITCH_ON || s == CLG_SWITCH_OFF;
}

static clg_status read_exec(const clg_exec_options *given, clg_exec_options *o)
{
    if (!given)
        BAD("options are NULL");
    *o = clg_exec_options_default();
    return clg__options_read(o, given, sizeof *o, "execution options");
}

static clg_status check_exec(const clg_exec_options *o)
{
    if (o->environment < CLG_ENV_AUTO || o->environment > CLG_ENV_PARALLEL)
        BAD("unknown environment %d (auto, cpu, gpu, multi-gpu, parallel)", (int)o->environment);
    if (o->context_count && !o->contexts)
        BAD("contexts is NULL with context_count %zu", o->context_count);
    if (o->worker_load_count && !o->worker_load)
        BAD("worker_load is NULL with worker_load_count %zu", o->worker_load_count);
    for (size_t i = 0; i < o->worker_load_count; i++)
        if (!(o->worker_load[i] >= 0.0f) || !isfinite(o->worker_load[i]))
            BAD("worker_load[%zu] = %g must be >= 0", i, (double)o->worker_load[i]);
    if (!(o->rank_load >= 0.0f) || !isfinite(o->rank_load))
        BAD("rank_load %g must be >= 0 (0: the rank's device count)", (double)o->rank_load);
    if (o->dispatch_workers > 64)
        BAD("dispatch_workers %zu must be at most 64", o->dispatch_workers);
    if (!switch_ok(o->overlap))
        BAD("unknown overlap %d (auto, on, off)", (int)o->overlap);
    if (!switch_ok(o->zero_copy))
        BAD("unknown zero_copy %d (auto, on, off)", (int)o->zero_copy);
    if (!switch_ok(o->early_update))
        BAD("unknown early_update %d (auto, on, off)", (int)o->early_update);
    if (o->device_fault_policy != CLG_FAULT_STOP && o->device_fault_policy != CLG_FAULT_CONTINUE)
        BAD("unknown device_fault_policy %d (stop, continue)", (int)o->device_fault_policy);
    return CLG_OK;
}

clg_status clg_exec_options_check(const clg_exec_options *given)
{
    clg_exec_options o;
    clg_status st = read_exec(given, &o);
    return st == CLG_OK ? check_exec(&o) : st;
}

clg_status clg__train_options_read(const clg_train_options *given, clg_train_options *o,
                                   clg_exec_options *x)
{
    clg_status st = read_train(given, o);
    if (st == CLG_OK)
        st = check_train(o);
    if (st != CLG_OK)
        return st;
    if (o->execution)
        st = read_exec(o->execution, x);
    else
        *x = clg_exec_options_default();
    if (st == CLG_OK)
        st = check_exec(x);
    o->execution = x;
    return st;
}
