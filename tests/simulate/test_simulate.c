/* cutune_simulate honours the T1 file's Budget and Search as a tune does
 * (search/strategy/budget.h): with no limit and no strategy from the caller,
 * the T1's apply; the caller's replace them. The record is the CLI golden
 * tests' (tests/cli/fixtures/sim_T4.json: 19 configurations, 18 recorded,
 * 16 correct); no GPU is needed. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../tmpdir.h"
#include "cutune/simulate.h"

static char dir[] = "/tmp/cutune-simulate-test-XXXXXX";
static const char results[] = CUTUNE_TEST_FIXTURES "/sim_T4.json";

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

/* The golden tests' sim.json, with a kernel file so that it loads whole
 * (Budget and Search included), and `extra` (",\n"-led T1 sections). */
static cutune_problem *load(const char *extra)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"General\": {\"BenchmarkName\": \"sim\"},\n"
             " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
             "  {\"Name\": \"block_size_x\", \"Type\": \"int\", "
             "\"Values\": \"[32, 64, 96, 128, 256]\"},\n"
             "  {\"Name\": \"UNROLL\", \"Type\": \"int\", "
             "\"Values\": \"[1, 2, 4, 8]\"}],\n"
             "  \"Conditions\": [{\"Expression\": "
             "\"block_size_x * UNROLL <= 1024\", "
             "\"Parameters\": [\"block_size_x\", \"UNROLL\"]}]},\n"
             " \"KernelSpecification\": {\"Language\": \"CUDA\", "
             "\"KernelName\": \"k\", \"KernelFile\": \"k.cu\",\n"
             "  \"LocalSize\": {\"X\": \"block_size_x\"},\n"
             "  \"GlobalSize\": {\"X\": \"ProblemSize[0]\"},\n"
             "  \"ProblemSize\": [4096],\n"
             "  \"Arguments\": [{\"Name\": \"x\", \"Type\": \"float\", "
             "\"MemoryType\": \"Vector\", \"FillType\": \"Constant\", "
             "\"Size\": 4096, \"FillValue\": 1.0, \"Output\": 1}]}%s}\n",
             extra);
    write_file("sim.json", json);
    char path[512];
    snprintf(path, sizeof path, "%s/sim.json", dir);
    cutune_problem *p = NULL;
    cutune_status st = cutune_problem_load(path, NULL, &p);
    if (st != CUTUNE_OK)
        fprintf(stderr, "loading: %s\n", cutune_problem_errmsg(p));
    CHECK_INT(st, CUTUNE_OK);
    return st == CUTUNE_OK ? p : (cutune_problem_destroy(p), NULL);
}

/* Simulates `p` with the caller's `strategy` and `max_evals` (NULL, 0:
 * none); the result's budget, strategy and first run's evaluations. */
static void simulate(const cutune_problem *p, const char *strategy,
                     size_t max_evals, size_t *budget, const char **name,
                     size_t *evaluations)
{
    cutune_simulate_options o;
    cutune_simulate_options_init(&o);
    o.results_path = results;
    o.strategy = strategy;
    o.max_evals = max_evals;
    o.seed = 1;
    cutune_simulation *sim = NULL;
    cutune_status st = cutune_simulate(p, &o, &sim);
    if (st != CUTUNE_OK)
        fprintf(stderr, "simulating: %s\n", cutune_simulation_errmsg(sim));
    CHECK_INT(st, CUTUNE_OK);
    const cutune_simulate_result *r = cutune_simulation_result(sim);
    *budget = r ? r->budget : 12345;
    /* Strategy names are static: they outlive the simulation. */
    *name = r ? r->strategy : "";
    *evaluations = r && r->n_runs ? r->runs[0].evaluations : 0;
    cutune_simulation_destroy(sim);
}

static void test_t1_budget_and_search(void)
{
    size_t budget, evals;
    const char *name;
    cutune_problem *p = load(
        ",\n \"Budget\": [{\"Type\": \"ConfigurationCount\", "
        "\"BudgetValue\": 5}],\n \"Search\": {\"Name\": \"LocalSearch\"}");
    if (!p)
        return;
    /* The T1's: 5 evaluations of `local`. */
    simulate(p, NULL, 0, &budget, &name, &evals);
    CHECK_INT(budget, 5);
    CHECK_STR(name, "local");
    CHECK_INT(evals, 5);
    /* The caller's replace them. */
    simulate(p, "random", 8, &budget, &name, &evals);
    CHECK_INT(budget, 8);
    CHECK_STR(name, "random");
    CHECK_INT(evals, 8);
    cutune_problem_destroy(p);

    /* A fraction of the space: ceil(0.5 * 19). */
    p = load(",\n \"Budget\": [{\"Type\": \"ConfigurationFraction\", "
             "\"BudgetValue\": 0.5}]");
    if (p) {
        simulate(p, NULL, 0, &budget, &name, &evals);
        CHECK_INT(budget, 10);
        CHECK_STR(name, "default");
        CHECK_INT(evals, 10);
        cutune_problem_destroy(p);
    }
    /* An exhaustive Search without a Budget sees the whole space. */
    p = load(",\n \"Search\": {\"Name\": \"BruteForce\"}");
    if (p) {
        simulate(p, NULL, 0, &budget, &name, &evals);
        CHECK_INT(budget, 0);
        CHECK_STR(name, "brute_force");
        CHECK_INT(evals, 19);
        cutune_problem_destroy(p);
    }
    /* Neither: the default strategy and budget (capped by the space). */
    p = load("");
    if (p) {
        simulate(p, NULL, 0, &budget, &name, &evals);
        CHECK_INT(budget, CUTUNE_DEFAULT_BUDGET);
        CHECK_STR(name, "default");
        CHECK_INT(evals, 19);
        cutune_problem_destroy(p);
    }
}

/* A run starts where a tune would (search/strategy/seed.h): at the default
 * configuration when no occupancy answer is given, at the default with
 * the suggested block size when one is; brute force, which evaluates the
 * start first, finds it with one evaluation. */
static void start_with(const cutune_problem *p, int occupancy,
                       const char *source, const char *block, int fails)
{
    cutune_simulate_options o;
    cutune_simulate_options_init(&o);
    o.results_path = results;
    o.strategy = "brute_force";
    o.max_evals = 1;
    o.occupancy_block_size = occupancy;
    cutune_simulation *sim = NULL;
    /* A start recorded as failed leaves nothing valid: that says so. */
    CHECK_INT(cutune_simulate(p, &o, &sim),
              fails ? CUTUNE_ERR_NO_VALID_RESULT : CUTUNE_OK);
    const cutune_simulate_result *r = cutune_simulation_result(sim);
    CHECK(r != NULL && r->start != NULL);
    if (r && r->start) {
        CHECK_STR(r->start_source, source);
        CHECK_STR(r->start[0].value, block);
        CHECK_STR(r->start[1].value, "1");
        CHECK_INT(r->runs[0].evaluations, 1);
        CHECK_INT(r->runs[0].failures, fails);
        if (!fails)
            CHECK_INT(r->runs[0].best_index, r->start_index);
    }
    cutune_simulation_destroy(sim);
}

static void test_start(void)
{
    cutune_problem *p = load("");
    if (!p)
        return;
    start_with(p, 0, "default", "32", 0);
    start_with(p, 1000, "occupancy", "256", 1);
    start_with(p, 120, "occupancy", "128", 0);
    cutune_problem_destroy(p);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_file("k.cu", "extern \"C\" __global__ void k(float *x) {}\n");
    test_t1_budget_and_search();
    test_start();
    remove_tree(dir);
    return check_finish();
}
