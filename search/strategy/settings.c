#include "settings.h"

#include <math.h>
#include <string.h>

#include "bayes.h"
#include "default.h"

const cutune__settings *const cutune__strategy_settings[] = {
    &cutune__default_settings, &cutune__bayes_settings, NULL};

static int whole(cutune__setting_kind k)
{
    return k == CUTUNE__SETTING_COUNT || k == CUTUNE__SETTING_LEVEL;
}

static int in_range(const cutune__setting *t, double v)
{
    if (!isfinite(v) || v < t->min || v > t->max)
        return 0;
    if (t->above_min && v == t->min)
        return 0;
    return !whole(t->kind) || v == floor(v);
}

int cutune__settings_set(const cutune__settings *s, void *params,
                         const char *name, double value)
{
    if (!s || !params || !name)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        const cutune__setting *t = &s->table[i];
        if (strcmp(t->name, name) != 0)
            continue;
        if (!in_range(t, value))
            return -1;
        char *field = (char *)params + t->offset;
        switch (t->kind) {
        case CUTUNE__SETTING_COUNT: *(size_t *)field = (size_t)value; break;
        case CUTUNE__SETTING_LEVEL: *(int *)field = (int)value; break;
        case CUTUNE__SETTING_REAL: *(double *)field = value; break;
        }
        return 0;
    }
    return -1;
}

double cutune__settings_get(const cutune__settings *s, const void *params,
                            size_t i)
{
    const cutune__setting *t = &s->table[i];
    const char *field = (const char *)params + t->offset;
    switch (t->kind) {
    case CUTUNE__SETTING_COUNT: return (double)*(const size_t *)field;
    case CUTUNE__SETTING_LEVEL: return *(const int *)field;
    case CUTUNE__SETTING_REAL: return *(const double *)field;
    }
    return NAN;
}
