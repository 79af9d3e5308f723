/* T1 loading: the built-in vector_add, a problem from a file, and bad
 * input that must give one clear message naming the field. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kernel_source.h"
#include "problem.h"
#include "tmpdir.h"
#include "util.h"

static char dir[] = "/tmp/cutune-problem-test-XXXXXX";

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_vector_add(void)
{
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    CHECK_STR(cutune_problem_name(p), "vector_add");
    CHECK_STR(cutune_problem_kernel_name(p), "vector_add");
    CHECK_INT(cutune_problem_param_count(p), 4);
    CHECK_STR(cutune_problem_param_name(p, 0), "block_size_x");
    CHECK_INT(cutune_problem_value_count(p, 0), 32);
    CHECK_STR(cutune_problem_value(p, 0, 0), "32");
    CHECK_STR(cutune_problem_value(p, 0, 31), "1024");
    CHECK_STR(cutune_problem_param_name(p, 1), "UNROLL");
    CHECK_INT(cutune_problem_value_count(p, 1), 4);
    CHECK_STR(cutune_problem_value(p, 1, 3), "8");
    CHECK_INT(cutune_problem_value_count(p, 2), 2);
    CHECK_INT(cutune_problem_value_count(p, 3), 2);
    CHECK_INT(cutune_problem_space_size(p), 512);
    CHECK(cutune_problem_cartesian_size(p) == 512.0);
    CHECK_INT(cutune_problem_size_dims(p), 1);
    CHECK_INT(cutune_problem_size(p, 0), 1LL << 26);
    CHECK_INT(strlen(cutune_problem_source_hash(p)), 16);

    /* The default configuration is the T1 Defaults. */
    size_t def = cutune__problem_default_config(p);
    cutune_param_value v[4];
    cutune__problem_config_values(p, def, v);
    CHECK_STR(v[0].value, "256");
    CHECK_STR(v[1].value, "1");
    CHECK_STR(v[2].value, "0");
    CHECK_STR(v[3].value, "0");

    unsigned grid[3], block[3];
    char err[256];
    CHECK_INT(cutune__problem_geometry(p, def, grid, block, err, sizeof err),
              0);
    CHECK_INT(block[0], 256);
    CHECK_INT(block[1], 1);
    CHECK_INT(grid[0], (1u << 26) / 256);
    CHECK_INT(grid[1], 1);
    CHECK_NEAR(cutune__problem_bytes(p, def), 12.0 * (1 << 26), 0.0);

    size_t n;
    char **opts = cutune__problem_options(p, def, "sm_90", &n);
    CHECK_INT(n, 5);
    CHECK_STR(opts[0], "-Dblock_size_x=256");
    CHECK_STR(opts[1], "-DUNROLL=1");
    CHECK_STR(opts[4], "--gpu-architecture=sm_90");
    cutune__free_strings(opts, n);

    /* Arguments as T1 gives them, resolved for the size. */
    CHECK_INT(p->n_args, 5);
    CHECK_STR(p->args[0].name, "c");
    CHECK(p->args[0].is_vector && p->args[0].is_output);
    CHECK_INT(p->args[0].count, 1 << 26);
    CHECK_INT(p->args[1].fill, CUTUNE__FILL_RANDOM);
    CHECK_INT(p->args[1].count, (1 << 26) + 32);
    CHECK(!p->args[3].is_vector);
    CHECK_NEAR(p->args[3].fill_value, 1 << 26, 0.0);
    CHECK_INT(p->args[3].dtype, CUTUNE__DT_INT32);
    cutune_problem_destroy(p);

    /* --size replaces ProblemSize everywhere it is used. */
    long long size = 1000;
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    uint32_t cfg[4] = {0, 3, 0, 0}; /* block 32, UNROLL 8 */
    size_t idx;
    CHECK(cutune__space_index_of(p->space, cfg, &idx));
    CHECK_INT(cutune__problem_geometry(p, idx, grid, block, err, sizeof err),
              0);
    CHECK_INT(block[0], 32);
    CHECK_INT(grid[0], (1000 + 255) / 256);
    CHECK_INT(p->args[0].count, 1000);
    CHECK_NEAR(p->args[3].fill_value, 1000, 0.0);
    cutune_problem_destroy(p);

    /* The whole library is checked by test_templates. */
    CHECK_INT(cutune_template_count(), 8);
    CHECK_STR(cutune_template_name(0), "vector_add");
    CHECK(cutune_template_name(8) == NULL);
}

