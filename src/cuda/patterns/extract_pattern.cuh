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

// One operand to extract: the stored rows x cols matrix x (leading dimension
// ld), into bits and nonfinite (strips * kblocks bytes each).
struct pattern_extraction {
    pattern_strips strips;
    const float *x;
    int64_t ld, rows, cols;
    uint8_t *bits, *nonfinite;
};

// Reads each given operand (second may be nullptr) once and writes every byte
// of its bits and nonfinite, both operands in one launch. Nothing is
// allocated and nothing waits for the host; empty matrices launch nothing.
cudaError_t launch_extract_patterns(const pattern_extraction *first,
                                    const pattern_extraction *second, cudaStream_t stream);
