/* fmu_run: drives one FMU binary through the FMI 2.0 or FMI 3.0 Co-Simulation C ABI, the way an
 * importer written in C does. Compiled three times by `cargo xtask`: with gcc for linux64 (dlopen),
 * with mingw-w64 for win64 (LoadLibrary, run under Wine), and with zig for aarch64-linux (run under
 * qemu-user). The platform check compares what they produce, with each other and with
 * reference-fmus/.
 *
 *   fmu_run run|run3     PLAN BINARY RESOURCE_URI OUT [--save-state FILE] [--load-state FILE]
 *   fmu_run abuse|abuse3 PLAN BINARY RESOURCE_URI
 *
 * `run` and `abuse` use FMI 2.0; `run3` and `abuse3` the same calls through FMI 3.0 (fmu_run3.c,
 * compiled with this file; fmu_run.h has what both share): Co-Simulation with Event Mode and
 * early return, and an intermediate update callback that asks for an early return at every third
 * call within a communication step, so that every step the FMU ends early (at an event or where
 * asked) is continued to the communication point as an FMI 3.0 importer does.
 *
 * PLAN is a token file written by xtask/python/platforms.py: the GUID, tolerance, start, step,
 * number of steps, parameters (kind R or I, value reference, value; set in initialization mode
 * and read back after it), input and output value references, and the input values of every
 * step. Every Real travels as the 16 hex digits of its IEEE-754 bits, so neither side's
 * printf/strtod can change a digit.
 *
 * `run` simulates the scenario and writes one line per communication point (time and outputs, in
 * hex bits). At the middle step it takes the FMU state and serializes it (--save-state writes the
 * bytes); after the run it deserializes them, rolls back and repeats the second half, then resets
 * the instance and repeats the whole run: both repeats must be bit-identical. --load-state starts
 * from a serialized state (written by either platform) at the middle step instead.
 *
 * On Linux, `run` and `run3` also count the FMU's heap allocations after initialization, step
 * by step, in the repeat after fmi2Reset, with every Real input moved, and (`run`) through Model
 * Exchange (fmu_count.c).
 *
 * `abuse` makes the calls a careless importer makes (wrong GUID, NULL instance and arrays, calls
 * out of order, NaN inputs, corrupted and truncated states) and checks that each returns a status
 * and the instance carries on. The exit code counts the failures. */
#include "fmu_run.h"

int load_symbols(Library lib, const Symbol *table, size_t n) {
    for (size_t i = 0; i < n; i++) {
        *table[i].slot = symbol(lib, table[i].name);
        if (!*table[i].slot) {
            fprintf(stderr, "fmu_run: the binary does not export %s\n", table[i].name);
            return 0;
        }
    }
    return 1;
}

static int load_api(Library lib, Api *api) {
    const Symbol table[] = {
        {(void **)&api->instantiate, "fmi2Instantiate"},
        {(void **)&api->free_instance, "fmi2FreeInstance"},
        {(void **)&api->setup_experiment, "fmi2SetupExperiment"},
        {(void **)&api->enter_initialization, "fmi2EnterInitializationMode"},
        {(void **)&api->exit_initialization, "fmi2ExitInitializationMode"},
        {(void **)&api->terminate, "fmi2Terminate"},
        {(void **)&api->reset, "fmi2Reset"},
        {(void **)&api->get_real, "fmi2GetReal"},
        {(void **)&api->get_integer, "fmi2GetInteger"},
        {(void **)&api->set_real, "fmi2SetReal"},
        {(void **)&api->set_integer, "fmi2SetInteger"},
        {(void **)&api->get_state, "fmi2GetFMUstate"},
        {(void **)&api->set_state, "fmi2SetFMUstate"},
        {(void **)&api->free_state, "fmi2FreeFMUstate"},
        {(void **)&api->serialized_size, "fmi2SerializedFMUstateSize"},
        {(void **)&api->serialize, "fmi2SerializeFMUstate"},
        {(void **)&api->deserialize, "fmi2DeSerializeFMUstate"},
        {(void **)&api->do_step, "fmi2DoStep"},
        {(void **)&api->set_debug_logging, "fmi2SetDebugLogging"},
        {(void **)&api->directional, "fmi2GetDirectionalDerivative"},
        {(void **)&api->output_derivatives, "fmi2GetRealOutputDerivatives"},
    };
    api->adjoint = NULL;
    return load_symbols(lib, table, sizeof table / sizeof table[0]);
}


