/* The run-time lookup: a problem for a device fingerprint, through the
 * cache's whole fallback chain. It lives beside the problems (not in
 * cache/) because it reads a cutune_problem. */
#include <string.h>

#include "cutune/cutune.h"

cutune_status cutune_cache_lookup_device(cutune_cache *cache,
                                         const cutune_device *device,
                                         const cutune_problem *problem,
                                         const cutune_cache_record **record,
                                         cutune_match *match)
{
    long long size[16];
    size_t dims = problem ? cutune_problem_size_dims(problem) : 0;
    if (dims > sizeof size / sizeof size[0] || !device || !problem) {
        cutune_cache_query none;
        memset(&none, 0, sizeof none);
        /* lets the cache report the missing argument in its own words */
        return cutune_cache_lookup(cache, &none, record, match);
    }
    for (size_t d = 0; d < dims; d++)
        size[d] = cutune_problem_size(problem, d);
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = cutune_problem_name(problem);
    q.device_name = device->name;
    q.device_uuid = device->uuid;
    q.problem_size = dims ? size : NULL;
    q.n_problem_size = dims;
    q.fallback = 1;
    q.cc_major = device->cc_major;
    q.cc_minor = device->cc_minor;
    q.sm_count = device->sm_count;
    q.accept = cutune_problem_accepts_record;
    q.accept_user = (void *)problem;
    return cutune_cache_lookup(cache, &q, record, match);
}
