/* Arguments to kernel parameters (see kernel_args.h). */
#include "kernel_args.h"

#include <stdio.h>
#include <string.h>

#include "dtype.h"

static size_t arg_bytes(const cutune__wire_arg *a)
{
    return a->is_vector ? sizeof(void *)
                        : cutune__dtype_size((cutune__dtype)a->dtype);
}

static const char *arg_kind(const cutune__wire_arg *a)
{
    return a->is_vector ? "a buffer, passed as a pointer" : "a scalar";
}

/* The first argument, in the order they are passed, whose size is not
 * its parameter's; with a count mismatch, the first one without a
 * parameter or the first parameter without an argument. */
static int check_sizes(const cutune__wire_arg *args, size_t n,
                       const size_t *param_sizes, size_t n_params,
                       const unsigned char *pass, char *err, size_t errlen)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pass[i])
            continue;
        if (k == n_params) {
            snprintf(err, errlen,
                     "KernelSpecification.Arguments[%zu] "
                     "('%s'): the kernel takes %zu parameters, and none is "
                     "left for this argument",
                     i, args[i].symbol, n_params);
            return -1;
        }
        size_t want = arg_bytes(&args[i]);
        if (param_sizes[k] != want) {
            snprintf(err, errlen,
                     "KernelSpecification.Arguments[%zu] "
                     "('%s'): the kernel's parameter %zu takes %zu bytes; "
                     "the argument is %s of %zu bytes",
                     i, args[i].symbol, k, param_sizes[k], arg_kind(&args[i]),
                     want);
            return -1;
        }
        k++;
    }
    if (k < n_params) {
        snprintf(err, errlen,
                 "KernelSpecification.Arguments: the kernel "
                 "takes %zu parameters; its parameter %zu (%zu bytes) has no "
                 "argument",
                 n_params, k, param_sizes[k]);
        return -1;
    }
    return 0;
}

int cutune__bind_kernel_args(const cutune__wire_arg *args, size_t n,
                             const size_t *param_sizes, size_t n_params,
                             const unsigned char *has_symbol,
                             unsigned char *pass, char *err, size_t errlen)
{
    size_t n_symbols = 0;
    for (size_t i = 0; i < n; i++)
        n_symbols += args[i].is_symbol != 0;
    /* With no constant-memory argument both readings are the same; with
     * some, the parameter count tells whether the kernel takes them. */
    int pass_symbols = n_params == n;
    for (size_t i = 0; i < n; i++)
        pass[i] = !args[i].is_symbol || pass_symbols;
    if (n_params != n && n_params != n - n_symbols) {
        /* Report against the reading closest to the kernel's count. */
        size_t gap_all = n > n_params ? n - n_params : n_params - n;
        size_t without = n - n_symbols;
        size_t gap_without =
            without > n_params ? without - n_params : n_params - without;
        for (size_t i = 0; i < n; i++)
            pass[i] = !args[i].is_symbol || gap_all < gap_without;
    }
    if (check_sizes(args, n, param_sizes, n_params, pass, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (args[i].is_symbol && !pass[i] && !has_symbol[i]) {
            snprintf(err, errlen,
                     "KernelSpecification.Arguments[%zu] "
                     "('%s'): constant memory, but the module declares no "
                     "__constant__ variable of that name and the kernel "
                     "takes no parameter for it",
                     i, args[i].symbol);
            return -1;
        }
    return 0;
}
