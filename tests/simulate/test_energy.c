/* Energy as an objective, without a GPU, on the synthetic recordings of
 * tests/data/energy (made by make_energy.py there from the golden tests'
 * sim_T4.json: power = 10 + 2 block_size_x - 5 UNROLL W, energy = power x
 * median time; nothing measured):
 *
 * - the T4 reader takes cutune's `energy` (J) and `power` (W) and Kernel
 *   Tuner's `nvml_energy` and `nvml_power` (unit ""), converts mJ and mW,
 *   derives energy from power and time, and refuses an unknown unit or a
 *   negative energy naming it;
 * - `simulate --objective energy` and `edp` pick the least energy and the
 *   least energy x time, each checked against a brute force over the
 *   file's entries here, and both differ from the time optimum; a file
 *   without energy is refused for them, naming the file;
 * - a tune on a replayed device with objective energy wins with the
 *   energy optimum, files a cache record tuned for energy that a lookup
 *   for energy finds and a lookup for time does not, and a time tune
 *   after it leaves both records apart; its T4 file carries energy and
 *   power and names the objective, and reads back with them; a time tune
 *   writes no energy unless asked to measure it.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../check.h"
#include "../tmpdir.h"
#include "cutune/simulate.h"
#include "problem.h"
#include "t4.h"

static char dir[] = "/tmp/cutune-energy-test-XXXXXX";
static const char energy_t4[] = CUTUNE_TEST_DATA "/sim_energy_T4.json";
static const char nvml_t4[] = CUTUNE_TEST_DATA "/sim_nvml_T4.json";
static const char time_t4[] = CUTUNE_TEST_FIXTURES "/sim_T4.json";

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The golden tests' sim.json with a kernel, loaded whole. */
static cutune_problem *load(void)
{
    write_file("k.cu", "extern \"C\" __global__ void k(float *x) {}\n");
    write_file(
        "sim.json",
        "{\"General\": {\"BenchmarkName\": \"sim\"},\n"
        " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
        "  {\"Name\": \"block_size_x\", \"Type\": \"int\", "
        "\"Values\": \"[32, 64, 96, 128, 256]\"},\n"
        "  {\"Name\": \"UNROLL\", \"Type\": \"int\", "
        "\"Values\": \"[1, 2, 4, 8]\"}],\n"
        "  \"Conditions\": [{\"Expression\": \"block_size_x * UNROLL <= "
        "1024\", \"Parameters\": [\"block_size_x\", \"UNROLL\"]}]},\n"
        " \"KernelSpecification\": {\"Language\": \"CUDA\", "
        "\"KernelName\": \"k\", \"KernelFile\": \"k.cu\",\n"
        "  \"LocalSize\": {\"X\": \"block_size_x\"},\n"
        "  \"GlobalSize\": {\"X\": \"ProblemSize[0]\"},\n"
        "  \"ProblemSize\": [4096],\n"
        "  \"Arguments\": [{\"Name\": \"x\", \"Type\": \"float\", "
        "\"MemoryType\": \"Vector\", \"FillType\": \"Constant\", "
        "\"Size\": 4096, \"FillValue\": 1.0, \"Output\": 1}]}}\n");
    char path[512];
    snprintf(path, sizeof path, "%s/sim.json", dir);
    cutune_problem *p = NULL;
    cutune_status st = cutune_problem_load(path, NULL, &p);
    if (st != CUTUNE_OK)
        fprintf(stderr, "loading: %s\n", cutune_problem_errmsg(p));
    CHECK_INT(st, CUTUNE_OK);
    return st == CUTUNE_OK ? p : (cutune_problem_destroy(p), NULL);
}

static double param(const cutune_problem *p, size_t config, size_t k)
{
    return atof(p->value_texts[k][cutune__space_config(p->space, config)[k]]);
}

/* The power make_energy.py gave configuration `config`. */
static double formula_w(const cutune_problem *p, size_t config)
{
    return 10.0 + 2.0 * param(p, config, 0) - 5.0 * param(p, config, 1);
}

