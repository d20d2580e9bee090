#pragma once

#include <cuda_runtime.h>

#include "cuda/sparse/plan_gate.cuh"

// Writes the rows x cols matrix x (row stride ld) transposed into out: cols
// rows of esmm_wide_copy_ld(rows) floats. Runs only when gate is open.
cudaError_t launch_transpose_operand(const float *x, int64_t ld, int64_t rows, int64_t cols,
                                     float *out, const skip_gate &gate, cudaStream_t stream);
