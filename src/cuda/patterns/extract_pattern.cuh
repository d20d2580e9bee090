// Pattern extraction on the device (layout: patterns/pattern_layout.h).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

// Which way the 32-wide strips run through the stored matrix. The K blocks
// of 8 run the other way.
enum class pattern_strips {
    of_stored_rows, // A with op N (m x k stored), B with op T (n x k stored)
    of_stored_cols, // A with op T (k x m stored), B with op N (k x n stored)
};

// Reads the stored rows x cols matrix x (leading dimension ld) once and writes
// every byte of bits and nonfinite (strips * kblocks each). Nothing is
// allocated and nothing waits for the host; an empty matrix launches nothing.
cudaError_t launch_extract_pattern(pattern_strips strips, const float *x, int64_t ld,
                                   int64_t rows, int64_t cols, uint8_t *bits,
                                   uint8_t *nonfinite, cudaStream_t stream);
