// The planner's statistics from the masks: for every k, how many strips of A
// and of B have it set; the work left is the sum over k of their product.
// A block takes KB_PER_BLOCK k-blocks; its threads split the strips, so each
// thread makes only a few independent loads.
#include <cuda_runtime.h>

#include "cuda/sparse/plan.cuh"

namespace {

constexpr int KB_PER_BLOCK = 8;
constexpr int STRIP_GROUPS = 32;
constexpr int THREADS = KB_PER_BLOCK * STRIP_GROUPS;

// The mask byte of an operand that is not skipped by: every k of the block
// that exists.
__device__ unsigned k_block_mask(int64_t kb, int64_t k)
{
    const int64_t left = k - kb * 8;
    return left >= 8 ? 0xffu : (1u << left) - 1u;
}

// Adds this thread's per-bit strip counts of one operand into counts[kb][bit]
// and returns its set-bit total.
__device__ unsigned long long count_strips(const uint8_t *bits, int64_t strips, int64_t kblocks,
                                           int64_t kb, int64_t k, bool skipped_by,
                                           int group, int (*counts)[8], int kb_local)
{
    unsigned long long set = 0;
    int local[8] = {};
    for (int64_t s = group; s < strips; s += STRIP_GROUPS) {
        const unsigned b = bits[s * kblocks + kb];
        set += __popc(b);
        const unsigned used = skipped_by ? b : k_block_mask(kb, k);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            local[i] += (used >> i) & 1u;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i)
        if (local[i])
            atomicAdd(&counts[kb_local][i], local[i]);
    return set;
}

__device__ void add_block_total(unsigned long long value, unsigned long long *target)
{
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x % 32 == 0 && value)
        atomicAdd(target, value);
}

__global__ void __launch_bounds__(THREADS)
    plan_kernel(esmm_masks_t masks, int64_t strips_a, int64_t strips_b, int64_t kblocks,
                int64_t k, int skip, esmm_plan_stats_t *stats)
{
    __shared__ int count_a[KB_PER_BLOCK][8], count_b[KB_PER_BLOCK][8];
    const int kb_local = threadIdx.x % KB_PER_BLOCK, group = threadIdx.x / KB_PER_BLOCK;
    if (threadIdx.x < KB_PER_BLOCK * 8) {
        (&count_a[0][0])[threadIdx.x] = 0;
        (&count_b[0][0])[threadIdx.x] = 0;
    }
    __syncthreads();
    const int64_t kb = blockIdx.x * (int64_t)KB_PER_BLOCK + kb_local;
    unsigned long long set_a = 0, set_b = 0;
    if (kb < kblocks) {
        set_a = count_strips(masks.a_bits, strips_a, kblocks, kb, k, skip & ESMM_SKIP_BY_A,
                             group, count_a, kb_local);
        set_b = count_strips(masks.b_bits, strips_b, kblocks, kb, k, skip & ESMM_SKIP_BY_B,
                             group, count_b, kb_local);
    }
    __syncthreads();
    unsigned long long work = 0;
    if (threadIdx.x < KB_PER_BLOCK * 8)
        work = (unsigned long long)(&count_a[0][0])[threadIdx.x] *
               (unsigned long long)(&count_b[0][0])[threadIdx.x];
    add_block_total(work, &stats->work);
    add_block_total(set_a, &stats->bits_a);
    add_block_total(set_b, &stats->bits_b);
}

} // namespace

cudaError_t launch_plan(const esmm_masks_t &masks, int64_t m, int64_t n, int64_t k,
                        esmm_skip_by_t skip, esmm_plan_stats_t *stats, cudaStream_t stream)
{
    const int64_t strips_a = (m + 31) / 32, strips_b = (n + 31) / 32, kblocks = (k + 7) / 8;
    cudaError_t err = cudaMemsetAsync(stats, 0, sizeof *stats, stream);
    if (err != cudaSuccess)
        return err;
    const int64_t blocks = (kblocks + KB_PER_BLOCK - 1) / KB_PER_BLOCK;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    plan_kernel<<<(unsigned)blocks, THREADS, 0, stream>>>(masks, strips_a, strips_b, kblocks, k,
                                                          (int)skip, stats);
    return cudaGetLastError();
}
