/* Settling how outputs are checked (see output_check.h). */
#include "output_check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expr/none.h"

int cutune__outputs_vary(size_t agreed, size_t differed)
{
    /* The sample leans towards agreement: a search starts near the default
     * and keeps the tunables it has not tried yet at the default's values.
     * Half the sample differing is already "most" of the space. */
    /* Fewer results than a sample say too little: a small space with one
     * wrong configuration must not pass as one whose output varies. */
    return agreed + differed >= CUTUNE__CHECK_SAMPLE && differed >= 2 &&
           differed >= agreed;
}

size_t cutune__explain_differences(const cutune_problem *p, size_t def,
                                   const size_t *configs,
                                   const unsigned char *differs, size_t n,
                                   char *out, size_t outlen)
{
    size_t named = 0, used = 0;
    if (outlen)
        out[0] = '\0';
    if (n == 0 || def == CUTUNE__NONE)
        return 0;
    const uint32_t *d = cutune__space_config(p->space, def);
    for (size_t k = 0; k < p->n_params; k++) {
        /* A tunable with one value cannot tell configurations apart. */
        if (p->param_value_counts[k] < 2)
            continue;
        size_t right = 0;
        for (size_t i = 0; i < n; i++) {
            const uint32_t *c = cutune__space_config(p->space, configs[i]);
            right += (c[k] != d[k]) == (differs[i] != 0);
        }
        if (10 * right < 9 * n)
            continue;
        int w = snprintf(out + used, used < outlen ? outlen - used : 0, "%s%s",
                         named ? ", " : "", p->param_names[k]);
        if (w > 0 && used + (size_t)w < outlen)
            used += (size_t)w;
        named++;
    }
    return named;
}