static const char good_json[] =
    "{\"General\": {\"BenchmarkName\": \"scale\"},\n"
    " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
    "   {\"Name\": \"block_size_x\", \"Type\": \"int\", "
    "\"Values\": \"[2**i for i in range(5, 11)]\", \"Default\": 128},\n"
    "   {\"Name\": \"TILE\", \"Type\": \"int\", \"Values\": [1, 2, 3, 4]}],\n"
    "  \"Conditions\": [{\"Expression\": \"block_size_x * TILE <= 1024\", "
    "\"Parameters\": [\"block_size_x\", \"TILE\"]}]},\n"
    " \"KernelSpecification\": {\"Language\": \"CUDA\", "
    "\"KernelName\": \"scale\", \"KernelFile\": \"scale.cu\",\n"
    "  \"GlobalSizeType\": \"OpenCL\",\n"
    "  \"LocalSize\": {\"X\": \"block_size_x\"},\n"
    "  \"GlobalSize\": {\"X\": \"ProblemSize[0] // TILE\"},\n"
    "  \"ProblemSize\": [4096],\n"
    "  \"Arguments\": [{\"Name\": \"x\", \"Type\": \"double\", "
    "\"MemoryType\": \"Vector\", \"FillType\": \"Random\", "
    "\"Size\": 4096, \"FillValue\": 2.0, \"Output\": 1}]}}\n";

static void test_from_file(void)
{
    write_file("scale.json", good_json);
    write_file("scale.cu",
               "extern \"C\" __global__ void scale(double *x) {}\n");
    char path[512];
    snprintf(path, sizeof path, "%s/scale.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (p && p->space) {
        /* 6 block sizes x 4 tiles, less those over 1024 threads' worth:
         * 512 x {3, 4} and 1024 x {2, 3, 4}. */
        CHECK_INT(cutune_problem_space_size(p), 24 - 5);
        size_t def = cutune__problem_default_config(p);
        cutune_param_value v[2];
        cutune__problem_config_values(p, def, v);
        CHECK_STR(v[0].value, "128");
        CHECK_STR(v[1].value, "1");
        unsigned grid[3], block[3];
        char err[128];
        CHECK_INT(
            cutune__problem_geometry(p, def, grid, block, err, sizeof err), 0);
        /* OpenCL sizes count threads: 4096 threads in blocks of 128. */
        CHECK_INT(grid[0], 32);
        CHECK_INT(block[1], 1);
        CHECK_INT(p->args[0].dtype, CUTUNE__DT_DOUBLE);
        CHECK_INT(p->args[0].count, 4096);
    }
    cutune_problem_destroy(p);
}

/* Loads `json` from a file and expects it to load, with a warning
 * containing `needle`. */
