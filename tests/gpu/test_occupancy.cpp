// GPU test: cutune's C occupancy suggestion equals the CUDA runtime's C++
// template cudaOccupancyMaxPotentialBlockSize for the same kernels, over
// several dynamic shared-memory sizes and block-size limits.
//
// The kernels are compiled with NVRTC at run time, with different register
// and shared-memory footprints and __launch_bounds__, so the search sees
// limits from threads, registers and shared memory.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>
#include <nvrtc.h>

#include "check.h"
#include "occupancy.h"

static const char source[] = R"(
extern "C" __global__ void __launch_bounds__(BOUND)
light(float *c, const float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = 2.0f * a[i];
}

// Many live values per thread, to push register use up.
extern "C" __global__ void heavy(float *c, const float *a, int n)
{
    float acc[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 64; k++) acc[k] = a[(i + k * 977) % n];
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r < 8; r++)
#pragma unroll
        for (int k = 0; k < 64; k++) { acc[k] = acc[k] * acc[(k + r) % 64] + 1.0f; s += acc[k]; }
    if (i < n) c[i] = s;
}

extern "C" __global__ void shared_hungry(float *c, const float *a, int n)
{
    __shared__ float tile[SMEM_FLOATS];
    extern __shared__ float dyn[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % SMEM_FLOATS] = i < n ? a[i] : 0.0f;
    dyn[0] = 0.0f;
    __syncthreads();
    if (i < n) c[i] = tile[(threadIdx.x + 1) % SMEM_FLOATS] + dyn[0];
}
)";

static std::vector<char> compile(const char *bound, const char *smem,
                                 const char *arch)
{
    nvrtcProgram prog;
    std::vector<char> cubin;
    if (nvrtcCreateProgram(&prog, source, "occ.cu", 0, nullptr, nullptr) !=
        NVRTC_SUCCESS)
        return cubin;
    const char *opts[] = {bound, smem, arch};
    if (nvrtcCompileProgram(prog, 3, opts) == NVRTC_SUCCESS) {
        size_t size = 0;
        nvrtcGetCUBINSize(prog, &size);
        cubin.resize(size);
        nvrtcGetCUBIN(prog, cubin.data());
    } else {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        std::vector<char> log(n + 1);
        nvrtcGetProgramLog(prog, log.data());
        fprintf(stderr, "%s\n", log.data());
    }
    nvrtcDestroyProgram(&prog);
    return cubin;
}

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
        return check_skip("no CUDA device");
    cudaDeviceProp prop;
    CHECK_INT(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", prop.major,
             prop.minor);

    const char *bounds[] = {"-DBOUND=1024", "-DBOUND=256", "-DBOUND=96"};
    const char *smems[] = {"-DSMEM_FLOATS=256", "-DSMEM_FLOATS=8192"};
    const char *names[] = {"light", "heavy", "shared_hungry"};
    const size_t dyn[] = {0, 1024, 20000};
    const int limits[] = {0, 100, 257, 1024};
    int compared = 0;
    for (const char *bound : bounds) {
        for (const char *smem : smems) {
            std::vector<char> cubin = compile(bound, smem, arch);
            CHECK(!cubin.empty());
            if (cubin.empty())
                continue;
            cudaLibrary_t lib;
            CHECK_INT(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr,
                                          0, nullptr, nullptr, 0),
                      cudaSuccess);
            for (const char *name : names) {
                cudaKernel_t k;
                CHECK_INT(cudaLibraryGetKernel(&k, lib, name), cudaSuccess);
                for (size_t d : dyn) {
                    for (int limit : limits) {
                        int grid_cpp = -1, block_cpp = -1, grid_c = -2,
                            block_c = -2;
                        cudaError_t e_cpp = cudaOccupancyMaxPotentialBlockSize(
                            &grid_cpp, &block_cpp, k, d, limit);
                        cudaError_t e_c =
                            cutune__occupancy_max_potential_block_size(
                                &grid_c, &block_c, (const void *)k, d, limit);
                        CHECK_INT(e_c, e_cpp);
                        CHECK_INT(block_c, block_cpp);
                        CHECK_INT(grid_c, grid_cpp);
                        if (block_c != block_cpp || grid_c != grid_cpp)
                            fprintf(stderr,
                                    "%s %s %s dyn=%zu limit=%d: C %d/%d, C++ "
                                    "%d/%d\n",
                                    name, bound, smem, d, limit, grid_c,
                                    block_c, grid_cpp, block_cpp);
                        compared++;
                    }
                }
            }
            cudaLibraryUnload(lib);
        }
    }
    printf("compared %d kernel/shared-memory/limit combinations on %s\n",
           compared, prop.name);
    CHECK(compared == 3 * 2 * 3 * 3 * 4);
    return check_finish();
}
