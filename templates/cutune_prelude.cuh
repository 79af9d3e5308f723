/* cutune_prelude.cuh: the switches the built-in templates share, included
 * by each with #include "cutune_prelude.cuh". Built in, the loader puts
 * this text in place of that line (the copy embedded with the templates;
 * tuner/problem/t1_kernel.c); a template loaded from disk finds it beside
 * itself, through NVRTC's -I of the kernel's folder.
 *
 * Tunables (set with -D by cutune; 0 when not):
 *   USE_LDG       load through the read-only data cache: CUTUNE_LOAD(p) is
 *                 __ldg(p), else *(p)
 *   USE_RESTRICT  declare the pointers __restrict__: CUTUNE_RESTRICT
 */
#ifndef CUTUNE_PRELUDE_CUH
#define CUTUNE_PRELUDE_CUH

#ifndef USE_LDG
#define USE_LDG 0
#endif
#ifndef USE_RESTRICT
#define USE_RESTRICT 0
#endif

#if USE_RESTRICT
#define CUTUNE_RESTRICT __restrict__
#else
#define CUTUNE_RESTRICT
#endif

#if USE_LDG
#define CUTUNE_LOAD(p) __ldg(p)
#else
#define CUTUNE_LOAD(p) (*(p))
#endif

#endif
