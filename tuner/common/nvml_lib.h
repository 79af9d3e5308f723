/* NVML, loaded at run time (libnvidia-ml.so.1) so that cutune builds and
 * runs without it: the few queries cutune makes of a GPU, for the
 * conditions of a measurement in the tuning process (gpu_monitor.c), the
 * energy and power of a candidate in the GPU worker (worker_energy.c),
 * and the GPU tests and bench/energy_probe.
 *
 * Read only. cutune never changes a GPU's clocks, power limit or any
 * other setting: this module resolves NVML's Get functions and nothing
 * else, and no other file of the tree calls NVML
 * (tests/common/run_nvml_readonly.sh fails on an nvmlDeviceSet*, a reset
 * or a clear anywhere in the sources). Every function returns NVML's own
 * status (0: success); one this NVML lacks is CUTUNE__NVML_NO_FUNCTION.
 * A handle may be used from one thread at a time. */
#ifndef CUTUNE_TUNER_NVML_LIB_H
#define CUTUNE_TUNER_NVML_LIB_H

#include <stddef.h>

typedef struct cutune__nvml cutune__nvml;

/* NVML's status values cutune looks at. */
enum {
    CUTUNE__NVML_OK = 0,
    CUTUNE__NVML_NOT_SUPPORTED = 3,
    CUTUNE__NVML_INSUFFICIENT_SIZE = 7,
    CUTUNE__NVML_NO_FUNCTION = 13
};

/* NVML's clock domains. */
enum { CUTUNE__NVML_CLOCK_SM = 1, CUTUNE__NVML_CLOCK_MEM = 2 };

/* The device of `uuid` ("GPU-..."; a MIG device's "MIG-..." works too).
 * NULL when NVML is absent, cannot start or does not know the device;
 * `why` (may be NULL) then says which. */
cutune__nvml *cutune__nvml_open(const char *uuid, char *why, size_t whylen);
void cutune__nvml_close(cutune__nvml *n);

/* NVML's own words for a status (its nvmlErrorString). */
const char *cutune__nvml_error(const cutune__nvml *n, int status);

/* Energy used since the driver loaded, mJ (Volta and newer; not on a MIG
 * device). */
int cutune__nvml_energy_mj(cutune__nvml *n, unsigned long long *mj);

/* Power now, mW. Where NVML has it, the instantaneous field
 * (NVML_FI_DEV_POWER_INSTANT, *instant 1); else nvmlDeviceGetPowerUsage,
 * which on Ampere and newer (but GA100) is an average over the last
 * second (*instant 0), too slow to tell one candidate from the one
 * before. */
int cutune__nvml_power_mw(cutune__nvml *n, unsigned *mw, int *instant);
/* nvmlDeviceGetPowerUsage alone, mW (bench/energy_probe compares). */
int cutune__nvml_power_usage_mw(cutune__nvml *n, unsigned *mw);

int cutune__nvml_clock_mhz(cutune__nvml *n, int domain, unsigned *mhz);
/* The application clock the GPU runs kernels at, as its owner set it. */
int cutune__nvml_app_clock_mhz(cutune__nvml *n, int domain, unsigned *mhz);
/* The power limit its owner set (nvmlDeviceGetPowerManagementLimit) and
 * the one enforced, mW. */
int cutune__nvml_power_limit_mw(cutune__nvml *n, unsigned *mw);
int cutune__nvml_enforced_limit_mw(cutune__nvml *n, unsigned *mw);
int cutune__nvml_temperature_c(cutune__nvml *n, unsigned *c);

/* How many compute processes other than `ours` use the GPU; -1 when
 * NVML cannot tell. */
int cutune__nvml_other_processes(cutune__nvml *n, unsigned ours);

#endif
