/* Conditions of measurement, read through NVML when the driver provides it:
 * the SM clock and temperature to record with each result, whether
 * another process is using the GPU during a tune, and whether its energy
 * counter can be read. NVML is loaded at run time (common/nvml_lib.h), so
 * cutune builds and runs without it. */
#ifndef CUTUNE_TUNER_GPU_MONITOR_H
#define CUTUNE_TUNER_GPU_MONITOR_H

#include <sys/types.h>

typedef struct cutune__gpu_monitor cutune__gpu_monitor;

/* NULL when NVML is absent or does not know the device; `why` (may be
 * NULL) then says which. */
cutune__gpu_monitor *cutune__gpu_monitor_open(const char *uuid, char *why,
                                              size_t whylen);
void cutune__gpu_monitor_close(cutune__gpu_monitor *m);

typedef struct cutune__gpu_sample {
    int sm_clock_mhz;    /* -1 when unknown */
    int temperature_c;   /* -1 when unknown */
    int other_processes; /* compute processes other than `ours`; -1 when
                            unknown */
} cutune__gpu_sample;

/* Reads the current conditions; `ours` is the worker's pid, which is not
 * counted as another process. */
void cutune__gpu_monitor_sample(cutune__gpu_monitor *m, pid_t ours,
                                cutune__gpu_sample *out);

/* 0 when NVML's energy counter can be read; else -1 and `why` (may be
 * NULL) says what NVML answered. */
int cutune__gpu_monitor_energy(cutune__gpu_monitor *m, char *why,
                               size_t whylen);

#endif
