/* Fuzz target for the cache reader: any bytes as a device's .jsonl file
 * in an otherwise empty cache folder, looked up with the whole fallback
 * chain, with and without a problem's accept(), and exported. A record
 * served must be valid: of the problem asked for, with a positive finite
 * time, and (with accept) a configuration inside the problem's space. A
 * broken promise aborts with the input kept. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cutune/cutune.h"
#include "fuzz_input.h"

static const char problem_json[] =
    "{\"General\": {\"BenchmarkName\": \"vector_add\"},\n"
    " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
    "  {\"Name\": \"block_size_x\", \"Type\": \"int\", "
    "\"Values\": \"[32, 64, 128, 256, 512]\"},\n"
    "  {\"Name\": \"UNROLL\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, "
    "8]\"}],\n"
    "  \"Conditions\": [{\"Expression\": \"block_size_x * UNROLL <= "
    "1024\"}]},\n"
    " \"KernelSpecification\": {\"KernelName\": \"k\", "
    "\"ProblemSize\": [1048576]}}\n";

static cutune_problem *the_problem(void)
{
    static cutune_problem *p;
    if (!p) {
        const char *path =
            cutune_fuzz_write("problem.json", (const uint8_t *)problem_json,
                              sizeof problem_json - 1);
        cutune_problem_options po = {
            .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
        if (!path || cutune_problem_load(path, &po, &p) != CUTUNE_OK)
            abort(); /* the fixed problem must load */
    }
    return p;
}

static void lookup(cutune_cache *c, cutune_problem *p, int with_accept)
{
    long long size = 1048576;
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = "vector_add";
    q.device_name = "GTX Fictional 9000";
    q.problem_size = &size;
    q.n_problem_size = 1;
    q.fallback = 1;
    q.cc_major = 9;
    q.sm_count = 100;
    if (with_accept) {
        q.accept = cutune_problem_accepts_record;
        q.accept_user = p;
    }
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    cutune_status st = cutune_cache_lookup(c, &q, &rec, &match);
    (void)cutune_cache_warning(c);
    if (st != CUTUNE_OK) {
        if (rec)
            abort();
        cutune_fuzz_set_message(cutune_cache_warning(c));
        return;
    }
    if (!rec || strcmp(rec->problem_name, "vector_add") != 0 ||
        !(rec->time_ms > 0) || !isfinite(rec->time_ms))
        abort();
    if (with_accept && !cutune_problem_accepts_record(p, rec, NULL, 0))
        abort();
    cutune_fuzz_set_message(cutune_cache_warning(c));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cutune_fuzz_set_message("");
    cutune_problem *p = the_problem();
    /* cutune_fuzz_path() returns one buffer: copy before the next call. */
    const char *dir = cutune_fuzz_path("cache");
    char made[128];
    if (!dir)
        return 0;
    snprintf(made, sizeof made, "%s", dir);
    mkdir(made, 0755);
    if (!cutune_fuzz_write("cache/gtx-fictional-9000-12345678.jsonl", data,
                           size))
        return 0;
    cutune_cache *c = NULL;
    if (cutune_cache_open(made, &c) != CUTUNE_OK) {
        cutune_cache_close(c);
        return 0;
    }
    lookup(c, p, 0);
    lookup(c, p, 1);
    cutune_fuzz_set_message(cutune_cache_warning(c));
    const char *out = cutune_fuzz_path("export.json");
    char out_path[128];
    snprintf(out_path, sizeof out_path, "%s", out ? out : "");
    if (out)
        (void)cutune_cache_export(c, NULL, 0, CUTUNE_EXPORT_JSON, out_path);
    cutune_cache_close(c);
    return 0;
}
