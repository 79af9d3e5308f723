/* The strategies' settings tables (search/strategy/settings.h): every
 * setting is found by its name, takes the values of its range and no
 * other, and reads back what was set; the standard settings are in range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "strategy/bayes.h"
#include "strategy/default.h"
#include "strategy/settings.h"

/* A copy of the standard settings to change: the largest struct. */
typedef union any_params {
    cutune__default_params d;
    cutune__bayes_params b;
} any_params;

static size_t params_size(const cutune__settings *s)
{
    return s == &cutune__default_settings ? sizeof(cutune__default_params)
                                          : sizeof(cutune__bayes_params);
}

static void test_table(const cutune__settings *s)
{
    any_params p;
    memcpy(&p, s->std, params_size(s));
    for (size_t i = 0; i < s->n; i++) {
        const cutune__setting *t = &s->table[i];
        double def = cutune__settings_get(s, s->std, i);
        /* The standard value is in range, and setting it changes nothing. */
        CHECK_INT(cutune__settings_set(s, &p, t->name, def), 0);
        CHECK(memcmp(&p, s->std, params_size(s)) == 0);
        /* The ends. */
        CHECK_INT(cutune__settings_set(s, &p, t->name, t->min),
                  t->above_min ? -1 : 0);
        if (isfinite(t->max)) {
            CHECK_INT(cutune__settings_set(s, &p, t->name, t->max), 0);
            CHECK_NEAR(cutune__settings_get(s, &p, i), t->max, 0);
            CHECK_INT(cutune__settings_set(s, &p, t->name, t->max + 1), -1);
        }
        CHECK_INT(cutune__settings_set(s, &p, t->name, t->min - 1), -1);
        CHECK_INT(cutune__settings_set(s, &p, t->name, NAN), -1);
        CHECK_INT(cutune__settings_set(s, &p, t->name, INFINITY), -1);
        /* A whole kind refuses a fraction; a real one keeps it. */
        double half = t->min + 0.5;
        int whole = t->kind != CUTUNE__SETTING_REAL;
        CHECK_INT(cutune__settings_set(s, &p, t->name, half),
                  whole || (isfinite(t->max) && half > t->max) ? -1 : 0);
        if (!whole && !(half > t->max))
            CHECK_NEAR(cutune__settings_get(s, &p, i), half, 0);
        memcpy(&p, s->std, params_size(s));
    }
    CHECK_INT(cutune__settings_set(s, &p, "no_such_setting", 1), -1);
    CHECK(memcmp(&p, s->std, params_size(s)) == 0);
}

int main(void)
{
    size_t n = 0;
    for (; cutune__strategy_settings[n]; n++)
        test_table(cutune__strategy_settings[n]);
    CHECK_INT(n, 2);
    /* The wrappers go through the table. */
    cutune__default_params d = cutune__default_params_std;
    CHECK_INT(cutune__default_params_set(&d, "probe_cut", 1), 0);
    CHECK_INT(d.probe_cut, 1);
    CHECK_INT(cutune__default_params_set(&d, "initial_sample", 2.5), -1);
    cutune__bayes_params b = cutune__bayes_params_std;
    CHECK_INT(cutune__bayes_params_set(&b, "clip_quantile", 0.25), 0);
    CHECK_NEAR(b.clip_quantile, 0.25, 0);
    return check_finish();
}
