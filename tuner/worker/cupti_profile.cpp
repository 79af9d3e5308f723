/* Hardware counters through CUPTI's range profiler (cupti_profile.h).
 *
 * C++ only because CUDA 13's cupti_profiler_host.h includes <string>; no
 * C++ library feature is used, so the worker needs no more than it did.
 * Every CUPTI function is resolved with dlsym, typed from its declaration
 * in the headers (decltype), so the struct layouts are the toolkit's own.
 *
 * One profile: the profiler initialized, the device checked
 * (cuptiProfilerDeviceSupported says which of vGPU, confidential computing
 * ... stands in the way), the chip's counter availability, a config image
 * for the metrics this chip has, the range profiler enabled on the current
 * context with one user range replayed by us (user replay): each pass
 * prepares outside the range and launches inside it, until CUPTI says all
 * passes are submitted; then the counter data is decoded and evaluated.
 */
#include "cupti_profile.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#define CUPTI_FNS(X)                                                          \
    X(cuptiGetResultString)                                                   \
    X(cuptiProfilerInitialize)                                                \
    X(cuptiProfilerDeviceSupported)                                           \
    X(cuptiDeviceGetChipName)                                                 \
    X(cuptiProfilerGetCounterAvailability)                                    \
    X(cuptiProfilerHostInitialize)                                            \
    X(cuptiProfilerHostDeinitialize)                                          \
    X(cuptiProfilerHostGetMetricProperties)                                   \
    X(cuptiProfilerHostConfigAddMetrics)                                      \
    X(cuptiProfilerHostGetConfigImageSize)                                    \
    X(cuptiProfilerHostGetConfigImage)                                        \
    X(cuptiProfilerHostGetNumOfPasses)                                        \
    X(cuptiProfilerHostEvaluateToGpuValues)                                   \
    X(cuptiRangeProfilerEnable)                                               \
    X(cuptiRangeProfilerDisable)                                              \
    X(cuptiRangeProfilerGetCounterDataSize)                                   \
    X(cuptiRangeProfilerCounterDataImageInitialize)                           \
    X(cuptiRangeProfilerSetConfig)                                            \
    X(cuptiRangeProfilerStart)                                                \
    X(cuptiRangeProfilerStop)                                                 \
    X(cuptiRangeProfilerPushRange)                                            \
    X(cuptiRangeProfilerPopRange)                                             \
    X(cuptiRangeProfilerDecodeData)

struct cutune__cupti {
    void *lib;
#define CUPTI_FIELD(f) decltype(&::f) f;
    CUPTI_FNS(CUPTI_FIELD)
#undef CUPTI_FIELD
    int initialized;
};

typedef CUresult (*ctx_get_current_fn)(CUcontext *);

