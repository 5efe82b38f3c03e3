/* fmu_run3.c: the harness's FMI 3.0 importer (`run3`, `abuse3`; see fmu_run.c): the FMI 3.0 calls
 * behind the same `Api` the FMI 2.0 run and abuse use, Co-Simulation with Event Mode, early return
 * and an intermediate update callback. Split from fmu_run.c for the project's 600-line rule. */
#include "fmu_run.h"

/* ---- FMI 3.0 ------------------------------------------------------------------------------ */

/* The FMI 3.0 signatures this program uses (fmi3FunctionTypes.h); fmi3Boolean is C's bool. */
typedef _Bool Bool3;
typedef void (*LogMessage3)(void *, int, const char *, const char *);
typedef void (*IntermediateUpdate3)(void *, double, Bool3, Bool3, Bool3, Bool3, Bool3 *, double *);
static struct {
    Component (*instantiate)(const char *, const char *, const char *, Bool3, Bool3, Bool3, Bool3,
                             const Ref *, size_t, void *, LogMessage3, IntermediateUpdate3);
    int (*enter_initialization)(Component, Bool3, double, double, Bool3, double);
    int (*exit_initialization)(Component);
    int (*get_float64)(Component, const Ref *, size_t, double *, size_t);
    int (*get_int32)(Component, const Ref *, size_t, int *, size_t);
    int (*set_float64)(Component, const Ref *, size_t, const double *, size_t);
    int (*set_int32)(Component, const Ref *, size_t, const int *, size_t);
    int (*do_step)(Component, double, double, Bool3, Bool3 *, Bool3 *, Bool3 *, double *);
    int (*enter_event_mode)(Component);
    int (*update_discrete_states)(Component, Bool3 *, Bool3 *, Bool3 *, Bool3 *, Bool3 *, double *);
    int (*enter_step_mode)(Component);
    int (*set_debug_logging)(Component, Bool3, size_t, const char *const *);
    int (*directional)(Component, const Ref *, size_t, const Ref *, size_t, const double *, size_t,
                       double *, size_t);
    int (*output_derivatives)(Component, const Ref *, size_t, const int *, double *, size_t);
    int (*adjoint)(Component, const Ref *, size_t, const Ref *, size_t, const double *, size_t,
                   double *, size_t);
} fmi3;

/* What fmi3SetupExperiment would have been: FMI 3.0 passes it to fmi3EnterInitializationMode. */
static double experiment_tolerance, experiment_start;
/* Intermediate updates so far and within the current communication step, early returns asked
 * for and made, events handled in Event Mode. */
static size_t updates, step_updates, early_asked, early_returns, event_returns;

static void log_message3(void *env, int status, const char *category, const char *message) {
    (void)env;
    if (strcmp(category, "logEvents") == 0) events++;
    if (verbose) fprintf(stderr, "[%s] %d: %s\n", category, status, message);
}

static void intermediate_update3(void *env, double time, Bool3 set_requested, Bool3 get_allowed,
                                 Bool3 step_finished, Bool3 can_return_early, Bool3 *early,
                                 double *early_time) {
    (void)env, (void)set_requested, (void)get_allowed, (void)step_finished;
    updates++;
    /* Counted within the communication step, so that a repeat from a restored state asks at the
     * same internal steps. */
    *early = can_return_early && ++step_updates % 3 == 0;
    *early_time = time;
    early_asked += *early;
}

static Component instantiate3(const char *name, int type, const char *token, const char *uri,
                              const Callbacks *unused, int visible, int logging) {
    (void)type, (void)unused;
    return fmi3.instantiate(name, token, uri, visible, logging, 1, 1, NULL, 0, NULL, log_message3,
                            intermediate_update3);
}

static int setup_experiment3(Component c, int tolerance_defined, double tolerance, double start,
                             int stop_defined, double stop) {
    (void)c, (void)tolerance_defined, (void)stop_defined, (void)stop;
    experiment_tolerance = tolerance;
    experiment_start = start;
    return FMI_OK;
}

static int enter_initialization3(Component c) {
    return fmi3.enter_initialization(c, 1, experiment_tolerance, experiment_start, 0, 0.0);
}

/* The event iteration of Event Mode: fmi3UpdateDiscreteStates until nothing changes. */
static int event_iteration3(Component c) {
    for (int i = 0; i < 1000; i++) {
        Bool3 again, stop, nominals, values, defined;
        double next;
        int status = fmi3.update_discrete_states(c, &again, &stop, &nominals, &values, &defined, &next);
        if (status != FMI_OK || !again) return status;
    }
    return FMI_ERROR;
}

