/*
 * Handles, patterns and CSR descriptors of one GPU used while another is
 * current. Calls on a handle refuse with ESMM_STATUS_INVALID_VALUE and touch
 * nothing (no CUDA error is left behind, C keeps its poison); the destroy
 * functions and esmm_pattern_density work from any device and leave the
 * caller's device current. The same planned product gives the same bits on
 * both GPUs. Needs two CUDA devices; skipped otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "esmm.h"
#include "test_support.h"
#include "test_support_cuda.h"

#define SIDE 256 /* m = n = k: planned once the handle's minimum is lifted */
#define POISON 0xFF

static int current_device(void)
{
    int device = -1;
    cuda_must(cudaGetDevice(&device), "cudaGetDevice");
    return device;
}

static void use_device(int device)
{
    cuda_must(cudaSetDevice(device), "cudaSetDevice");
}

/* A SIDE x SIDE operand whose 32 x 8 blocks are zero with probability 1/2,
 * random nonzero values elsewhere. */
static void fill_blocks(float *x, uint64_t seed)
{
    uint64_t block_state = seed, value_state = seed + 1;
    unsigned char zero[SIDE / 32][SIDE / 8];
    for (int r = 0; r < SIDE / 32; r++)
        for (int c = 0; c < SIDE / 8; c++)
            zero[r][c] = (unsigned char)(rng_next(&block_state) & 1);
    for (int r = 0; r < SIDE; r++)
        for (int c = 0; c < SIDE; c++)
            x[r * SIDE + c] = zero[r / 32][c / 8] ? 0.0f : nonzero_value(&value_state);
}

typedef struct {
    esmm_handle_t handle;
    float *a, *b, *c;
} device_product_t;

/* A handle and the operands on `device`, which is left current. */
static device_product_t product_on(int device, const float *a, const float *b)
{
    use_device(device);
    device_product_t d = {NULL, NULL, NULL, NULL};
    CHECK(esmm_create(&d.handle, ESMM_BACKEND_CUDA) == ESMM_STATUS_SUCCESS,
          "esmm_create on device %d", device);
    CHECK(esmm_set_min_planned_work(d.handle, 0) == ESMM_STATUS_SUCCESS, "plan every size");
    const size_t bytes = (size_t)SIDE * SIDE * sizeof(float);
    d.a = device_alloc(bytes);
    d.b = device_alloc(bytes);
    d.c = device_alloc(bytes);
    device_upload(d.a, a, bytes);
    device_upload(d.b, b, bytes);
    return d;
}

static esmm_status_t multiply(const device_product_t *d)
{
    const float one = 1.0f, zero = 0.0f;
    return esmm_sgemm(d->handle, ESMM_OP_N, ESMM_OP_N, SIDE, SIDE, SIDE, &one, d->a, SIDE, d->b,
                      SIDE, &zero, d->c, SIDE);
}

/* C of d read back (its device made current, then `back` again). */
static void read_c(const device_product_t *d, int device, int back, float *out)
{
    use_device(device);
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    device_download(out, d->c, (size_t)SIDE * SIDE * sizeof(float));
    use_device(back);
}

static void check_refusals(const device_product_t *d1, float *host_c)
{
    const size_t bytes = (size_t)SIDE * SIDE * sizeof(float);
    use_device(1);
    cuda_must(cudaMemset(d1->c, POISON, bytes), "cudaMemset");
    cuda_must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    use_device(0);
    CHECK(multiply(d1) == ESMM_STATUS_INVALID_VALUE, "esmm_sgemm with device 0 current");
    CHECK(cudaGetLastError() == cudaSuccess, "no CUDA error left by the refusal");
    read_c(d1, 1, 0, host_c);
    const unsigned char *c_bytes = (const unsigned char *)host_c;
    size_t touched = 0;
    for (size_t i = 0; i < bytes; i++)
        touched += c_bytes[i] != POISON;
    CHECK(touched == 0, "the refused product wrote %zu bytes of C", touched);

    esmm_pattern_t pattern = (esmm_pattern_t)1;
    CHECK(esmm_pattern_extract_b(d1->handle, ESMM_OP_N, SIDE, SIDE, d1->b, SIDE, &pattern) ==
                  ESMM_STATUS_INVALID_VALUE &&
              pattern == NULL,
          "esmm_pattern_extract_b with device 0 current");
    cudaStream_t other = NULL;
    use_device(1);
    cuda_must(cudaStreamCreate(&other), "cudaStreamCreate");
    use_device(0);
    CHECK(esmm_set_stream(d1->handle, other) == ESMM_STATUS_INVALID_VALUE,
          "esmm_set_stream with device 0 current");
    CHECK(esmm_set_timing(d1->handle, 1) == ESMM_STATUS_INVALID_VALUE,
          "esmm_set_timing with device 0 current");
    CHECK(esmm_set_workspace(d1->handle, NULL, 0) == ESMM_STATUS_INVALID_VALUE,
          "esmm_set_workspace with device 0 current");
    esmm_info_t info;
    CHECK(esmm_get_last_info(d1->handle, &info) == ESMM_STATUS_INVALID_VALUE,
          "esmm_get_last_info with device 0 current");
    CHECK(current_device() == 0, "the refusals leave device 0 current");
    use_device(1);
    cuda_must(cudaStreamDestroy(other), "cudaStreamDestroy");
    use_device(0);
}