/* Shared with fmu_run3.c (fmu_run.h). */
int verbose;
size_t events; /* logEvents messages since it was last cleared */
static void logger(void *env, const char *instance, int status, const char *category,
                   const char *message, ...) {
    (void)env;
    if (strcmp(category, "logEvents") == 0) events++;
    if (!verbose) return;
    va_list args;
    va_start(args, message);
    fprintf(stderr, "[%s] %s %d: ", category, instance, status);
    vfprintf(stderr, message, args);
    fputc('\n', stderr);
    va_end(args);
}
const Callbacks callbacks = {logger, calloc, free, NULL, NULL};

void die(const char *what) {
    fprintf(stderr, "fmu_run: %s\n", what);
    exit(2);
}

/* ---- the plan ---------------------------------------------------------------------------- */


static double hex_real(const char *token) {
    uint64_t bits = strtoull(token, NULL, 16);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static void write_hex(FILE *f, double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    fprintf(f, " %016llx", (unsigned long long)bits);
}

static const char *next_token(FILE *f, char *buf) {
    if (fscanf(f, "%127s", buf) != 1) die("plan: unexpected end");
    return buf;
}

static void expect(FILE *f, const char *word) {
    char buf[128];
    if (strcmp(next_token(f, buf), word) != 0) die("plan: malformed");
}

static size_t read_count(FILE *f, const char *word) {
    char buf[128];
    expect(f, word);
    return (size_t)strtoull(next_token(f, buf), NULL, 10);
}

void *array(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) die("out of memory");
    return p;
}

static Plan read_plan(const char *path) {
    Plan p;
    char buf[128];
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open the plan");
    expect(f, "guid");
    strcpy(p.guid, next_token(f, buf));
    expect(f, "tolerance");
    p.tolerance = hex_real(next_token(f, buf));
    expect(f, "start");
    p.start = hex_real(next_token(f, buf));
    expect(f, "step");
    p.step = hex_real(next_token(f, buf));
    p.steps = read_count(f, "steps");
    p.n_params = read_count(f, "params");
    p.param_kind = array(p.n_params, 1);
    p.param_vr = array(p.n_params, sizeof(Ref));
    p.param_value = array(p.n_params, sizeof(double));
    for (size_t i = 0; i < p.n_params; i++) {
        p.param_kind[i] = next_token(f, buf)[0];
        p.param_vr[i] = (Ref)strtoul(next_token(f, buf), NULL, 10);
        p.param_value[i] = hex_real(next_token(f, buf));
    }
    p.n_inputs = read_count(f, "inputs");
    p.input_kind = array(p.n_inputs, 1);
    p.input_vr = array(p.n_inputs, sizeof(Ref));
    p.real_input_vr = array(p.n_inputs, sizeof(Ref));
    p.integer_input_vr = array(p.n_inputs, sizeof(Ref));
    p.real_input = array(p.n_inputs, sizeof(double));
    p.integer_input = array(p.n_inputs, sizeof(int));
    p.n_real_inputs = p.n_integer_inputs = 0;
    for (size_t i = 0; i < p.n_inputs; i++) {
        p.input_kind[i] = next_token(f, buf)[0];
        p.input_vr[i] = (Ref)strtoul(next_token(f, buf), NULL, 10);
        if (p.input_kind[i] == 'I')
            p.integer_input_vr[p.n_integer_inputs++] = p.input_vr[i];
        else
            p.real_input_vr[p.n_real_inputs++] = p.input_vr[i];
    }
    p.n_outputs = read_count(f, "outputs");
    p.output_kind = array(p.n_outputs, 1);
    p.output_vr = array(p.n_outputs, sizeof(Ref));
    for (size_t i = 0; i < p.n_outputs; i++) {
        p.output_kind[i] = next_token(f, buf)[0];
        p.output_vr[i] = (Ref)strtoul(next_token(f, buf), NULL, 10);
    }
    p.n_states = read_count(f, "states");
    p.state_vr = array(p.n_states, sizeof(Ref));
    p.derivative_vr = array(p.n_states, sizeof(Ref));
    for (size_t i = 0; i < p.n_states; i++) {
        p.state_vr[i] = (Ref)strtoul(next_token(f, buf), NULL, 10);
        p.derivative_vr[i] = (Ref)strtoul(next_token(f, buf), NULL, 10);
    }
    p.n_indicators = read_count(f, "indicators");
    expect(f, "values");
    p.input_value = array(p.steps * p.n_inputs, sizeof(double));
    for (size_t k = 0; k < p.steps * p.n_inputs; k++) p.input_value[k] = hex_real(next_token(f, buf));
    fclose(f);
    return p;
}

