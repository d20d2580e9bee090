# Matrix Market reader and writer (tools/mtx.c), and esmm reading a Matrix
# Market W (esmm_cli_test is defined in cli.cmake, included before this file).
esmm_add_test(test_mtx SOURCES test_mtx.c LIBS esmm_tools)

# A symmetric W that lists an entry above the diagonal is read as the format
# says (each entry mirrored) with a warning on stderr; one that lists the lower
# triangle only gets none.
esmm_cli_test(cli_mtx_symmetric_upper_entry 0
              STDERR "warning: cli_fixtures/symmetric_both.mtx: 1 of the 4 entries of this symmetric matrix lie above the diagonal .the first on line 5."
              STDOUT "esmm +[0-9.]+ .* pass"
              ARGS bench --op csrmm --backend cpu --w cli_fixtures/symmetric_both.mtx --n 2 --runs 1)
esmm_cli_test(cli_mtx_symmetric_lower 0 NO_STDERR "warning" STDOUT "esmm +[0-9.]+ .* pass"
              ARGS bench --op csrmm --backend cpu --w cli_fixtures/symmetric_lower.mtx --n 2 --runs 1)
