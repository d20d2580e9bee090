// Pattern extraction on the device (layout: patterns/pattern_layout.h).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
}

// Which way the 32-wide strips run through the stored matrix. The K blocks
// of 8 run the other way.
enum class pattern_strips {
    of_stored_rows, // A with op N (m x k stored), B with op T (n x k stored)
    of_stored_cols, // A with op T (k x m stored), B with op N (k x n stored)
};

// One operand to extract: the stored rows x cols matrix x (leading dimension
// ld), into bits and nonfinite (strips * kblocks bytes each). With copy (16-byte
// aligned; strips of stored rows only), the extraction also writes x's k-major
// copy there (cols rows of esmm_wide_copy_ld(rows) floats) where the gate's
// probe counts say so (esmm_extraction_copy_made for `copied`).
struct pattern_extraction {
    pattern_strips strips;
    const float *x;
    int64_t ld, rows, cols;
    uint8_t *bits, *nonfinite;
    float *copy;
    esmm_copied_t copied;
};

// Reads each given operand (either may be nullptr) once and writes every
// byte of its bits and nonfinite, both operands in one launch; with stats
// (device memory; first is then op(A), second op(B)), nothing where the
// dense probe's counts there send the product to the dense path
// (esmm_probe_dense), and each operand where NaN/Inf is found is marked in
// stats->nonfinite_seen. Nothing is allocated and nothing waits for the
// host; empty matrices launch nothing.
cudaError_t launch_extract_patterns(const pattern_extraction *first,
                                    const pattern_extraction *second,
                                    esmm_plan_stats_t *stats, cudaStream_t stream);