static void expect_warning(const char *json, const char *needle)
{
    write_file("warn.json", json);
    char path[512];
    snprintf(path, sizeof path, "%s/warn.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    int found = 0;
    for (size_t i = 0; i < cutune_problem_warning_count(p); i++)
        found |= strstr(cutune_problem_warning(p, i), needle) != NULL;
    if (!found)
        fprintf(stderr, "no warning contains '%s'\n", needle);
    CHECK(found);
    cutune_problem_destroy(p);
}

static char *replaced(const char *from, const char *to);

/* GridDivX as Kernel Tuner and BAT read it: the grid covers ProblemSize
 * divided by the product of the named parameters, whatever GlobalSize
 * says; a dimension without GridDiv divides by its block size. */
static void test_grid_div(void)
{
    write_file("griddiv.json",
               replaced("\"ProblemSize\": [4096]",
                        "\"ProblemSize\": [4096], "
                        "\"GridDivX\": [\"block_size_x\", \"TILE\"]"));
    write_file("scale.cu",
               "extern \"C\" __global__ void scale(double *x) {}\n");
    char path[512];
    snprintf(path, sizeof path, "%s/griddiv.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (p->space) {
        uint32_t cfg[2] = {1, 3}; /* block 64, TILE 4 */
        size_t idx;
        CHECK(cutune__space_index_of(p->space, cfg, &idx));
        unsigned grid[3], block[3];
        char err[256];
        CHECK_INT(
            cutune__problem_geometry(p, idx, grid, block, err, sizeof err), 0);
        CHECK_INT(grid[0], 4096 / (64 * 4));
        CHECK_INT(block[0], 64);
        CHECK_INT(grid[1], 1);
        CHECK_INT(grid[2], 1);
    } else {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
    }
    cutune_problem_destroy(p);
}

/* A block CUDA cannot launch is the configuration's result, told apart
 * from the file's mistakes by the return code, not the message. */
static void test_geometry_codes(void)
{
    write_file("bigblock.json",
               replaced("range(5, 11)]\", \"Default\": 128},\n"
                        "   {\"Name\": \"TILE\", \"Type\": \"int\", "
                        "\"Values\": [1, 2, 3, 4]}],\n"
                        "  \"Conditions\": [{\"Expression\": "
                        "\"block_size_x * TILE <= 1024\"",
                        "range(5, 12)]\", \"Default\": 128},\n"
                        "   {\"Name\": \"TILE\", \"Type\": \"int\", "
                        "\"Values\": [1, 2, 3, 4]}],\n"
                        "  \"Conditions\": [{\"Expression\": "
                        "\"block_size_x * TILE <= 2048\""));
    write_file("scale.cu",
               "extern \"C\" __global__ void scale(double *x) {}\n");
    char path[512];
    snprintf(path, sizeof path, "%s/bigblock.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (p->space) {
        uint32_t cfg[2] = {6, 0}; /* block 2048, TILE 1 */
        size_t idx;
        unsigned grid[3], block[3];
        char err[256];
        CHECK(cutune__space_index_of(p->space, cfg, &idx));
        CHECK_INT(
            cutune__problem_geometry(p, idx, grid, block, err, sizeof err),
            CUTUNE__GEOMETRY_OUT_OF_RANGE);
        CHECK_CONTAINS(err, "block 2048");
    }
    cutune_problem_destroy(p);
}

/* Loads `json` from a file and expects `status` with every piece of
 * `needles` (separated by '|') in the message. */
static void expect_error(const char *json, cutune_status status,
                         const char *needles)
{
    write_file("bad.json", json);
    char path[512];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), status);
    const char *msg = cutune_problem_errmsg(p);
    CHECK_CONTAINS(msg, "bad.json");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", needles);
    for (char *tok = strtok(buf, "|"); tok; tok = strtok(NULL, "|"))
        CHECK_CONTAINS(msg, tok);
    cutune_problem_destroy(p);
}

static char *replaced(const char *from, const char *to)
{
    static char buf[4096];
    const char *at = strstr(good_json, from);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - good_json), good_json, to,
             at + strlen(from));
    return buf;
}

