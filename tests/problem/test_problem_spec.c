/* Problems from memory (cutune_problem_from_spec): the same problem as a
 * T1 file gives, field for field, and a bad spec refused with a message
 * naming the field. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "problem.h"

#define N (1LL << 26)

/* vector_add as a Kernel Tuner user would give it: the grid divides the
 * problem size by block_size_x * UNROLL (the built-in's T1 file says the
 * same with a GlobalSize expression). */
typedef struct vector_add_spec {
    cutune_problem_spec spec;
    cutune_value bsx[32], unroll[4], flag[2];
    cutune_value defaults[4];
    cutune_tunable params[4];
    const char *grid_div_x[2];
    long long size;
    int n;
    cutune_arg_spec args[5];
} vector_add_spec;

static void vector_add(vector_add_spec *v, const cutune_problem *builtin)
{
    memset(v, 0, sizeof *v);
    for (int i = 0; i < 32; i++)
        v->bsx[i] = (cutune_value){CUTUNE_VALUE_INT, 32 * (i + 1), 0, NULL};
    for (int i = 0; i < 4; i++)
        v->unroll[i] = (cutune_value){CUTUNE_VALUE_INT, 1 << i, 0, NULL};
    for (int i = 0; i < 2; i++)
        v->flag[i] = (cutune_value){CUTUNE_VALUE_INT, i, 0, NULL};
    v->defaults[0] = v->bsx[7];
    v->defaults[1] = v->unroll[0];
    v->defaults[2] = v->defaults[3] = v->flag[0];
    static const char *const names[4] = {"block_size_x", "UNROLL", "USE_LDG",
                                         "USE_RESTRICT"};
    const cutune_value *values[4] = {v->bsx, v->unroll, v->flag, v->flag};
    const size_t counts[4] = {32, 4, 2, 2};
    for (int i = 0; i < 4; i++)
        v->params[i] = (cutune_tunable){names[i], values[i], counts[i],
                                        &v->defaults[i], 0};
    v->grid_div_x[0] = "block_size_x";
    v->grid_div_x[1] = "UNROLL";
    v->size = N;
    v->n = (int)N;
    cutune_arg_spec *a = v->args;
    a[0] = (cutune_arg_spec){"c",
                             CUTUNE_ARG_VECTOR,
                             CUTUNE_DTYPE_FLOAT,
                             N,
                             CUTUNE_FILL_CONSTANT,
                             NULL,
                             0.0,
                             1,
                             1};
    a[1] = (cutune_arg_spec){"a",
                             CUTUNE_ARG_VECTOR,
                             CUTUNE_DTYPE_FLOAT,
                             N + 32,
                             CUTUNE_FILL_RANDOM,
                             NULL,
                             1.0,
                             2,
                             0};
    a[2] = a[1];
    a[2].name = "b";
    a[2].seed = 3;
    a[3] = (cutune_arg_spec){"n",
                             CUTUNE_ARG_SCALAR,
                             CUTUNE_DTYPE_INT32,
                             0,
                             CUTUNE_FILL_DATA,
                             &v->n,
                             0.0,
                             4,
                             0};
    a[4] = (cutune_arg_spec){"offset",
                             CUTUNE_ARG_SCALAR,
                             CUTUNE_DTYPE_INT32,
                             0,
                             CUTUNE_FILL_CONSTANT,
                             NULL,
                             0.0,
                             5,
                             0};
    cutune_problem_spec *s = &v->spec;
    cutune_problem_spec_init(s);
    s->kernel_name = "vector_add";
    s->source = builtin->source;
    s->tune_params = v->params;
    s->n_tune_params = 4;
    s->problem_size = &v->size;
    s->n_problem_size = 1;
    s->grid_div_x = v->grid_div_x;
    s->n_grid_div_x = 2;
    s->arguments = v->args;
    s->n_arguments = 5;
    s->bytes_per_launch = "12 * ProblemSize[0]";
    /* The built-ins are cutune's own kernels, not Kernel Tuner's. */
    s->kernel_tuner_defines = 0;
}