static void free_plan(Plan *p) {
    free(p->param_kind);
    free(p->input_kind);
    free(p->output_kind);
    free(p->real_input_vr);
    free(p->integer_input_vr);
    free(p->real_input);
    free(p->integer_input);
    free(p->param_vr);
    free(p->input_vr);
    free(p->output_vr);
    free(p->param_value);
    free(p->input_value);
    free(p->state_vr);
    free(p->derivative_vr);
}

/* ---- run --------------------------------------------------------------------------------- */

void check(int status, const char *call) {
    if (status != FMI_OK) {
        fprintf(stderr, "fmu_run: %s returned %d\n", call, status);
        exit(3);
    }
}

double time_at(const Plan *p, size_t k) { return p->start + (double)k * p->step; }

/* The inputs of step k: the Reals with one fmi2SetReal, the Integers with one fmi2SetInteger.
 * The first status that is not OK, or OK. */
int set_inputs(const Api *api, Component c, const Plan *p, size_t k) {
    size_t r = 0, n = 0;
    for (size_t i = 0; i < p->n_inputs; i++) {
        double u = p->input_value[k * p->n_inputs + i];
        if (p->input_kind[i] == 'I')
            p->integer_input[n++] = (int)u;
        else
            p->real_input[r++] = u;
    }
    int status = FMI_OK;
    if (r) status = api->set_real(c, p->real_input_vr, r, p->real_input);
    if (n && status == FMI_OK) status = api->set_integer(c, p->integer_input_vr, n, p->integer_input);
    return status;
}

/* Setup, parameters, the inputs of the first step, initialization. */
void initialize(const Api *api, Component c, const Plan *p) {
    check(api->setup_experiment(c, 1, p->tolerance, p->start, 0, 0.0), "fmi2SetupExperiment");
    check(api->enter_initialization(c), "fmi2EnterInitializationMode");
    for (size_t i = 0; i < p->n_params; i++) {
        if (p->param_kind[i] == 'I') {
            int v = (int)p->param_value[i];
            check(api->set_integer(c, &p->param_vr[i], 1, &v), "fmi2SetInteger (parameter)");
        } else {
            check(api->set_real(c, &p->param_vr[i], 1, &p->param_value[i]), "fmi2SetReal (parameter)");
        }
    }
    check(set_inputs(api, c, p, 0), "fmi2SetReal/fmi2SetInteger (inputs)");
    check(api->exit_initialization(c), "fmi2ExitInitializationMode");
    /* Every parameter reads back as set: a value the FMU accepted and then ignored would run the
     * scenario with another parameter set. */
    for (size_t i = 0; i < p->n_params; i++) {
        double got;
        if (p->param_kind[i] == 'I') {
            int v;
            check(api->get_integer(c, &p->param_vr[i], 1, &v), "fmi2GetInteger (parameter)");
            got = v;
        } else {
            check(api->get_real(c, &p->param_vr[i], 1, &got), "fmi2GetReal (parameter)");
        }
        if (memcmp(&got, &p->param_value[i], sizeof got) != 0 && got != p->param_value[i]) {
            fprintf(stderr, "fmu_run: parameter %u reads back as %.17g, not %.17g\n", p->param_vr[i],
                    got, p->param_value[i]);
            exit(3);
        }
    }
}

