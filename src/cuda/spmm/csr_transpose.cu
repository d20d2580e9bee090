// W^T in CSR, built stably: a radix sort of the column indices (stable, with
// each entry's position as payload) groups the entries by column in W's
// order, and one kernel fills the transpose from that order: per sorted
// entry its row (a binary search of row_ptr) and weight, per column where its
// run of entries starts.
#include <cub/device/device_for.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "cuda/spmm/csr_layout.cuh"

namespace {

__device__ int64_t first_at_least(const int32_t *sorted, int64_t count, int64_t key)
{
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

__global__ void csr_transpose_fill_kernel(esmm_csr_view_t w, const int32_t *sorted_columns,
                                          const int32_t *order, int32_t *t_row_ptr,
                                          int32_t *t_col_idx, float *t_values)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < w.nnz || i <= w.cols;
         i += stride) {
        if (i <= w.cols)
            t_row_ptr[i] = (int32_t)first_at_least(sorted_columns, w.nnz, i);
        if (i < w.nnz) {
            const int32_t e = order[i];
            // The row holding entry e: the last r with row_ptr[r] <= e.
            t_col_idx[i] = (int32_t)(first_at_least(w.row_ptr, w.rows + 1, (int64_t)e + 1) - 1);
            if (t_values != nullptr)
                t_values[i] = w.values[e];
        }
    }
}

// order[i] = i: the payload the sort carries, each entry's position in W.
struct write_position {
    int32_t *order;
    __device__ void operator()(int64_t i) const { order[i] = (int32_t)i; }
};

cudaError_t sort_and_fill(const esmm_csr_view_t &w, int32_t *columns, int32_t *order,
                          void *scratch, size_t scratch_bytes, int32_t *t_row_ptr,
                          int32_t *t_col_idx, float *t_values, cudaStream_t stream)
{
    int32_t *sorted_columns = columns + w.nnz;
    int32_t *sorted_order = order + w.nnz;
    cudaError_t err = cub::DeviceFor::Bulk(w.nnz, write_position{order}, stream);
    if (err == cudaSuccess)
        err = cub::DeviceRadixSort::SortPairs(scratch, scratch_bytes, w.col_idx, sorted_columns,
                                              order, sorted_order, w.nnz, 0, 32, stream);
    if (err != cudaSuccess)
        return err;
    const int64_t items = w.nnz > w.cols + 1 ? w.nnz : w.cols + 1;
    const int64_t blocks = (items + 255) / 256;
    csr_transpose_fill_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
        w, sorted_columns, sorted_order, t_row_ptr, t_col_idx, t_values);
    return cudaGetLastError();
}

} // namespace

cudaError_t build_csr_transpose(const esmm_csr_view_t &w, int32_t *t_row_ptr, int32_t *t_col_idx,
                                float *t_values, cudaStream_t stream)
{
    size_t scratch_bytes = 0;
    cudaError_t err = cub::DeviceRadixSort::SortPairs(
        nullptr, scratch_bytes, w.col_idx, (int32_t *)nullptr, (const int32_t *)nullptr,
        (int32_t *)nullptr, w.nnz, 0, 32, stream);
    if (err != cudaSuccess)
        return err;
    // Sort keys and payload, each twice (in and out), then CUB's scratch.
    const size_t pairs_bytes = ((size_t)w.nnz * 2 * sizeof(int32_t) + 255) & ~(size_t)255;
    void *memory = nullptr;
    err = cudaMalloc(&memory, 2 * pairs_bytes + scratch_bytes);
    if (err != cudaSuccess)
        return err;
    int32_t *columns = static_cast<int32_t *>(memory);
    int32_t *order = reinterpret_cast<int32_t *>(static_cast<char *>(memory) + pairs_bytes);
    err = sort_and_fill(w, columns, order, static_cast<char *>(memory) + 2 * pairs_bytes,
                        scratch_bytes, t_row_ptr, t_col_idx, t_values, stream);
    const cudaError_t synced = cudaStreamSynchronize(stream);
    cudaFree(memory);
    return err != cudaSuccess ? err : synced;
}