static void same_args(const cutune_problem *a, const cutune_problem *b)
{
    CHECK_INT(a->n_args, b->n_args);
    for (size_t i = 0; i < a->n_args && i < b->n_args; i++) {
        CHECK_STR(a->args[i].name, b->args[i].name);
        CHECK_INT(a->args[i].is_vector, b->args[i].is_vector);
        CHECK_INT(a->args[i].dtype, b->args[i].dtype);
        CHECK_INT(a->args[i].count, b->args[i].count);
        CHECK_INT(a->args[i].fill, b->args[i].fill);
        CHECK_NEAR(a->args[i].fill_value, b->args[i].fill_value, 0.0);
        CHECK_INT(a->args[i].seed, b->args[i].seed);
        CHECK_INT(a->args[i].is_output, b->args[i].is_output);
    }
}

/* The built-in vector_add from its T1 file and from memory: the same
 * space, configurations, source hash, launch geometry, NVRTC options and
 * arguments. */
static void test_equals_t1(void)
{
    cutune_problem *t1, *mem;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &t1), CUTUNE_OK);
    vector_add_spec v;
    vector_add(&v, t1);
    CHECK_INT(cutune_problem_from_spec(&v.spec, NULL, &mem), CUTUNE_OK);
    CHECK_STR(cutune_problem_errmsg(mem), "no error");
    CHECK_STR(cutune_problem_name(mem), "vector_add");
    CHECK_STR(cutune_problem_source_hash(mem), cutune_problem_source_hash(t1));
    size_t n = cutune_problem_space_size(t1);
    CHECK_INT(n, 512);
    CHECK_INT(cutune_problem_space_size(mem), n);
    size_t differ = 0, geometry = 0;
    for (size_t c = 0; c < n; c++) {
        for (size_t k = 0; k < 4; k++)
            differ += strcmp(cutune_problem_config_value(t1, c, k),
                             cutune_problem_config_value(mem, c, k)) != 0;
        unsigned g1[3], b1[3], g2[3], b2[3];
        char err[256];
        CHECK_INT(cutune__problem_geometry(t1, c, g1, b1, err, sizeof err), 0);
        CHECK_INT(cutune__problem_geometry(mem, c, g2, b2, err, sizeof err),
                  0);
        geometry +=
            memcmp(g1, g2, sizeof g1) != 0 || memcmp(b1, b2, sizeof b1) != 0;
    }
    CHECK_INT(differ, 0);
    CHECK_INT(geometry, 0);
    CHECK_INT(cutune__problem_default_config(mem),
              cutune__problem_default_config(t1));
    size_t def = cutune__problem_default_config(mem);
    CHECK_NEAR(cutune__problem_bytes(mem, def), cutune__problem_bytes(t1, def),
               0.0);
    size_t n1, n2;
    char **o1 = cutune__problem_options(t1, def, "sm_90", &n1);
    char **o2 = cutune__problem_options(mem, def, "sm_90", &n2);
    CHECK_INT(n2, n1);
    for (size_t i = 0; i < n1 && i < n2; i++)
        CHECK_STR(o2[i], o1[i]);
    cutune__free_strings(o1, n1);
    cutune__free_strings(o2, n2);
    same_args(mem, t1);
    CHECK(cutune_problem_config_value(mem, n, 0) == NULL);
    CHECK(cutune_problem_config_value(mem, 0, 4) == NULL);
    cutune_problem_destroy(mem);
    cutune_problem_destroy(t1);
}

/* The convolution file of tests/data: its conditions as restrictions give
 * the same 4,362 configurations, in the same order. */
