/* cache/export.c, the header: names that would become one identifier are
 * refused with one message naming both; values are written whole and
 * exactly ("08" and "010" stay strings, a 300-character value is not
 * cut); keywords and comment markers in names still give a header that
 * compiles with -Wall -Wextra -Werror as C and C++ and serves the values
 * it was given.
 * Usage: test_export CC CXX */
#define _POSIX_C_SOURCE 200809L

#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../check.h"

static char root[256];
static char long_value[301];

/* One record line of `problem` on `device` with `config` (a JSON object's
 * members). */
static void add_line(const char *file, const char *device, const char *uuid,
                     const char *problem, const char *config)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cache/%s", root, file);
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f,
            "{\"cutune_cache\":1,\"device\":{\"name\":\"%s\",\"uuid\":\"%s\","
            "\"cc\":\"9.0\",\"sm_count\":100,\"l2_bytes\":1,"
            "\"memory_bytes\":1,\"driver\":13000,\"nvrtc\":\"13.0\","
            "\"cutune\":\"0.1.0\",\"simulated\":false},\"problem\":{\"name\":"
            "\"%s\",\"source_hash\":\"0123456789abcdef\",\"problem_size\":"
            "[1024],\"compiler_options\":\"\"},\"config\":{%s},\"stats\":{"
            "\"time_ms\":1.0,\"time_min_ms\":0.9,\"time_stddev_ms\":0.01,"
            "\"runs\":10,\"gbs\":0},\"baseline\":{\"config\":{%s},"
            "\"time_ms\":2.0},\"strategy\":\"random\",\"evaluations\":10,"
            "\"tune_seconds\":1.0,\"timestamp\":\"2026-11-20T10:00:00Z\"}\n",
            device, uuid, problem, config, config);
    fclose(f);
}

static char *in_root(const char *name)
{
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", root, name);
    return p;
}

static char *text_of(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 1 << 16);
    if (f) {
        buf[fread(buf, 1, (1 << 16) - 1, f)] = '\0';
        fclose(f);
    }
    return buf;
}

static cutune_cache_query query(const char *problem, const char *device)
{
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = problem;
    q.device_name = device;
    q.fallback = 1;
    return q;
}

static void test_collisions(cutune_cache *c)
{
    cutune_cache_query q = query("clash", "GTX One");
    char *h = in_root("clash.h");
    CHECK_INT(cutune_cache_export(c, &q, 1, CUTUNE_EXPORT_HEADER, h),
              CUTUNE_ERR_UNSUPPORTED);
    const char *msg = cutune_cache_errmsg(c);
    CHECK_CONTAINS(msg, "parameter a_b of clash");
    CHECK_CONTAINS(msg, "parameter A_B of clash");
    CHECK_CONTAINS(msg, "CUTUNE_CLASH_A_B");
    struct stat st;
    CHECK(stat(h, &st) != 0);

    /* The table's members keep case, so a_b and A_B are two members
     * there, but "level" is a member of its own. */
    q = query("level", NULL);
    q.device_name = NULL;
    CHECK_INT(cutune_cache_export(c, &q, 1, CUTUNE_EXPORT_HEADER, h),
              CUTUNE_ERR_UNSUPPORTED);
    CHECK_CONTAINS(cutune_cache_errmsg(c), "the member level of "
                                           "cutune_level_config");
    CHECK_CONTAINS(cutune_cache_errmsg(c), "parameter level of level");

    /* Problems whose names become one type. */
    cutune_cache_query two[2] = {query("x-y", NULL), query("x_y", NULL)};
    CHECK_INT(cutune_cache_export(c, two, 2, CUTUNE_EXPORT_HEADER, h),
              CUTUNE_ERR_UNSUPPORTED);
    CHECK_CONTAINS(cutune_cache_errmsg(c), "problem x-y and problem x_y "
                                           "both become cutune_x_y_config");
    /* JSON has no identifiers to collide. */
    CHECK_INT(cutune_cache_export(c, two, 2, CUTUNE_EXPORT_JSON,
                                  in_root("clash.json")),
              CUTUNE_OK);
}

/* Exports `values` for one device and as a table, then compiles a program
 * that includes both and checks every value it serves. */
