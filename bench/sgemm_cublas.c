/* The matmul benchmark's anchor: cublasSgemm on row-major M x K times
 * K x N single-precision matrices (default 4096^3), default math mode
 * (FP32, no TF32), timed like cutune times a candidate: warm-up launches,
 * then launches timed one by one with a CUDA event pair each, the L2
 * overwritten before each outside the timed region; prints the median.
 *
 * Usage: sgemm_cublas [M N K] [DEVICE]
 * The last line is machine-readable: "gflops=<median GFLOP/s>".
 *
 * cuBLAS is linked dynamically (the toolkit ships no static cuBLAS here):
 * libcublas.so.13 and libcublasLt.so.13 must be found at run time, e.g.
 * with LD_LIBRARY_PATH=/usr/local/cuda/lib64. */
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define RUNS   20
#define WARMUP 3

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    fprintf(stderr, "sgemm_cublas: %s: %s\n", what, cudaGetErrorString(e));
    return 0;
}

static int blas_ok(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 1;
    fprintf(stderr, "sgemm_cublas: %s: cuBLAS status %d\n", what, (int)s);
    return 0;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int m = 4096, n = 4096, k = 4096, device = 0;
    if (argc >= 4) {
        m = atoi(argv[1]);
        n = atoi(argv[2]);
        k = atoi(argv[3]);
    }
    if (argc >= 5)
        device = atoi(argv[4]);
    if (m <= 0 || n <= 0 || k <= 0) {
        fprintf(stderr, "usage: sgemm_cublas [M N K] [DEVICE]\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    if (!cuda_ok(cudaSetDevice(device), "cudaSetDevice") ||
        !cuda_ok(cudaGetDeviceProperties(&prop, device),
                 "cudaGetDeviceProperties"))
        return 3;

    const size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float *host = malloc((na > nb ? na : nb) * sizeof *host);
    float *a = NULL, *b = NULL, *c = NULL;
    void *flush = NULL;
    size_t flush_bytes = 2 * (size_t)prop.l2CacheSize;
    if (flush_bytes < ((size_t)8 << 20))
        flush_bytes = (size_t)8 << 20;
    if (!host || !cuda_ok(cudaMalloc((void **)&a, na * 4), "cudaMalloc") ||
        !cuda_ok(cudaMalloc((void **)&b, nb * 4), "cudaMalloc") ||
        !cuda_ok(cudaMalloc((void **)&c, nc * 4), "cudaMalloc") ||
        !cuda_ok(cudaMalloc(&flush, flush_bytes), "cudaMalloc"))
        return 4;
    /* Uniform in [0, 1), as cutune's Random fill. */
    unsigned long long state = 1;
    for (size_t i = 0; i < (na > nb ? na : nb); i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        host[i] = (float)((state >> 40) * 0x1.0p-24);
    }
    cudaMemcpy(a, host, na * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(b, host, nb * 4, cudaMemcpyHostToDevice);
    free(host);

    cublasHandle_t h;
    if (!blas_ok(cublasCreate(&h), "cublasCreate") ||
        !blas_ok(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH),
                 "cublasSetMathMode"))
        return 4;
    const float alpha = 1.0f, beta = 0.0f;
    /* Row-major C = A B is column-major C^T = B^T A^T: the same call with
     * the operands swapped and no transposition. */
#define SGEMM()                                                               \
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k,     \
                &beta, c, n)
    for (int i = 0; i < WARMUP; i++)
        if (!blas_ok(SGEMM(), "cublasSgemm"))
            return 4;
    cudaEvent_t ev[2 * RUNS];
    for (int i = 0; i < 2 * RUNS; i++)
        cudaEventCreate(&ev[i]);
    for (int i = 0; i < RUNS; i++) {
        cudaMemsetAsync(flush, i & 0xff, flush_bytes, 0);
        cudaEventRecord(ev[2 * i], 0);
        SGEMM();
        cudaEventRecord(ev[2 * i + 1], 0);
    }
    if (!cuda_ok(cudaDeviceSynchronize(), "timed launches"))
        return 4;
    float ms[RUNS];
    for (int i = 0; i < RUNS; i++)
        cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
    qsort(ms, RUNS, sizeof *ms, by_value);
    const double median = (ms[RUNS / 2 - 1] + ms[RUNS / 2]) / 2.0;
    const double gflops = 2.0 * m * n * (double)k / (median * 1e-3) / 1e9;
    printf("cublasSgemm %dx%dx%d FP32 (default math mode) on %s: "
           "median %.4f ms (min %.4f ms, %d runs), %.1f GFLOP/s\n",
           m, n, k, prop.name, median, ms[0], RUNS, gflops);
    printf("gflops=%.1f\n", gflops);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(flush);
    return 0;
}