static void test_restrictions_equal_conditions(void)
{
    cutune_problem_options o;
    cutune_problem_options_init(&o);
    o.space_only = 1;
    cutune_problem *t1, *mem;
    char path[512];
    const char *data = getenv("CUTUNE_TEST_DATA");
    snprintf(path, sizeof path, "%s/t1/convolution_milo.json",
             data ? data : "tests/data");
    CHECK_INT(cutune_problem_load(path, &o, &t1), CUTUNE_OK);
    size_t np = cutune_problem_param_count(t1);
    cutune_tunable params[16];
    cutune_value values[16][32];
    for (size_t i = 0; i < np; i++) {
        size_t nv = cutune_problem_value_count(t1, i);
        for (size_t k = 0; k < nv; k++)
            values[i][k] =
                (cutune_value){CUTUNE_VALUE_INT,
                               atoll(cutune_problem_value(t1, i, k)), 0, NULL};
        params[i] = (cutune_tunable){cutune_problem_param_name(t1, i),
                                     values[i], nv, NULL, 0};
    }
    /* The last condition is long: one string of its own, so that clang
     * does not take two adjacent literals for a missing comma. */
    static const char shmem_fits[] =
        "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*(("
        "block_size_y*tile_size_y+(filter_height-1)))) < 12*1024";
    static const char *const restrictions[] = {
        "use_padding==0 or block_size_x % 32 != 0",
        "block_size_x*block_size_y<=1024", "use_padding==0 or use_shmem != 0",
        shmem_fits};
    long long size[2] = {4096, 4096};
    cutune_problem_spec s;
    cutune_problem_spec_init(&s);
    s.kernel_name = "convolution_kernel";
    s.tune_params = params;
    s.n_tune_params = np;
    s.restrictions = restrictions;
    s.n_restrictions = 4;
    s.problem_size = size;
    s.n_problem_size = 2;
    CHECK_INT(cutune_problem_from_spec(&s, &o, &mem), CUTUNE_OK);
    CHECK_INT(cutune_problem_space_size(mem), 4362);
    CHECK_INT(cutune_problem_space_size(t1), 4362);
    size_t differ = 0;
    for (size_t c = 0; c < 4362; c++)
        for (size_t k = 0; k < np; k++)
            differ += strcmp(cutune_problem_config_value(t1, c, k),
                             cutune_problem_config_value(mem, c, k)) != 0;
    CHECK_INT(differ, 0);
    cutune_problem_destroy(mem);
    cutune_problem_destroy(t1);
}

/* Kernel Tuner's launch rule: the block from block_size_x (256 without
 * one), the grid the problem size over the grid_div product (over the
 * block without a list, over 1 with an empty one). */
static void test_kernel_tuner_geometry(void)
{
    cutune_value threads[2] = {{CUTUNE_VALUE_INT, 64, 0, NULL},
                               {CUTUNE_VALUE_INT, 128, 0, NULL}};
    cutune_tunable t = {"block_size_x", threads, 2, NULL, 0};
    long long size = 1000;
    float data[1000] = {0};
    cutune_arg_spec arg = {"x",
                           CUTUNE_ARG_VECTOR,
                           CUTUNE_DTYPE_FLOAT,
                           1000,
                           CUTUNE_FILL_DATA,
                           data,
                           0.0,
                           0,
                           1};
    data[999] = 2.5f;
    cutune_problem_spec s;
    cutune_problem_spec_init(&s);
    s.kernel_name = "k";
    s.source = "extern \"C\" __global__ void k(float *x) {}";
    s.tune_params = &t;
    s.n_tune_params = 1;
    s.problem_size = &size;
    s.n_problem_size = 1;
    s.arguments = &arg;
    s.n_arguments = 1;
    cutune_problem *p;
    unsigned grid[3], block[3];
    char err[256];
    CHECK_INT(cutune_problem_from_spec(&s, NULL, &p), CUTUNE_OK);
    CHECK_INT(cutune__problem_geometry(p, 1, grid, block, err, sizeof err), 0);
    CHECK_INT(block[0], 128);
    CHECK_INT(grid[0], 8); /* ceil(1000 / 128) */
    CHECK_INT(grid[1], 1);
    /* The host's data, copied whole. */
    CHECK_INT(p->args[0].fill, CUTUNE__FILL_BINARY);
    CHECK_INT(p->args[0].data_size, sizeof data);
    CHECK(p->args[0].data && ((float *)p->args[0].data)[999] == 2.5f);
    CHECK(p->args[0].is_output);
    /* Kernel Tuner's defines come with it. */
    size_t n;
    char **opts = cutune__problem_options(p, 0, "sm_90", &n);
    int defined = 0;
    for (size_t i = 0; i < n; i++)
        defined |= strcmp(opts[i], "-Dkernel_tuner=1") == 0;
    CHECK(defined);
    cutune__free_strings(opts, n);
    cutune_problem_destroy(p);

    static const char *const none[1] = {NULL};
    s.grid_div_x = none; /* an empty list: divided by 1 */
    s.n_grid_div_x = 0;
    t.name = "threads";
    CHECK_INT(cutune_problem_from_spec(&s, NULL, &p), CUTUNE_OK);
    CHECK_INT(cutune__problem_geometry(p, 0, grid, block, err, sizeof err), 0);
    CHECK_INT(block[0], 256);
    CHECK_INT(grid[0], 1000);
    cutune_problem_destroy(p);
}

