// After a split-K product: C = alpha * (its partial sums, added in order of
// k) + beta * C, rounded as the kernels' own epilogue rounds (alpha * sum,
// then fmaf with beta * C); beta == 0 never reads C. A thread takes four
// consecutive columns of a row, as float4 when every row allows it; a block
// is as wide as C needs (at least a warp) and covers several rows when C is
// narrow.
#include <cuda_runtime.h>

#include "cuda/dense/ladder.cuh"
#include "cuda/launch_cache.cuh"
#include "cuda/sparse/plan_gate.cuh"

namespace {

constexpr int FINISH_THREADS = 256;
constexpr int64_t FINISH_ROW_BLOCKS = 65535; // grid y; more rows loop

template <bool VEC>
__global__ void __launch_bounds__(FINISH_THREADS)
    finish_splits_kernel(const float *partials, int64_t splits, int64_t m, int64_t n,
                         float alpha, float beta, float *c, int64_t ldc, warp_lists_gate lists)
{
    chain_wait();
    chain_release();
    if (lists.plan != nullptr && gate_open(lists))
        return; // the warp lists ran and wrote C
    const int64_t col = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * 4;
    if (col >= n)
        return;
    const int cols = n - col < 4 ? (int)(n - col) : 4;
    const int64_t plane = m * n;
    for (int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; row < m;
         row += (int64_t)gridDim.y * blockDim.y) {
        const float *in = partials + row * n + col;
        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t z = 0; z < splits; ++z, in += plane) {
            if (VEC) {
                const float4 q = *reinterpret_cast<const float4 *>(in);
                // The first layer starts the sum, as a kernel's first product does.
                sum[0] = z == 0 ? q.x : sum[0] + q.x;
                sum[1] = z == 0 ? q.y : sum[1] + q.y;
                sum[2] = z == 0 ? q.z : sum[2] + q.z;
                sum[3] = z == 0 ? q.w : sum[3] + q.w;
            } else {
                for (int j = 0; j < cols; ++j)
                    sum[j] = z == 0 ? in[j] : sum[j] + in[j];
            }
        }
        float *out = c + row * ldc + col;
        float v[4];
        if (VEC && beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4 *>(out);
            v[0] = old.x, v[1] = old.y, v[2] = old.z, v[3] = old.w;
        } else if (beta != 0.0f) {
            for (int j = 0; j < cols; ++j)
                v[j] = out[j];
        }
        for (int j = 0; j < 4; ++j) {
            const float scaled = alpha * sum[j];
            v[j] = beta != 0.0f ? fmaf(beta, v[j], scaled) : scaled;
        }
        if (VEC) {
            *reinterpret_cast<float4 *>(out) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
            for (int j = 0; j < cols; ++j)
                out[j] = v[j];
        }
    }
}

} // namespace

cudaError_t launch_finish_splits(const esmm_gemm_problem_t &p, const float *partials,
                                 const esmm_plan_stats_t *lists_plan, bool planned,
                                 cudaStream_t stream)
{
    const esmm_k_split_t split = esmm_k_split(p.m, p.n, p.k);
    if (split.splits <= 1)
        return cudaSuccess;
    const int64_t chunks = (p.n + 3) / 4;
    int width = 32;
    while (width < FINISH_THREADS && width < chunks)
        width *= 2;
    const dim3 block((unsigned)width, (unsigned)(FINISH_THREADS / width));
    const int64_t row_blocks = (p.m + block.y - 1) / block.y;
    const dim3 grid((unsigned)((chunks + width - 1) / width),
                    (unsigned)(row_blocks < FINISH_ROW_BLOCKS ? row_blocks : FINISH_ROW_BLOCKS));
    // Partial rows are n floats from a 256-byte aligned base.
    const bool vec = p.n % 4 == 0 && p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.c) % 16 == 0;
    auto kernel = vec ? finish_splits_kernel<true> : finish_splits_kernel<false>;
    return launch_chained(kernel, grid, block, 0, stream, partials, split.splits, p.m, p.n,
                          p.alpha, p.beta, p.c, p.ldc,
                          warp_lists_gate{lists_plan, planned, false});
}
