/* The objectives' names. Here rather than in tuner/ because the cache,
 * which tuner/ builds on, writes and reads them too. */
#include <string.h>

#include "cutune/cutune.h"

static const char *const names[] = {"time", "energy", "edp"};

const char *cutune_objective_str(cutune_objective objective)
{
    size_t i = (size_t)objective;
    return i < sizeof names / sizeof *names ? names[i] : "unknown";
}

int cutune_objective_parse(const char *name, cutune_objective *out)
{
    for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) {
            if (out)
                *out = (cutune_objective)i;
            return 0;
        }
    return -1;
}
