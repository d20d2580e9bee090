/* The handle's workspace, the last call's report and the extraction timer. */
#include <stdint.h>
#include <stdlib.h>

#include "api/handle.h"
#include "plan/plan.h"

static size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

esmm_workspace_layout_t esmm_workspace_layout(int64_t m, int64_t n, int64_t k,
                                              esmm_operation_t op_a, esmm_operation_t op_b,
                                              int cuda)
{
    const esmm_workspace_layout_t failed = {.total = SIZE_MAX};
    esmm_workspace_layout_t layout = {0};
    const int64_t kblocks = esmm_pattern_kblocks(k);
    const int64_t strips_a = esmm_pattern_strips(m), strips_b = esmm_pattern_strips(n);
    if (kblocks > 0 && (strips_a > (int64_t)(SIZE_MAX / 8) / kblocks ||
                        strips_b > (int64_t)(SIZE_MAX / 8) / kblocks))
        return failed; /* cannot be allocated: SIZE_MAX makes the reservation fail */
    const size_t a = align_up((size_t)(strips_a * kblocks));
    const size_t b = align_up((size_t)(strips_b * kblocks));
    layout.stats = 0;
    layout.a_bits = align_up(sizeof(esmm_plan_stats_t));
    layout.a_nonfinite = layout.a_bits + a;
    layout.b_bits = layout.a_nonfinite + a;
    layout.b_nonfinite = layout.b_bits + b;
    layout.union_list = layout.b_nonfinite + b;
    /* About 4.3 bytes per k: far below what the masks' bound allows. */
    if (cuda && esmm_union_words(k) > (int64_t)(SIZE_MAX / 1024))
        return failed;
    layout.partials = layout.union_list + (cuda ? align_up(esmm_union_list_bytes(k)) : 0);
    const size_t partials = cuda ? esmm_split_bytes(m, n, k) : 0;
    if (partials > SIZE_MAX / 4 - layout.partials)
        return failed;
    layout.wide_copy = layout.partials + align_up(partials);
    if (cuda) {
        const int64_t rows = m > n ? m : n;
        if (k > 0 && esmm_wide_copy_ld(rows) > (int64_t)(SIZE_MAX / 4 / sizeof(float)) / k)
            return failed;
        layout.wide_copy_bytes =
            (size_t)esmm_wide_copy_floats(m, n, k, op_a, op_b) * sizeof(float);
    }
    if (layout.wide_copy_bytes > SIZE_MAX / 4 - layout.wide_copy)
        return failed;
    layout.total = layout.wide_copy + align_up(layout.wide_copy_bytes);
    return layout;
}

size_t esmm_workspace_size(int64_t m, int64_t n, int64_t k)
{
    if (m < 0 || n < 0 || k < 0)
        return 0;
    if (m == 0 || n == 0)
        return 0; /* no C: the call does nothing, whatever k */
    /* Sizes no call accepts (esmm_matrix_fits) need more than can be lent. */
    if (!esmm_matrix_fits(m, k) || !esmm_matrix_fits(k, n) || !esmm_matrix_fits(m, n))
        return SIZE_MAX;
    /* The larger, CUDA's, for the op pair that copies both operands. */
    return esmm_workspace_layout(m, n, k, ESMM_OP_N, ESMM_OP_T, 1).total;
}

void esmm_workspace_release(esmm_handle_t handle)
{
    esmm_last_call_t *last = &handle->last;
    const int owned = !handle->workspace_lent && handle->workspace != NULL;
    if (owned && last->planned && last->device_stats != NULL) {
        /* The last call's statistics live in the memory freed here: keep a
         * copy for esmm_get_last_info. Freeing waits for the whole device
         * anyway; waiting first also covers a call queued on an earlier
         * stream. A lent workspace stays the caller's, and the report reads
         * it there. */
        esmm_status_t st = esmm_cuda_device_synchronize();
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_cuda_copy_to_host(&last->host_stats, last->device_stats,
                                        sizeof last->host_stats, handle->stream);
        if (st == ESMM_STATUS_SUCCESS)
            last->device_stats = NULL;
        else
            last->planned = 0;
    }
    if (owned) {
        if (handle->backend == ESMM_BACKEND_CUDA)
            esmm_cuda_free(handle->workspace); /* waits for work that may use it */
        else
            free(handle->workspace);
    }
    handle->workspace = NULL;
    handle->workspace_bytes = 0;
    handle->workspace_lent = 0;
}

