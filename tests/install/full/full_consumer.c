/* A program on the whole of an installed libcutune, built through
 * find_package(cutune) or `pkg-config cutune` (tests/install/
 * run_consumer.sh): the library is the version its header says; with
 * "worker", a session starts the worker the library finds by itself (no
 * $CUTUNE_WORKER); a record appended to the cache is looked up again.
 *
 * usage: full_consumer CACHE_DIR BLOCK_SIZE [worker] */
#include <stdio.h>
#include <string.h>

#include <cutune/cutune.h>

#include "install_record.h"

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "full_consumer: %s: %s\n", what, why);
    return 1;
}

/* Without a GPU, a worker that started says there is no device; one the
 * library could not find or start is CUTUNE_ERR_WORKER. */
static int check_worker(void)
{
    cutune_session *s = NULL;
    const cutune_device *devices = NULL;
    size_t n = 0;
    cutune_status st = cutune_session_create(NULL, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_devices(s, &devices, &n);
    if (st != CUTUNE_OK && st != CUTUNE_ERR_NO_DEVICE) {
        int rc = fail("the worker",
                      s ? cutune_session_errmsg(s) : cutune_status_str(st));
        cutune_session_destroy(s);
        return rc;
    }
    printf("worker: %s\n", st == CUTUNE_OK ? "devices listed" : "no device");
    cutune_session_destroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fail("usage", "full_consumer CACHE_DIR BLOCK_SIZE [worker]");
    if (strcmp(cutune_version(), CUTUNE_VERSION_STRING) != 0)
        return fail("the library's version", cutune_version());
    printf("version %s\n", cutune_version());
    if (argc > 3 && strcmp(argv[3], "worker") == 0 && check_worker() != 0)
        return 1;

    cutune_cache *cache = NULL;
    cutune_status st = cutune_cache_open(argv[1], &cache);
    install_record r;
    install_record_make(&r, argv[2]);
    if (st == CUTUNE_OK)
        st = cutune_cache_append(cache, &r.rec);
    const cutune_cache_record *got = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    if (st == CUTUNE_OK)
        st = cutune_cache_lookup(cache, &r.query, &got, &match);
    int rc = 0;
    if (st != CUTUNE_OK)
        rc = fail("the cache",
                  cache ? cutune_cache_errmsg(cache) : cutune_status_str(st));
    else if (match != CUTUNE_MATCH_EXACT || got->n_config != 1 ||
             strcmp(got->config[0].value, argv[2]) != 0)
        rc = fail("the record read back", cutune_match_str(match));
    else
        printf("appended and found: %s %s=%s\n", cutune_match_str(match),
               got->config[0].name, got->config[0].value);
    cutune_cache_close(cache);
    return rc;
}