/* With Event Mode used the instance is in Event Mode after initialization. */
static int exit_initialization3(Component c) {
    int status = fmi3.exit_initialization(c);
    if (status == FMI_OK) status = event_iteration3(c);
    if (status == FMI_OK) status = fmi3.enter_step_mode(c);
    return status;
}

static int get_real3(Component c, const Ref *vr, size_t n, double *v) {
    return fmi3.get_float64(c, vr, n, v, n);
}
static int get_integer3(Component c, const Ref *vr, size_t n, int *v) {
    return fmi3.get_int32(c, vr, n, v, n);
}
static int set_real3(Component c, const Ref *vr, size_t n, const double *v) {
    return fmi3.set_float64(c, vr, n, v, n);
}
static int set_integer3(Component c, const Ref *vr, size_t n, const int *v) {
    return fmi3.set_int32(c, vr, n, v, n);
}

/* One communication step as an FMI 3.0 importer with Event Mode and early return takes it: a
 * step that ends early is continued from where it ended, after the event iteration if it ended
 * at an event (an event at the step's end is handled there, before the next step). */
static int do_step3(Component c, double t, double h, int no_prior) {
    const double end = t + h;
    step_updates = 0;
    for (int k = 0; k < 100000; k++) {
        Bool3 event = 0, stop = 0, early = 0;
        double last = NAN;
        int status = fmi3.do_step(c, t, end - t, (Bool3)no_prior, &event, &stop, &early, &last);
        if (status != FMI_OK) return status;
        if (early) {
            early_returns++;
            if (!(last >= t && last < end)) return FMI_ERROR;
        } else if (last != end) {
            return FMI_ERROR;
        }
        t = last;
        if (event) {
            event_returns++;
            if ((status = fmi3.enter_event_mode(c)) != FMI_OK) return status;
            if ((status = event_iteration3(c)) != FMI_OK) return status;
            if ((status = fmi3.enter_step_mode(c)) != FMI_OK) return status;
        }
        if (!early) return FMI_OK;
    }
    return FMI_ERROR;
}

static int set_debug_logging3(Component c, int on, size_t n, const char *const *categories) {
    return fmi3.set_debug_logging(c, (Bool3)on, n, categories);
}

static int directional3(Component c, const Ref *unknowns, size_t n_unknowns, const Ref *knowns,
                        size_t n_knowns, const double *seed, double *sensitivity) {
    return fmi3.directional(c, unknowns, n_unknowns, knowns, n_knowns, seed, n_knowns, sensitivity,
                            n_unknowns);
}

static int adjoint3(Component c, const Ref *unknowns, size_t n_unknowns, const Ref *knowns,
                    size_t n_knowns, const double *seed, double *sensitivity) {
    return fmi3.adjoint(c, unknowns, n_unknowns, knowns, n_knowns, seed, n_unknowns, sensitivity,
                        n_knowns);
}

static int output_derivatives3(Component c, const Ref *vrs, size_t n, const int *orders,
                               double *values) {
    return fmi3.output_derivatives(c, vrs, n, orders, values, n);
}

