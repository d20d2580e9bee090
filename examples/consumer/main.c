/* A program built against an installed esmm: one product on the CPU backend
 * (so it runs with or without a GPU), checked against a plain loop. */
#include <esmm.h>
#include <math.h>
#include <stdio.h>

enum { M = 5, N = 3, K = 4 };

int main(void)
{
    float a[M * K], b[K * N], c[M * N];
    /* Small integers and halves: every product and sum is exact. */
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = 0.5f * (float)(i % 5) - 1.0f;

    esmm_handle_t h = NULL;
    esmm_status_t st = esmm_create(&h, ESMM_BACKEND_CPU);
    const float alpha = 1.0f, beta = 0.0f;
    if (st == ESMM_STATUS_SUCCESS)
        st = esmm_sgemm(h, ESMM_OP_N, ESMM_OP_N, M, N, K, &alpha, a, K, b, N, &beta, c, N);
    esmm_destroy(h);
    if (st != ESMM_STATUS_SUCCESS) {
        fprintf(stderr, "esmm: %s\n", esmm_status_string(st));
        return 1;
    }

    int wrong = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0.0f;
            for (int p = 0; p < K; p++)
                want += a[i * K + p] * b[p * N + j];
            wrong += c[i * N + j] != want;
        }
    printf("esmm %s: %dx%dx%d product on the CPU backend, %d of %d elements wrong\n",
           esmm_version(), M, N, K, wrong, M * N);
    return wrong != 0;
}
