/* matmul: C = A * B in single precision, row-major, A of M x K, B of K x N,
 * C of M x N (ProblemSize = [M, N, K]).
 *
 * A block computes a BM x BN tile of C. It walks K in steps of BK, staging
 * a BM x BK tile of A and a BK x BN tile of B in shared memory; each of its
 * (BM / TM) * (BN / TN) threads keeps a TM x TN block of C in registers and
 * updates it with the outer product of TM values of A and TN values of B per
 * step of k, so each shared-memory value read feeds TN (or TM) FMAs. With
 * TM = TN = 1 and BM = BN = BK = TILE_WIDTH this is the classic
 * shared-memory tiled kernel.
 *
 * The A tile is stored transposed (As[k][m]) so that a thread's TM values
 * of A are contiguous, like its TN values of B: both are read as float4
 * when the thread tile allows. Transposing on the store makes a warp write
 * down columns of As; PAD floats of padding per row move those writes to
 * different banks.
 *
 * Every element of C is accumulated by one thread with one fmaf per k, in
 * increasing k, in every configuration (the zeros that pad the edge tiles
 * add nothing), so all configurations produce bit-identical results and
 * cutune's validation against the default configuration is exact.
 *
 * Tunables (set with -D by cutune):
 *   BM, BN, BK    the block tile: rows and columns of C, depth in K
 *   TM, TN        the thread tile: rows and columns of C per thread
 *   VEC           floats per global load of A and B (and per store of C):
 *                 1, 2 or 4; used where the matrix width is a multiple of
 *                 VEC, else the loads fall back to single floats
 *   PAD           floats of padding per row of the shared tiles
 *   DB            1: double buffering, the next tiles are loaded from global
 *                 memory into registers while the current ones are used, and
 *                 stored to the second shared buffer, one barrier per step
 *   UNROLL        unroll factor of the loop over the BK values of k
 *   SPLIT         1: the thread tile is made of (TM / 4) x (TN / 4) blocks of
 *                 4 x 4 spread across the block tile, BM / (TM / 4) rows and
 *                 BN / (TN / 4) columns apart, instead of one TM x TN block.
 *                 Eight neighbouring threads then read 128 consecutive
 *                 bytes of a shared tile per float4 load, where with TN = 8
 *                 they would read every other 16 bytes of 256 (two passes
 *                 through the banks), and the stores of C by a warp are
 *                 contiguous. Needs TM and TN multiples of 4.
 *
 * The threads per block, (BM / TM) * (BN / TN), are not a parameter of
 * their own: the T1 LocalSize computes them. A block_size_x parameter tied
 * to the tiles by a condition would make almost every one-parameter move of
 * a search invalid (changing TM alone breaks the equation), cutting the
 * space into islands a local search cannot cross. cutune then seeds the
 * search with the configuration whose block size is nearest to the
 * occupancy suggestion.
 *
 * Sizes that are not multiples of the tiles are handled by guards: loads
 * outside A or B read zeros, stores outside C are skipped. The T1 conditions
 * exclude tiles that do not divide, more than 1024 threads and more than
 * 48 KiB of shared memory.
 */
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef DB
#define DB 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef SPLIT
#define SPLIT 0
#endif

#define THREADS ((BM / TM) * (BN / TN))
/* Kept for T1 copies of this template that still tune block_size_x. */
#if defined(block_size_x) && block_size_x != THREADS
#error block_size_x must be (BM / TM) * (BN / TN)
#endif
#if BM % TM != 0 || BN % TN != 0 || BK % VEC != 0 || BN % VEC != 0
#error the thread tile must divide the block tile and VEC the tile widths
#endif
#if VEC != 1 && VEC != 2 && VEC != 4
#error VEC must be 1, 2 or 4
#endif
#if SPLIT && (TM % 4 != 0 || TN % 4 != 0)
#error SPLIT needs TM and TN multiples of 4
#endif

/* Row (within the block tile) of a thread's i-th row of C, and column of
 * its j-th column; see SPLIT. */
#if SPLIT
#define ROW_OF(ty, i) (((i) / 4) * (BM / (TM / 4)) + (ty) * 4 + (i) % 4)
#define COL_OF(tx, j) (((j) / 4) * (BN / (TN / 4)) + (tx) * 4 + (j) % 4)
#else
#define ROW_OF(ty, i) ((ty) * TM + (i))
#define COL_OF(tx, j) ((tx) * TN + (j))
#endif