void get_outputs(const Api *api, Component c, const Plan *p, double *row) {
    for (size_t i = 0; i < p->n_outputs; i++) {
        if (p->output_kind[i] == 'I') {
            int v;
            check(api->get_integer(c, &p->output_vr[i], 1, &v), "fmi2GetInteger");
            row[i] = v;
        } else {
            check(api->get_real(c, &p->output_vr[i], 1, &row[i]), "fmi2GetReal");
        }
    }
}


/* Steps k = from..steps-1, writing the outputs after step k into out[k]. At step `mid` (before
 * its inputs are set) the FMU state is taken and serialized into *saved, if saved is not NULL. */
static void simulate(const Api *api, Component c, const Plan *p, size_t from, double *out,
                     size_t mid, char **saved, size_t *saved_size) {
    for (size_t k = from; k < p->steps; k++) {
        if (saved && k == mid) {
            FmuState s = NULL;
            check(api->get_state(c, &s), "fmi2GetFMUstate");
            check(api->serialized_size(c, s, saved_size), "fmi2SerializedFMUstateSize");
            *saved = array(*saved_size, 1);
            check(api->serialize(c, s, *saved, *saved_size), "fmi2SerializeFMUstate");
            check(api->free_state(c, &s), "fmi2FreeFMUstate");
        }
#ifdef COUNT_ALLOCATIONS
        count_step_begins();
#endif
        check(set_inputs(api, c, p, k), "fmi2SetReal/fmi2SetInteger (inputs)");
        int status = api->do_step(c, time_at(p, k), p->step, 1);
        if (status != FMI_OK) {
            fprintf(stderr, "fmu_run: fmi2DoStep at t = %.17g returned %d\n", time_at(p, k), status);
            exit(3);
        }
        get_outputs(api, c, p, out + k * p->n_outputs);
#ifdef COUNT_ALLOCATIONS
        count_step_ends(api, c, p, k);
#endif
    }
}

static void restore(const Api *api, Component c, const char *bytes, size_t size) {
    FmuState s = NULL;
    check(api->deserialize(c, bytes, size, &s), "fmi2DeSerializeFMUstate");
    check(api->set_state(c, s), "fmi2SetFMUstate");
    check(api->free_state(c, &s), "fmi2FreeFMUstate");
}

static int same_rows(const Plan *p, const double *a, const double *b, size_t from, const char *what) {
    size_t n = (p->steps - from) * p->n_outputs;
    if (memcmp(a + from * p->n_outputs, b + from * p->n_outputs, n * sizeof(double)) == 0) return 1;
    for (size_t j = from * p->n_outputs; j < p->steps * p->n_outputs; j++) {
        if (memcmp(&a[j], &b[j], sizeof(double)) != 0) {
            fprintf(stderr, "fmu_run: %s differs at step %zu, output %zu: %.17g vs %.17g\n", what,
                    j / p->n_outputs, j % p->n_outputs, a[j], b[j]);
            break;
        }
    }
    return 0;
}

static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open the state file");
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = array(*size, 1);
    if (fread(bytes, 1, *size, f) != *size) die("cannot read the state file");
    fclose(f);
    return bytes;
}

