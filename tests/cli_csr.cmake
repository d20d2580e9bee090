# Tests of `esmm bench --op csrmm|csrmv`: the in-process test program (CPU
# backend; the GPU rows where a GPU is present), and runs of the esmm binary
# through cli.cmake's esmm_cli_test (defined there, included before this
# file), all on the CPU backend at small sizes.
esmm_add_test(test_cli_csr SOURCES test_cli_csr.c LIBS esmm_tools)

esmm_cli_test(cli_csr_help 0 STDOUT "usage: esmm bench --op csrmm.csrmv" ARGS bench --op csrmm --help)
# A usage error's hint names the op asked for; a generated W that cannot fit
# says where its width came from.
esmm_cli_test(cli_csrmv_usage_hint 2 STDERR "run 'esmm bench --op csrmv --help'"
              ARGS bench --op csrmv --no-such-option)
esmm_cli_test(cli_csr_default_cols 2 STDERR "20000 nonzeros per row do not fit in 10000 columns .--cols's default."
              ARGS bench --op csrmm --backend cpu --nnz-per-row 20000)
esmm_cli_test(cli_csr_small 0 STDOUT "esmm +[0-9.]+ .* pass"
              ARGS bench --op csrmm --backend cpu --rows 50 --cols 40 --nnz-per-row 6 --n 8 --runs 2)
esmm_cli_test(cli_csrmv_transposed 0 STDOUT "op.W. = W.T.*esmm +[0-9.]+ .* pass"
              ARGS bench --op csrmv --transpose T --backend cpu --rows 60 --cols 30 --nnz-per-row 4
                   --alpha 2 --beta -1 --runs 2)
# The last --op decides, as for any repeated option.
esmm_cli_test(cli_csr_op_repeated 0 STDOUT "esmm +[0-9.]+ .* pass"
              ARGS bench --op sgemm --op csrmm --backend cpu --rows 20 --cols 16 --nnz-per-row 3
                   --n 4 --runs 1)
esmm_cli_test(cli_sgemm_op_repeated 0 STDOUT "sgemm m=8 n=8 k=8.*cpu .* pass"
              ARGS bench --op csrmm --op=sgemm --backend cpu --size 8 --kernel cpu --runs 1)
esmm_cli_test(cli_csr_json 0 JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_csr.json
              JSON_REGEX "\"op\": \"csrmm\"[^}]*\"transpose\": \"T\"[^}]*\"homogeneous\": true[^}]*\"check\": \"pass\""
              ARGS bench --op csrmm --transpose T --homogeneous --backend cpu --rows 30 --cols 20
                   --nnz-per-row 4 --n 5 --runs 2 --json ${CMAKE_CURRENT_BINARY_DIR}/cli_csr.json)
esmm_cli_test(cli_csr_sweep 0 STDOUT "sweep csr-targets.*SpMV T"
              JSON ${CMAKE_CURRENT_BINARY_DIR}/cli_csr_sweep.json
              JSON_REGEX "\"case\": \"SpMV T\""
              ARGS bench --op csrmm --sweep csr-targets --backend cpu --rows 30 --cols 25
                   --nnz-per-row 3 --n 6 --runs 1 --json ${CMAKE_CURRENT_BINARY_DIR}/cli_csr_sweep.json)

# A generated W too large for the machine (2e9 entries, C of 2e9 x 128) is
# refused before it is built: within the timeout, not after filling 24 GB.
esmm_cli_test(cli_csr_generated_too_large 3 STDERR "host memory"
              ARGS bench --op csrmm --backend cpu --rows 2000000000 --cols 1 --nnz-per-row 1
                   --n 128 --runs 1)
set_tests_properties(cli_csr_generated_too_large PROPERTIES TIMEOUT 20)
esmm_cli_test(cli_csr_not_mtx 3 STDERR "cli.cmake"
              ARGS bench --op csrmm --backend cpu --w ${CMAKE_CURRENT_SOURCE_DIR}/cli.cmake)
esmm_cli_test(cli_csr_missing_mtx 3 STDERR "no-such-file.mtx"
              ARGS bench --op csrmm --backend cpu --w no-such-file.mtx)
esmm_cli_test(cli_csr_bad_b 3 STDERR "not a .npy file"
              ARGS bench --op csrmm --backend cpu --rows 8 --b ${CMAKE_CURRENT_SOURCE_DIR}/cli.cmake)
esmm_cli_test(cli_csr_empty_b 3 STDERR "zero_rows.npy: B is empty .0 x 20." NO_STDERR "for the options"
              ARGS bench --op csrmm --backend cpu --rows 8 --cols 20 --nnz-per-row 2
                   --b cli_fixtures/zero_rows.npy)
esmm_cli_test(cli_csr_b_shape 2 STDERR "B is 20 x 28, but op.W. = W is 8 x 10, so B must have 10 rows"
              ARGS bench --op csrmm --backend cpu --rows 8 --cols 10 --nnz-per-row 2
                   --b cli_fixtures/b.npy)
esmm_cli_test(cli_csr_unknown_flag 2 STDERR "unknown option '--size'" ARGS bench --op csrmm --size 8)
esmm_cli_test(cli_csr_unknown_op 2 STDERR "expected sgemm, csrmm or csrmv" ARGS bench --op spmm)
esmm_cli_test(cli_csrmv_n 2 STDERR "n is 1" ARGS bench --op csrmv --n 4)
