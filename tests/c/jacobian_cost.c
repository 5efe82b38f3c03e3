/* jacobian_cost: what a full Jacobian df/dx costs a Model Exchange importer through the FMI 2.0
 * C ABI, the calls counted by callgrind (xtask/python/jacobian_bench.py runs it with
 * --toggle-collect on the calls of the MODE):
 *
 *   jacobian_cost BINARY RESOURCE_URI GUID MODE POINTS STATES DERIVATIVES
 *
 * STATES and DERIVATIVES are comma-separated value references, in the order of the state vector.
 * At each of POINTS points near the start state x0 (x0 + 1e-7 k (1 + |x0|) in every state) the
 * importer has set the states and evaluated the derivatives, as an integrator has before it asks
 * for a Jacobian; then, by MODE:
 *   exact       one fmi2GetDirectionalDerivative per state, its unit seed alone (CVode, Rosenbrock)
 *   seeded      one fmi2GetDirectionalDerivative per state, every state a known, a unit seed vector
 *   difference  per state, fmi2SetContinuousStates of x + h e_i and fmi2GetDerivatives
 *   none        nothing more: what the states' setting and first evaluation cost
 * Prints the sum of the Jacobian's entries, so that the calls cannot be optimized away and a wrong
 * answer shows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>

typedef void *Component;
typedef unsigned int Ref;
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocate)(size_t, size_t);
    void (*free)(void *);
    void (*step_finished)(void *, int);
    void *environment;
} Callbacks;
typedef struct {
    int new_discrete_states_needed, terminate, nominals_changed, values_changed, next_defined;
    double next_time;
} EventInfo;

static void logger(void *env, const char *instance, int status, const char *category,
                   const char *message, ...) {
    (void)env, (void)instance, (void)category;
    if (status > 1) fprintf(stderr, "jacobian_cost: status %d: %s\n", status, message);
}

static void die(const char *what) {
    fprintf(stderr, "jacobian_cost: %s\n", what);
    exit(2);
}

static void *need(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) die(name);
    return f;
}

static size_t refs(const char *list, Ref *out) {
    size_t n = 0;
    for (const char *p = list; *p;) {
        out[n++] = (Ref)strtoul(p, (char **)&p, 10);
        if (*p == ',') p++;
    }
    return n;
}

static void ok(int status, const char *call) {
    if (status != 0) {
        fprintf(stderr, "jacobian_cost: %s returned %d\n", call, status);
        exit(3);
    }
}

int main(int argc, char **argv) {
    if (argc != 8) die("usage: jacobian_cost BINARY URI GUID MODE POINTS STATES DERIVATIVES");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("cannot load the binary");
    Component (*instantiate)(const char *, int, const char *, const char *, const Callbacks *, int,
                             int) = need(lib, "fmi2Instantiate");
    int (*setup)(Component, int, double, double, int, double) = need(lib, "fmi2SetupExperiment");
    int (*enter_init)(Component) = need(lib, "fmi2EnterInitializationMode");
    int (*exit_init)(Component) = need(lib, "fmi2ExitInitializationMode");
    int (*new_discrete)(Component, EventInfo *) = need(lib, "fmi2NewDiscreteStates");
    int (*enter_ct)(Component) = need(lib, "fmi2EnterContinuousTimeMode");
    int (*get_states)(Component, double *, size_t) = need(lib, "fmi2GetContinuousStates");
    int (*set_states)(Component, const double *, size_t) = need(lib, "fmi2SetContinuousStates");
    int (*get_derivatives)(Component, double *, size_t) = need(lib, "fmi2GetDerivatives");
    int (*directional)(Component, const Ref *, size_t, const Ref *, size_t, const double *,
                       double *) = need(lib, "fmi2GetDirectionalDerivative");
    void (*free_instance)(Component) = need(lib, "fmi2FreeInstance");

    const char *mode = argv[4];
    size_t points = (size_t)strtoul(argv[5], NULL, 10);
    Ref states[64], derivatives[64];
    size_t n = refs(argv[6], states);
    if (refs(argv[7], derivatives) != n) die("as many derivatives as states");

    static const Callbacks callbacks = {logger, calloc, free, NULL, NULL};
    Component c = instantiate("jacobian", 0, argv[3], argv[2], &callbacks, 0, 0);
    if (!c) die("fmi2Instantiate failed");
    ok(setup(c, 0, 0.0, 0.0, 0, 0.0), "fmi2SetupExperiment");
    ok(enter_init(c), "fmi2EnterInitializationMode");
    ok(exit_init(c), "fmi2ExitInitializationMode");
    EventInfo info = {1, 0, 0, 0, 0, 0.0};
    while (info.new_discrete_states_needed) ok(new_discrete(c, &info), "fmi2NewDiscreteStates");
    ok(enter_ct(c), "fmi2EnterContinuousTimeMode");

    double x0[64], x[64], dx[64], column[64], unit[64], sum = 0.0;
    ok(get_states(c, x0, n), "fmi2GetContinuousStates");
    for (size_t k = 0; k < points; k++) {
        for (size_t i = 0; i < n; i++) x[i] = x0[i] + 1e-7 * (double)k * (1.0 + fabs(x0[i]));
        ok(set_states(c, x, n), "fmi2SetContinuousStates");
        ok(get_derivatives(c, dx, n), "fmi2GetDerivatives");
        for (size_t i = 0; i < n && strcmp(mode, "none") != 0; i++) {
            if (strcmp(mode, "exact") == 0) {
                const double one = 1.0;
                ok(directional(c, derivatives, n, &states[i], 1, &one, column),
                   "fmi2GetDirectionalDerivative");
            } else if (strcmp(mode, "seeded") == 0) {
                for (size_t j = 0; j < n; j++) unit[j] = i == j;
                ok(directional(c, derivatives, n, states, n, unit, column),
                   "fmi2GetDirectionalDerivative");
            } else if (strcmp(mode, "difference") == 0) {
                double h = 1e-7 * (1.0 + fabs(x[i])), saved = x[i];
                x[i] += h;
                ok(set_states(c, x, n), "fmi2SetContinuousStates");
                ok(get_derivatives(c, column, n), "fmi2GetDerivatives");
                for (size_t j = 0; j < n; j++) column[j] = (column[j] - dx[j]) / h;
                x[i] = saved;
            } else {
                die("unknown mode");
            }
            for (size_t j = 0; j < n; j++) sum += column[j];
        }
    }
    printf("%.6e\n", sum);
    free_instance(c);
    dlclose(lib);
    return 0;
}