static void test_bad_input(void)
{
    expect_error("{\"General\": {,}}", CUTUNE_ERR_PARSE, "line 1|column");
    expect_error(replaced("\"KernelName\": \"scale\", ", ""), CUTUNE_ERR_PARSE,
                 "KernelSpecification.KernelName|missing");
    expect_warning(
        replaced("\"ProblemSize\"", "\"Budget2\": 1, \"ProblemSize\""),
        "KernelSpecification.Budget2: not a field cutune knows");
    expect_error(replaced("range(5, 11)", "range(5, 11) +* 2"),
                 CUTUNE_ERR_PARSE,
                 "TuningParameters[0].Values|block_size_x|column");
    expect_error(
        replaced("block_size_x * TILE <= 1024", "block_size_x * TIEL"),
        CUTUNE_ERR_PARSE, "Conditions[0]|TIEL");
    expect_error(replaced("<= 1024", "<= 16"), CUTUNE_ERR_EMPTY_SPACE,
                 "no configuration satisfies");
    expect_error(replaced("\"double\"", "\"quaternion\""),
                 CUTUNE_ERR_UNSUPPORTED, "Arguments[0].Type|quaternion");
    expect_error(replaced("\"Size\": 4096", "\"Size\": \"4096 // 0\""),
                 CUTUNE_ERR_PARSE, "Arguments[0].Size|division by zero");
    expect_error(
        replaced("\"MemoryType\": \"Vector\"",
                 "\"MemoryType\": \"Vector\", \"MemType\": \"Texture\""),
        CUTUNE_ERR_UNSUPPORTED, "MemType|Texture");
    expect_error(replaced("\"Vector\"", "\"Local\""), CUTUNE_ERR_UNSUPPORTED,
                 "MemoryType|Local");
    expect_error(replaced("scale.cu", "missing.cu"), CUTUNE_ERR_IO,
                 "KernelFile|missing.cu");
    /* The bad inputs the T1 issue lists, one clear message each. */
    expect_error(replaced("\"TILE\", \"Type\": \"int\"",
                          "\"TILE\", \"Type\": \"complex\""),
                 CUTUNE_ERR_UNSUPPORTED,
                 "TuningParameters[1].Type (TILE)|'complex'");
    expect_error(replaced("[1, 2, 3, 4]", "\"list(range(10**9))\""),
                 CUTUNE_ERR_PARSE,
                 "TuningParameters[1].Values (TILE)|more than|range");
    expect_error(replaced("\"TILE\"]}]", "\"TILES\"]}]"), CUTUNE_ERR_PARSE,
                 "Conditions[0].Parameters[1]|'TILES' is not a tuning");
    expect_error(replaced("block_size_x * TILE <= 1024",
                          "block_size_x // (TILE - TILE) <= 1024"),
                 CUTUNE_ERR_PARSE,
                 "Conditions[0].Expression|division by zero|column 14");
    expect_error(replaced("block_size_x * TILE <= 1024",
                          "block_size_x * TILE <= 1024 and nope"),
                 CUTUNE_ERR_PARSE, "Conditions[0]|nope");
    expect_error(replaced("\"Name\": \"TILE\", ", ""), CUTUNE_ERR_PARSE,
                 "TuningParameters[1].Name|missing");
    expect_error(replaced("\"Expression\"", "\"Expresion\""), CUTUNE_ERR_PARSE,
                 "Conditions[0].Expression|missing");
    expect_error(
        replaced("\"ProblemSize\": [4096]",
                 "\"ProblemSize\": [4096], \"GridDivX\": [\"TILES\"]"),
        CUTUNE_ERR_PARSE, "GridDivX[0]|'TILES' is not a tuning");

    cutune_problem *p;
    CHECK_INT(cutune_problem_load("no_such_template", NULL, &p),
              CUTUNE_ERR_NOT_FOUND);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "vector_add");
    cutune_problem_destroy(p);
    CHECK_INT(cutune_problem_load("/no/such/file.json", NULL, &p),
              CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "/no/such/file.json");
    cutune_problem_destroy(p);
    long long zero = 0;
    cutune_problem_options po = {
        .problem_size = &zero, .n_problem_size = 1, .space_only = 0};
    CHECK_INT(cutune_problem_load("vector_add", &po, &p),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "problem size");
    cutune_problem_destroy(p);
}

/* The four published T1 files load for their spaces, with the valid
 * counts of tests/data/README.md. */
