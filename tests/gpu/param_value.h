/* Test helper: the value of the parameter `name` in a configuration as the
 * public API returns it (a tune's best or baseline), or NULL. */
#ifndef CUTUNE_TESTS_PARAM_VALUE_H
#define CUTUNE_TESTS_PARAM_VALUE_H

#include <string.h>

#include "cutune/cutune.h"

static inline const char *value_of(const cutune_param_value *v, size_t n,
                                   const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return v[i].value;
    return NULL;
}

#endif
