// The zero-skipping GEMM in warp-list form (warp_list_gemm.cu).
#pragma once

#include <cuda_runtime.h>

#include "cuda/sparse/plan_gate.cuh"

// C = alpha op(A) op(B) + beta C skipping by both operands' masks, a warp per
// strip pair, behind gate. An operand stored along k (esmm_plan_warp_lists_copy)
// is read from its copy in wide_copy (copy_offset), which the extraction or
// launch_copy_operand made. Only for products esmm_plan_warp_lists queues
// (each operand along k copied by its rule). Where k is split (esmm_k_split)
// it still writes C itself, so the finishing pass leaves C alone when it ran.
cudaError_t launch_warp_list_gemm(const esmm_gemm_problem_t &p, const esmm_masks_t &masks,
                                  const warp_lists_gate &gate, float *wide_copy,
                                  cudaStream_t stream);
