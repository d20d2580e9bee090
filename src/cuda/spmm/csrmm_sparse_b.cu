// C = alpha * W * B + beta * C with W in CSR and B compressed (compress_b.cu),
// touching only B's nonzeros: a group of G lanes per (row of W, panel of
// columns), 32 / G rows per warp, the row's sums in shared memory. For each
// stored entry, in order, the group's lanes take the compressed B row's
// nonzeros one each (a further pass when there are more than G) and add
// w * b to the sum of its column; the columns of one B row are distinct, so
// no two lanes touch one sum. These are the CPU backend's terms in its order
// minus the zeros of B, which add +0 to a sum that is never -0: the bits are
// the CPU backend's. An entry whose B row was left dense, or whose weight is
// not finite (w * 0 must still give NaN), has each lane add its V columns of
// the dense row; a batch of only such entries runs in registers, as the dense
// gather does.
#include "cuda/spmm/csr_layout.cuh"

namespace {

constexpr int SPARSE_WARPS = 8;
constexpr int SPARSE_MIN_CTAS = 4; // per SM: the loop waits on loads, it needs warps
constexpr int SPARSE_UNROLL = 4; // entries whose nonzeros are loaded at once
// Dense entries loaded at once: V floats each, as many bytes in flight as the
// dense gather's four float4.
constexpr int DENSE_UNROLL = 2;
constexpr unsigned FULL = 0xffffffffu;

// A lane's V consecutive columns of a dense B row, read four at a time.
template <int V, bool VEC> struct dense_lane {
    lane_columns<4, VEC> part[V / 4];

    __device__ dense_lane(int64_t col, int64_t n)
    {
        static_assert(V == 4 || V == 8, "a lane holds one or two float4 of a row");
#pragma unroll
        for (int q = 0; q < V / 4; q++)
            part[q] = lane_columns<4, VEC>(col + 4 * q, n);
    }
    __device__ void load(const float *row, float (&v)[V]) const
    {
#pragma unroll
        for (int q = 0; q < V / 4; q++) {
            float four[4];
            part[q].load(row, four);
#pragma unroll
            for (int t = 0; t < 4; t++)
                v[4 * q + t] = four[t];
        }
    }
};

// One stored entry of the batch as the group sees it: where its B row's
// nonzeros start, how many there are (0: no entry; CSR_DENSE_ROW: read the
// row densely), the weight's bits and the row of B.
using staged_entry = int4;

// Entries u .. u + U - 1 of a batch whose entries are all dense (or absent),
// added in registers.
template <int U, int V, bool VEC>
__device__ __forceinline__ void add_dense_entries(const staged_entry *staged, int u,
                                                  const float *b, int64_t ldb,
                                                  const dense_lane<V, VEC> &cols,
                                                  float (&acc)[V])
{
    staged_entry s[U];
    float v[U][V];
#pragma unroll
    for (int i = 0; i < U; i++) {
        s[i] = staged[u + i];
        cols.load(b + (int64_t)s[i].w * ldb, v[i]);
    }
#pragma unroll
    for (int i = 0; i < U; i++) {
        if (s[i].y != CSR_DENSE_ROW)
            continue;
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = csr_add_product(acc[t], __int_as_float(s[i].z), v[i][t]);
    }
}

// The rare parts of one entry: nonzeros past the first G, or a dense row.
template <int G, int V, bool VEC>
__device__ __forceinline__ void add_entry_rest(const staged_entry &s, int slot,
                                            const csr_compressed_b &cb, const float *b,
                                            int64_t ldb, const dense_lane<V, VEC> &cols,
                                            float *sums)
{
    const float w = __int_as_float(s.z);
    for (int p = G; __any_sync(FULL, s.y > p); p += G) {
        if (slot + p < s.y) {
            const int at = s.x + slot + p;
            const int column = cb.columns[at];
            sums[column] = csr_add_product(sums[column], w, __ldg(cb.values + at));
        }
    }
    if (s.y == CSR_DENSE_ROW) {
        float v[V];
        cols.load(b + (int64_t)s.w * ldb, v);
#pragma unroll
        for (int t = 0; t < V; t++)
            sums[slot * V + t] = csr_add_product(sums[slot * V + t], w, v[t]);
    }
}

// Entries u .. u + U - 1 of a batch, in order, in shared memory: the first G
// nonzeros of all U are loaded before the first is added.
template <int U, int G, int V, bool VEC>
__device__ __forceinline__ void add_sparse_entries(const staged_entry *staged, int u, int slot,
                                                   const csr_compressed_b &cb, const float *b,
                                                   int64_t ldb, const dense_lane<V, VEC> &cols,
                                                   float *sums)
{
    staged_entry s[U];
    float value[U];
    int column[U];
#pragma unroll
    for (int i = 0; i < U; i++) {
        s[i] = staged[u + i];
        const int at = s[i].x + slot;
        const bool has = slot < s[i].y;
        value[i] = has ? __ldg(cb.values + at) : 0.0f;
        column[i] = has ? cb.columns[at] : 0;
    }
#pragma unroll
    for (int i = 0; i < U; i++) {
        if (slot < s[i].y)
            sums[column[i]] =
                csr_add_product(sums[column[i]], __int_as_float(s[i].z), value[i]);
        if (__any_sync(FULL, s[i].y > G || s[i].y == CSR_DENSE_ROW))
            add_entry_rest<G, V, VEC>(s[i], slot, cb, b, ldb, cols, sums);
        __syncwarp();
    }
}

template <int G, int V, bool VEC>
__global__ void __launch_bounds__(SPARSE_WARPS * 32, SPARSE_MIN_CTAS)
    csrmm_sparse_b_kernel(esmm_csr_view_t w, int64_t n, float alpha, const float *b,
                          int64_t ldb, float beta, float *c, int64_t ldc, csr_compressed_b cb)
{
    constexpr int PW = G * V, ROWS = 32 / G;
    __shared__ float all_sums[SPARSE_WARPS * ROWS][PW];
    // One slot of padding per group puts the groups' broadcast reads of their
    // staged entries in different banks.
    __shared__ staged_entry all_staged[SPARSE_WARPS][ROWS * (G + 1)];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int slot = lane % G, group = lane / G;
    // Groups past the last row repeat it without storing, so that every
    // vote and shuffle runs with the whole warp.
    const int64_t own_row = ((int64_t)blockIdx.x * SPARSE_WARPS + warp) * ROWS + group;
    const int64_t row = own_row < w.rows ? own_row : w.rows - 1;
    const int64_t panel = blockIdx.y;
    const int64_t col = panel * PW + slot * V;
    const dense_lane<V, VEC> cols(col, n);
    float *sums = all_sums[warp * ROWS + group];
    staged_entry *staged = &all_staged[warp][group * (G + 1)];
#pragma unroll
    for (int t = 0; t < V; t++)
        sums[slot * V + t] = 0.0f;
    __syncwarp();

    const auto [begin, end] = csr_row(w, row);
    const int length = (int)(end - begin);
    const int longest = ROWS > 1 ? __reduce_max_sync(FULL, length) : length;
    for (unsigned base = 0; base < (unsigned)longest; base += G) {
        const unsigned e = begin + base + slot;
        staged_entry mine = make_int4(0, 0, 0, 0);
        if (e < end) {
            const int j = w.col_idx[e];
            const float weight = w.values != nullptr ? w.values[e] : w.value;
            const int2 meta = cb.meta[panel * cb.k + j];
            mine = make_int4(meta.x, isfinite(weight) ? meta.y : CSR_DENSE_ROW,
                             __float_as_int(weight), j);
        }
        staged[slot] = mine;
        __syncwarp();
        const int steps = min(G, longest - (int)base);
        int u = 0;
        if (__all_sync(FULL, mine.y == CSR_DENSE_ROW || e >= end)) {
            float acc[V];
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] = sums[slot * V + t];
            for (; u + DENSE_UNROLL <= steps; u += DENSE_UNROLL)
                add_dense_entries<DENSE_UNROLL, V, VEC>(staged, u, b, ldb, cols, acc);
            for (; u < steps; u++)
                add_dense_entries<1, V, VEC>(staged, u, b, ldb, cols, acc);
#pragma unroll
            for (int t = 0; t < V; t++)
                sums[slot * V + t] = acc[t];
        } else {
            for (; u + SPARSE_UNROLL <= steps; u += SPARSE_UNROLL)
                add_sparse_entries<SPARSE_UNROLL, G, V, VEC>(staged, u, slot, cb, b, ldb, cols,
                                                             sums);
            for (; u < steps; u++)
                add_sparse_entries<1, G, V, VEC>(staged, u, slot, cb, b, ldb, cols, sums);
        }
        __syncwarp();
    }