esmm_status_t esmm_workspace_reserve(esmm_handle_t handle, size_t bytes)
{
    if (bytes <= handle->workspace_bytes)
        return ESMM_STATUS_SUCCESS;
    if (handle->workspace_lent)
        return ESMM_STATUS_INVALID_VALUE; /* the caller's workspace is too small */
    if (bytes == SIZE_MAX)
        return ESMM_STATUS_ALLOC_FAILED;
    esmm_workspace_release(handle);
    void *memory = NULL;
    if (handle->backend == ESMM_BACKEND_CUDA) {
        esmm_status_t st = esmm_cuda_malloc(&memory, bytes);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
    } else {
        memory = malloc(bytes);
        if (memory == NULL)
            return ESMM_STATUS_ALLOC_FAILED;
    }
    handle->workspace = memory;
    handle->workspace_bytes = bytes;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_set_workspace(esmm_handle_t handle, void *workspace, size_t bytes)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (workspace == NULL && bytes != 0)
        return ESMM_STATUS_INVALID_VALUE;
    /* The kernels' vector accesses rely on the layout's 256-byte alignment. */
    if (handle->backend == ESMM_BACKEND_CUDA && ((uintptr_t)workspace & 255u) != 0)
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    esmm_workspace_release(handle);
    if (workspace != NULL) {
        handle->workspace = workspace;
        handle->workspace_bytes = bytes;
        handle->workspace_lent = 1;
    }
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_set_timing(esmm_handle_t handle, int enable)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    if (enable && handle->backend == ESMM_BACKEND_CUDA && handle->timer_start == NULL) {
        esmm_status_t st = esmm_cuda_event_create(&handle->timer_start);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_cuda_event_create(&handle->timer_stop);
        if (st != ESMM_STATUS_SUCCESS) {
            esmm_cuda_event_destroy(handle->timer_start);
            handle->timer_start = NULL;
            return st;
        }
    }
    handle->timing = enable != 0;
    return ESMM_STATUS_SUCCESS;
}

static double fraction(unsigned long long part, unsigned long long whole)
{
    return whole == 0 ? 0.0 : (double)part / (double)whole;
}

esmm_status_t esmm_get_last_info(esmm_handle_t handle, esmm_info_t *info)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (info == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    const esmm_last_call_t *last = &handle->last;
    info->path = last->path;
    info->kernel = last->kernel;
    info->density_a = info->density_b = -1.0;
    info->work_fraction = last->path == ESMM_PATH_NONE ? 0.0 : 1.0;
    info->extraction_ms = -1.0;
    info->form = NULL;
    info->masks = last->masks;
    if (!last->planned)
        return ESMM_STATUS_SUCCESS;
    esmm_plan_stats_t stats = last->host_stats;
    if (handle->backend == ESMM_BACKEND_CUDA) {
        esmm_status_t st = ESMM_STATUS_SUCCESS;
        if (last->device_stats != NULL)
            st = esmm_cuda_copy_to_host(&stats, last->device_stats, sizeof stats,
                                        handle->stream);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
        if (last->timed) {
            st = esmm_cuda_event_elapsed(handle->timer_start, handle->timer_stop,
                                         &info->extraction_ms);
            if (st != ESMM_STATUS_SUCCESS)
                return st;
        }
    } else if (last->timed) {
        info->extraction_ms = last->host_extraction_ms;
    }
    /* Where the probe sent the product dense no masks were extracted, and
     * the plan's decision was left dense. */
    if (esmm_probe_dense(&stats)) {
        info->masks = ESMM_MASKS_PROBE_DENSE;
    } else {
        const unsigned long long k = (unsigned long long)last->k;
        info->density_a =
            fraction(stats.bits_a, (unsigned long long)esmm_pattern_strips(last->m) * k);
        info->density_b =
            fraction(stats.bits_b, (unsigned long long)esmm_pattern_strips(last->n) * k);
        info->work_fraction = fraction(stats.work, esmm_plan_total(last->m, last->n, last->k));
    }
    if (last->kernel == NULL) {
        /* The device chose among the queued kernels. */
        const int sparse = stats.decision != ESMM_PLAN_DENSE;
        info->path = sparse ? ESMM_PATH_SPARSE : ESMM_PATH_DENSE;
        info->kernel = stats.decision == ESMM_PLAN_UNION ? "sparse-union"
                       : sparse                          ? "sparse-joint"
                                                         : "pipelined";
    }
    if (info->path == ESMM_PATH_DENSE)
        info->work_fraction = 1.0; /* the dense kernel runs all of it */
    else if (stats.decision == ESMM_PLAN_UNION)
        info->work_fraction = esmm_union_share(&stats, last->k);
    if (handle->backend == ESMM_BACKEND_CUDA && info->path == ESMM_PATH_SPARSE)
        info->form = stats.form == ESMM_FORM_UNION         ? "union"
                     : stats.form == ESMM_FORM_WARP_LISTS  ? "warp lists"
                     : stats.form == ESMM_FORM_STRIP_WARPS ? "strip warps"
                                                           : "pair warps";
    return ESMM_STATUS_SUCCESS;
}