static double value_of(const cutune__t4_entry *e, cutune_objective o)
{
    if (e->outcome != CUTUNE_OUTCOME_CORRECT)
        return INFINITY;
    return o == CUTUNE_OBJECTIVE_TIME     ? e->time_ms
           : o == CUTUNE_OBJECTIVE_ENERGY ? e->energy_j
                                          : e->energy_j * e->time_ms * 1e-3;
}

/* The configuration of the file's least value of `o`, by brute force. */
static size_t optimum_of(const cutune_problem *p, const char *path,
                         cutune_objective o)
{
    cutune__t4 *t4 = NULL;
    char err[512];
    CHECK_INT(cutune__t4_load(path, p, &t4, err, sizeof err), CUTUNE_OK);
    size_t best = SIZE_MAX;
    double v = INFINITY;
    for (size_t i = 0; t4 && i < t4->n_entries; i++)
        if (value_of(&t4->entries[i], o) < v) {
            v = value_of(&t4->entries[i], o);
            best = t4->entries[i].config_index;
        }
    cutune__t4_free(t4);
    return best;
}

static void test_read(const cutune_problem *p)
{
    const char *files[] = {energy_t4, nvml_t4};
    for (size_t f = 0; f < 2; f++) {
        cutune__t4 *t4 = NULL;
        char err[512];
        CHECK_INT(cutune__t4_load(files[f], p, &t4, err, sizeof err),
                  CUTUNE_OK);
        size_t correct = 0;
        for (size_t i = 0; t4 && i < t4->n_entries; i++) {
            const cutune__t4_entry *e = &t4->entries[i];
            if (e->outcome != CUTUNE_OUTCOME_CORRECT) {
                CHECK(isnan(e->energy_j) && isnan(e->power_w));
                continue;
            }
            correct++;
            double w = formula_w(p, e->config_index);
            CHECK_NEAR(e->power_w, w, 1e-9);
            CHECK_NEAR(e->energy_j, w * e->time_ms * 1e-3, 1e-9);
            /* Energy and power are not counters. */
            for (size_t k = 0; k < e->n_extra; k++)
                CHECK(strstr(e->extra_names[k], "energy") == NULL);
        }
        CHECK_INT(correct, 16);
        cutune__t4_free(t4);
    }
}

/* One result of configuration 32/1 (1.8 ms) with `meas`, loaded: the
 * status, the entry's energy and power, and the message. */
static cutune_status load_one(const cutune_problem *p, const char *meas,
                              double *energy, double *power, char *err,
                              size_t errlen)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"schema_version\": \"1.0.0\", \"results\": [{"
             "\"configuration\": {\"block_size_x\": 32, \"UNROLL\": 1}, "
             "\"times\": {\"runtimes\": [1.8]}, \"invalidity\": "
             "\"correct\", \"correctness\": 1, \"objectives\": [\"time\"], "
             "\"measurements\": [%s]}]}",
             meas);
    write_file("one_T4.json", text);
    char path[512];
    snprintf(path, sizeof path, "%s/one_T4.json", dir);
    cutune__t4 *t4 = NULL;
    cutune_status st = cutune__t4_load(path, p, &t4, err, errlen);
    *energy = *power = -1;
    if (st == CUTUNE_OK) {
        *energy = t4->entries[0].energy_j;
        *power = t4->entries[0].power_w;
    }
    cutune__t4_free(t4);
    return st;
}

static void test_units(const cutune_problem *p)
{
    double e, w;
    char err[512];
    CHECK_INT(load_one(p,
                       "{\"name\": \"energy\", \"value\": 97.2, \"unit\": "
                       "\"mJ\"}, {\"name\": \"power\", \"value\": 54000, "
                       "\"unit\": \"mW\"}",
                       &e, &w, err, sizeof err),
              CUTUNE_OK);
    CHECK_NEAR(e, 0.0972, 1e-12);
    CHECK_NEAR(w, 54.0, 1e-9);
    /* Power alone: energy as Kernel Tuner computes it, power x time. */
    CHECK_INT(load_one(p,
                       "{\"name\": \"nvml_power\", \"value\": 50, "
                       "\"unit\": \"\"}",
                       &e, &w, err, sizeof err),
              CUTUNE_OK);
    CHECK_NEAR(e, 50.0 * 1.8e-3, 1e-12);
    /* Energy alone: the mean power over the launch. */
    CHECK_INT(load_one(p, "{\"name\": \"energy\", \"value\": 0.09}", &e, &w,
                       err, sizeof err),
              CUTUNE_OK);
    CHECK_NEAR(w, 0.09 / 1.8e-3, 1e-9);
    CHECK_INT(load_one(p, "", &e, &w, err, sizeof err), CUTUNE_OK);
    CHECK(isnan(e) && isnan(w));
    CHECK_INT(load_one(p,
                       "{\"name\": \"energy\", \"value\": 1, \"unit\": "
                       "\"kWh\"}",
                       &e, &w, err, sizeof err),
              CUTUNE_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err, "energy unit 'kWh'");
    CHECK_CONTAINS(err, "one_T4.json");
    CHECK_INT(load_one(p, "{\"name\": \"nvml_energy\", \"value\": -1}", &e, &w,
                       err, sizeof err),
              CUTUNE_ERR_PARSE);
    CHECK_CONTAINS(err, "nvml_energy");
}