static void test_values_compile(cutune_cache *c, const char *cc,
                                const char *cxx)
{
    cutune_cache_query q = query("values", "GTX /* One");
    char one[512], table[512];
    snprintf(one, sizeof one, "%s", in_root("one.h"));
    snprintf(table, sizeof table, "%s", in_root("table.h"));
    CHECK_INT(cutune_cache_export(c, &q, 1, CUTUNE_EXPORT_HEADER, one),
              CUTUNE_OK);
    q.device_name = NULL;
    CHECK_INT(cutune_cache_export(c, &q, 1, CUTUNE_EXPORT_HEADER, table),
              CUTUNE_OK);
    char *text = text_of(one);
    CHECK_CONTAINS(text, "#define CUTUNE_VALUES_ZERO8 \"08\"\n");
    CHECK_CONTAINS(text, "#define CUTUNE_VALUES_OCTAL \"010\"\n");
    CHECK_CONTAINS(text, "#define CUTUNE_VALUES_NEG (-5)\n");
    CHECK_CONTAINS(text, "#define CUTUNE_VALUES_PLUS \"+1\"\n");
    CHECK_CONTAINS(text, long_value);
    CHECK_CONTAINS(text, "GTX / * One");
    free(text);
    text = text_of(table);
    CHECK_CONTAINS(text, "    long long int_;\n");
    CHECK_CONTAINS(text, "    const char *zero8;\n");
    CHECK_CONTAINS(text, "    const char *class_;\n");
    CHECK_CONTAINS(text, long_value);
    free(text);

    char *prog = in_root("use.c");
    FILE *f = fopen(prog, "w");
    fprintf(f,
            "#include <string.h>\n#include \"one.h\"\n#include \"table.h\"\n"
            "int main(void)\n{\n"
            "    const cutune_values_config *t =\n"
            "        cutune_values_lookup(\"GTX Two\", 9, 0, 100, 0);\n"
            "    int bad = 0;\n"
            "    bad |= strcmp(CUTUNE_VALUES_ZERO8, \"08\") != 0;\n"
            "    bad |= strcmp(CUTUNE_VALUES_OCTAL, \"010\") != 0;\n"
            "    bad |= CUTUNE_VALUES_NEG != -5 || 0-CUTUNE_VALUES_NEG != 5;\n"
            "    bad |= strlen(CUTUNE_VALUES_LONG) != 300;\n"
            "    bad |= CUTUNE_VALUES_INT != 3;\n"
            "    bad |= strcmp(t->zero8, \"09\") != 0;\n"
            "    bad |= strcmp(t->octal, \"010\") != 0;\n"
            "    bad |= t->neg != -6 || t->int_ != 4;\n"
            "    bad |= strcmp(t->class_, \"x\") != 0;\n"
            "    bad |= strlen(t->long_) != 300;\n"
            "    return bad;\n}\n");
    fclose(f);
    char *cpp = in_root("use.cpp");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", prog, cpp);
    CHECK_INT(system(cmd), 0);
    const char *compilers[2][2] = {{cc, "-std=c11"}, {cxx, "-std=c++11"}};
    const char *sources[2] = {"use.c", "use.cpp"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && '%s' %s -pedantic -Wall -Wextra -Werror -o "
                 "use-%d %s && ./use-%d",
                 root, compilers[k][0], compilers[k][1], k, sources[k], k);
        int rc = system(cmd);
        if (rc != 0)
            fprintf(stderr, "failed: %s\n", cmd);
        CHECK_INT(rc, 0);
    }
}

int main(int argc, char **argv)
{
    const char *cc = argc > 1 ? argv[1] : "cc";
    const char *cxx = argc > 2 ? argv[2] : "c++";
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/cutune-export-XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(root)) {
        perror(root);
        return 1;
    }
    mkdir(in_root("cache"), 0755);
    memset(long_value, 'v', 300);
    char config[1024];
    snprintf(config, sizeof config,
             "\"zero8\":\"08\",\"octal\":\"010\",\"neg\":\"-5\","
             "\"plus\":\"+1\",\"long\":\"%s\",\"int\":\"3\",\"class\":\"x\"",
             long_value);
    add_line("one.jsonl", "GTX /* One", "", "values", config);
    add_line("one.jsonl", "GTX One", "", "values", config);
    snprintf(config, sizeof config,
             "\"zero8\":\"09\",\"octal\":\"010\",\"neg\":\"-6\","
             "\"plus\":\"+1\",\"long\":\"%s\",\"int\":\"4\",\"class\":\"x\"",
             long_value);
    add_line("two.jsonl", "GTX Two", "", "values", config);
    add_line("one.jsonl", "GTX One", "", "clash",
             "\"a_b\":\"1\",\"A_B\":\"2\"");
    add_line("one.jsonl", "GTX One", "", "level", "\"level\":\"1\"");
    add_line("one.jsonl", "GTX One", "", "x-y", "\"p\":\"1\"");
    add_line("one.jsonl", "GTX One", "", "x_y", "\"p\":\"1\"");

    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(in_root("cache"), &c), CUTUNE_OK);
    test_collisions(c);
    test_values_compile(c, cc, cxx);
    cutune_cache_close(c);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return check_finish();
}