/* #pragma does not expand macros; _Pragma of a built string does. */
#define MM_STRING(x) #x
#define MM_UNROLL(n) _Pragma(MM_STRING(unroll n))

#define STAGES (DB ? 2 : 1)
/* Vectors of VEC floats in a tile of A and of B, and per thread. */
#define A_VECS (BM * BK / VEC)
#define B_VECS (BK * BN / VEC)
#define A_LOADS ((A_VECS + THREADS - 1) / THREADS)
#define B_LOADS ((B_VECS + THREADS - 1) / THREADS)

#if VEC == 4
typedef float4 mm_vec;
#elif VEC == 2
typedef float2 mm_vec;
#else
typedef float mm_vec;
#endif

struct mm_vals {
    float v[VEC];
};

__device__ __forceinline__ mm_vals from_vec(float v)
{
    mm_vals r;
    r.v[0] = v;
    return r;
}
__device__ __forceinline__ mm_vals from_vec(float2 v)
{
    mm_vals r;
    r.v[0] = v.x;
    r.v[1] = v.y;
    return r;
}
__device__ __forceinline__ mm_vals from_vec(float4 v)
{
    mm_vals r;
    r.v[0] = v.x;
    r.v[1] = v.y;
    r.v[2] = v.z;
    r.v[3] = v.w;
    return r;
}

/* VEC floats of a row of a row-major matrix of `width` columns starting at
 * (row, col), zeros outside it. */
__device__ __forceinline__ mm_vals
load_vals(const float *__restrict__ m, int rows, int width, int row, int col,
          bool aligned)
{
    mm_vals r;
    if (aligned) {
        if (row < rows && col < width)
            return from_vec(
                *(const mm_vec *)&m[(long long)row * width + col]);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            r.v[e] = 0.0f;
        return r;
    }
#pragma unroll
    for (int e = 0; e < VEC; e++)
        r.v[e] = row < rows && col + e < width
                     ? m[(long long)row * width + col + e]
                     : 0.0f;
    return r;
}

/* The kernel's steps, each inlined into it: global to registers, registers
 * to shared memory, a step of BK values of k, and the stores of C. */
typedef float mm_a_tiles[STAGES][BK][BM + PAD];
typedef float mm_b_tiles[STAGES][BK][BN + PAD];

/* Global to registers: vector l of the A tile is row l / (BK / VEC),
 * column (l % (BK / VEC)) * VEC; consecutive threads read consecutive
 * vectors of a row. Likewise for B with BN / VEC vectors per row. */
__device__ __forceinline__ void
load_tiles(mm_vals (&a_stage)[A_LOADS], mm_vals (&b_stage)[B_LOADS],
           const float *__restrict__ A, const float *__restrict__ B, int M,
           int N, int K, int tid, int m0, int n0, int k0, bool a_aligned,
           bool b_aligned)
{
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int l = tid + i * THREADS;
        if (A_VECS % THREADS == 0 || l < A_VECS)
            a_stage[i] = load_vals(A, M, K, m0 + l / (BK / VEC),
                                   k0 + (l % (BK / VEC)) * VEC, a_aligned);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int l = tid + i * THREADS;
        if (B_VECS % THREADS == 0 || l < B_VECS)
            b_stage[i] = load_vals(B, K, N, k0 + l / (BN / VEC),
                                   n0 + (l % (BN / VEC)) * VEC, b_aligned);
    }
}

/* Registers to shared buffer `s`, the A tile transposed. */
__device__ __forceinline__ void
store_tiles(mm_a_tiles &As, mm_b_tiles &Bs, int s,
            const mm_vals (&a_stage)[A_LOADS],
            const mm_vals (&b_stage)[B_LOADS], int tid)
{
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int l = tid + i * THREADS;
        if (A_VECS % THREADS == 0 || l < A_VECS) {
#pragma unroll
            for (int e = 0; e < VEC; e++)
                As[s][(l % (BK / VEC)) * VEC + e][l / (BK / VEC)] =
                    a_stage[i].v[e];
        }
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int l = tid + i * THREADS;
        if (B_VECS % THREADS == 0 || l < B_VECS) {
#pragma unroll
            for (int e = 0; e < VEC; e++)
                Bs[s][l / (BN / VEC)][(l % (BN / VEC)) * VEC + e] =
                    b_stage[i].v[e];
        }
    }
}

