/* fmu_run.h: what the two parts of the harness share (see fmu_run.c for what it does): the
 * library loading of each platform, the FMI 2.0 types and the call table `Api` both interfaces
 * fill, the logging state, and the FMI 3.0 part's entry points (fmu_run3.c). Split from fmu_run.c
 * for the project's 600-line rule. */
#ifndef FMU_RUN_H
#define FMU_RUN_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
typedef HMODULE Library;
static inline Library open_library(const char *path) { return LoadLibraryA(path); }
static inline void *symbol(Library lib, const char *name) { return (void *)GetProcAddress(lib, name); }
static inline void close_library(Library lib) { FreeLibrary(lib); }
#else
#include <dlfcn.h>
typedef void *Library;
static inline Library open_library(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static inline void *symbol(Library lib, const char *name) { return dlsym(lib, name); }
static inline void close_library(Library lib) { dlclose(lib); }
#endif

/* One entry of a call table: where the function goes and its exported name. */
typedef struct {
    void **slot;
    const char *name;
} Symbol;

/* Fills each slot of `table` from `lib`: 1, or 0 (the missing name printed) if one is not
 * exported. */
int load_symbols(Library lib, const Symbol *table, size_t n);

/* The FMI 2.0 types and signatures this program uses (fmi2FunctionTypes.h). */
typedef void *Component;
typedef void *FmuState;
typedef unsigned int Ref;
enum { FMI_OK = 0, FMI_WARNING = 1, FMI_DISCARD = 2, FMI_ERROR = 3, FMI_FATAL = 4 };
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocate)(size_t, size_t);
    void (*free)(void *);
    void (*step_finished)(void *, int);
    void *environment;
} Callbacks;

typedef struct {
    Component (*instantiate)(const char *, int, const char *, const char *, const Callbacks *, int,
                             int);
    void (*free_instance)(Component);
    int (*setup_experiment)(Component, int, double, double, int, double);
    int (*enter_initialization)(Component);
    int (*exit_initialization)(Component);
    int (*terminate)(Component);
    int (*reset)(Component);
    int (*get_real)(Component, const Ref *, size_t, double *);
    int (*get_integer)(Component, const Ref *, size_t, int *);
    int (*set_real)(Component, const Ref *, size_t, const double *);
    int (*set_integer)(Component, const Ref *, size_t, const int *);
    int (*get_state)(Component, FmuState *);
    int (*set_state)(Component, FmuState);
    int (*free_state)(Component, FmuState *);
    int (*serialized_size)(Component, FmuState, size_t *);
    int (*serialize)(Component, FmuState, char *, size_t);
    int (*deserialize)(Component, const char *, size_t, FmuState *);
    int (*do_step)(Component, double, double, int);
    int (*set_debug_logging)(Component, int, size_t, const char *const *);
    int (*directional)(Component, const Ref *, size_t, const Ref *, size_t, const double *,
                       double *);
    int (*output_derivatives)(Component, const Ref *, size_t, const int *, double *);
    /* FMI 3.0's adjoint derivative (NULL for FMI 2.0): unknowns, knowns, seed by unknown,
     * sensitivity by known. */
    int (*adjoint)(Component, const Ref *, size_t, const Ref *, size_t, const double *, double *);
} Api;

/* The plan (fmu_run.c). */
typedef struct {
    char guid[128];
    double tolerance, start, step;
    size_t steps;
    size_t n_params, n_inputs, n_outputs;
    char *param_kind, *input_kind, *output_kind; /* 'R' or 'I' */
    Ref *param_vr, *input_vr, *output_vr;
    double *param_value, *input_value; /* input_value[k * n_inputs + i]: input i at step k */
    /* The inputs split by type, set with one call per type (buffers filled at each step). */
    size_t n_real_inputs, n_integer_inputs;
    Ref *real_input_vr, *integer_input_vr;
    double *real_input;
    int *integer_input;
    /* For a Model Exchange importer: the continuous states' and their derivatives' value
     * references, and the number of event indicators. */
    size_t n_states, n_indicators;
    Ref *state_vr, *derivative_vr;
} Plan;

/* fmu_run.c's helpers, shared with the allocation count. */
void die(const char *what);
void *array(size_t n, size_t size);
void check(int status, const char *call);
double time_at(const Plan *p, size_t k);
int set_inputs(const Api *api, Component c, const Plan *p, size_t k);
void initialize(const Api *api, Component c, const Plan *p);
void get_outputs(const Api *api, Component c, const Plan *p, double *row);
extern const Callbacks callbacks;

/* The Model Exchange calls of either version, FMI 2.0-shaped (fmu_count.c fills them for FMI
 * 2.0, fmu_run3.c for FMI 3.0). */
typedef struct {
    int new_discrete_states_needed, terminate, nominals_changed, values_changed, next_event_defined;
    double next_event_time;
} EventInfo;
typedef struct {
    int (*enter_event_mode)(Component);
    int (*new_discrete_states)(Component, EventInfo *);
    int (*enter_continuous_time_mode)(Component);
    int (*completed_integrator_step)(Component, int, int *, int *);
    int (*set_time)(Component, double);
    int (*set_continuous_states)(Component, const double *, size_t);
    int (*get_derivatives)(Component, double *, size_t);
    int (*get_event_indicators)(Component, double *, size_t);
    int (*get_continuous_states)(Component, double *, size_t);
} MeApi;

/* fmu_run3.c: `api` (filled by load_api3) turned to FMI 3.0 Model Exchange (instantiation and
 * initialization), and `me` filled; 0: a symbol is missing. */
int load_me3(Library lib, Api *api, MeApi *me);

#ifdef COUNT_ALLOCATIONS
/* fmu_count.c: the allocation count of the passes after initialization. */
void count_as_run(int on);
void count_step_begins(void);
void count_step_ends(const Api *api, Component c, const Plan *p, size_t k);
void count_moved(const Api *api, Component c, const Plan *p);
int load_me2(Library lib, MeApi *me);
void count_model_exchange(const MeApi *me, const Api *api, const Plan *p, const char *uri);
void count_print(void);
#endif

/* Defined in fmu_run.c; the FMI 3.0 logger counts and prints as the FMI 2.0 one does. */
extern int verbose;
extern size_t events; /* logEvents messages since it was last cleared */

/* fmu_run3.c: fills `api` with the FMI 3.0 calls behind FMI 2.0-shaped wrappers (0: a symbol is
 * missing), and prints what the FMI 3.0 importer counted during a run. */
int load_api3(Library lib, Api *api);
void print_fmi3_counts(void);

#endif