static int run(const Api *api, const Plan *p, const char *uri, const char *out_path,
               const char *save_path, const char *load_path) {
    size_t mid = p->steps / 2, from = 0, size = 0;
    char *saved = NULL;
    double *out = array(p->steps * p->n_outputs, sizeof(double));
    /* Logging on, so that events are seen (the logger prints only when verbose). */
    Component c = api->instantiate("fmu_run", 1, p->guid, uri, &callbacks, 0, 1);
    if (!c) die("fmi2Instantiate returned NULL");
    initialize(api, c, p);
    int ok = 1;
    if (load_path) {
        char *bytes = read_file(load_path, &size);
        restore(api, c, bytes, size);
        free(bytes);
        from = mid;
        simulate(api, c, p, from, out, mid, NULL, NULL);
    } else {
        simulate(api, c, p, 0, out, mid, &saved, &size);
        double *again = array(p->steps * p->n_outputs, sizeof(double));
        /* Roll back to the middle and repeat the second half. */
        restore(api, c, saved, size);
        simulate(api, c, p, mid, again, mid, NULL, NULL);
        ok &= same_rows(p, out, again, mid, "the run after a rollback");
        /* Reset and repeat the whole run, logging off, counting allocations. */
        check(api->reset(c), "fmi2Reset");
        initialize(api, c, p);
        check(api->set_debug_logging(c, 0, 0, NULL), "fmi2SetDebugLogging");
#ifdef COUNT_ALLOCATIONS
        count_as_run(1);
#endif
        simulate(api, c, p, 0, again, mid, NULL, NULL);
#ifdef COUNT_ALLOCATIONS
        count_as_run(0);
#endif
        ok &= same_rows(p, out, again, 0, "the run after fmi2Reset");
#ifdef COUNT_ALLOCATIONS
        /* Once more, every Real input moved at every step (not compared); not for the bench,
         * which counts the instructions of the passes above. */
        if (!getenv("FMU_RUN_BENCH")) {
            check(api->reset(c), "fmi2Reset");
            initialize(api, c, p);
            check(api->set_debug_logging(c, 0, 0, NULL), "fmi2SetDebugLogging");
            count_moved(api, c, p);
        }
#endif
        free(again);
    }
    check(api->terminate(c), "fmi2Terminate");
    api->free_instance(c);


    if (save_path) {
        FILE *f = fopen(save_path, "wb");
        if (!f || fwrite(saved, 1, size, f) != size) die("cannot write the state file");
        fclose(f);
    }
    FILE *f = fopen(out_path, "w");
    if (!f) die("cannot write the output file");
    for (size_t k = from; k < p->steps; k++) {
        write_hex(f, time_at(p, k + 1));
        for (size_t i = 0; i < p->n_outputs; i++) write_hex(f, out[k * p->n_outputs + i]);
        fputc('\n', f);
    }
    fclose(f);
    free(saved);
    free(out);
    return ok ? 0 : 1;
}

/* ---- abuse ------------------------------------------------------------------------------- */

static int failures;
static void expect_status(int got, int wanted, const char *what) {
    int ok = got == wanted;
    printf("%s: %s (status %d)\n", ok ? "ok" : "FAIL", what, got);
    failures += !ok;
}

