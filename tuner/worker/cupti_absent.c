/* cupti_profile.h where the toolkit had no CUPTI headers at build time:
 * counters are never read, and the reason says so. */
#include <stdio.h>

#include "cupti_profile.h"

cutune__cupti *cutune__cupti_open(char *why, size_t why_len)
{
    snprintf(why, why_len,
             "this cutune was built without CUPTI's headers "
             "(cupti_range_profiler.h), so it cannot read counters");
    return NULL;
}

int cutune__cupti_profile(cutune__cupti *c, int device,
                          const char *const *names, size_t n,
                          const cutune__profile_work *work, double *values,
                          int *passes, int *range_of_ours, int *launch_error,
                          char *why, size_t why_len)
{
    (void)c, (void)device, (void)names, (void)n, (void)work, (void)values;
    *passes = 0;
    *range_of_ours = 0;
    *launch_error = 0;
    snprintf(why, why_len, "built without CUPTI");
    return CUTUNE__COUNTERS_NO_CUPTI;
}
