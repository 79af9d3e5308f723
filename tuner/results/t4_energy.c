/* Energy and power in T4 results: the measurements cutune writes
 * (`energy`, J per launch; `power`, W) and those Kernel Tuner's
 * NVMLObserver writes (`nvml_energy`, `nvml_power`), read into a
 * cutune__t4_entry, and written back under cutune's names.
 *
 * Kernel Tuner's NVMLObserver (kernel_tuner/observers/nvml.py) gives
 * `nvml_power` in W, the median of NVML's power readings while the
 * configuration was benchmarked, and `nvml_energy` as that power times
 * the result's `time`, the mean runtime of one launch in ms over 1000: J
 * per launch, as cutune's `energy` (earlier versions integrated the
 * readings over each launch and averaged them: J per launch too). Its T4
 * writer (file_utils.py) gives measurements other than times the unit "",
 * so "" reads as J or W. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "t4_energy.h"
#include "util.h"

typedef struct unit {
    const char *name;
    double factor;
} unit;

static const unit joules[] = {
    {"J", 1.0}, {"", 1.0}, {"mJ", 1e-3}, {"uJ", 1e-6}, {"kJ", 1e3}};
static const unit watts[] = {{"W", 1.0}, {"", 1.0}, {"mW", 1e-3}, {"kW", 1e3}};

/* The factor of `name` among units[0..n), 0 when it is none of them. */
static double factor_of(const unit *units, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, units[i].name) == 0)
            return units[i].factor;
    return 0.0;
}

/* The measurement names read, energy first: cutune's, then Kernel
 * Tuner's NVML observer's. */
static const char *const names[] = {"energy", "nvml_energy", "power",
                                    "nvml_power"};

int cutune__t4_is_energy_name(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Measurement `name` of `res` in J or W into *out (NaN when absent). */
static cutune_status read_one(const char *path, json_t *res, size_t i,
                              const char *name, int energy, double *out,
                              char *err, size_t errlen)
{
    json_t *m = json_object_get(res, "measurements");
    size_t k;
    json_t *it;
    *out = NAN;
    json_array_foreach(m, k, it)
    {
        const char *n = json_string_value(json_object_get(it, "name"));
        if (!n || strcmp(n, name) != 0)
            continue;
        json_t *v = json_object_get(it, "value");
        const char *u = json_string_value(json_object_get(it, "unit"));
        double f = factor_of(energy ? joules : watts,
                             energy ? sizeof joules / sizeof *joules
                                    : sizeof watts / sizeof *watts,
                             u ? u : "");
        if (f == 0.0)
            return cutune__errf(err, errlen, CUTUNE_ERR_UNSUPPORTED,
                                "%s: results[%zu].measurements: %s unit "
                                "'%s' is not a known unit (%s)",
                                path, i, name, u,
                                energy ? "J, mJ, uJ, kJ, or none: J"
                                       : "W, mW, kW, or none: W");
        double x = json_number_value(v);
        if (!json_is_number(v) || !(x >= 0) || !isfinite(x))
            return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                "%s: results[%zu].measurements: %s is not "
                                "a finite number, 0 or more",
                                path, i, name);
        *out = x * f;
        return CUTUNE_OK;
    }
    return CUTUNE_OK;
}

cutune_status cutune__t4_read_energy(const char *path, json_t *res, size_t i,
                                     cutune__t4_entry *e, char *err,
                                     size_t errlen)
{
    double v[sizeof names / sizeof *names];
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        cutune_status st =
            read_one(path, res, i, names[k], k < 2, &v[k], err, errlen);
        if (st)
            return st;
    }
    /* cutune's own names first: a file may carry both. */
    e->energy_j = !isnan(v[0]) ? v[0] : v[1];
    e->power_w = !isnan(v[2]) ? v[2] : v[3];
    double s = e->time_ms * 1e-3;
    if (e->outcome != CUTUNE_OUTCOME_CORRECT || !(s > 0) || !isfinite(s))
        return CUTUNE_OK;
    if (isnan(e->energy_j) && !isnan(e->power_w))
        e->energy_j = e->power_w * s;
    else if (isnan(e->power_w) && !isnan(e->energy_j))
        e->power_w = e->energy_j / s;
    return CUTUNE_OK;
}

int cutune__t4_write_energy(json_t *meas, double energy_j, double power_w)
{
    int bad = 0;
    if (energy_j > 0 && isfinite(energy_j))
        bad |= json_array_append_new(meas, json_pack("{s:s, s:f, s:s}", "name",
                                                     "energy", "value",
                                                     energy_j, "unit", "J"));
    if (power_w > 0 && isfinite(power_w))
        bad |= json_array_append_new(meas, json_pack("{s:s, s:f, s:s}", "name",
                                                     "power", "value", power_w,
                                                     "unit", "W"));
    return bad;
}

int cutune__t4_lacks_energy(const cutune__t4 *t4, const char *path,
                            cutune_objective objective, char *msg, size_t len)
{
    if (len)
        msg[0] = '\0';
    if (objective == CUTUNE_OBJECTIVE_TIME)
        return 0;
    for (size_t e = 0; e < t4->n_entries; e++)
        if (t4->entries[e].outcome == CUTUNE_OUTCOME_CORRECT &&
            t4->entries[e].energy_j > 0 && isfinite(t4->entries[e].energy_j))
            return 0;
    snprintf(msg, len,
             "%s: objective %s: no correct result has an energy "
             "measurement (energy or nvml_energy, or a power with the "
             "time)",
             path, cutune_objective_str(objective));
    return 1;
}
