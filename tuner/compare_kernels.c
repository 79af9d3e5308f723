#include "compare_kernels.h"

/* Output comparison on the GPU, so validating 2^26 floats costs a kernel,
 * not a copy to the host. One kernel per element type; NaN never matches.
 * The largest error is kept as the bits of a non-negative double, which
 * order as unsigned integers do. */
const char cutune__compare_source[] =
    "template <typename T>\n"
    "__device__ void compare(const T *out, const T *ref, unsigned long long n,\n"
    "                        double atol, double rtol,\n"
    "                        unsigned long long *result)\n"
    "{\n"
    "    unsigned long long bad = 0;\n"
    "    double worst = 0.0;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x\n"
    "             + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        double o = (double)out[i], r = (double)ref[i];\n"
    "        double d = fabs(o - r);\n"
    "        if (!(d <= atol + rtol * fabs(r))) bad++;\n"
    "        if (d != d) d = __longlong_as_double(0x7ff0000000000000LL);\n"
    "        if (d > worst) worst = d;\n"
    "    }\n"
    "    if (bad) atomicAdd(&result[0], bad);\n"
    "    if (worst > 0.0)\n"
    "        atomicMax(&result[1], (unsigned long long)__double_as_longlong(worst));\n"
    "}\n"
    "#define CMP(NAME, T) extern \"C\" __global__ void NAME(const T *o, \\\n"
    "    const T *r, unsigned long long n, double a, double rt, \\\n"
    "    unsigned long long *res) { compare<T>(o, r, n, a, rt, res); }\n"
    "/* Argument fills, the same values as splitmix64 stepped from the seed:\n"
    "   element i takes the (i+1)-th output. Uniform in [0, value) for\n"
    "   floating types, [0, value] for integers; `value` when constant. */\n"
    "template <typename T>\n"
    "__device__ void fill(T *out, unsigned long long n, unsigned long long seed,\n"
    "                     double value, int random, int integer)\n"
    "{\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x\n"
    "             + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        double v = value;\n"
    "        if (random) {\n"
    "            unsigned long long z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;\n"
    "            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;\n"
    "            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;\n"
    "            z = z ^ (z >> 31);\n"
    "            double u = (double)(z >> 11) * 1.1102230246251565e-16;\n"
    "            v = integer ? floor(u * (value + 1.0)) : u * value;\n"
    "        }\n"
    "        out[i] = (T)v;\n"
    "    }\n"
    "}\n"
    "#define FILL(NAME, T) extern \"C\" __global__ void NAME(T *o, \\\n"
    "    unsigned long long n, unsigned long long s, double v, int r, int i) \\\n"
    "    { fill<T>(o, n, s, v, r, i); }\n"
    "FILL(fill_float, float)\n"
    "FILL(fill_double, double)\n"
    "FILL(fill_int8, signed char)\n"
    "FILL(fill_uint8, unsigned char)\n"
    "FILL(fill_int16, short)\n"
    "FILL(fill_uint16, unsigned short)\n"
    "FILL(fill_int32, int)\n"
    "FILL(fill_uint32, unsigned int)\n"
    "FILL(fill_int64, long long)\n"
    "FILL(fill_uint64, unsigned long long)\n"
    "CMP(cmp_float, float)\n"
    "CMP(cmp_double, double)\n"
    "CMP(cmp_int8, signed char)\n"
    "CMP(cmp_uint8, unsigned char)\n"
    "CMP(cmp_int16, short)\n"
    "CMP(cmp_uint16, unsigned short)\n"
    "CMP(cmp_int32, int)\n"
    "CMP(cmp_uint32, unsigned int)\n"
    "CMP(cmp_int64, long long)\n"
    "CMP(cmp_uint64, unsigned long long)\n";

const char *const cutune__compare_names[CUTUNE__DT_COUNT] = {
    "cmp_float", "cmp_double", "cmp_int8",  "cmp_uint8",  "cmp_int16",
    "cmp_uint16", "cmp_int32", "cmp_uint32", "cmp_int64", "cmp_uint64"};


const char *const cutune__fill_names[CUTUNE__DT_COUNT] = {
    "fill_float", "fill_double", "fill_int8",  "fill_uint8",  "fill_int16",
    "fill_uint16", "fill_int32", "fill_uint32", "fill_int64", "fill_uint64"};
