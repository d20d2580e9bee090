#pragma once

#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
}

cudaError_t launch_plan(const esmm_masks_t &masks, int64_t m, int64_t n, int64_t k,
                        esmm_operation_t op_a, esmm_operation_t op_b, esmm_skip_by_t skip,
                        esmm_copied_t extraction_copy, esmm_union_mode_t union_mode,
                        esmm_union_list_t list, esmm_plan_stats_t *stats, cudaStream_t stream);
