/* NVML loaded at run time (nvml_lib.h): only its Get functions. */
#define _GNU_SOURCE

#include "nvml_lib.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few NVML declarations used, from its documented ABI (no nvml.h is
 * needed to build). */
typedef int nvml_return;
typedef void *nvml_device;
enum { NVML_TEMPERATURE_GPU = 0, NVML_FI_DEV_POWER_INSTANT = 186 };
enum {
    NVML_VALUE_DOUBLE = 0,
    NVML_VALUE_UINT = 1,
    NVML_VALUE_ULONG = 2,
    NVML_VALUE_ULLONG = 3,
    NVML_VALUE_SLLONG = 4,
    NVML_VALUE_SINT = 5,
    NVML_VALUE_USHORT = 6
};
typedef struct nvml_process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
} nvml_process_info;
typedef struct nvml_field_value {
    unsigned int field_id;
    unsigned int scope_id;
    long long timestamp;
    long long latency_us;
    int value_type;
    nvml_return status;
    union {
        double d;
        unsigned int ui;
        unsigned long ul;
        unsigned long long ull;
        long long sll;
        int si;
        unsigned short us;
    } value;
} nvml_field_value;

typedef nvml_return (*get_uint_fn)(nvml_device, unsigned int *);
typedef nvml_return (*get_domain_fn)(nvml_device, int, unsigned int *);

struct cutune__nvml {
    void *lib;
    nvml_device device;
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*energy)(nvml_device, unsigned long long *);
    nvml_return (*fields)(nvml_device, int, nvml_field_value *);
    get_uint_fn power;
    get_uint_fn power_limit;
    get_uint_fn enforced_limit;
    get_domain_fn clock;
    get_domain_fn app_clock;
    get_domain_fn temperature;
    nvml_return (*processes)(nvml_device, unsigned int *, nvml_process_info *);
    int instant_absent; /* the instantaneous field failed once */
};

static void say(char *why, size_t len, const char *what)
{
    if (why && len)
        snprintf(why, len, "%s", what);
}

/* dlsym's void * to a function pointer, through memcpy as POSIX
 * allows. */
#define RESOLVE(n, field, name)                                               \
    do {                                                                      \
        void *sym__ = dlsym((n)->lib, name);                                  \
        memcpy(&(n)->field, &sym__, sizeof sym__);                            \
    } while (0)

cutune__nvml *cutune__nvml_open(const char *uuid, char *why, size_t whylen)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        say(why, whylen, "NVML (libnvidia-ml.so.1) is not installed");
        return NULL;
    }
    cutune__nvml *n = calloc(1, sizeof *n);
    if (!n) {
        say(why, whylen, "out of memory");
        dlclose(lib);
        return NULL;
    }
    n->lib = lib;
    nvml_return (*init)(void) = NULL;
    nvml_return (*by_uuid)(const char *, nvml_device *) = NULL;
    void *sym = dlsym(lib, "nvmlInit_v2");
    memcpy(&init, &sym, sizeof sym);
    sym = dlsym(lib, "nvmlDeviceGetHandleByUUID");
    memcpy(&by_uuid, &sym, sizeof sym);
    RESOLVE(n, shutdown, "nvmlShutdown");
    RESOLVE(n, error_string, "nvmlErrorString");
    RESOLVE(n, energy, "nvmlDeviceGetTotalEnergyConsumption");
    RESOLVE(n, fields, "nvmlDeviceGetFieldValues");
    RESOLVE(n, power, "nvmlDeviceGetPowerUsage");
    RESOLVE(n, power_limit, "nvmlDeviceGetPowerManagementLimit");
    RESOLVE(n, enforced_limit, "nvmlDeviceGetEnforcedPowerLimit");
    RESOLVE(n, clock, "nvmlDeviceGetClockInfo");
    RESOLVE(n, app_clock, "nvmlDeviceGetApplicationsClock");
    RESOLVE(n, temperature, "nvmlDeviceGetTemperature");
    RESOLVE(n, processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!init || !by_uuid) {
        say(why, whylen, "NVML lacks the functions cutune uses");
        goto fail;
    }
    if (init() != CUTUNE__NVML_OK) {
        say(why, whylen, "NVML could not be initialized");
        goto fail;
    }
    if (by_uuid(uuid, &n->device) != CUTUNE__NVML_OK) {
        say(why, whylen, "NVML does not know the device");
        if (n->shutdown)
            n->shutdown();
        goto fail;
    }
    return n;
