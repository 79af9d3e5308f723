/* One scalar parameter of every T1 scalar type. Each must arrive with the
 * FillValue the T1 gives it, in a parameter of the right size; the kernel
 * writes the values into `out` (as doubles), or NaN everywhere when any
 * one is wrong, which never validates.
 *
 * The half arrives as its 16 bits (unsigned short, the size of __half):
 * cutune's NVRTC gets no include path to the toolkit's cuda_fp16.h, so a
 * kernel here cannot include it. 0x3e00 is 1.5 in IEEE binary16. */
#define NAN_D __longlong_as_double(0x7ff8000000000000ll)

extern "C" __global__ void scalar_types(double *out, bool b, signed char i8,
                                        unsigned char u8, short i16,
                                        unsigned short u16, int i32,
                                        unsigned int u32, long long i64,
                                        unsigned long long u64,
                                        unsigned short h, float f, double d)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    const bool ok = b == true && i8 == -100 && u8 == 200 && i16 == -30000 &&
                    u16 == 60000 && i32 == -2000000000 &&
                    u32 == 4000000000u && i64 == -123456789012ll &&
                    u64 == 123456789012ull && h == 0x3e00 &&
                    f == 3.25f && d == 6.125;
    double v;
    switch (i) {
    case 0: v = b; break;
    case 1: v = i8; break;
    case 2: v = u8; break;
    case 3: v = i16; break;
    case 4: v = u16; break;
    case 5: v = i32; break;
    case 6: v = u32; break;
    case 7: v = (double)i64; break;
    case 8: v = (double)u64; break;
    case 9: v = h == 0x3e00 ? 1.5 : -1.0; break;
    case 10: v = f; break;
    case 11: v = d; break;
    default: v = 0.0; break;
    }
    if (i < 16)
        out[i] = ok ? v : NAN_D;
}
