/* Prints the launch parameters the build chose for vector_add, then asks
 * the cache again at run time for the device given on the command line
 * (name, compute capability, SM count), as a program would for the GPU it
 * finds through cutune_session_devices(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cutune/cutune.h>

#include "vector_add_tuned.h"

int main(int argc, char **argv)
{
#if CUTUNE_TUNED_VECTOR_ADD
    printf("build time: %s block_size_x=%d UNROLL=%d\n",
           CUTUNE_LEVEL_VECTOR_ADD, CUTUNE_VECTOR_ADD_BLOCK_SIZE_X,
           CUTUNE_VECTOR_ADD_UNROLL);
#else
    printf("build time: %s (use the occupancy API)\n",
           CUTUNE_LEVEL_VECTOR_ADD);
#endif
    if (argc < 4)
        return 0;

    cutune_device device;
    memset(&device, 0, sizeof device);
    snprintf(device.name, sizeof device.name, "%s", argv[1]);
    if (sscanf(argv[2], "%d.%d", &device.cc_major, &device.cc_minor) != 2)
        return 2;
    device.sm_count = atoi(argv[3]);

    long long size[1] = {1048576};
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = size;
    po.n_problem_size = 1;
    cutune_problem *problem = NULL;
    cutune_cache *cache = NULL;
    const cutune_cache_record *record = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    cutune_status st = cutune_problem_load("vector_add", &po, &problem);
    if (st == CUTUNE_OK)
        st = cutune_cache_open(NULL, &cache);
    if (st == CUTUNE_OK)
        st = cutune_cache_lookup_device(cache, &device, problem, &record,
                                        &match);
    if (st == CUTUNE_OK) {
        printf("run time: %s on %s%s:", cutune_match_str(match),
               record->device.name,
               record->device.simulated ? " (simulated)" : "");
        for (size_t i = 0; i < record->n_config; i++)
            printf(" %s=%s", record->config[i].name, record->config[i].value);
        printf("\n");
    } else if (match == CUTUNE_MATCH_OCCUPANCY) {
        printf("run time: no record; use the occupancy suggestion\n");
    } else {
        fprintf(stderr, "%s\n",
                problem && st != CUTUNE_OK && !cache
                    ? cutune_problem_errmsg(problem)
                    : cutune_cache_errmsg(cache));
    }
    cutune_cache_close(cache);
    cutune_problem_destroy(problem);
    return st == CUTUNE_OK || match == CUTUNE_MATCH_OCCUPANCY ? 0 : 1;
}
