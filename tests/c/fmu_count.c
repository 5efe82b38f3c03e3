/* fmu_count.c: the harness's allocation count (Linux; see fmu_run.c). The FMU's heap allocations
 * (malloc and friends, which the harness defines over glibc's and exports to the FMU with
 * -rdynamic) are counted step by step, logging off, as a real-time importer runs, in three passes
 * after initialization:
 * - "as the scenario runs": the repeat after fmi2Reset of `run`/`run3`: the inputs set, the step
 *   (events included), the outputs got, their directional derivative along every Real input (in
 *   FMI 3.0 their adjoint too) and their time derivatives;
 * - "every Real input moved": the same calls with every Real input moved at every step;
 * - "Model Exchange": a Model Exchange importer's calls (FMI 2.0's, or FMI 3.0's for `run3`),
 *   the inputs moved at each round: the time and states set, the derivatives, one directional
 *   derivative per state, the event indicators, completed integrator steps, and Event Mode with
 *   the discrete states updated at each sign change of an indicator and each change of an
 *   Integer input (the states advanced by Euler steps that move each state by at most
 *   1e-3 (|x| + 1), so that stiff models stay stable).
 * Each pass prints how many steps allocated anything. Split from fmu_run.c for the project's
 * 600-line rule. */
#include "fmu_run.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static size_t allocations;
static int counting;
void *malloc(size_t n) {
    allocations += counting;
    if (counting && getenv("FMU_RUN_ABORT_ON_ALLOCATION")) abort();
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size) {
    allocations += counting;
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n) {
    allocations += counting;
    return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t n) {
    allocations += counting;
    return __libc_memalign(alignment, n);
}
void *aligned_alloc(size_t alignment, size_t n) { return memalign(alignment, n); }
int posix_memalign(void **out, size_t alignment, size_t n) {
    void *p = memalign(alignment, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

/* A pass: the steps counted, those that allocated, the first of those (1-based). */
typedef struct {
    const char *what;
    size_t steps, allocating, first;
} Tally;
static Tally as_run = {"as the scenario runs", 0, 0, 0}, moved = {"every Real input moved", 0, 0, 0},
             model_exchange = {"Model Exchange", 0, 0, 0};
/* The pass counting now, if any. */
static Tally *counted;

void count_as_run(int on) { counted = on ? &as_run : NULL; }

void count_step_begins(void) {
    allocations = 0;
    counting = counted != NULL;
}

/* What an importer asks for derivatives at a communication point: the Real outputs'
 * directional derivative along every Real input at once, in FMI 3.0 their adjoint too, and
 * their first time derivatives. */
static void derivatives(const Api *api, Component c, const Plan *p) {
    Ref outputs[64];
    double seed[64], d[64], w[64];
    int orders[64];
    size_t n = 0, m = p->n_real_inputs < 64 ? p->n_real_inputs : 64;
    for (size_t i = 0; i < p->n_outputs && n < 64; i++)
        if (p->output_kind[i] != 'I') outputs[n] = p->output_vr[i], orders[n++] = 1;
    for (size_t i = 0; i < m; i++) seed[i] = 1.0;
    if (n && m) check(api->directional(c, outputs, n, p->real_input_vr, m, seed, d), "directional");
    for (size_t i = 0; i < n; i++) w[i] = 1.0;
    if (n && m && api->adjoint) check(api->adjoint(c, outputs, n, p->real_input_vr, m, w, d), "adjoint");
    if (n) check(api->output_derivatives(c, outputs, n, orders, d), "output derivatives");
}

static void tally(Tally *t, size_t k) {
    t->steps++;
    if (allocations) {
        t->allocating++;
        if (!t->first) t->first = k + 1;
    }
}

void count_step_ends(const Api *api, Component c, const Plan *p, size_t k) {
    if (counted) derivatives(api, c, p);
    counting = 0;
    if (counted) tally(counted, k);
}

/* The Real inputs of step k, each moved by a relative 1e-9, up at odd steps and down at even
 * ones, and one at 0 to 1e-12 at odd steps (up, so that a range starting at 0 holds it); the
 * Integer inputs as planned: every Real input changes at every step. */
static int set_moved_inputs(const Api *api, Component c, const Plan *p, size_t k, int reals_only) {
    double sign = k % 2 ? 1.0 : -1.0;
    size_t r = 0, n = 0;
    for (size_t i = 0; i < p->n_inputs; i++) {
        double u = p->input_value[k * p->n_inputs + i];
        if (p->input_kind[i] == 'I')
            p->integer_input[n++] = (int)u;
        else
            p->real_input[r++] = u != 0.0 ? u * (1.0 + sign * 1e-9) : (sign > 0 ? 1e-12 : 0.0);
    }
    int status = FMI_OK;
    if (r) status = api->set_real(c, p->real_input_vr, r, p->real_input);
    if (n && !reals_only && status == FMI_OK)
        status = api->set_integer(c, p->integer_input_vr, n, p->integer_input);
    return status;
}

/* Whether an Integer input differs between steps a and b. */
static int integers_differ(const Plan *p, size_t a, size_t b) {
    for (size_t i = 0; i < p->n_inputs; i++)
        if (p->input_kind[i] == 'I' && p->input_value[a * p->n_inputs + i] != p->input_value[b * p->n_inputs + i])
            return 1;
    return 0;
}

void count_moved(const Api *api, Component c, const Plan *p) {
    double *row = array(p->n_outputs, sizeof(double));
    counted = &moved;
    for (size_t k = 0; k < p->steps; k++) {
        count_step_begins();
        check(set_moved_inputs(api, c, p, k, 0), "fmi2SetReal/fmi2SetInteger (moved inputs)");
        check(api->do_step(c, time_at(p, k), p->step, 1), "fmi2DoStep (moved inputs)");
        get_outputs(api, c, p, row);
        count_step_ends(api, c, p, k);
    }
    counted = NULL;
    free(row);
}

/* ---- Model Exchange ---------------------------------------------------------------------- */


/* How many rounds of calls the pass makes at most. */
enum { ROUNDS = 1000 };

/* Event Mode until the discrete states settle, then Continuous-Time Mode. */
static void event_iteration(const MeApi *me, Component c) {
    EventInfo info = {1, 0, 0, 0, 0, 0.0};
    for (int i = 0; info.new_discrete_states_needed; i++) {
        if (i == 100) die("Model Exchange: no end to the event iteration");
        check(me->new_discrete_states(c, &info), "fmi2NewDiscreteStates");
    }
    check(me->enter_continuous_time_mode(c), "fmi2EnterContinuousTimeMode");
}

static int crossed(const double *a, const double *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((a[i] > 0) != (b[i] > 0)) return 1;
    return 0;
}

int load_me2(Library lib, MeApi *me) {
    const Symbol table[] = {
        {(void **)&me->enter_event_mode, "fmi2EnterEventMode"},
        {(void **)&me->new_discrete_states, "fmi2NewDiscreteStates"},
        {(void **)&me->enter_continuous_time_mode, "fmi2EnterContinuousTimeMode"},
        {(void **)&me->completed_integrator_step, "fmi2CompletedIntegratorStep"},
        {(void **)&me->set_time, "fmi2SetTime"},
        {(void **)&me->set_continuous_states, "fmi2SetContinuousStates"},
        {(void **)&me->get_derivatives, "fmi2GetDerivatives"},
        {(void **)&me->get_event_indicators, "fmi2GetEventIndicators"},
        {(void **)&me->get_continuous_states, "fmi2GetContinuousStates"},
    };
    return load_symbols(lib, table, sizeof table / sizeof table[0]);
}

/* An importer's Model Exchange calls after initialization (`api` instantiates Model Exchange). */
void count_model_exchange(const MeApi *me, const Api *api, const Plan *p, const char *uri) {
    size_t nx = p->n_states, nz = p->n_indicators;
    double *x = array(nx, sizeof(double)), *dx = array(nx, sizeof(double));
    double *column = array(nx, sizeof(double)), *row = array(p->n_outputs, sizeof(double));
    double *z = array(nz, sizeof(double)), *before = array(nz, sizeof(double));
    Component c = api->instantiate("fmu_run", 0, p->guid, uri, &callbacks, 0, 0);
    if (!c) die("Model Exchange: fmi2Instantiate returned NULL");
    initialize(api, c, p);
    counted = &model_exchange;
    count_step_begins();
    event_iteration(me, c);
    check(me->get_event_indicators(c, before, nz), "fmi2GetEventIndicators");
    const double one = 1.0, end = time_at(p, p->steps);
    double t = p->start;
    size_t events_handled = 0, round = 0, integers_of = 0;
    for (; round < ROUNDS && t < end; round++) {
        if (round) count_step_begins();
        size_t k = (size_t)((t - p->start) / p->step);
        k = k < p->steps ? k : p->steps - 1;
        /* The Integer inputs are discrete: set in Event Mode, when they change. */
        if (integers_differ(p, k, integers_of)) {
            check(me->enter_event_mode(c), "fmi2EnterEventMode");
            check(set_moved_inputs(api, c, p, k, 0), "fmi2SetReal/fmi2SetInteger (inputs)");
            event_iteration(me, c);
            events_handled++, integers_of = k;
        }
        check(set_moved_inputs(api, c, p, k, 1), "fmi2SetReal (inputs)");
        check(me->get_continuous_states(c, x, nx), "fmi2GetContinuousStates");
        check(me->get_derivatives(c, dx, nx), "fmi2GetDerivatives");
        for (size_t j = 0; j < nx; j++)
            check(api->directional(c, p->derivative_vr, nx, &p->state_vr[j], 1, &one, column),
                  "fmi2GetDirectionalDerivative (a column of df/dx)");
        double h = end - t < p->step ? end - t : p->step;
        for (size_t j = 0; j < nx; j++) {
            double most = 1e-3 * (fabs(x[j]) + 1.0);
            if (fabs(dx[j]) * h > most) h = most / fabs(dx[j]);
        }
        if (h < 1e-12) h = 1e-12;
        for (size_t j = 0; j < nx; j++) x[j] += h * dx[j];
        t += h;
        check(me->set_time(c, t), "fmi2SetTime");
        check(me->set_continuous_states(c, x, nx), "fmi2SetContinuousStates");
        check(me->get_event_indicators(c, z, nz), "fmi2GetEventIndicators");
        int enter = 0, terminate = 0;
        check(me->completed_integrator_step(c, 1, &enter, &terminate), "fmi2CompletedIntegratorStep");
        if (enter || crossed(before, z, nz)) {
            check(me->enter_event_mode(c), "fmi2EnterEventMode");
            event_iteration(me, c);
            events_handled++;
            check(me->get_event_indicators(c, z, nz), "fmi2GetEventIndicators");
        }
        memcpy(before, z, nz * sizeof(double));
        get_outputs(api, c, p, row);
        counting = 0;
        tally(&model_exchange, round);
    }
    counted = NULL;
    printf("Model Exchange: %zu rounds to t = %.6g of %.6g, %zu events\n", round, t, end, events_handled);
    check(api->terminate(c), "fmi2Terminate");
    api->free_instance(c);
    free(x), free(dx), free(column), free(row), free(z), free(before);
}

void count_print(void) {
    Tally *passes[] = {&as_run, &moved, &model_exchange};
    for (size_t i = 0; i < 3; i++)
        if (passes[i]->steps)
            printf("allocations: %s: %zu steps with logging off, %zu of them allocated, first at step %zu\n",
                   passes[i]->what, passes[i]->steps, passes[i]->allocating, passes[i]->first);
}