/* The outer products of the BK values of k of shared buffer `cur`, in
 * increasing k: one fmaf per k for every element of the thread tile. */
__device__ __forceinline__ void multiply_tiles(float (&acc)[TM][TN],
                                               const mm_a_tiles &As,
                                               const mm_b_tiles &Bs, int cur,
                                               int tx, int ty)
{
    MM_UNROLL(UNROLL)
    for (int kk = 0; kk < BK; kk++) {
        float a[TM], b[TN];
#if TM % 4 == 0 && (BM + PAD) % 4 == 0
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
            const float4 v = *(const float4 *)&As[cur][kk][ROW_OF(ty, i)];
            a[i] = v.x;
            a[i + 1] = v.y;
            a[i + 2] = v.z;
            a[i + 3] = v.w;
        }
#else
#pragma unroll
        for (int i = 0; i < TM; i++)
            a[i] = As[cur][kk][ROW_OF(ty, i)];
#endif
#if TN % 4 == 0 && (BN + PAD) % 4 == 0
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const float4 v = *(const float4 *)&Bs[cur][kk][COL_OF(tx, j)];
            b[j] = v.x;
            b[j + 1] = v.y;
            b[j + 2] = v.z;
            b[j + 3] = v.w;
        }
#else
#pragma unroll
        for (int j = 0; j < TN; j++)
            b[j] = Bs[cur][kk][COL_OF(tx, j)];
#endif
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

/* The thread tile to C, VEC floats at a time where C's rows allow. */
__device__ __forceinline__ void store_c(float *__restrict__ C,
                                        const float (&acc)[TM][TN], int M,
                                        int N, int m0, int n0, int tx, int ty,
                                        bool b_aligned)
{
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int row = m0 + ROW_OF(ty, i);
        if (row >= M)
            continue;
        float *c = C + (long long)row * N;
#if TN % VEC == 0 && VEC > 1
        if (b_aligned) {
#pragma unroll
            for (int j = 0; j < TN; j += VEC) {
                const int col = n0 + COL_OF(tx, j);
                if (col < N) {
#if VEC == 4
                    *(float4 *)&c[col] = make_float4(
                        acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
#else
                    *(float2 *)&c[col] = make_float2(acc[i][j], acc[i][j + 1]);
#endif
                }
            }
            continue;
        }
#endif
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int col = n0 + COL_OF(tx, j);
            if (col < N)
                c[col] = acc[i][j];
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul(float *__restrict__ C, const float *__restrict__ A,
       const float *__restrict__ B, int M, int N, int K)
{
    __shared__ __align__(16) mm_a_tiles As;
    __shared__ __align__(16) mm_b_tiles Bs;

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;
    const bool a_aligned = K % VEC == 0;
    const bool b_aligned = N % VEC == 0;

    mm_vals a_stage[A_LOADS], b_stage[B_LOADS];

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;

    const int tiles = (K + BK - 1) / BK;
    load_tiles(a_stage, b_stage, A, B, M, N, K, tid, m0, n0, 0, a_aligned,
               b_aligned);
    store_tiles(As, Bs, 0, a_stage, b_stage, tid);
    __syncthreads();

    for (int t = 0; t < tiles; t++) {
        const int cur = DB ? (t & 1) : 0;
        if (DB && t + 1 < tiles)
            load_tiles(a_stage, b_stage, A, B, M, N, K, tid, m0, n0,
                       (t + 1) * BK, a_aligned, b_aligned);

        multiply_tiles(acc, As, Bs, cur, tx, ty);

        if (t + 1 < tiles) {
            if (!DB) {
                /* The loads only fill registers, so they go out before
                 * the barrier that lets the only buffer be overwritten. */
                load_tiles(a_stage, b_stage, A, B, M, N, K, tid, m0, n0,
                           (t + 1) * BK, a_aligned, b_aligned);
                __syncthreads();
            }
            store_tiles(As, Bs, DB ? cur ^ 1 : 0, a_stage, b_stage, tid);
            __syncthreads();
        }
    }

    store_c(C, acc, M, N, m0, n0, tx, ty, b_aligned);
}