int load_api3(Library lib, Api *api) {
    const Symbol table[] = {
        {(void **)&fmi3.instantiate, "fmi3InstantiateCoSimulation"},
        {(void **)&api->free_instance, "fmi3FreeInstance"},
        {(void **)&fmi3.enter_initialization, "fmi3EnterInitializationMode"},
        {(void **)&fmi3.exit_initialization, "fmi3ExitInitializationMode"},
        {(void **)&api->terminate, "fmi3Terminate"},
        {(void **)&api->reset, "fmi3Reset"},
        {(void **)&fmi3.get_float64, "fmi3GetFloat64"},
        {(void **)&fmi3.get_int32, "fmi3GetInt32"},
        {(void **)&fmi3.set_float64, "fmi3SetFloat64"},
        {(void **)&fmi3.set_int32, "fmi3SetInt32"},
        {(void **)&api->get_state, "fmi3GetFMUState"},
        {(void **)&api->set_state, "fmi3SetFMUState"},
        {(void **)&api->free_state, "fmi3FreeFMUState"},
        {(void **)&api->serialized_size, "fmi3SerializedFMUStateSize"},
        {(void **)&api->serialize, "fmi3SerializeFMUState"},
        {(void **)&api->deserialize, "fmi3DeserializeFMUState"},
        {(void **)&fmi3.do_step, "fmi3DoStep"},
        {(void **)&fmi3.enter_event_mode, "fmi3EnterEventMode"},
        {(void **)&fmi3.update_discrete_states, "fmi3UpdateDiscreteStates"},
        {(void **)&fmi3.enter_step_mode, "fmi3EnterStepMode"},
        {(void **)&fmi3.set_debug_logging, "fmi3SetDebugLogging"},
        {(void **)&fmi3.directional, "fmi3GetDirectionalDerivative"},
        {(void **)&fmi3.output_derivatives, "fmi3GetOutputDerivatives"},
        {(void **)&fmi3.adjoint, "fmi3GetAdjointDerivative"},
    };
    if (!load_symbols(lib, table, sizeof table / sizeof table[0])) return 0;
    api->instantiate = instantiate3;
    api->setup_experiment = setup_experiment3;
    api->enter_initialization = enter_initialization3;
    api->exit_initialization = exit_initialization3;
    api->get_real = get_real3;
    api->get_integer = get_integer3;
    api->set_real = set_real3;
    api->set_integer = set_integer3;
    api->do_step = do_step3;
    api->set_debug_logging = set_debug_logging3;
    api->directional = directional3;
    api->output_derivatives = output_derivatives3;
    api->adjoint = adjoint3;
    return 1;
}

/* ---- FMI 3.0 Model Exchange, FMI 2.0-shaped (for the allocation count) ---------------------- */

static struct {
    Component (*instantiate)(const char *, const char *, const char *, Bool3, Bool3, void *,
                             LogMessage3);
    int (*update_discrete_states)(Component, Bool3 *, Bool3 *, Bool3 *, Bool3 *, Bool3 *, double *);
    int (*completed_integrator_step)(Component, Bool3, Bool3 *, Bool3 *);
} me3;

static Component instantiate_me3(const char *name, int type, const char *token, const char *uri,
                                 const Callbacks *unused, int visible, int logging) {
    (void)type, (void)unused;
    return me3.instantiate(name, token, uri, visible, logging, NULL, log_message3);
}

/* Model Exchange leaves initialization in Event Mode, where the importer iterates. */
static int exit_initialization_me3(Component c) { return fmi3.exit_initialization(c); }

static int update_discrete_states3(Component c, EventInfo *info) {
    Bool3 needed, stop, nominals, values, defined;
    int status = me3.update_discrete_states(c, &needed, &stop, &nominals, &values, &defined,
                                            &info->next_event_time);
    info->new_discrete_states_needed = needed, info->terminate = stop;
    info->nominals_changed = nominals, info->values_changed = values;
    info->next_event_defined = defined;
    return status;
}

static int completed_integrator_step3(Component c, int no_prior, int *enter, int *stop) {
    Bool3 e = 0, s = 0;
    int status = me3.completed_integrator_step(c, (Bool3)no_prior, &e, &s);
    *enter = e, *stop = s;
    return status;
}

int load_me3(Library lib, Api *api, MeApi *me) {
    const Symbol table[] = {
        {(void **)&me3.instantiate, "fmi3InstantiateModelExchange"},
        {(void **)&me3.update_discrete_states, "fmi3UpdateDiscreteStates"},
        {(void **)&me3.completed_integrator_step, "fmi3CompletedIntegratorStep"},
        {(void **)&me->enter_event_mode, "fmi3EnterEventMode"},
        {(void **)&me->enter_continuous_time_mode, "fmi3EnterContinuousTimeMode"},
        {(void **)&me->set_time, "fmi3SetTime"},
        {(void **)&me->set_continuous_states, "fmi3SetContinuousStates"},
        {(void **)&me->get_derivatives, "fmi3GetContinuousStateDerivatives"},
        {(void **)&me->get_event_indicators, "fmi3GetEventIndicators"},
        {(void **)&me->get_continuous_states, "fmi3GetContinuousStates"},
    };
    if (!load_symbols(lib, table, sizeof table / sizeof table[0])) return 0;
    me->new_discrete_states = update_discrete_states3;
    me->completed_integrator_step = completed_integrator_step3;
    api->instantiate = instantiate_me3;
    api->exit_initialization = exit_initialization_me3;
    return 1;
}

void print_fmi3_counts(void) {
    printf("fmi3: %zu intermediate updates, %zu early returns asked, %zu early returns, %zu at events\n",
           updates, early_asked, early_returns, event_returns);
}
