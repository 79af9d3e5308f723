/* GPU test: the worker's fill kernels give exactly the values of splitmix64
 * stepped from the seed (element i takes the (i+1)-th output), for a
 * floating and an integer type, and the constant fill. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "check.h"
#include "compare_kernels.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
        return check_skip("no CUDA device");
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", prop.major,
             prop.minor);
    const char *opts[] = {arch};
    nvrtcProgram prog;
    CHECK_INT(nvrtcCreateProgram(&prog, cutune__compare_source, "h.cu", 0,
                                 NULL, NULL),
              NVRTC_SUCCESS);
    CHECK_INT(nvrtcCompileProgram(prog, 1, opts), NVRTC_SUCCESS);
    size_t size = 0;
    nvrtcGetCUBINSize(prog, &size);
    char *cubin = malloc(size);
    nvrtcGetCUBIN(prog, cubin);
    nvrtcDestroyProgram(&prog);
    cudaLibrary_t lib;
    CHECK_INT(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0),
              cudaSuccess);
    free(cubin);

    enum { N = 100003 };
    static const int types[2] = {CUTUNE__DT_FLOAT, CUTUNE__DT_INT32};
    for (int t = 0; t < 2; t++) {
        for (int random = 0; random < 2; random++) {
            cudaKernel_t k;
            CHECK_INT(
                cudaLibraryGetKernel(&k, lib, cutune__fill_names[types[t]]),
                cudaSuccess);
            void *dev;
            cudaMalloc(&dev, N * 4);
            unsigned long long n = N, seed = 12345 + t;
            double value = t ? 100.0 : 2.5;
            int integer = t;
            void *params[] = {&dev, &n, &seed, &value, &random, &integer};
            dim3 grid = {264, 1, 1}, block = {256, 1, 1};
            CHECK_INT(
                cudaLaunchKernel((const void *)k, grid, block, params, 0, 0),
                cudaSuccess);
            CHECK_INT(cudaDeviceSynchronize(), cudaSuccess);
            uint32_t *host = malloc(N * 4);
            cudaMemcpy(host, dev, N * 4, cudaMemcpyDeviceToHost);
            uint64_t state = seed;
            size_t same = 0;
            for (size_t i = 0; i < N; i++) {
                double v = value;
                if (random) {
                    double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53;
                    v = integer ? floor(u * (value + 1.0)) : u * value;
                }
                if (integer) {
                    int32_t want = (int32_t)v, got;
                    memcpy(&got, &host[i], 4);
                    same += got == want;
                } else {
                    float want = (float)v, got;
                    memcpy(&got, &host[i], 4);
                    same += got == want;
                }
            }
            CHECK_INT(same, N);
            free(host);
            cudaFree(dev);
        }
    }
    cudaLibraryUnload(lib);
    return check_finish();
}