static void test_space_only(void)
{
    static const struct {
        const char *file;
        size_t valid;
        double cartesian;
    } files[] = {{"convolution_milo.json", 4362, 10240},
                 {"dedispersion_milo.json", 11130, 22272},
                 {"hotspot_milo.json", 82984, 4440000},
                 {"gemm_milo.json", 116928, 663552}};
    const char *data = getenv("CUTUNE_TEST_DATA");
    for (size_t i = 0; i < 4; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/t1/%s", data ? data : "",
                 files[i].file);
        /* The data is part of the tree: missing is a failure. */
        CHECK(data && access(path, R_OK) == 0);
        if (!data || access(path, R_OK) != 0) {
            fprintf(stderr, "missing test data: %s\n", path);
            continue;
        }
        cutune_problem_options po = {
            .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
        cutune_problem *p;
        CHECK_INT(cutune_problem_load(path, &po, &p), CUTUNE_OK);
        if (!p->space) {
            fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
        } else {
            CHECK_INT(cutune_problem_space_size(p), files[i].valid);
            CHECK(cutune_problem_cartesian_size(p) == files[i].cartesian);
        }
        cutune_session *s;
        CHECK_INT(cutune_session_create(NULL, &s), CUTUNE_OK);
        const cutune_tune_result *r;
        CHECK_INT(cutune_session_tune(s, p, &r), CUTUNE_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(cutune_session_errmsg(s), "search space only");
        cutune_session_destroy(s);
        cutune_problem_destroy(p);
    }
}

/* The extensions: a parameter whose values are NVRTC options, and the
 * FLOPs of a launch. */
static void test_extensions(void)
{
    const char *with_ext =
        replaced("\"ProblemSize\": [4096],",
                 "\"ProblemSize\": [4096],\"SharedMemory\": 0,");
    char json[4096];
    snprintf(json, sizeof json, "%s", with_ext);
    /* Add a string parameter and the extension block. */
    char *tp = strstr(json, "{\"Name\": \"TILE\"");
    char head[4096];
    snprintf(head, sizeof head,
             "%.*s{\"Name\": \"L1\", \"Type\": "
             "\"string\", \"Values\": [\"\", \"-Xptxas=-dlcm=cg\"]},\n   %s",
             (int)(tp - json), json, tp);
    size_t len = strlen(head);
    /* Drop the closing brace of the top-level object and append. */
    while (len && head[len - 1] != '}')
        len--;
    snprintf(head + len - 1, sizeof head - len + 1,
             ",\n \"CutuneExtensions\": {\"CompilerOptionParameters\": "
             "[\"L1\"], \"FlopsPerLaunch\": \"2 * ProblemSize[0]\"}}\n");
    write_file("ext.json", head);
    char path[512];
    snprintf(path, sizeof path, "%s/ext.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (!p->space) {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
        cutune_problem_destroy(p);
        return;
    }
    size_t l1 = cutune__problem_find_param(p, "L1");
    CHECK(l1 != SIZE_MAX);
    int saw_option = 0, saw_none = 0;
    for (size_t c = 0; c < cutune_problem_space_size(p); c++) {
        size_t n;
        char **opts = cutune__problem_options(p, c, "sm_90", &n);
        int has = 0, has_define = 0;
        size_t kt_defines = 0;
        for (size_t k = 0; k < n; k++) {
            /* Kernel Tuner's own defines, given to every T1 kernel. */
            char name[32] = "";
            if (strncmp(opts[k], "-D", 2) == 0)
                sscanf(opts[k] + 2, "%31[^=]", name);
            kt_defines += strcmp(name, "kernel_tuner") == 0 ||
                          ((strncmp(name, "block_size_", 11) == 0 ||
                            strncmp(name, "grid_size_", 10) == 0) &&
                           cutune__problem_find_param(p, name) == SIZE_MAX);
            has |= strcmp(opts[k], "-Xptxas=-dlcm=cg") == 0;
            has_define |= strncmp(opts[k], "-DL1=", 5) == 0;
        }
        CHECK(!has_define);
        if (cutune__space_config(p->space, c)[l1] == 1) {
            CHECK(has);
            saw_option = 1;
        } else {
            CHECK(!has);
            /* The empty value adds no option at all: one define per other
             * parameter, the problem's options (its include folder among
             * them) and the architecture. */
            CHECK_INT(n - kt_defines, (p->n_params - 1) + p->n_options + 1);
            saw_none = 1;
        }
        cutune__free_strings(opts, n);
    }
    CHECK(saw_option && saw_none);
    CHECK_NEAR(cutune__problem_flops(p, 0), 2.0 * 4096, 0.0);
    cutune_problem_destroy(p);

    /* Errors name the field. */
    char bad[4096];
    snprintf(bad, sizeof bad, "%s", head);
    char *at = strstr(bad, "[\"L1\"]");
    memcpy(at, "[\"LX\"]", 6);
    write_file("ext.json", bad);
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_ERR_PARSE);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "CompilerOptionParameters[0]");
    CHECK_CONTAINS(cutune_problem_errmsg(p), "LX");
    cutune_problem_destroy(p);
    snprintf(bad, sizeof bad, "%s", head);
    at = strstr(bad, "[\"L1\"]");
    memcpy(at, "[\"TI\"", 5);
    /* TILE has integer values: not options. */
    char *tile = strstr(bad, "[\"TI\"");
    memmove(tile + 7, tile + 5, strlen(tile + 5) + 1);
    memcpy(tile, "[\"TILE\"", 7);
    write_file("ext.json", bad);
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_ERR_PARSE);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "must be strings");
    cutune_problem_destroy(p);
}

