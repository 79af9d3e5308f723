/* The public walk over a cache's records (cutune_cache_foreach): the scan
 * of store_scan.c without the JSON, for callers outside cache/. */
#include "store.h"

typedef struct foreach_ctx {
    cutune_cache_visit_fn visit;
    void *user;
} foreach_ctx;

static int foreach_visit(void *user, const cutune_cache_record *record,
                         json_t *root, const char *path, size_t line)
{
    (void)root;
    (void)path;
    (void)line;
    const foreach_ctx *ctx = user;
    return ctx->visit(ctx->user, record);
}

cutune_status cutune_cache_foreach(cutune_cache *cache,
                                   cutune_cache_visit_fn visit, void *user)
{
    if (!cache || !visit)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    foreach_ctx ctx = {visit, user};
    return cutune__cache_scan(cache, NULL, 0, foreach_visit, &ctx);
}
