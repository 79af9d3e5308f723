/* Energy per launch from NVML's total-energy counter, as a pure function
 * of what the GPU worker read while it launched a kernel back to back
 * (worker_energy.c), so that the arithmetic is tested without a GPU
 * (tests/common/test_energy.c).
 *
 * The counter (millijoules since the driver loaded) does not move with
 * every read: it steps every few tens of ms, ~100 ms on recent data-centre
 * GPUs (bench/energy_probe measures it). Reading it before and after a
 * window would count anything from one step too few to one too many, ±40%
 * of a 250 ms window. So windows run from one step to a later one: the
 * worker polls the counter and a step's time is the midpoint between the
 * last read of the old value and the first of the new; the energy between
 * two steps is exact to the counter's resolution, and the launches in the
 * same span come from the launches completed over time (interpolated
 * between the worker's marks). Whatever lag the counter has behind the
 * GPU is the same at both ends of a window and cancels while the kernel
 * runs steadily; the lead before the first window covers the ramp from
 * idle and that lag. */
#ifndef CUTUNE_TUNER_ENERGY_H
#define CUTUNE_TUNER_ENERGY_H

#include <stddef.h>

/* A read of the counter at host time t_s (seconds, any origin). */
typedef struct cutune__energy_read {
    double t_s;
    unsigned long long mj;
} cutune__energy_read;

/* By t_s, `launches` launches had completed (a fraction while one runs
 * is what interpolation gives; the worker marks whole ones). The first
 * mark is the start: 0 launches, when the first was queued. */
typedef struct cutune__launch_mark {
    double t_s;
    double launches;
} cutune__launch_mark;

/* A power reading (NVML's instantaneous power, or its average where that
 * is all there is) at t_s. */
typedef struct cutune__power_read {
    double t_s;
    double w;
} cutune__power_read;

typedef struct cutune__energy_plan {
    double lead_s;   /* after the start, before the first window */
    double window_s; /* each window spans at least this, step to step */
    size_t windows;  /* wanted */
} cutune__energy_plan;

/* Why there is no figure; stable values (the worker's reply carries
 * them). */
typedef enum cutune__energy_why {
    CUTUNE__ENERGY_OK = 0,
    CUTUNE__ENERGY_STILL = 1,        /* the counter never moved */
    CUTUNE__ENERGY_FEW_STEPS = 2,    /* too few steps for one window */
    CUTUNE__ENERGY_RESET = 3,        /* the counter went back (a driver
                                        reload) in every window */
    CUTUNE__ENERGY_NO_LAUNCHES = 4,  /* no launch completed in a window */
    CUTUNE__ENERGY_UNAVAILABLE = 5,  /* no counter to read (the worker
                                        says why) */
    CUTUNE__ENERGY_LAUNCH_FAILED = 6 /* a launch failed (the worker says
                                        why) */
} cutune__energy_why;

/* A window whose counter says more than this is not a reading but a
 * counter that restarted (no GPU draws 100 kW). */
#define CUTUNE__ENERGY_MAX_W 1e5

typedef struct cutune__energy_figures {
    double energy_j;   /* median of the windows' J per launch; NaN: none */
    double energy_rsd; /* their relative standard deviation (sample
                          standard deviation / mean); NaN with fewer
                          than two windows */
    double power_w;    /* the windows' mean power: counter_w */
    double sampled_w;  /* mean of the power reads within the windows
                          (a check); NaN without any */
    double counter_w;  /* the windows' energy over their time */
    size_t windows;    /* closed, of plan->windows */
    double launches;   /* in the windows */
    double seconds;    /* the windows' span */
    double step_s;     /* mean time between the counter's steps after the
                          lead; NaN with fewer than two */
    cutune__energy_why why;
} cutune__energy_figures;

/* The windows the reads make, at most plan->windows of them, each from a
 * step of the counter at or after start + lead to the first step at least
 * window_s later whose time a later launch mark brackets (so that the
 * launches in it are known). Reads and marks in time order. Returns the
 * number of windows closed; `out` (may be NULL while the worker only asks
 * whether it is done) gets the figures. */
size_t cutune__energy_windows(const cutune__energy_read *reads, size_t n_reads,
                              const cutune__launch_mark *marks, size_t n_marks,
                              const cutune__power_read *power, size_t n_power,
                              const cutune__energy_plan *plan,
                              cutune__energy_figures *out);

/* A fixed English phrase for `why` ("the energy counter did not move"). */
const char *cutune__energy_why_str(cutune__energy_why why);

#endif