/* A scalar given as data travels as a double: exactly, or refused. */
static void test_scalars(void)
{
    cutune_value one = {CUTUNE_VALUE_INT, 1, 0, NULL};
    cutune_tunable t = {"X", &one, 1, NULL, 0};
    long long size = 1;
    long long big = (1LL << 53) + 1, fine = -(1LL << 53);
    uint16_t half = 0x3e00; /* 1.5 */
    cutune_arg_spec args[3] = {{"h", CUTUNE_ARG_SCALAR, CUTUNE_DTYPE_HALF, 0,
                                CUTUNE_FILL_DATA, &half, 0.0, 0, 0},
                               {"i", CUTUNE_ARG_SCALAR, CUTUNE_DTYPE_INT64, 0,
                                CUTUNE_FILL_DATA, &fine, 0.0, 0, 0},
                               {"big", CUTUNE_ARG_SCALAR, CUTUNE_DTYPE_INT64,
                                0, CUTUNE_FILL_DATA, &big, 0.0, 0, 0}};
    cutune_problem_spec s;
    cutune_problem_spec_init(&s);
    s.kernel_name = "k";
    s.source = "extern \"C\" __global__ void k() {}";
    s.tune_params = &t;
    s.n_tune_params = 1;
    s.problem_size = &size;
    s.n_problem_size = 1;
    s.arguments = args;
    s.n_arguments = 2;
    cutune_problem *p;
    CHECK_INT(cutune_problem_from_spec(&s, NULL, &p), CUTUNE_OK);
    CHECK_NEAR(p->args[0].fill_value, 1.5, 0.0);
    CHECK_NEAR(p->args[1].fill_value, -9007199254740992.0, 0.0);
    cutune_problem_destroy(p);
    s.n_arguments = 3;
    CHECK_INT(cutune_problem_from_spec(&s, NULL, &p), CUTUNE_ERR_UNSUPPORTED);
    CHECK_CONTAINS(cutune_problem_errmsg(p),
                   "problem spec: arguments[2].data: a 64-bit integer");
    cutune_problem_destroy(p);
}

/* A good spec with one field broken at a time: refused, the message
 * naming that field. */
typedef struct bad_case {
    const char *needle;
    cutune_status status;
} bad_case;

static void expect_bad(const cutune_problem_spec *s, cutune_status status,
                       const char *needle)
{
    cutune_problem *p;
    CHECK_INT(cutune_problem_from_spec(s, NULL, &p), status);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "problem spec: ");
    CHECK_CONTAINS(cutune_problem_errmsg(p), needle);
    cutune_problem_destroy(p);
}

