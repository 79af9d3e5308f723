/* Python's arithmetic on int64 and double, for the tree evaluator
 * (expr_eval.c) and compiled programs (expr_prog.c) alike. Inline in a
 * header because the program runner calls them once per instruction. */
#ifndef CUTUNE_SEARCH_EXPR_ARITH_H
#define CUTUNE_SEARCH_EXPR_ARITH_H

#include <math.h>
#include <stdint.h>

/* Python's operators on int64 and double. The tree evaluator and compiled
 * programs (below) both call these, so they cannot disagree; each returns
 * AR_OK with the result, or why the operation fails. */
enum arith_status {
    AR_OK,
    AR_OVERFLOW,
    AR_DIV_ZERO,
    AR_MOD_ZERO,
    AR_ZERO_NEG_POW,
    AR_NEG_FRAC_POW,
    AR_FLOAT_OVERFLOW
};

static inline int py_floordiv(int64_t x, int64_t y, int64_t *r)
{
    if (y == 0)
        return AR_DIV_ZERO;
    if (x == INT64_MIN && y == -1)
        return AR_OVERFLOW;
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0)))
        q--;
    *r = q;
    return AR_OK;
}

static inline int py_mod(int64_t x, int64_t y, int64_t *r)
{
    if (y == 0)
        return AR_MOD_ZERO;
    if (y == -1) { /* INT64_MIN % -1 traps on x86 */
        *r = 0;
        return AR_OK;
    }
    int64_t m = x % y;
    if (m != 0 && ((m < 0) != (y < 0)))
        m += y;
    *r = m;
    return AR_OK;
}

/* x ** y for y >= 0. */
static inline int py_ipow(int64_t x, int64_t y, int64_t *out)
{
    int64_t r = 1;
    /* Squaring the base overflows only if the result would too, as long as
     * a higher exponent bit is still to come. */
    for (int64_t base = x, e = y; e;) {
        if ((e & 1) && __builtin_mul_overflow(r, base, &r))
            return AR_OVERFLOW;
        e >>= 1;
        if (e && __builtin_mul_overflow(base, base, &base))
            return AR_OVERFLOW;
    }
    *out = r;
    return AR_OK;
}

/* int ** negative int, which is a float. */
static inline int py_ipow_neg(int64_t x, int64_t y, double *r)
{
    if (x == 0)
        return AR_ZERO_NEG_POW;
    *r = pow((double)x, (double)y);
    return AR_OK;
}

static inline int py_truediv_int(int64_t x, int64_t y, double *r)
{
    if (y == 0)
        return AR_DIV_ZERO;
    *r = (double)x / (double)y;
    return AR_OK;
}

static inline int py_truediv(double x, double y, double *r)
{
    if (y == 0)
        return AR_DIV_ZERO;
    *r = x / y;
    return AR_OK;
}

/* Python's float // and %: the remainder takes the divisor's sign and the
 * quotient is floored, correcting fmod's rounding at the edges. */
static void float_divmod(double x, double y, double *q, double *r)
{
    double m = fmod(x, y);
    double d = (x - m) / y;
    if (m != 0) {
        if ((y < 0) != (m < 0)) {
            m += y;
            d -= 1.0;
        }
    } else {
        m = copysign(0.0, y);
    }
    double fd;
    if (d != 0) {
        fd = floor(d);
        if (d - fd > 0.5)
            fd += 1.0;
    } else {
        fd = copysign(0.0, x / y);
    }
    *q = fd;
    *r = m;
}

static inline int py_ffloordiv(double x, double y, double *r)
{
    double m;
    if (y == 0)
        return AR_DIV_ZERO;
    float_divmod(x, y, r, &m);
    return AR_OK;
}

static inline int py_fmod(double x, double y, double *r)
{
    double q;
    if (y == 0)
        return AR_MOD_ZERO;
    float_divmod(x, y, &q, r);
    return AR_OK;
}

static inline int py_fpow(double x, double y, double *out)
{
    if (x == 0 && y < 0)
        return AR_ZERO_NEG_POW;
    if (x < 0 && isfinite(x) && isfinite(y) && y != floor(y))
        return AR_NEG_FRAC_POW;
    double r = pow(x, y);
    if (isinf(r) && isfinite(x) && isfinite(y))
        return AR_FLOAT_OVERFLOW;
    *out = r;
    return AR_OK;
}

#endif