static int abuse(const Api *api, const Plan *p, const char *uri) {
    const double nan = NAN;
    Component wrong = api->instantiate("abuse", 1, "{not-the-guid}", uri, &callbacks, 0, verbose);
    printf("%s: fmi2Instantiate with a wrong GUID returns NULL\n", wrong ? "FAIL" : "ok");
    failures += wrong != NULL;
    if (wrong) api->free_instance(wrong);

    expect_status(api->do_step(NULL, 0.0, p->step, 1), FMI_ERROR, "fmi2DoStep on a NULL instance");
    expect_status(api->reset(NULL), FMI_ERROR, "fmi2Reset on a NULL instance");

    Component c = api->instantiate("abuse", 1, p->guid, uri, &callbacks, 0, verbose);
    if (!c) die("fmi2Instantiate returned NULL");
    expect_status(api->do_step(c, p->start, p->step, 1), FMI_ERROR, "fmi2DoStep before initialization");
    expect_status(api->exit_initialization(c), FMI_ERROR, "fmi2ExitInitializationMode before entering it");
    expect_status(api->get_real(c, NULL, 1, NULL), FMI_ERROR, "fmi2GetReal with NULL arrays");
    expect_status(api->set_real(c, NULL, 1, NULL), FMI_ERROR, "fmi2SetReal with NULL arrays");
    expect_status(api->set_state(c, NULL), FMI_ERROR, "fmi2SetFMUstate with a NULL state");
    expect_status(api->get_state(c, NULL), FMI_ERROR, "fmi2GetFMUstate into NULL");
    initialize(api, c, p);
    if (p->n_real_inputs) {
        expect_status(api->set_real(c, p->real_input_vr, 1, &nan), FMI_ERROR, "fmi2SetReal of NaN to an input");
    }
    expect_status(api->do_step(c, p->start + 1.0, p->step, 1), FMI_ERROR,
                  "fmi2DoStep at a wrong communication point");
    expect_status(api->do_step(c, p->start, -p->step, 1), FMI_ERROR, "fmi2DoStep with a negative step");

    FmuState s = NULL, back = NULL;
    size_t size = 0;
    check(api->get_state(c, &s), "fmi2GetFMUstate");
    check(api->serialized_size(c, s, &size), "fmi2SerializedFMUstateSize");
    char *bytes = array(size, 1);
    check(api->serialize(c, s, bytes, size), "fmi2SerializeFMUstate");
    expect_status(api->deserialize(c, bytes, size / 2, &back), FMI_ERROR, "fmi2DeSerializeFMUstate of a truncated state");
    bytes[size / 2] ^= 0x40;
    expect_status(api->deserialize(c, bytes, size, &back), FMI_ERROR, "fmi2DeSerializeFMUstate of a corrupted state");
    memset(bytes, 0xab, size);
    expect_status(api->deserialize(c, bytes, size, &back), FMI_ERROR, "fmi2DeSerializeFMUstate of garbage");
    expect_status(api->deserialize(c, NULL, size, &back), FMI_ERROR, "fmi2DeSerializeFMUstate of NULL");
    free(bytes);
    check(api->free_state(c, &s), "fmi2FreeFMUstate");

    /* After all of that the instance still simulates, with the inputs of the plan. */
    size_t steps = p->steps < 10 ? p->steps : 10;
    int status = FMI_OK;
    double *row = array(p->n_outputs, sizeof(double));
    for (size_t k = 0; k < steps && status == FMI_OK; k++) {
        status = set_inputs(api, c, p, k);
        if (status == FMI_OK) status = api->do_step(c, time_at(p, k), p->step, 1);
    }
    expect_status(status, FMI_OK, "the instance simulates after the rejected calls");
    get_outputs(api, c, p, row);
    int finite = 1;
    for (size_t i = 0; i < p->n_outputs; i++) finite &= isfinite(row[i]) != 0;
    printf("%s: its outputs are finite\n", finite ? "ok" : "FAIL");
    failures += !finite;
    free(row);
    check(api->terminate(c), "fmi2Terminate");
    api->free_instance(c);
    return failures;
}

int main(int argc, char **argv) {
    if (argc < 5) die("usage: fmu_run run|run3|abuse|abuse3 PLAN BINARY RESOURCE_URI [OUT] [--save-state F] [--load-state F]");
    verbose = getenv("FMU_RUN_VERBOSE") != NULL;
    const char *save = NULL, *load = NULL;
    for (int i = 6; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--save-state") == 0) save = argv[i + 1];
        else if (strcmp(argv[i], "--load-state") == 0) load = argv[i + 1];
        else die("unknown option");
    }
    Plan plan = read_plan(argv[2]);
    Library lib = open_library(argv[3]);
    if (!lib) die("cannot load the binary");
    Api api;
    const char *command = argv[1];
    int v3 = strcmp(command, "run3") == 0 || strcmp(command, "abuse3") == 0;
    if (!(v3 ? load_api3(lib, &api) : load_api(lib, &api))) return 2;
    int code = 2;
    if (strncmp(command, "run", 3) == 0 && argc >= 6) code = run(&api, &plan, argv[4], argv[5], save, load);
    else if (strncmp(command, "abuse", 5) == 0) code = abuse(&api, &plan, argv[4]);
    else die("unknown command");
    if (v3 && strncmp(command, "run", 3) == 0) print_fmi3_counts();
#ifdef COUNT_ALLOCATIONS
    if (strncmp(command, "run", 3) == 0 && !load && !getenv("FMU_RUN_BENCH")) {
        MeApi me;
        if (!(v3 ? load_me3(lib, &api, &me) : load_me2(lib, &me))) die("a Model Exchange function is missing");
        count_model_exchange(&me, &api, &plan, argv[4]);
    }
    if (strncmp(command, "run", 3) == 0 && !load) count_print();
#endif
    close_library(lib);
    free_plan(&plan);
    return code;
}
