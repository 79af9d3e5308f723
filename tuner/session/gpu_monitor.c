#define _GNU_SOURCE

#include "gpu_monitor.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few NVML declarations used, from its documented ABI (no nvml.h is
 * needed to build). */
typedef int nvml_return;
typedef void *nvml_device;
enum { NVML_OK = 0, NVML_INSUFFICIENT_SIZE = 7 };
enum { NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };
typedef struct nvml_process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
} nvml_process_info;

struct cutune__gpu_monitor {
    void *lib;
    nvml_device device;
    nvml_return (*shutdown)(void);
    nvml_return (*clock)(nvml_device, int, unsigned int *);
    nvml_return (*temperature)(nvml_device, int, unsigned int *);
    nvml_return (*processes)(nvml_device, unsigned int *, nvml_process_info *);
};

static void say(char *why, size_t len, const char *what)
{
    if (why && len)
        snprintf(why, len, "%s", what);
}

cutune__gpu_monitor *cutune__gpu_monitor_open(const char *uuid, char *why,
                                              size_t whylen)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        say(why, whylen, "NVML (libnvidia-ml.so.1) is not installed");
        return NULL;
    }
    cutune__gpu_monitor *m = calloc(1, sizeof *m);
    nvml_return (*init)(void) =
        (nvml_return(*)(void))dlsym(lib, "nvmlInit_v2");
    nvml_return (*by_uuid)(const char *, nvml_device *) = (nvml_return(*)(
        const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByUUID");
    if (!m || !init || !by_uuid) {
        say(why, whylen, "NVML lacks the functions cutune uses");
        goto fail;
    }
    m->lib = lib;
    m->shutdown = (nvml_return(*)(void))dlsym(lib, "nvmlShutdown");
    m->clock = (nvml_return(*)(nvml_device, int, unsigned int *))dlsym(
        lib, "nvmlDeviceGetClockInfo");
    m->temperature = (nvml_return(*)(nvml_device, int, unsigned int *))dlsym(
        lib, "nvmlDeviceGetTemperature");
    m->processes =
        (nvml_return(*)(nvml_device, unsigned int *, nvml_process_info *))
            dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (init() != NVML_OK) {
        say(why, whylen, "NVML could not be initialized");
        goto fail;
    }
    if (by_uuid(uuid, &m->device) != NVML_OK) {
        say(why, whylen, "NVML does not know the device");
        if (m->shutdown)
            m->shutdown();
        goto fail;
    }
    return m;
fail:
    free(m);
    dlclose(lib);
    return NULL;
}

void cutune__gpu_monitor_close(cutune__gpu_monitor *m)
{
    if (!m)
        return;
    if (m->shutdown)
        m->shutdown();
    dlclose(m->lib);
    free(m);
}

void cutune__gpu_monitor_sample(cutune__gpu_monitor *m, pid_t ours,
                                cutune__gpu_sample *out)
{
    out->sm_clock_mhz = out->temperature_c = out->other_processes = -1;
    if (!m)
        return;
    unsigned int v;
    if (m->clock && m->clock(m->device, NVML_CLOCK_SM, &v) == NVML_OK)
        out->sm_clock_mhz = (int)v;
    if (m->temperature &&
        m->temperature(m->device, NVML_TEMPERATURE_GPU, &v) == NVML_OK)
        out->temperature_c = (int)v;
    if (m->processes) {
        nvml_process_info info[64];
        unsigned int n = 64;
        nvml_return r = m->processes(m->device, &n, info);
        if (r == NVML_OK || r == NVML_INSUFFICIENT_SIZE) {
            int others = 0;
            for (unsigned int i = 0; i < n && i < 64; i++)
                others += (pid_t)info[i].pid != ours;
            /* More than fit means at least that many others. */
            out->other_processes = r == NVML_OK ? others : (int)n;
        }
    }
}