/* Brute force over `path` by `o`: the winner's space index. */
static size_t simulated_best(const cutune_problem *p, const char *path,
                             cutune_objective o, cutune_status *st, char *msg,
                             size_t len)
{
    cutune_simulate_options so;
    cutune_simulate_options_init(&so);
    so.results_path = path;
    so.strategy = "brute_force";
    so.objective = o;
    cutune_simulation *sim = NULL;
    *st = cutune_simulate(p, &so, &sim);
    snprintf(msg, len, "%s", cutune_simulation_errmsg(sim));
    const cutune_simulate_result *r = cutune_simulation_result(sim);
    size_t best =
        r && r->n_runs && *st == CUTUNE_OK ? r->runs[0].best_index : SIZE_MAX;
    if (r && *st == CUTUNE_OK) {
        CHECK_INT(r->objective, o);
        /* The winner's time and energy whatever it was picked by. */
        CHECK(isfinite(r->runs[0].best_time_ms));
        CHECK(isfinite(r->runs[0].best_energy_j));
    }
    cutune_simulation_destroy(sim);
    return best;
}

static void test_simulate(const cutune_problem *p)
{
    const cutune_objective all[] = {
        CUTUNE_OBJECTIVE_TIME, CUTUNE_OBJECTIVE_ENERGY, CUTUNE_OBJECTIVE_EDP};
    const char *files[] = {energy_t4, nvml_t4};
    cutune_status st;
    char msg[512];
    for (size_t f = 0; f < 2; f++) {
        size_t opt[3];
        for (size_t k = 0; k < 3; k++) {
            opt[k] = optimum_of(p, files[f], all[k]);
            CHECK(opt[k] != SIZE_MAX);
            CHECK_INT(
                simulated_best(p, files[f], all[k], &st, msg, sizeof msg),
                opt[k]);
            CHECK_INT(st, CUTUNE_OK);
        }
        /* The objectives disagree: each picks its own configuration. */
        CHECK(opt[0] != opt[1] && opt[0] != opt[2] && opt[1] != opt[2]);
    }
    CHECK_INT(simulated_best(p, time_t4, CUTUNE_OBJECTIVE_ENERGY, &st, msg,
                             sizeof msg),
              SIZE_MAX);
    CHECK_INT(st, CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(msg, "sim_T4.json: objective energy");
}

typedef struct tuned {
    cutune_session *s;
    const cutune_tune_result *r;
} tuned;

static tuned tune(const cutune_problem *p, cutune_objective o, int energy,
                  const char *cache)
{
    cutune_session_options so;
    cutune_session_options_init(&so);
    so.strategy = "brute_force";
    so.replay_devices = energy_t4;
    so.cache_dir = cache;
    so.write_cache = cache != NULL;
    so.objective = o;
    so.measure_energy = energy;
    tuned t = {NULL, NULL};
    cutune_status st = cutune_session_create(&so, &t.s);
    if (st == CUTUNE_OK)
        st = cutune_session_tune(t.s, p, &t.r);
    if (st)
        fprintf(stderr, "tune: %s\n", cutune_session_errmsg(t.s));
    CHECK_INT(st, CUTUNE_OK);
    return t;
}

static size_t index_of(const cutune_problem *p, const cutune_param_value *c)
{
    for (size_t i = 0; i < cutune__space_size(p->space); i++) {
        int same = 1;
        for (size_t k = 0; k < p->n_params; k++) {
            const uint32_t *v = cutune__space_config(p->space, i);
            same &= strcmp(p->value_texts[k][v[k]], c[k].value) == 0;
        }
        if (same)
            return i;
    }
    return SIZE_MAX;
}

static cutune_status lookup(const cutune_problem *p, const char *cache,
                            cutune_objective o, size_t *config)
{
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(cache, &c), CUTUNE_OK);
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = "sim";
    q.device_name = "replay sim_energy";
    q.objective = o;
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    cutune_status st = cutune_cache_lookup(c, &q, &rec, &match);
    *config = SIZE_MAX;
    if (st == CUTUNE_OK) {
        CHECK_INT(rec->objective, o);
        CHECK_INT(match, CUTUNE_MATCH_EXACT);
        CHECK(isfinite(rec->energy_j) == (o != CUTUNE_OBJECTIVE_TIME));
        *config = index_of(p, rec->config);
    }
    cutune_cache_close(c);
    return st;
}