static void test_bad_specs(void)
{
    cutune_problem *t1;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &t1), CUTUNE_OK);
    vector_add_spec v;
    vector_add(&v, t1);
    cutune_problem_spec *s = &v.spec;
    cutune_problem *p;

    CHECK_INT(cutune_problem_from_spec(NULL, NULL, &p),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_problem_errmsg(p), "no spec given");
    cutune_problem_destroy(p);

    s->n_tune_params = 0;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT, "tune_params: none given");
    s->n_tune_params = 4;
    v.params[1].n_values = 0;
    expect_bad(s, CUTUNE_ERR_PARSE, "tune_params[1].values (UNROLL): empty");
    v.params[1].n_values = 4;
    v.params[2].name = "UNROLL";
    expect_bad(s, CUTUNE_ERR_PARSE,
               "tune_params[2].name: 'UNROLL' is defined twice");
    v.params[2].name = NULL;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT, "tune_params[2].name: missing");
    v.params[2].name = "USE_LDG";
    v.unroll[2].type = (cutune_value_type)9;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT,
               "tune_params[1].values[2] (UNROLL): not a value");
    v.unroll[2].type = CUTUNE_VALUE_INT;

    const char *restriction[1] = {"UNROLL >"};
    s->restrictions = restriction;
    s->n_restrictions = 1;
    expect_bad(s, CUTUNE_ERR_PARSE, "restrictions[0]: ");
    restriction[0] = "UNROL > 1";
    expect_bad(s, CUTUNE_ERR_PARSE, "restrictions[0]: ");
    restriction[0] = "UNROLL > 8";
    expect_bad(s, CUTUNE_ERR_EMPTY_SPACE,
               "tune_params: no configuration satisfies the conditions");
    s->n_restrictions = 0;

    v.grid_div_x[1] = "UNROL";
    expect_bad(s, CUTUNE_ERR_PARSE,
               "grid_div_x[1]: 'UNROL' is not a tuning parameter");
    v.grid_div_x[1] = "UNROLL";
    s->block_size[0] = "block_size_x *";
    expect_bad(s, CUTUNE_ERR_PARSE, "block_size[0]: ");
    s->block_size[0] = "block_size_x / 0";
    expect_bad(s, CUTUNE_ERR_PARSE, "block_size[0]: ");
    s->block_size[0] = NULL;
    v.size = 0;
    expect_bad(s, CUTUNE_ERR_PARSE, "problem_size[0]: 0 is not a positive");
    v.size = N;
    s->n_problem_size = 0;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT, "problem_size: missing");
    s->n_problem_size = 1;

    s->kernel_name = NULL;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT, "kernel_name: missing");
    s->kernel_name = "vector_add";
    s->source = NULL;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT, "source: missing");
    s->source = "#include <hip/hip_runtime.h>\n__global__ void k() {}";
    expect_bad(s, CUTUNE_ERR_UNSUPPORTED, "source: HIP source");
    s->source = t1->source;

    v.args[1].count = 0;
    expect_bad(s, CUTUNE_ERR_PARSE, "arguments[1].count: 0 elements");
    v.args[1].count = N + 32;
    v.args[1].fill = CUTUNE_FILL_DATA;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT,
               "arguments[1].data: NULL with fill CUTUNE_FILL_DATA");
    v.args[1].fill = CUTUNE_FILL_RANDOM;
    v.args[0].dtype = (cutune_dtype)42;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT,
               "arguments[0].dtype: 42 is not a cutune_dtype");
    v.args[0].dtype = CUTUNE_DTYPE_FLOAT;
    v.args[0].memory = CUTUNE_ARG_CONSTANT;
    v.args[0].name = "";
    expect_bad(s, CUTUNE_ERR_PARSE, "arguments[0].name: a constant-memory");
    v.args[0].memory = CUTUNE_ARG_VECTOR;
    v.args[0].name = "c";

    cutune_answer_spec answer = {3,  CUTUNE_FILL_CONSTANT, NULL, 1.0, 0, 1e-6,
                                 0.0};
    s->answers = &answer;
    s->n_answers = 1;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT,
               "answers[0].arg: 3 is not a vector argument");
    answer.arg = 0;
    answer.atol = -1;
    expect_bad(s, CUTUNE_ERR_INVALID_ARGUMENT, "answers[0]: atol -1");
    answer.atol = 1e-6;
    CHECK_INT(cutune_problem_from_spec(s, NULL, &p), CUTUNE_OK);
    CHECK_INT(p->n_refs, 1);
    CHECK_INT(p->refs[0].arg, 0);
    CHECK_NEAR(p->refs[0].atol, 1e-6, 0.0);
    cutune_problem_destroy(p);
    s->n_answers = 0;

    /* A default outside the values: the nearest, and a warning. */
    v.defaults[0].i = 100;
    CHECK_INT(cutune_problem_from_spec(s, NULL, &p), CUTUNE_OK);
    CHECK_INT(cutune_problem_warning_count(p), 1);
    CHECK_CONTAINS(cutune_problem_warning(p, 0),
                   "tune_params[0].default_value (block_size_x): 100 is not "
                   "among its values; using 96");
    cutune_problem_destroy(p);
    cutune_problem_destroy(t1);
}

int main(void)
{
    test_equals_t1();
    test_restrictions_equal_conditions();
    test_kernel_tuner_geometry();
    test_scalars();
    test_bad_specs();
    return check_finish();
}