/* A CSR of W = I (SIDE x SIDE) on device 1, prepared for W^T there. */
static void check_csr(const device_product_t *d1)
{
    int32_t row_ptr[SIDE + 1], col_idx[SIDE];
    for (int i = 0; i <= SIDE; i++)
        row_ptr[i] = i;
    for (int i = 0; i < SIDE; i++)
        col_idx[i] = i;
    use_device(1);
    int32_t *d_row_ptr = device_alloc(sizeof row_ptr), *d_col_idx = device_alloc(sizeof col_idx);
    device_upload(d_row_ptr, row_ptr, sizeof row_ptr);
    device_upload(d_col_idx, col_idx, sizeof col_idx);
    esmm_csr_t w = NULL;
    CHECK(esmm_csr_create(d1->handle, SIDE, SIDE, SIDE, d_row_ptr, d_col_idx, NULL, 1.0f, &w) ==
              ESMM_STATUS_SUCCESS,
          "esmm_csr_create on device 1");
    CHECK(esmm_csr_prepare(d1->handle, w, ESMM_OP_T) == ESMM_STATUS_SUCCESS,
          "esmm_csr_prepare on device 1");
    use_device(0);
    esmm_csr_t refused = (esmm_csr_t)1;
    CHECK(esmm_csr_create(d1->handle, SIDE, SIDE, SIDE, d_row_ptr, d_col_idx, NULL, 1.0f,
                          &refused) == ESMM_STATUS_INVALID_VALUE &&
              refused == NULL,
          "esmm_csr_create with device 0 current");
    const float one = 1.0f, zero = 0.0f;
    CHECK(esmm_scsrmm(d1->handle, ESMM_OP_T, w, SIDE, &one, d1->b, SIDE, &zero, d1->c, SIDE) ==
              ESMM_STATUS_INVALID_VALUE,
          "esmm_scsrmm with device 0 current");
    CHECK(esmm_csr_validate(d1->handle, SIDE, SIDE, SIDE, d_row_ptr, d_col_idx) ==
              ESMM_STATUS_INVALID_VALUE,
          "esmm_csr_validate with device 0 current");
    CHECK(esmm_csr_destroy(w) == ESMM_STATUS_SUCCESS, "esmm_csr_destroy from device 0");
    CHECK(current_device() == 0, "esmm_csr_destroy leaves device 0 current");
    use_device(1);
    device_free(d_row_ptr);
    device_free(d_col_idx);
    use_device(0);
}

static void check_pattern(const device_product_t *d1)
{
    use_device(1);
    esmm_pattern_t pattern = NULL;
    CHECK(esmm_pattern_extract_a(d1->handle, ESMM_OP_N, SIDE, SIDE, d1->a, SIDE, &pattern) ==
              ESMM_STATUS_SUCCESS,
          "esmm_pattern_extract_a on device 1");
    double on_its_device = -1.0, from_other = -2.0;
    CHECK(esmm_pattern_density(pattern, &on_its_device) == ESMM_STATUS_SUCCESS,
          "density on device 1");
    use_device(0);
    CHECK(esmm_pattern_density(pattern, &from_other) == ESMM_STATUS_SUCCESS,
          "density from device 0");
    CHECK(from_other == on_its_device && on_its_device > 0.0 && on_its_device < 1.0,
          "density %g from device 0, %g on device 1", from_other, on_its_device);
    CHECK(current_device() == 0, "esmm_pattern_density leaves device 0 current");
    CHECK(esmm_pattern_destroy(pattern) == ESMM_STATUS_SUCCESS, "esmm_pattern_destroy from device 0");
    CHECK(current_device() == 0, "esmm_pattern_destroy leaves device 0 current");
}

int main(void)
{
    if (!cuda_device_present("tests of two devices"))
        return check_finish();
    int devices = 0;
    cuda_must(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    if (devices < 2) {
        check_skip("one CUDA device: the tests of two devices did not run");
        return check_finish();
    }
    const size_t count = (size_t)SIDE * SIDE;
    float *a = host_alloc((int64_t)count, sizeof(float));
    float *b = host_alloc((int64_t)count, sizeof(float));
    float *c0 = host_alloc((int64_t)count, sizeof(float));
    float *c1 = host_alloc((int64_t)count, sizeof(float));
    fill_blocks(a, 1);
    fill_blocks(b, 2);
    device_product_t d1 = product_on(1, a, b);
    CHECK(multiply(&d1) == ESMM_STATUS_SUCCESS, "esmm_sgemm on device 1");
    read_c(&d1, 1, 1, c1);
    device_product_t d0 = product_on(0, a, b);
    CHECK(multiply(&d0) == ESMM_STATUS_SUCCESS, "esmm_sgemm on device 0");
    read_c(&d0, 0, 0, c0);
    CHECK(memcmp(c0, c1, count * sizeof(float)) == 0, "the same bits on both devices");

    check_refusals(&d1, c1);
    check_csr(&d1);
    check_pattern(&d1);

    CHECK(esmm_destroy(d1.handle) == ESMM_STATUS_SUCCESS, "esmm_destroy from device 0");
    CHECK(current_device() == 0, "esmm_destroy leaves device 0 current");
    CHECK(esmm_destroy(d0.handle) == ESMM_STATUS_SUCCESS, "esmm_destroy of device 0's handle");
    use_device(1);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "device 1 is sound");
    device_free(d1.a);
    device_free(d1.b);
    device_free(d1.c);
    use_device(0);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "device 0 is sound");
    device_free(d0.a);
    device_free(d0.b);
    device_free(d0.c);
    free(a);
    free(b);
    free(c0);
    free(c1);
    return check_finish();
}
