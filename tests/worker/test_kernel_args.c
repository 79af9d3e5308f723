/* Matching T1 arguments to a kernel's parameters (kernel_args.c) against
 * made-up modules, and the half conversion of scalar arguments. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "dtype.h"
#include "kernel_args.h"

static cutune__wire_arg vec(const char *name, int symbol)
{
    cutune__wire_arg a;
    memset(&a, 0, sizeof a);
    a.is_vector = 1;
    a.dtype = CUTUNE__DT_FLOAT;
    a.is_symbol = (uint32_t)symbol;
    snprintf(a.symbol, sizeof a.symbol, "%s", name);
    return a;
}

static cutune__wire_arg scalar(const char *name, cutune__dtype t)
{
    cutune__wire_arg a;
    memset(&a, 0, sizeof a);
    a.dtype = (uint32_t)t;
    snprintf(a.symbol, sizeof a.symbol, "%s", name);
    return a;
}

/* The hub's convolution: three pointers, the third also a __constant__
 * variable; and the same arguments with a kernel that takes two. */
static void constant_both_ways(void)
{
    cutune__wire_arg a[3] = {vec("out", 0), vec("in", 0), vec("filter", 1)};
    unsigned char has[3] = {0, 0, 1}, pass[3];
    char err[512];
    size_t three[3] = {8, 8, 8};
    CHECK_INT(
        cutune__bind_kernel_args(a, 3, three, 3, has, pass, err, sizeof err),
        0);
    CHECK(pass[0] && pass[1] && pass[2]);
    size_t two[2] = {8, 8};
    CHECK_INT(
        cutune__bind_kernel_args(a, 3, two, 2, has, pass, err, sizeof err), 0);
    CHECK(pass[0] && pass[1] && !pass[2]);
    /* Neither a parameter nor a variable for it. */
    has[2] = 0;
    CHECK_INT(
        cutune__bind_kernel_args(a, 3, two, 2, has, pass, err, sizeof err),
        -1);
    CHECK_CONTAINS(err, "Arguments[2] ('filter')");
    CHECK_CONTAINS(err, "__constant__");
}

static void sizes_and_counts(void)
{
    cutune__wire_arg a[3] = {vec("out", 0), vec("in", 0),
                             scalar("n", CUTUNE__DT_DOUBLE)};
    unsigned char has[3] = {0}, pass[3];
    char err[512];
    size_t takes_int[3] = {8, 8, 4};
    CHECK_INT(cutune__bind_kernel_args(a, 3, takes_int, 3, has, pass, err,
                                       sizeof err),
              -1);
    CHECK_CONTAINS(err, "Arguments[2] ('n')");
    CHECK_CONTAINS(err, "takes 4 bytes");
    size_t more[4] = {8, 8, 8, 4};
    /* The double fits the third parameter; the fourth has no argument. */
    CHECK_INT(
        cutune__bind_kernel_args(a, 3, more, 4, has, pass, err, sizeof err),
        -1);
    CHECK_CONTAINS(err, "parameter 3 (4 bytes) has no argument");
    a[2] = scalar("n", CUTUNE__DT_INT32);
    size_t fewer[2] = {8, 8};
    CHECK_INT(
        cutune__bind_kernel_args(a, 3, fewer, 2, has, pass, err, sizeof err),
        -1);
    CHECK_CONTAINS(err, "Arguments[2] ('n')");
    CHECK_CONTAINS(err, "none is left");
    a[2] = scalar("n", CUTUNE__DT_INT32);
    CHECK_INT(
        cutune__bind_kernel_args(a, 2, more, 4, has, pass, err, sizeof err),
        -1);
    CHECK_CONTAINS(err, "has no argument");
    CHECK_INT(cutune__bind_kernel_args(a, 3, takes_int, 3, has, pass, err,
                                       sizeof err),
              0);
}

static void half_values(void)
{
    CHECK_INT(cutune__half_from_double(1.0), 0x3c00);
    CHECK_INT(cutune__half_from_double(-2.0), 0xc000);
    CHECK_INT(cutune__half_from_double(0.0), 0x0000);
    CHECK_INT(cutune__half_from_double(65504.0), 0x7bff);
    CHECK_INT(cutune__half_from_double(1e6), 0x7c00);
    CHECK_INT(cutune__half_from_double(INFINITY), 0x7c00);
    CHECK(cutune__half_from_double(NAN) > 0x7c00);
    /* The smallest subnormal, and a tie rounded to even. */
    CHECK_INT(cutune__half_from_double(5.960464477539063e-08), 0x0001);
    CHECK_INT(cutune__half_from_double(1.0 + 1.0 / 2048), 0x3c00);
    CHECK_INT(cutune__half_from_double(1.0 + 3.0 / 2048), 0x3c02);
}

int main(void)
{
    constant_both_ways();
    sizes_and_counts();
    half_values();
    return check_finish();
}
