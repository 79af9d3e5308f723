/* The built-in templates, embedded at build time by embed.cmake. */
#ifndef CUTUNE_TEMPLATES_EMBEDDED_H
#define CUTUNE_TEMPLATES_EMBEDDED_H

#include <stddef.h>

typedef struct cutune__template {
    const char *name;
    const char *json; /* the T1 problem */
    size_t json_len;
    const char *source_name; /* the T1 KernelFile it stands for */
    const char *source;      /* the kernel template */
    size_t source_len;
} cutune__template;

extern const cutune__template cutune__templates[];
extern const size_t cutune__template_count;

/* The prelude the templates share (templates/cutune_prelude.cuh), which
 * each includes by this name: built in, there is no folder for NVRTC to
 * find it in, so the loader puts the text in place of the #include. */
#define CUTUNE__TEMPLATE_PRELUDE_NAME "cutune_prelude.cuh"
extern const char cutune__template_prelude[];
extern const size_t cutune__template_prelude_len;

#endif
