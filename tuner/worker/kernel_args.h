/* Matching a problem's arguments to the parameters a compiled kernel
 * takes: which argument goes to which parameter, and a message naming the
 * argument when they cannot match. Pure logic: the worker supplies what
 * the loaded module says (parameter sizes, which __constant__ variables
 * exist), and tests supply made-up modules. Internal to the tuner. */
#ifndef CUTUNE_TUNER_KERNEL_ARGS_H
#define CUTUNE_TUNER_KERNEL_ARGS_H

#include <stddef.h>

#include "protocol.h"

/* Decides pass[i] (argument i is a kernel parameter) for n arguments,
 * given the kernel's n_params parameter sizes in bytes and, per argument,
 * whether the module declares a __constant__ variable of its name
 * (has_symbol[i], read only for constant-memory arguments).
 *
 * Constant-memory arguments are passed as parameters when the kernel takes
 * one for every argument, and left out when it takes one for every other
 * argument; the others are always passed. A constant-memory argument that
 * is neither passed nor has a variable, a parameter count that fits
 * neither way, or a parameter whose size is not the argument's (8 bytes
 * for a buffer, the type's size for a scalar) fails, with a message naming
 * the argument. Returns 0, or -1 with the message in err. */
int cutune__bind_kernel_args(const cutune__wire_arg *args, size_t n,
                             const size_t *param_sizes, size_t n_params,
                             const unsigned char *has_symbol,
                             unsigned char *pass, char *err, size_t errlen);

#endif
