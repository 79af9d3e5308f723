/* A strategy's settings as a table: name, kind, range and meaning of each
 * field of its settings struct, so that setting one by name and listing
 * them (bench-strategies --settings, docs/strategies.md) come from one
 * place instead of a chain of string compares per strategy. The default
 * of each is read from the strategy's standard settings struct. The
 * library only holds the table; bench-strategies prints it.
 */
#ifndef CUTUNE_SEARCH_SETTINGS_H
#define CUTUNE_SEARCH_SETTINGS_H

#include <stddef.h>

typedef enum cutune__setting_kind {
    CUTUNE__SETTING_COUNT, /* size_t, a whole number */
    CUTUNE__SETTING_LEVEL, /* int, a whole number */
    CUTUNE__SETTING_REAL   /* double */
} cutune__setting_kind;

typedef struct cutune__setting {
    const char *name;
    size_t offset; /* of the field in the settings struct */
    cutune__setting_kind kind;
    double min, max; /* the range, both ends allowed ... */
    int above_min;   /* ... except min itself where this is 1 */
    const char *meaning;
} cutune__setting;

typedef struct cutune__settings {
    const char *strategy; /* the strategy's name */
    const cutune__setting *table;
    size_t n;
    const void *std; /* the standard settings struct */
} cutune__settings;

/* Sets the setting `name` of `params` (a struct the table describes) to
 * `value`. 0, or -1 for an unknown name, a value out of range or not
 * whole where the kind is whole (params unchanged). */
int cutune__settings_set(const cutune__settings *s, void *params,
                         const char *name, double value);

/* The value of setting `i` in `params`, as a double. */
double cutune__settings_get(const cutune__settings *s, const void *params,
                            size_t i);

/* The strategies that have settings, NULL-terminated. */
extern const cutune__settings *const cutune__strategy_settings[];

#endif