/* The T4 file of `t`: its first result's objective, and whether a
 * correct result has an energy and a power measurement. */
static void written(tuned t, const char *path, const char *objective,
                    int with_energy)
{
    CHECK_INT(cutune_session_write_t4(t.s, path), CUTUNE_OK);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    CHECK(root != NULL);
    json_t *res = json_object_get(root, "results");
    CHECK_STR(json_string_value(json_array_get(
                  json_object_get(json_array_get(res, 0), "objectives"), 0)),
              objective);
    int energy = 0, power = 0;
    size_t i, k;
    json_t *r, *m;
    json_array_foreach(res, i, r)
    {
        json_array_foreach(json_object_get(r, "measurements"), k, m)
        {
            const char *name = json_string_value(json_object_get(m, "name"));
            const char *unit = json_string_value(json_object_get(m, "unit"));
            energy |= strcmp(name, "energy") == 0 && strcmp(unit, "J") == 0;
            power |= strcmp(name, "power") == 0 && strcmp(unit, "W") == 0;
        }
    }
    json_decref(root);
    CHECK_INT(energy, with_energy);
    CHECK_INT(power, with_energy);
}

/* What the T4 file at `path` holds for configuration `config` equals the
 * recording's: the round trip keeps energy and power. */
static void reads_back(const cutune_problem *p, const char *path,
                       size_t config)
{
    cutune__t4 *a = NULL, *b = NULL;
    char err[512];
    CHECK_INT(cutune__t4_load(path, p, &a, err, sizeof err), CUTUNE_OK);
    CHECK_INT(cutune__t4_load(energy_t4, p, &b, err, sizeof err), CUTUNE_OK);
    double ea = NAN, eb = NAN, wa = NAN, wb = NAN;
    for (size_t i = 0; a && i < a->n_entries; i++)
        if (a->entries[i].config_index == config) {
            ea = a->entries[i].energy_j;
            wa = a->entries[i].power_w;
        }
    for (size_t i = 0; b && i < b->n_entries; i++)
        if (b->entries[i].config_index == config) {
            eb = b->entries[i].energy_j;
            wb = b->entries[i].power_w;
        }
    CHECK(isfinite(ea) && isfinite(wa));
    CHECK_NEAR(ea, eb, 1e-12);
    CHECK_NEAR(wa, wb, 1e-9);
    cutune__t4_free(a);
    cutune__t4_free(b);
}