/* T1 Budget and Search map onto the session's budget and strategy. */
static void test_budget_and_search(void)
{
    char json[4096];
    const char *base = replaced(
        "\"KernelSpecification\":",
        "\"Budget\": [{\"Type\": \"ConfigurationCount\", \"BudgetValue\": 40},"
        " {\"Type\": \"TuningDuration\", \"BudgetValue\": 90},"
        " {\"Type\": \"ConfigurationFraction\", \"BudgetValue\": 0.5}],\n"
        " \"Search\": {\"Name\": \"SimulatedAnnealing\"},\n"
        " \"KernelSpecification\":");
    snprintf(json, sizeof json, "%s", base);
    write_file("budget.json", json);
    char path[512];
    snprintf(path, sizeof path, "%s/budget.json", dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    CHECK_INT(p->budget_evals, 40);
    CHECK_NEAR(p->budget_seconds, 90.0, 0.0);
    CHECK_NEAR(p->budget_fraction, 0.5, 0.0);
    CHECK_STR(p->search_strategy, "annealing");
    cutune_problem_destroy(p);

    static const struct {
        const char *from, *to, *needle;
    } bad[] = {
        {"\"ConfigurationCount\"", "\"Evaluations\"", "Budget[0].Type"},
        {"\"SimulatedAnnealing\"}", "\"Tabu\"}", "Search.Name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char copy[4096];
        const char *at = strstr(json, bad[i].from);
        snprintf(copy, sizeof copy, "%.*s%s%s", (int)(at - json), json,
                 bad[i].to, at + strlen(bad[i].from));
        write_file("budget.json", copy);
        CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_ERR_UNSUPPORTED);
        CHECK_CONTAINS(cutune_problem_errmsg(p), bad[i].needle);
        cutune_problem_destroy(p);
    }
    /* Strategy settings are taken as the schema allows, and reported as
     * not used. */
    const char *from = "\"SimulatedAnnealing\"}";
    const char *at = strstr(json, from);
    char copy[4096];
    snprintf(copy, sizeof copy, "%.*s%s%s", (int)(at - json), json,
             "\"Random\", \"Attributes\": [{\"Name\": \"x\", "
             "\"Value\": \"1\"}]}",
             at + strlen(from));
    write_file("budget.json", copy);
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    CHECK(cutune_problem_warning_count(p) == 1 &&
          strstr(cutune_problem_warning(p, 0), "Search.Attributes"));
    cutune_problem_destroy(p);
}

/* T1 ReferenceArguments are read, and refused with a message naming the
 * field when they cannot stand for an output. */
static void test_references(void)
{
    char src[1024];
    const char *root = getenv("CUTUNE_SOURCE_DIR");
    snprintf(src, sizeof src, "%s/tests/gpu/fixtures/reference.json",
             root ? root : ".");
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(src, NULL, &p), CUTUNE_OK);
    CHECK_INT(p->n_refs, 2);
    if (p->n_refs == 2) {
        CHECK_INT(p->refs[0].arg, 0);
        CHECK_INT(p->refs[0].fill, CUTUNE__FILL_CONSTANT);
        CHECK_NEAR(p->refs[0].fill_value, 3.0, 0.0);
        CHECK(p->refs[0].atol == 0.0 && p->refs[0].rtol == 0.0);
        CHECK_INT(p->refs[1].arg, 1);
        CHECK_INT(p->refs[1].fill, CUTUNE__FILL_BINARY);
        CHECK_INT(p->refs[1].data_size, 64);
        CHECK_NEAR(p->refs[1].atol, 0.001, 0.0);
    }
    cutune_problem_destroy(p);

    /* Copy the fixture next to a rewritten JSON for each bad case. */
    FILE *f = fopen(src, "r");
    char json[8192];
    size_t n = f ? fread(json, 1, sizeof json - 1, f) : 0;
    if (f)
        fclose(f);
    json[n] = '\0';
    char bin[1024], cmd[2200];
    snprintf(bin, sizeof bin, "%s/tests/gpu/fixtures/reference_ramp.bin",
             root ? root : ".");
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s/reference_ramp.bin' && "
             "head -c 60 '%s' > '%s/short.bin'",
             bin, dir, bin, dir);
    CHECK_INT(system(cmd), 0);
    write_file(
        "reference.cu",
        "extern \"C\" __global__ void "
        "reference_check(float *a, float *b, const float *c, int n) {}\n");
    static const struct {
        const char *from, *to;
        cutune_status st;
        const char *needle;
    } bad[] = {
        {"\"TargetName\": \"ramp\"", "\"TargetName\": \"rampp\"",
         CUTUNE_ERR_PARSE, "ReferenceArguments[1]|rampp"},
        {"reference_ramp.bin", "short.bin", CUTUNE_ERR_PARSE,
         "DataSource|60 bytes"},
        {"\"Exact\"", "\"Cosine\"", CUTUNE_ERR_UNSUPPORTED,
         "ValidationMethod|Cosine"},
        {"\"Name\": \"scaled\", \"Type\": \"float\", \"FillType\"",
         "\"Name\": \"scaled\", \"Type\": \"double\", \"FillType\"",
         CUTUNE_ERR_PARSE, "ReferenceArguments[0].Type"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char copy[8192];
        const char *at = strstr(json, bad[i].from);
        CHECK(at != NULL);
        if (!at)
            continue;
        snprintf(copy, sizeof copy, "%.*s%s%s", (int)(at - json), json,
                 bad[i].to, at + strlen(bad[i].from));
        write_file("bad.json", copy);
        char path[512];
        snprintf(path, sizeof path, "%s/bad.json", dir);
        CHECK_INT(cutune_problem_load(path, NULL, &p), bad[i].st);
        char needles[128];
        snprintf(needles, sizeof needles, "%s", bad[i].needle);
        for (char *tok = strtok(needles, "|"); tok; tok = strtok(NULL, "|"))
            CHECK_CONTAINS(cutune_problem_errmsg(p), tok);
        cutune_problem_destroy(p);
    }
}