static void say(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

static void *load_library(char *why, size_t why_len)
{
    const char *env = getenv("CUTUNE_CUPTI");
    if (env && *env) {
        void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            say(why, why_len,
                "CUPTI could not be loaded from "
                "CUTUNE_CUPTI=%s: %s",
                env, dlerror());
        return h;
    }
    static const char *const names[] = {
        "libcupti.so.13",
        "libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    say(why, why_len,
        "CUPTI (libcupti.so.13) is not installed where "
        "cutune looks (the loader's path, /usr/local/cuda/lib64, "
        "/usr/local/cuda/extras/CUPTI/lib64); set CUTUNE_CUPTI to its path");
    return NULL;
}

extern "C" cutune__cupti *cutune__cupti_open(char *why, size_t why_len)
{
    void *lib = load_library(why, why_len);
    if (!lib)
        return NULL;
    cutune__cupti *c = (cutune__cupti *)calloc(1, sizeof *c);
    if (!c) {
        say(why, why_len, "out of memory");
        dlclose(lib);
        return NULL;
    }
    c->lib = lib;
#define CUPTI_RESOLVE(f)                                                      \
    c->f = (decltype(&::f))dlsym(lib, #f);                                    \
    if (!c->f) {                                                              \
        say(why, why_len,                                                     \
            "the CUPTI found lacks %s (CUDA 13's range "                      \
            "profiler is needed)",                                            \
            #f);                                                              \
        dlclose(lib);                                                         \
        free(c);                                                              \
        return NULL;                                                          \
    }
    CUPTI_FNS(CUPTI_RESOLVE)
#undef CUPTI_RESOLVE
    return c;
}

/* What a CUPTI error means for the caller: refused, unsupported, or
 * something else. */
static int classify(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return CUTUNE__COUNTERS_REFUSED;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        return CUTUNE__COUNTERS_UNSUPPORTED;
    default: return CUTUNE__COUNTERS_FAILED;
    }
}

static int fail(const cutune__cupti *c, CUptiResult r, const char *what,
                char *why, size_t why_len)
{
    const char *text = NULL;
    if (c->cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text)
        text = "unknown CUPTI error";
    int state = classify(r);
    if (state == CUTUNE__COUNTERS_REFUSED)
        say(why, why_len,
            "reading GPU performance counters is not "
            "permitted for this user (%s: %s); see "
            "https://developer.nvidia.com/ERR_NVGPUCTRPERM",
            what, text);
    else
        say(why, why_len, "%s: %s", what, text);
    return state;
}

/* Whether the device can be profiled; the first obstacle in `why`. */
static int device_supported(const cutune__cupti *c, int device, char *why,
                            size_t why_len)
{
    CUpti_Profiler_DeviceSupported_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
    p.cuDevice = device;
    p.api = CUPTI_PROFILER_RANGE_PROFILING;
    CUptiResult r = c->cuptiProfilerDeviceSupported(&p);
    if (r != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerDeviceSupported", why, why_len);
    if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUTUNE__COUNTERS_READ;
    const char *what = "this device or its configuration";
    if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        what = "the GPU's architecture (compute capability 7.5 or later is "
               "needed)";
    else if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        what = p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED
                   ? "this virtual GPU, where profiling is disabled"
                   : "this virtual GPU";
    else if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        what = "confidential computing, which is on";
    else if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        what = "a crypto-mining processor";
    else if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        what = "WSL";
    else if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        what = "SLI, which is on";
    say(why, why_len, "CUPTI cannot profile on %s", what);
    return CUTUNE__COUNTERS_UNSUPPORTED;
}

/* Everything one profile allocates, released by release(). */
typedef struct session {
    const cutune__cupti *c;
    CUcontext ctx;
    uint8_t *avail;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    CUpti_RangeProfiler_Object *range;
    uint8_t *data;
    size_t data_size;
    int user_range;     /* 0: the range is the kernel (auto range) */
    const char **names; /* the metrics the chip has */
    size_t *index;      /* their positions in the caller's list */
    size_t n;
} session;

static void release(session *s)
{
    if (s->range) {
        CUpti_RangeProfiler_Disable_Params p;
        memset(&p, 0, sizeof p);
        p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
        p.pRangeProfilerObject = s->range;
        s->c->cuptiRangeProfilerDisable(&p);
    }
    if (s->host) {
        CUpti_Profiler_Host_Deinitialize_Params p;
        memset(&p, 0, sizeof p);
        p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
        p.pHostObject = s->host;
        s->c->cuptiProfilerHostDeinitialize(&p);
    }
    free(s->avail);
    free(s->config);
    free(s->data);
    free(s->names);
    free(s->index);
}

/* The context, the chip, its counter availability and the host object. */
static int open_host(session *s, int device, char *why, size_t why_len)
{
    const cutune__cupti *c = s->c;
    CUptiResult r;
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000,
                                         cudaEnableDefault,
                                         &q) != cudaSuccess ||
        !fn || ((ctx_get_current_fn)fn)(&s->ctx) != CUDA_SUCCESS || !s->ctx) {
        say(why, why_len, "no CUDA driver context to profile in");
        return CUTUNE__COUNTERS_FAILED;
    }
    CUpti_Device_GetChipName_Params chip;
    memset(&chip, 0, sizeof chip);
    chip.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
    chip.deviceIndex = (size_t)device;
    if ((r = c->cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiDeviceGetChipName", why, why_len);
    CUpti_Profiler_GetCounterAvailability_Params av;
    memset(&av, 0, sizeof av);
    av.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    av.ctx = s->ctx;
    if ((r = c->cuptiProfilerGetCounterAvailability(&av)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerGetCounterAvailability", why, why_len);
    s->avail = (uint8_t *)malloc(av.counterAvailabilityImageSize + 1);
    if (!s->avail) {
        say(why, why_len, "out of memory");
        return CUTUNE__COUNTERS_FAILED;
    }
    av.pCounterAvailabilityImage = s->avail;
    if ((r = c->cuptiProfilerGetCounterAvailability(&av)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerGetCounterAvailability", why, why_len);
    CUpti_Profiler_Host_Initialize_Params hi;
    memset(&hi, 0, sizeof hi);
    hi.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = chip.pChipName;
    hi.pCounterAvailabilityImage = s->avail;
    if ((r = c->cuptiProfilerHostInitialize(&hi)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerHostInitialize", why, why_len);
    s->host = hi.pHostObject;
    return CUTUNE__COUNTERS_READ;
}

/* The metrics this chip knows (a name it does not is left NaN rather than
 * failing the others), and the config image for them. */
static int build_config(session *s, const char *const *names, size_t n,
                        int *passes, char *why, size_t why_len)
{
    const cutune__cupti *c = s->c;
    CUptiResult r;
    s->names = (const char **)calloc(n + 1, sizeof *s->names);
    s->index = (size_t *)calloc(n + 1, sizeof *s->index);
    if (!s->names || !s->index) {
        say(why, why_len, "out of memory");
        return CUTUNE__COUNTERS_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        CUpti_Profiler_Host_GetMetricProperties_Params mp;
        memset(&mp, 0, sizeof mp);
        mp.structSize =
            CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
        mp.pHostObject = s->host;
        mp.pMetricName = names[i];
        if (c->cuptiProfilerHostGetMetricProperties(&mp) != CUPTI_SUCCESS)
            continue;
        s->names[s->n] = names[i];
        s->index[s->n++] = i;
    }
    if (s->n == 0) {
        say(why, why_len, "this GPU has none of the metrics cutune reads");
        return CUTUNE__COUNTERS_UNSUPPORTED;
    }
    CUpti_Profiler_Host_ConfigAddMetrics_Params am;
    memset(&am, 0, sizeof am);
    am.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    am.pHostObject = s->host;
    am.ppMetricNames = s->names;
    am.numMetrics = s->n;
    if ((r = c->cuptiProfilerHostConfigAddMetrics(&am)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerHostConfigAddMetrics", why, why_len);
    CUpti_Profiler_Host_GetConfigImageSize_Params cs;
    memset(&cs, 0, sizeof cs);
    cs.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
    cs.pHostObject = s->host;
    if ((r = c->cuptiProfilerHostGetConfigImageSize(&cs)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerHostGetConfigImageSize", why, why_len);
    s->config_size = cs.configImageSize;
    s->config = (uint8_t *)malloc(s->config_size + 1);
    if (!s->config) {
        say(why, why_len, "out of memory");
        return CUTUNE__COUNTERS_FAILED;
    }
    CUpti_Profiler_Host_GetConfigImage_Params ci;
    memset(&ci, 0, sizeof ci);
    ci.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    ci.pHostObject = s->host;
    ci.configImageSize = s->config_size;
    ci.pConfigImage = s->config;
    if ((r = c->cuptiProfilerHostGetConfigImage(&ci)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiProfilerHostGetConfigImage", why, why_len);
    CUpti_Profiler_Host_GetNumOfPasses_Params np;
    memset(&np, 0, sizeof np);
    np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    np.configImageSize = s->config_size;
    np.pConfigImage = s->config;
    if (c->cuptiProfilerHostGetNumOfPasses(&np) == CUPTI_SUCCESS)
        *passes = (int)np.numOfPasses;
    return CUTUNE__COUNTERS_READ;
}

/* The range profiler on the context: its counter data image for one
 * range and the configuration: replayed by us (user replay), the range
 * the kernel itself (auto range), or, where that is refused, a range we
 * open around the launch (user range), which then also holds the launch
 * overhead and the synchronization. */
static int open_range(session *s, char *why, size_t why_len)
{
    const cutune__cupti *c = s->c;
    CUptiResult r;
    CUpti_RangeProfiler_Enable_Params en;
    memset(&en, 0, sizeof en);
    en.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    en.ctx = s->ctx;
    if ((r = c->cuptiRangeProfilerEnable(&en)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiRangeProfilerEnable", why, why_len);
    s->range = en.pRangeProfilerObject;
    CUpti_RangeProfiler_GetCounterDataSize_Params ds;
    memset(&ds, 0, sizeof ds);
    ds.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    ds.pRangeProfilerObject = s->range;
    ds.pMetricNames = s->names;
    ds.numMetrics = s->n;
    ds.maxNumOfRanges = 1;
    ds.maxNumRangeTreeNodes = 1;
    if ((r = c->cuptiRangeProfilerGetCounterDataSize(&ds)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiRangeProfilerGetCounterDataSize", why,
                    why_len);
    s->data_size = ds.counterDataSize;
    s->data = (uint8_t *)malloc(s->data_size + 1);
    if (!s->data) {
        say(why, why_len, "out of memory");
        return CUTUNE__COUNTERS_FAILED;
    }
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di;
    memset(&di, 0, sizeof di);
    di.structSize =
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    di.pRangeProfilerObject = s->range;
    di.counterDataSize = s->data_size;
    di.pCounterData = s->data;
    if ((r = c->cuptiRangeProfilerCounterDataImageInitialize(&di)) !=
        CUPTI_SUCCESS)
        return fail(c, r, "cuptiRangeProfilerCounterDataImageInitialize", why,
                    why_len);
    CUpti_RangeProfiler_SetConfig_Params sc;
    memset(&sc, 0, sizeof sc);
    sc.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
    sc.pRangeProfilerObject = s->range;
    sc.configSize = s->config_size;
    sc.pConfig = s->config;
    sc.counterDataImageSize = s->data_size;
    sc.pCounterDataImage = s->data;
    sc.range = s->user_range ? CUPTI_UserRange : CUPTI_AutoRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = 1;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    if ((r = c->cuptiRangeProfilerSetConfig(&sc)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiRangeProfilerSetConfig", why, why_len);
    return CUTUNE__COUNTERS_READ;
}

/* The passes: prepared outside the range, launched inside it, until CUPTI
 * has every pass it needs (capped, should it never say so). */
static int replay(session *s, const cutune__profile_work *work, int *passes,
                  int *launch_error, char *why, size_t why_len)
{
    const cutune__cupti *c = s->c;
    CUptiResult r;
    for (int pass = 0; pass < 256; pass++) {
        int e = work->prepare(work->user);
        if (e == 0)
            e = (int)cudaDeviceSynchronize();
        if (e != 0) {
            *launch_error = e;
            say(why, why_len, "preparing a profiled launch failed");
            return CUTUNE__COUNTERS_NOT_RUN;
        }
        CUpti_RangeProfiler_Start_Params st;
        memset(&st, 0, sizeof st);
        st.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
        st.pRangeProfilerObject = s->range;
        if ((r = c->cuptiRangeProfilerStart(&st)) != CUPTI_SUCCESS)
            return fail(c, r, "cuptiRangeProfilerStart", why, why_len);
        if (s->user_range) {
            CUpti_RangeProfiler_PushRange_Params pu;
            memset(&pu, 0, sizeof pu);
            pu.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
            pu.pRangeProfilerObject = s->range;
            pu.pRangeName = "cutune";
            if ((r = c->cuptiRangeProfilerPushRange(&pu)) != CUPTI_SUCCESS)
                return fail(c, r, "cuptiRangeProfilerPushRange", why, why_len);
        }
        e = work->launch(work->user);
        if (e == 0)
            e = (int)cudaDeviceSynchronize();
        CUptiResult rp = CUPTI_SUCCESS;
        if (s->user_range) {
            CUpti_RangeProfiler_PopRange_Params po;
            memset(&po, 0, sizeof po);
            po.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
            po.pRangeProfilerObject = s->range;
            rp = c->cuptiRangeProfilerPopRange(&po);
        }
        CUpti_RangeProfiler_Stop_Params sp;
        memset(&sp, 0, sizeof sp);
        sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
        sp.pRangeProfilerObject = s->range;
        CUptiResult rs = c->cuptiRangeProfilerStop(&sp);
        if (e != 0) {
            *launch_error = e;
            say(why, why_len, "the profiled launch failed");
            return CUTUNE__COUNTERS_NOT_RUN;
        }
        if (rp != CUPTI_SUCCESS)
            return fail(c, rp, "cuptiRangeProfilerPopRange", why, why_len);
        if (rs != CUPTI_SUCCESS)
            return fail(c, rs, "cuptiRangeProfilerStop", why, why_len);
        *passes = pass + 1;
        if (sp.isAllPassSubmitted)
            return CUTUNE__COUNTERS_READ;
    }
    say(why, why_len, "CUPTI wanted more than 256 passes");
    return CUTUNE__COUNTERS_FAILED;
}

static int evaluate(session *s, double *values, size_t n, char *why,
                    size_t why_len)
{
    const cutune__cupti *c = s->c;
    CUptiResult r;
    CUpti_RangeProfiler_DecodeData_Params dd;
    memset(&dd, 0, sizeof dd);
    dd.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
    dd.pRangeProfilerObject = s->range;
    if ((r = c->cuptiRangeProfilerDecodeData(&dd)) != CUPTI_SUCCESS)
        return fail(c, r, "cuptiRangeProfilerDecodeData", why, why_len);
    double *got = (double *)calloc(s->n, sizeof *got);
    if (!got) {
        say(why, why_len, "out of memory");
        return CUTUNE__COUNTERS_FAILED;
    }
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
    memset(&ev, 0, sizeof ev);
    ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
    ev.pHostObject = s->host;
    ev.pCounterDataImage = s->data;
    ev.counterDataImageSize = s->data_size;
    ev.rangeIndex = 0;
    ev.ppMetricNames = s->names;
    ev.numMetrics = s->n;
    ev.pMetricValues = got;
    if ((r = c->cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS) {
        free(got);
        return fail(c, r, "cuptiProfilerHostEvaluateToGpuValues", why,
                    why_len);
    }
    for (size_t i = 0; i < n; i++)
        values[i] = NAN;
    for (size_t i = 0; i < s->n; i++)
        values[s->index[i]] = got[i];
    free(got);
    return CUTUNE__COUNTERS_READ;
}

extern "C" int cutune__cupti_profile(cutune__cupti *c, int device,
                                     const char *const *names, size_t n,
                                     const cutune__profile_work *work,
                                     double *values, int *passes,
                                     int *range_of_ours, int *launch_error,
                                     char *why, size_t why_len)
{
    for (size_t i = 0; i < n; i++)
        values[i] = NAN;
    *passes = 0;
    *range_of_ours = 0;
    *launch_error = 0;
    why[0] = '\0';
    CUptiResult r;
    if (!c->initialized) {
        CUpti_Profiler_Initialize_Params ip;
        memset(&ip, 0, sizeof ip);
        ip.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
        if ((r = c->cuptiProfilerInitialize(&ip)) != CUPTI_SUCCESS)
            return fail(c, r, "cuptiProfilerInitialize", why, why_len);
        c->initialized = 1;
    }
    int state = device_supported(c, device, why, why_len);
    if (state != CUTUNE__COUNTERS_READ)
        return state;
    /* The kernel as its own range first; a range of ours where CUPTI
     * will not do that (then the figures include the launch overhead). */
    for (int user_range = 0; user_range < 2; user_range++) {
        session s;
        memset(&s, 0, sizeof s);
        s.c = c;
        s.user_range = user_range;
        int planned = 0;
        *passes = 0;
        if ((state = open_host(&s, device, why, why_len)) ==
                CUTUNE__COUNTERS_READ &&
            (state = build_config(&s, names, n, &planned, why, why_len)) ==
                CUTUNE__COUNTERS_READ &&
            (state = open_range(&s, why, why_len)) == CUTUNE__COUNTERS_READ &&
            (state = replay(&s, work, passes, launch_error, why, why_len)) ==
                CUTUNE__COUNTERS_READ)
            state = evaluate(&s, values, n, why, why_len);
        release(&s);
        *range_of_ours = user_range;
        if (state != CUTUNE__COUNTERS_FAILED)
            break;
    }
    return state;
}