    if (own_row >= w.rows)
        return;
#pragma unroll
    for (int q = 0; q < V / 4; q++) {
        float out[4];
#pragma unroll
        for (int t = 0; t < 4; t++)
            out[t] = sums[slot * V + 4 * q + t];
        csr_store_row<4, VEC>(c + row * ldc, col + 4 * q, n, alpha, beta, out);
    }
}

template <int G, int V, bool VEC>
cudaError_t launch(const esmm_csr_view_t &w, int64_t n, float alpha, const float *b,
                   int64_t ldb, float beta, float *c, int64_t ldc, const csr_compressed_b &cb,
                   cudaStream_t stream)
{
    constexpr int rows_per_cta = SPARSE_WARPS * (32 / G);
    const dim3 grid((unsigned)((w.rows + rows_per_cta - 1) / rows_per_cta), (unsigned)cb.panels);
    csrmm_sparse_b_kernel<G, V, VEC><<<grid, SPARSE_WARPS * 32, 0, stream>>>(
        w, n, alpha, b, ldb, beta, c, ldc, cb);
    return cudaGetLastError();
}

template <int V, bool VEC>
cudaError_t launch_width(const esmm_csr_view_t &w, int64_t n, float alpha, const float *b,
                         int64_t ldb, float beta, float *c, int64_t ldc,
                         const csr_compressed_b &cb, cudaStream_t stream)
{
    switch (cb.panel_width) {
    case 128: return launch<128 / V, V, VEC>(w, n, alpha, b, ldb, beta, c, ldc, cb, stream);
    case 64: return launch<64 / V, V, VEC>(w, n, alpha, b, ldb, beta, c, ldc, cb, stream);
    default: return launch<32 / V, V, VEC>(w, n, alpha, b, ldb, beta, c, ldc, cb, stream);
    }
}

} // namespace

cudaError_t launch_csrmm_sparse_b(const esmm_csr_view_t &w, int64_t n, float alpha,
                                  const float *b, int64_t ldb, float beta, float *c,
                                  int64_t ldc, const csr_compressed_b &compressed,
                                  cudaStream_t stream)
{
    // Eight columns a lane: measured on the H100 faster than four (0.098
    // against 0.106 ms on the reference workload).
    constexpr int V = 8;
    const bool vec = csr_rows_aligned(b, ldb, n, 4) && csr_rows_aligned(c, ldc, n, 4);
    return vec ? launch_width<V, true>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream)
               : launch_width<V, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
}