/* The built-in templates include cutune_prelude.cuh, which the loader
 * puts in place of the #include: NVRTC has no folder to find it in. A
 * space-only load hashes the same source a full load compiles. */
static void test_template_prelude(void)
{
    cutune_problem *p, *q;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    CHECK(strstr(p->source, "\n#include \"cutune_prelude.cuh\"") == NULL);
    CHECK_CONTAINS(p->source, "#line 1 \"cutune_prelude.cuh\"\n");
    CHECK_CONTAINS(p->source, "#define CUTUNE_LOAD(p) __ldg(p)\n");
    /* The #include is line 22 of vector_add.cu. */
    CHECK_CONTAINS(p->source, "#endif\n#line 23 \"vector_add.cu\"\n\n"
                              "extern \"C\" __global__");
    CHECK_INT(strlen(p->source), p->source_len);
    cutune_problem_options po = {.space_only = 1};
    CHECK_INT(cutune_problem_load("vector_add", &po, &q), CUTUNE_OK);
    CHECK_STR(cutune_problem_source_hash(q), cutune_problem_source_hash(p));
    cutune_problem_destroy(q);
    cutune_problem_destroy(p);
    /* matmul shares none of it: its source is the file's. */
    CHECK_INT(cutune_problem_load("matmul", NULL, &p), CUTUNE_OK);
    CHECK(strstr(p->source, "#line") == NULL);
    cutune_problem_destroy(p);
}

/* Kernel Tuner's problem_size="num_blocks": a ProblemSize naming a
 * tunable makes the grid that tunable (GridDivX [] divides by 1), per
 * configuration; GridDiv entries may be expressions. */
