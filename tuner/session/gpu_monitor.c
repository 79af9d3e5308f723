/* The conditions of a measurement, read through NVML (common/nvml_lib.c,
 * which loads it at run time). */
#include "gpu_monitor.h"

#include <stdio.h>
#include <stdlib.h>

#include "nvml_lib.h"

struct cutune__gpu_monitor {
    cutune__nvml *nvml;
};

cutune__gpu_monitor *cutune__gpu_monitor_open(const char *uuid, char *why,
                                              size_t whylen)
{
    cutune__nvml *n = cutune__nvml_open(uuid, why, whylen);
    if (!n)
        return NULL;
    cutune__gpu_monitor *m = calloc(1, sizeof *m);
    if (!m) {
        cutune__nvml_close(n);
        if (why && whylen)
            snprintf(why, whylen, "out of memory");
        return NULL;
    }
    m->nvml = n;
    return m;
}

void cutune__gpu_monitor_close(cutune__gpu_monitor *m)
{
    if (!m)
        return;
    cutune__nvml_close(m->nvml);
    free(m);
}

void cutune__gpu_monitor_sample(cutune__gpu_monitor *m, pid_t ours,
                                cutune__gpu_sample *out)
{
    out->sm_clock_mhz = out->temperature_c = out->other_processes = -1;
    if (!m)
        return;
    unsigned v;
    if (cutune__nvml_clock_mhz(m->nvml, CUTUNE__NVML_CLOCK_SM, &v) ==
        CUTUNE__NVML_OK)
        out->sm_clock_mhz = (int)v;
    if (cutune__nvml_temperature_c(m->nvml, &v) == CUTUNE__NVML_OK)
        out->temperature_c = (int)v;
    out->other_processes =
        cutune__nvml_other_processes(m->nvml, (unsigned)ours);
}

int cutune__gpu_monitor_energy(cutune__gpu_monitor *m, char *why,
                               size_t whylen)
{
    unsigned long long mj;
    int st = cutune__nvml_energy_mj(m->nvml, &mj);
    if (st == CUTUNE__NVML_OK)
        return 0;
    if (why && whylen)
        snprintf(why, whylen, "nvmlDeviceGetTotalEnergyConsumption: %s%s",
                 cutune__nvml_error(m->nvml, st),
                 st == CUTUNE__NVML_NOT_SUPPORTED
                     ? " (the counter needs a Volta or newer GPU, not a "
                       "MIG instance)"
                     : "");
    return -1;
}