fail:
    free(n);
    dlclose(lib);
    return NULL;
}

void cutune__nvml_close(cutune__nvml *n)
{
    if (!n)
        return;
    if (n->shutdown)
        n->shutdown();
    dlclose(n->lib);
    free(n);
}

const char *cutune__nvml_error(const cutune__nvml *n, int status)
{
    const char *s = n && n->error_string ? n->error_string(status) : NULL;
    if (s)
        return s;
    return status == CUTUNE__NVML_NO_FUNCTION ? "Function Not Found"
                                              : "NVML error";
}

int cutune__nvml_energy_mj(cutune__nvml *n, unsigned long long *mj)
{
    return n->energy ? n->energy(n->device, mj) : CUTUNE__NVML_NO_FUNCTION;
}

/* The instantaneous power field in mW; -1 when NVML has none. */
static int instant_mw(cutune__nvml *n, unsigned *mw)
{
    if (!n->fields || n->instant_absent)
        return -1;
    nvml_field_value v;
    memset(&v, 0, sizeof v);
    v.field_id = NVML_FI_DEV_POWER_INSTANT;
    if (n->fields(n->device, 1, &v) != CUTUNE__NVML_OK ||
        v.status != CUTUNE__NVML_OK) {
        n->instant_absent = 1;
        return -1;
    }
    switch (v.value_type) {
    case NVML_VALUE_DOUBLE: *mw = (unsigned)v.value.d; break;
    case NVML_VALUE_UINT: *mw = v.value.ui; break;
    case NVML_VALUE_ULONG: *mw = (unsigned)v.value.ul; break;
    case NVML_VALUE_ULLONG: *mw = (unsigned)v.value.ull; break;
    case NVML_VALUE_SLLONG: *mw = (unsigned)v.value.sll; break;
    case NVML_VALUE_SINT: *mw = (unsigned)v.value.si; break;
    case NVML_VALUE_USHORT: *mw = v.value.us; break;
    default: n->instant_absent = 1; return -1;
    }
    return 0;
}

int cutune__nvml_power_mw(cutune__nvml *n, unsigned *mw, int *instant)
{
    *instant = instant_mw(n, mw) == 0;
    if (*instant)
        return CUTUNE__NVML_OK;
    return cutune__nvml_power_usage_mw(n, mw);
}

int cutune__nvml_power_usage_mw(cutune__nvml *n, unsigned *mw)
{
    return n->power ? n->power(n->device, mw) : CUTUNE__NVML_NO_FUNCTION;
}

int cutune__nvml_clock_mhz(cutune__nvml *n, int domain, unsigned *mhz)
{
    return n->clock ? n->clock(n->device, domain, mhz)
                    : CUTUNE__NVML_NO_FUNCTION;
}

int cutune__nvml_app_clock_mhz(cutune__nvml *n, int domain, unsigned *mhz)
{
    return n->app_clock ? n->app_clock(n->device, domain, mhz)
                        : CUTUNE__NVML_NO_FUNCTION;
}

int cutune__nvml_power_limit_mw(cutune__nvml *n, unsigned *mw)
{
    return n->power_limit ? n->power_limit(n->device, mw)
                          : CUTUNE__NVML_NO_FUNCTION;
}

int cutune__nvml_enforced_limit_mw(cutune__nvml *n, unsigned *mw)
{
    return n->enforced_limit ? n->enforced_limit(n->device, mw)
                             : CUTUNE__NVML_NO_FUNCTION;
}

int cutune__nvml_temperature_c(cutune__nvml *n, unsigned *c)
{
    return n->temperature ? n->temperature(n->device, NVML_TEMPERATURE_GPU, c)
                          : CUTUNE__NVML_NO_FUNCTION;
}

int cutune__nvml_other_processes(cutune__nvml *n, unsigned ours)
{
    if (!n->processes)
        return -1;
    nvml_process_info info[64];
    unsigned int count = 64;
    nvml_return r = n->processes(n->device, &count, info);
    if (r == CUTUNE__NVML_INSUFFICIENT_SIZE)
        return (int)count; /* more than fit: at least that many others */
    if (r != CUTUNE__NVML_OK)
        return -1;
    int others = 0;
    for (unsigned int i = 0; i < count && i < 64; i++)
        others += info[i].pid != ours;
    return others;
}