static void test_kt_problem_size(void)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/kt/reduction.json", data ? data : "");
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (!p->space) {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
        cutune_problem_destroy(p);
        return;
    }
    CHECK_INT(cutune_problem_space_size(p), 108);
    CHECK_INT(cutune_problem_size_dims(p), 1);
    CHECK_INT(cutune_problem_size(p, 0), 0);
    CHECK_STR(cutune_problem_size_expr(p, 0), "num_blocks");
    for (size_t c = 0; c < cutune_problem_space_size(p); c += 7) {
        unsigned grid[3], block[3];
        char err[256];
        cutune_param_value v[3];
        cutune__problem_config_values(p, c, v);
        CHECK_INT(cutune__problem_geometry(p, c, grid, block, err, sizeof err),
                  0);
        CHECK_INT(grid[0], atoi(v[1].value));
        CHECK_INT(block[0], atoi(v[0].value));
        CHECK_INT(grid[1], 1);
    }
    cutune_problem_destroy(p);

    /* A size of its own that depends on two tunables, and a GridDiv
     * expression. */
    write_file("reduction.cu",
               "extern \"C\" __global__ void "
               "sum_floats(float *a, const float *b, int n) {}\n");
    char *text = NULL;
    size_t len = 0;
    char err[256];
    CHECK_INT(
        cutune__read_regular_file(path, 1 << 20, &text, &len, err, sizeof err),
        0);
    if (!text)
        return;
    const char *swaps[][2] = {
        {"\"ProblemSize\": \"num_blocks\"",
         "\"ProblemSize\": [\"num_blocks * vector\", 3]"},
        {"\"GridDivX\": []", "\"GridDivX\": [\"vector\"], "
                             "\"GridDivY\": [\"2 - 1\"]"}};
    for (size_t i = 0; i < 2; i++) {
        char *at = strstr(text, swaps[i][0]);
        CHECK(at != NULL);
        if (!at)
            break;
        char *next =
            cutune__strdup_printf("%.*s%s%s", (int)(at - text), text,
                                  swaps[i][1], at + strlen(swaps[i][0]));
        free(text);
        text = next;
    }
    write_file("reduction2.json", text);
    snprintf(path, sizeof path, "%s/reduction2.json", dir);
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (p->space) {
        CHECK_INT(cutune_problem_size_dims(p), 2);
        CHECK_INT(cutune_problem_size(p, 1), 3);
        uint32_t cfg[3] = {2, 3, 2}; /* block 128, 256 blocks, vector 4 */
        size_t idx;
        unsigned grid[3], block[3];
        CHECK(cutune__space_index_of(p->space, cfg, &idx));
        CHECK_INT(
            cutune__problem_geometry(p, idx, grid, block, err, sizeof err), 0);
        CHECK_INT(grid[0], 256); /* 256 * 4 / 4 */
        CHECK_INT(grid[1], 3);   /* 3 / (2 - 1) */
        CHECK_INT(block[0], 128);
    } else {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
    }
    cutune_problem_destroy(p);

    /* Names that are not tunables, and a condition reading a size that
     * varies, are refused naming the field. */
    static const struct {
        const char *from, *to;
        cutune_status st;
        const char *needle;
    } bad[] = {
        {"\"ProblemSize\": [\"num_blocks * vector\", 3]",
         "\"ProblemSize\": [\"blocks\"]", CUTUNE_ERR_PARSE,
         "ProblemSize[0]: 'blocks' is not a tuning parameter"},
        {"\"ProblemSize\": [\"num_blocks * vector\", 3]",
         "\"ProblemSize\": [true]", CUTUNE_ERR_PARSE,
         "ProblemSize[0]: expected a positive integer, or a string"},
        {"\"ProblemSize\": [\"num_blocks * vector\", 3]",
         "\"ProblemSize\": [\"num_blocks - 32\"]", CUTUNE_ERR_PARSE,
         "ProblemSize[0]: 'num_blocks - 32' is 0"},
        {"\"GridDivX\": [\"vector\"]", "\"GridDivX\": [\"vec\"]",
         CUTUNE_ERR_PARSE, "GridDivX[0]: 'vec' is not a tuning parameter"},
        {"\"Conditions\": []",
         "\"Conditions\": [{\"Expression\": "
         "\"ProblemSize[1] > 1\", \"Parameters\": []}]",
         CUTUNE_ERR_UNSUPPORTED, "reads ProblemSize, which varies"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *at = strstr(text, bad[i].from);
        CHECK(at != NULL);
        if (!at)
            continue;
        char *json =
            cutune__strdup_printf("%.*s%s%s", (int)(at - text), text,
                                  bad[i].to, at + strlen(bad[i].from));
        expect_error(json, bad[i].st, bad[i].needle);
        free(json);
    }
    free(text);
}

int main(void)
{
    test_space_only();
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_vector_add();
    test_template_prelude();
    test_from_file();
    test_grid_div();
    test_geometry_codes();
    test_kt_problem_size();
    test_bad_input();
    test_extensions();
    test_budget_and_search();
    test_references();
    remove_tree(dir);
    return check_finish();
}
