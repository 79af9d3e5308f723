/* Energy and power measurements of T4 results (t4_energy.c): the names
 * cutune and Kernel Tuner give them, their units, reading and writing. */
#ifndef CUTUNE_TUNER_T4_ENERGY_H
#define CUTUNE_TUNER_T4_ENERGY_H

#include <stddef.h>

#include <jansson.h>

#include "t4.h"

/* 1 for a measurement name t4_energy.c reads (energy, power,
 * nvml_energy, nvml_power), else 0. */
int cutune__t4_is_energy_name(const char *name);

/* e->energy_j and e->power_w from result `res` (results[i] of `path`),
 * after e's outcome and time are read: NaN when absent; the one missing
 * from the other and the time, for a correct result. A unit that is
 * neither J nor W (nor a multiple) or a value that is not a finite
 * number, 0 or more, fails with the message in err. */
cutune_status cutune__t4_read_energy(const char *path, json_t *res, size_t i,
                                     cutune__t4_entry *e, char *err,
                                     size_t errlen);

/* Appends `energy` (J) and `power` (W) to the measurements `meas`, each
 * only when above 0 and finite. Nonzero when memory ran out. */
int cutune__t4_write_energy(json_t *meas, double energy_j, double power_w);

#endif
