/* A program on the lookup library alone (find_package(cutune COMPONENTS
 * lookup) or `pkg-config cutune-lookup`; tests/install/run_consumer.sh):
 * finds the record full_consumer appended, on its own device (EXACT) and
 * for another device of the same compute capability (ARCHITECTURE).
 *
 * usage: lookup_consumer CACHE_DIR BLOCK_SIZE */
#include <stdio.h>
#include <string.h>

#include <cutune/cutune.h>

#include "install_record.h"

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "lookup_consumer: %s: %s\n", what, why);
    return 1;
}

static int look_up(cutune_cache *cache, const cutune_cache_query *query,
                   cutune_match want, const char *block)
{
    const cutune_cache_record *got = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    cutune_status st = cutune_cache_lookup(cache, query, &got, &match);
    if (st != CUTUNE_OK)
        return fail(query->device_name, cutune_cache_errmsg(cache));
    if (match != want || got->n_config != 1 ||
        strcmp(got->config[0].value, block) != 0)
        return fail(query->device_name, cutune_match_str(match));
    printf("%s: %s %s=%s\n", query->device_name, cutune_match_str(match),
           got->config[0].name, got->config[0].value);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fail("usage", "lookup_consumer CACHE_DIR BLOCK_SIZE");
    printf("version %s\n", cutune_version());
    cutune_cache *cache = NULL;
    cutune_status st = cutune_cache_open(argv[1], &cache);
    if (st != CUTUNE_OK) {
        int rc = fail(argv[1], cache ? cutune_cache_errmsg(cache)
                                     : cutune_status_str(st));
        cutune_cache_close(cache);
        return rc;
    }
    install_record r;
    install_record_make(&r, argv[2]);
    int rc = look_up(cache, &r.query, CUTUNE_MATCH_EXACT, argv[2]);
    cutune_cache_query other = r.query;
    other.device_name = "GTX Another 4243";
    other.fallback = 1;
    other.cc_major = r.rec.device.cc_major;
    other.cc_minor = r.rec.device.cc_minor;
    if (rc == 0)
        rc = look_up(cache, &other, CUTUNE_MATCH_ARCHITECTURE, argv[2]);
    cutune_cache_close(cache);
    return rc;
}