static void test_replayed_tune(const cutune_problem *p)
{
    char cache[512], out[512];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(out, sizeof out, "%s/out_T4.json", dir);
    size_t e_opt = optimum_of(p, energy_t4, CUTUNE_OBJECTIVE_ENERGY);
    size_t t_opt = optimum_of(p, energy_t4, CUTUNE_OBJECTIVE_TIME);
    size_t found;

    tuned t = tune(p, CUTUNE_OBJECTIVE_ENERGY, 0, cache);
    if (t.r) {
        CHECK_INT(t.r->objective, CUTUNE_OBJECTIVE_ENERGY);
        CHECK_INT(index_of(p, t.r->best), e_opt);
        CHECK_NEAR(t.r->best_energy_j,
                   formula_w(p, e_opt) * t.r->best_ms * 1e-3, 1e-9);
        written(t, out, "energy", 1);
        reads_back(p, out, e_opt);
    }
    cutune_session_destroy(t.s);
    CHECK_INT(lookup(p, cache, CUTUNE_OBJECTIVE_ENERGY, &found), CUTUNE_OK);
    CHECK_INT(found, e_opt);
    CHECK_INT(lookup(p, cache, CUTUNE_OBJECTIVE_TIME, &found),
              CUTUNE_ERR_NOT_FOUND);
    CHECK_INT(lookup(p, cache, CUTUNE_OBJECTIVE_EDP, &found),
              CUTUNE_ERR_NOT_FOUND);

    /* A time tune after it: its own record, the energy one kept. */
    t = tune(p, CUTUNE_OBJECTIVE_TIME, 0, cache);
    if (t.r) {
        CHECK_INT(index_of(p, t.r->best), t_opt);
        CHECK(isnan(t.r->best_energy_j));
        written(t, out, "time", 0);
    }
    cutune_session_destroy(t.s);
    CHECK_INT(lookup(p, cache, CUTUNE_OBJECTIVE_TIME, &found), CUTUNE_OK);
    CHECK_INT(found, t_opt);
    CHECK_INT(lookup(p, cache, CUTUNE_OBJECTIVE_ENERGY, &found), CUTUNE_OK);
    CHECK_INT(found, e_opt);

    /* Asked to measure energy, a time tune carries it and wins on time. */
    t = tune(p, CUTUNE_OBJECTIVE_TIME, 1, NULL);
    if (t.r) {
        CHECK_INT(index_of(p, t.r->best), t_opt);
        CHECK(isfinite(t.r->best_energy_j));
        written(t, out, "time", 1);
    }
    cutune_session_destroy(t.s);
}

static void count_evaluations(void *user, const cutune_progress *progress)
{
    (void)progress;
    ++*(size_t *)user;
}

/* An energy tune of a recording without energy is refused before its
 * search, naming the file: nothing evaluated (it used to fail after a
 * whole search), nothing cached. */
static void test_refused_before_search(const cutune_problem *p)
{
    char cache[512];
    snprintf(cache, sizeof cache, "%s/refused", dir);
    const cutune_objective needs[] = {CUTUNE_OBJECTIVE_ENERGY,
                                      CUTUNE_OBJECTIVE_EDP};
    for (size_t k = 0; k < 2; k++) {
        cutune_session_options so;
        cutune_session_options_init(&so);
        so.strategy = "brute_force";
        so.replay_devices = time_t4;
        so.cache_dir = cache;
        so.write_cache = 1;
        so.objective = needs[k];
        size_t evaluations = 0;
        so.progress = count_evaluations;
        so.progress_user = &evaluations;
        cutune_session *s = NULL;
        const cutune_tune_result *r = NULL;
        cutune_status st = cutune_session_create(&so, &s);
        CHECK_INT(st, CUTUNE_OK);
        if (st == CUTUNE_OK)
            st = cutune_session_tune(s, p, &r);
        CHECK_INT(st, CUTUNE_ERR_INVALID_ARGUMENT);
        CHECK(r == NULL);
        CHECK_CONTAINS(cutune_session_errmsg(s), "replayed device 0: ");
        CHECK_CONTAINS(cutune_session_errmsg(s),
                       k == 0 ? "sim_T4.json: objective energy: no correct"
                              : "sim_T4.json: objective edp: no correct");
        CHECK_INT(evaluations, 0);
        cutune_session_destroy(s);
    }
    /* No record was filed: the cache folder holds no record file (its
     * binaries folder is made with the session). */
    DIR *d = opendir(cache);
    size_t records = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        records += strstr(de->d_name, ".jsonl") != NULL;
    if (d)
        closedir(d);
    CHECK_INT(records, 0);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    cutune_problem *p = load();
    if (p) {
        test_read(p);
        test_units(p);
        test_simulate(p);
        test_replayed_tune(p);
        test_refused_before_search(p);
    }
    cutune_problem_destroy(p);
    remove_tree(dir);
    return check_finish();
}
