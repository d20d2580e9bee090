/* Tests of `esmm bench --op csrmm|csrmv`, run in-process through
 * bench_command with stdout and stderr captured: option parsing and the
 * kernel lists, generated and loaded inputs (.mtx, .npy) on the CPU backend,
 * the JSON results file, the sweep, and the exit codes and messages of
 * malformed files and bad flags. With a GPU the CUDA rows (esmm and every
 * cuSPARSE algorithm) are run on small problems too; without one they are
 * skipped. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, dup, dup2, fileno */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_csr.h"
#include "check.h"
#include "cli_args.h"
#include "mtx.h"
#include "npy.h"

/* ---- running the command ---------------------------------------------- */

typedef struct {
    int exit_code;
    char out[1 << 16];
    char err[1 << 13];
} run_result_t;

static char temp_dir[256];

/* A path in the test's directory; each call's stays valid for the next 31
 * calls, more than any one test keeps. */
static const char *temp_path(const char *name)
{
    static char path[32][512];
    static int which;
    which = (which + 1) % 32;
    snprintf(path[which], sizeof path[which], "%s/%s", temp_dir, name);
    return path[which];
}

static bool contains(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

/* Reads what was written to f (from its start) into out, truncated to cap. */
static void read_back(FILE *f, char *out, size_t cap)
{
    rewind(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* Runs `esmm bench ARGS` in this process; ARGS is space-separated, no quoting. */
static void run_bench(const char *args, run_result_t *r)
{
    static char buffer[2048];
    char *argv[64];
    int argc = 0;
    snprintf(buffer, sizeof buffer, "%s", args);
    for (char *t = strtok(buffer, " "); t != NULL && argc < 64; t = strtok(NULL, " "))
        argv[argc++] = t;
    FILE *out = tmpfile(), *err = tmpfile();
    if (out == NULL || err == NULL) {
        CHECK(0, "cannot create temporary files");
        exit(check_finish());
    }
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    r->exit_code = bench_command(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    read_back(out, r->out, sizeof r->out);
    read_back(err, r->err, sizeof r->err);
}

/* Checks the exit code and that stderr (or stdout when `in_stdout`) says
 * `message`; prints what the run said when it does not. */
static void expect(const char *args, int exit_code, const char *message, bool in_stdout)
{
    static run_result_t r;
    run_bench(args, &r);
    const char *said = in_stdout ? r.out : r.err;
    bool ok = r.exit_code == exit_code && (message == NULL || contains(said, message));
    CHECK(ok, "bench %s: exit %d (expected %d), expected '%s' in %s", args, r.exit_code,
          exit_code, message != NULL ? message : "", in_stdout ? "stdout" : "stderr");
    if (!ok)
        fprintf(stderr, "stdout:\n%s\nstderr:\n%s\n", r.out, r.err);
}

/* ---- a results file ---------------------------------------------------- */

#define MAX_RESULTS 64

typedef struct {
    char *text;
    const char *results[MAX_RESULTS]; /* each result object, NUL-terminated in text */
    int count;
} loaded_results_t;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *text = calloc(1 << 20, 1);
    if (text != NULL)
        text[fread(text, 1, (1 << 20) - 1, f)] = '\0';
    fclose(f);
    return text;
}

/* Splits the "results" list into its objects (which hold no nested object).
 * Returns false when the file is missing or not of that shape. */
static bool load_results(const char *path, loaded_results_t *file)
{
    memset(file, 0, sizeof *file);
    file->text = read_file(path);
    if (file->text == NULL)
        return false;
    char *p = strstr(file->text, "\"results\": [");
    if (p == NULL)
        return false;
    bool in_string = false, escaped = false;
    char *start = NULL;
    for (p += 12; *p != '\0'; p++) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (*p == '\\')
                escaped = true;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{') {
            start = p;
        } else if (*p == '}' && start != NULL && file->count < MAX_RESULTS) {
            p[1] = '\0';
            file->results[file->count++] = start;
            start = NULL;
            p++;
        } else if (*p == ']' && start == NULL) {
            return true;
        }
    }
    return false;
}

/* The value of "key" in one result object, as its JSON text (strings keep
 * their quotes), into out; false when the key is absent. */
static bool field(const char *object, const char *key, char *out, size_t cap)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    const char *p = strstr(object, pattern);
    if (p == NULL)
        return false;
    p += strlen(pattern);
    size_t n = 0;
    bool in_string = false;
    for (; *p != '\0' && n + 1 < cap; p++) {
        if (!in_string && (*p == ',' || *p == '}'))
            break;
        if (*p == '"' && (n == 0 || p[-1] != '\\'))
            in_string = !in_string;
        out[n++] = *p;
    }
    out[n] = '\0';
    return true;
}

static bool field_is(const char *object, const char *key, const char *value)
{
    char text[256];
    return field(object, key, text, sizeof text) && strcmp(text, value) == 0;
}

/* Every field DESIGN.md asks of a csrmm/csrmv result, and the file's head. */
static void check_results_file(const char *path, const char *what, int expected_count)
{
    loaded_results_t file;
    bool loaded = load_results(path, &file);
    CHECK(loaded, "%s: %s is a results file", what, path);
    if (!loaded) {
        free(file.text);
        return;
    }
    CHECK(contains(file.text, "\"device\": ") && contains(file.text, "\"commit\": ") &&
              contains(file.text, "\"date\": "),
          "%s: device, commit and date at the top", what);
    CHECK(expected_count < 0 || file.count == expected_count, "%s: %d results (expected %d)", what,
          file.count, expected_count);
    static const char *const keys[] = {"op", "kernel", "m", "n", "k", "transpose", "nnz_per_row",
                                       "homogeneous", "generator", "density_a", "density_b",
                                       "cached_b", "ms", "baseline", "baseline_ms",
                                       "baseline_kernel", "speedup", "check"};
    for (int i = 0; i < file.count; i++) {
        char value[256];
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            CHECK(field(file.results[i], keys[k], value, sizeof value), "%s: result %d has %s",
                  what, i, keys[k]);
    }
    free(file.text);
}

/* ---- parsing and kernel lists ----------------------------------------- */

static int parse(const char *args, bench_csr_options_t *o, cli_error_t *err)
{
    static char buffer[1024];
    char *argv[64];
    int argc = 0;
    snprintf(buffer, sizeof buffer, "%s", args);
    for (char *t = strtok(buffer, " "); t != NULL && argc < 64; t = strtok(NULL, " "))
        argv[argc++] = t;
    err->text[0] = '\0';
    return bench_csr_parse_args(argc, argv, o, err);
}

static void test_parsing(void)
{
    bench_csr_options_t o;
    cli_error_t err;
    CHECK(parse("--op csrmm", &o, &err) == 0 && o.op == BENCH_OP_CSRMM && o.rows == 0 &&
              o.nnz_per_row == -1 && o.n == 0 && o.b_density < 0.0 && !o.homogeneous &&
              o.transpose == ESMM_OP_N && o.runs == BENCH_DEFAULT_RUNS && o.warmup == -1 &&
              o.check && strcmp(o.kernels, "all") == 0 && !o.sweep_targets,
          "defaults: %s", err.text);
    CHECK(parse("--op=csrmv --transpose T --rows 5 --cols 6 --nnz-per-row 0 --b-density 0.25 "
                "--weight -2 --alpha 2 --beta 0.5 --seed 9 --kernel esmm,cusparse",
                &o, &err) == 0 &&
              o.op == BENCH_OP_CSRMV && o.transpose == ESMM_OP_T && o.rows == 5 && o.cols == 6 &&
              o.nnz_per_row == 0 && o.b_density == 0.25 && o.homogeneous && o.weight == -2.0 &&
              o.alpha == 2.0 && o.beta == 0.5 && o.seed == 9,
          "values: %s", err.text);

    bench_op_t op = BENCH_OP_CSRMV;
    char a0[] = "--size", a1[] = "8", a2[] = "--op", a3[] = "csrmv", a4[] = "--op=csrmm";
    char *argv[] = {a0, a1, a2, a3, a4};
    CHECK(bench_find_op(2, argv, &op, &err) == 0 && op == BENCH_OP_SGEMM, "no --op: sgemm");
    CHECK(bench_find_op(4, argv, &op, &err) == 0 && op == BENCH_OP_CSRMV, "--op csrmv");
    CHECK(bench_find_op(5, argv, &op, &err) == 0 && op == BENCH_OP_CSRMM, "the last --op wins");
    CHECK(bench_find_op(3, argv, &op, &err) == -1 && contains(err.text, "needs a value"),
          "--op without a value");

    bench_options_t sgemm;
    char b0[] = "--op", b1[] = "sgemm", b2[] = "--size", b3[] = "8", b4[] = "csrmm";
    char *sgemm_argv[] = {b0, b1, b2, b3};
    CHECK(bench_parse_args(4, sgemm_argv, &sgemm, &err) == 0 && sgemm.size == 8,
          "the sgemm options take --op sgemm: %s", err.text);
    sgemm_argv[1] = b4;
    CHECK(bench_parse_args(2, sgemm_argv, &sgemm, &err) == -1, "the sgemm options refuse --op csrmm");
    /* The last --op decides. */
    char c0[] = "--op", c1[] = "csrmm", c2[] = "--op", c3[] = "sgemm";
    char *repeated[] = {c0, c1, c2, c3};
    CHECK(bench_parse_args(4, repeated, &sgemm, &err) == 0,
          "the sgemm options take --op csrmm --op sgemm: %s", err.text);

    static const struct {
        const char *args, *message;
    } bad[] = {
        {"--op csrmm --rows 0", "out of range"},
        {"--op csrmm --nnz-per-row -1", "out of range"},
        {"--op csrmm --b-density 1.5", "out of range"},
        {"--op csrmm --weight 1e-50", "rounds to zero in float32"},
        {"--op csrmm --transpose X", "expected N or T"},
        {"--op csrmm --kernel esmm,nosuch", "unknown kernel 'nosuch'"},
        {"--op csrmm --kernel esmm,,cusparse", "empty name"},
        {"--op csrmm --cols 10 --nnz-per-row 11", "do not fit in 10 columns"},
        {"--op csrmm --rows 2147483647 --nnz-per-row 2", "2^31 - 1"},
        {"--op csrmv --n 2", "n is 1"},
        {"--op csrmm --w a.mtx --rows 4", "--rows would change W"},
        {"--op csrmm --w a.mtx --nnz-per-row 4", "--nnz-per-row would change W"},
        {"--op csrmm --b b.npy --b-density 0.5", "--b-density would change B"},
        {"--op csrmm --sweep targets", "expected csr-targets"},
        {"--op csrmm --sweep csr-targets --w a.mtx", "--w cannot be used"},
        {"--op csrmm --sweep csr-targets --homogeneous", "--homogeneous/--weight cannot"},
        {"--op csrmm --sweep csr-targets --cols 900", "5 x 200 nonzeros per row"},
        {"--op csrmm --size 8", "unknown option '--size'"},
        {"--op csrmm --homogeneous=1", "takes no value"},
        {"--op sgemm", "options of its own"},
        {"--op csrmm --op sgemm", "options of its own"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i].args, &o, &err);
        CHECK(rc == -1 && contains(err.text, bad[i].message), "'%s' must fail with '%s', got '%s'",
              bad[i].args, bad[i].message, err.text);
    }
}

/* The names a kernel list gives a case, comma-joined. */
static const char *selected(const char *list, bench_op_t op, esmm_operation_t transpose, bool cuda,
                            char *notices, size_t cap)
{
    static char names[512];
    csr_kernel_t kernels[BENCH_CSR_KERNELS];
    FILE *f = tmpfile();
    int count = bench_csr_select_kernels(list, op, transpose, cuda, kernels, f);
    read_back(f, notices, cap);
    names[0] = '\0';
    for (int i = 0; i < count; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "",
                 kernels[i].name);
    return names;
}

static void test_kernel_selection(void)
{
    char notices[512];
    const char *got = selected("all", BENCH_OP_CSRMM, ESMM_OP_N, true, notices, sizeof notices);
    CHECK(strcmp(got, "cusparse-default,cusparse-alg1,cusparse-alg2,cusparse-alg3,esmm,"
                      "csr-dense-b,csr-sparse-b") == 0 && notices[0] == '\0',
          "csrmm N on CUDA: cuSPARSE first, no unprepared row: %s", got);
    got = selected("all", BENCH_OP_CSRMV, ESMM_OP_T, true, notices, sizeof notices);
    CHECK(strcmp(got, "cusparse-default,cusparse-alg1,cusparse-alg2,esmm,esmm-unprepared") == 0 &&
              notices[0] == '\0',
          "csrmv T on CUDA: no ALG3, no forced csrmm paths: %s", got);
    got = selected("all", BENCH_OP_CSRMM, ESMM_OP_T, false, notices, sizeof notices);
    CHECK(strcmp(got, "esmm") == 0 && notices[0] == '\0', "CPU: esmm alone, quietly: %s", got);
    got = selected("esmm,cusparse-alg3,esmm-unprepared", BENCH_OP_CSRMV, ESMM_OP_N, true, notices,
                   sizeof notices);
    CHECK(strcmp(got, "esmm") == 0 && contains(notices, "cusparse-alg3: cuSPARSE's SpMV has no") &&
              contains(notices, "esmm-unprepared: only op(W) = W^T"),
          "kernels named alone that do not apply are noted: %s / %s", got, notices);
    got = selected("cusparse,esmm", BENCH_OP_CSRMM, ESMM_OP_N, false, notices, sizeof notices);
    CHECK(strcmp(got, "esmm") == 0 &&
              contains(notices, "cusparse: unavailable without a CUDA device; skipped"),
          "cuSPARSE on the CPU is noted once: %s", notices);
}

/* ---- the CPU backend --------------------------------------------------- */

#define SMALL "--backend cpu --runs 2 --commit test"

static void test_generated_runs(void)
{
    static const struct {
        const char *args, *op, *transpose, *m, *n, *k;
    } cases[] = {
        {"--op csrmm --rows 40 --cols 30 --nnz-per-row 5 --n 7", "csrmm", "N", "40", "7", "30"},
        {"--op csrmm --rows 40 --cols 30 --nnz-per-row 5 --n 7 --transpose T --alpha -1.5 "
         "--beta 0.5",
         "csrmm", "T", "30", "7", "40"},
        {"--op csrmv --rows 50 --cols 33 --nnz-per-row 33 --b-density 0.3", "csrmv", "N", "50", "1",
         "33"},
        {"--op csrmv --rows 50 --cols 33 --nnz-per-row 0 --transpose T --beta 2", "csrmv", "T",
         "33", "1", "50"},
        {"--op csrmm --rows 17 --cols 64 --nnz-per-row 9 --n 3 --b-density 0", "csrmm", "N", "17",
         "3", "64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512];
        const char *json = temp_path("generated.json");
        snprintf(args, sizeof args, "%s " SMALL " --json %s", cases[i].args, json);
        expect(args, ESMM_EXIT_OK, "esmm ", true);
        loaded_results_t file;
        check_results_file(json, cases[i].args, 1);
        if (!load_results(json, &file) || file.count != 1) {
            free(file.text);
            continue;
        }
        const char *r = file.results[0];
        char op[16], transpose[8], m[16], n[16], k[16];
        snprintf(op, sizeof op, "\"%s\"", cases[i].op);
        snprintf(transpose, sizeof transpose, "\"%s\"", cases[i].transpose);
        snprintf(m, sizeof m, "%s", cases[i].m);
        snprintf(n, sizeof n, "%s", cases[i].n);
        snprintf(k, sizeof k, "%s", cases[i].k);
        CHECK(field_is(r, "op", op) && field_is(r, "kernel", "\"esmm\"") &&
                  field_is(r, "transpose", transpose) && field_is(r, "m", m) &&
                  field_is(r, "n", n) && field_is(r, "k", k) && field_is(r, "check", "\"pass\"") &&
                  field_is(r, "generator", "\"density\"") && field_is(r, "baseline", "\"none\"") &&
                  field_is(r, "speedup", "null") && field_is(r, "homogeneous", "false"),
              "%s: the result describes the case and passes: %s", cases[i].args, r);
        free(file.text);
    }

    const char *json = temp_path("homogeneous.json");
    char args[512];
    snprintf(args, sizeof args,
             "--op csrmm --rows 20 --cols 20 --nnz-per-row 3 --n 4 --weight 2 " SMALL " --json %s",
             json);
    expect(args, ESMM_EXIT_OK, "one shared weight 2", true);
    loaded_results_t file;
    if (load_results(json, &file) && file.count == 1)
        CHECK(field_is(file.results[0], "homogeneous", "true") &&
                  field_is(file.results[0], "weight", "2") &&
                  field_is(file.results[0], "check", "\"pass\""),
              "--weight: homogeneous with that weight: %s", file.results[0]);
    else
        CHECK(0, "--weight: no results file");
    free(file.text);
    expect("--op csrmm --rows 20 --cols 20 --nnz-per-row 3 --n 4 --homogeneous " SMALL,
           ESMM_EXIT_OK, "one shared weight 0.5", true);
}

/* W 5 x 6 with an empty row, a row in reverse column order and a repeated
 * column; optionally as a pattern file. */
static bool write_w(const char *path, bool pattern)
{
    int32_t row_ptr[6] = {0, 2, 2, 5, 7, 8};
    int32_t col_idx[8] = {0, 5, 4, 2, 1, 3, 3, 0};
    float values[8] = {1.5f, -2.0f, 0.25f, 3.0f, -1.0f, 0.5f, 0.75f, -4.0f};
    mtx_csr_t m = {5, 6, 8, row_ptr, col_idx, pattern ? NULL : values};
    cli_error_t err;
    return mtx_write_csr(path, &m, &err) == 0;
}

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static void test_files(void)
{
    const char *w = temp_path("w.mtx"), *pattern = temp_path("pattern.mtx");
    CHECK(write_w(w, false) && write_w(pattern, true), "writing the .mtx files");
    /* B for op(W) = W (k = 6, n = 3) and for W^T (k = 5), with zeros and a NaN-free mix. */
    float b[6 * 3], x[5];
    for (int i = 0; i < 6 * 3; i++)
        b[i] = i % 4 == 0 ? 0.0f : (float)(i % 7) - 2.5f;
    for (int i = 0; i < 5; i++)
        x[i] = i == 2 ? 0.0f : 1.0f + (float)i;
    cli_error_t err;
    const char *b_path = temp_path("b.npy"), *x_path = temp_path("x.npy");
    CHECK(npy_save_f32(b_path, b, 6, 3, 3, &err) == NPY_OK &&
              npy_save_f32(x_path, x, 1, 5, 5, &err) == NPY_OK,
          "writing the .npy files: %s", err.text);

    char args[1024];
    const char *json = temp_path("files.json");
    snprintf(args, sizeof args, "--op csrmm --w %s --b %s --beta -1 " SMALL " --json %s", w, b_path,
             json);
    expect(args, ESMM_EXIT_OK, "rows put in column order", true);
    loaded_results_t file;
    check_results_file(json, "--w and --b", 1);
    if (load_results(json, &file) && file.count == 1)
        CHECK(field_is(file.results[0], "generator", "\"file\"") &&
                  field_is(file.results[0], "m", "5") && field_is(file.results[0], "n", "3") &&
                  field_is(file.results[0], "k", "6") && field_is(file.results[0], "nnz_per_row", "1.6") &&
                  field_is(file.results[0], "check", "\"pass\""),
              "--w and --b: %s", file.results[0]);
    free(file.text);

    snprintf(args, sizeof args, "--op csrmv --w %s --b %s --transpose T --backend cpu --runs 2", w,
             x_path);
    expect(args, ESMM_EXIT_OK, "pass", true);
    snprintf(args, sizeof args, "--op csrmm --w %s --transpose T --n 4 --b-density 0.5 " SMALL,
             pattern);
    expect(args, ESMM_EXIT_OK, "one shared weight 1", true);

    /* B that does not match op(W): a usage error naming both shapes. */
    snprintf(args, sizeof args, "--op csrmm --w %s --b %s --transpose T " SMALL, w, b_path);
    expect(args, ESMM_EXIT_USAGE, "B is 6 x 3, but op(W) = W^T is 6 x 5, so B must have 5 rows",
           false);
    snprintf(args, sizeof args, "--op csrmm --w %s --b %s --n 4 " SMALL, w, b_path);
    expect(args, ESMM_EXIT_USAGE, "but --n is 4", false);
    snprintf(args, sizeof args, "--op csrmv --w %s --b %s " SMALL, w, b_path);
    expect(args, ESMM_EXIT_USAGE, "so x must have 6 elements", false);

    /* Malformed and missing files: a runtime error that names the file. */
    static const struct {
        const char *name, *text;
    } malformed[] = {
        {"header.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"},
        {"banner.mtx", "not a matrix market file\n"},
        {"range.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 2 2.0\n"},
        {"truncated.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 2.0\n"},
        {"value.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n"},
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        const char *path = temp_path(malformed[i].name);
        CHECK(write_text(path, malformed[i].text), "writing %s", malformed[i].name);
        snprintf(args, sizeof args, "--op csrmm --w %s " SMALL, path);
        expect(args, ESMM_EXIT_RUNTIME, path, false);
    }

    /* A size line beyond this machine's memory is refused as it is read (the
     * message names it), before the 2^31 rows' pointers are built (seconds and
     * 8 GiB); one that fits but has many rows still runs. */
    const char *huge = temp_path("huge.mtx"), *tall = temp_path("tall.mtx");
    CHECK(write_text(huge, "%%MatrixMarket matrix coordinate real general\n"
                           "2147483647 2147483647 1\n1 1 1.0\n") &&
              write_text(tall, "%%MatrixMarket matrix coordinate real general\n"
                               "1000000 3 1\n999999 2 1.0\n"),
          "writing huge.mtx and tall.mtx");
    char refusal[600];
    snprintf(refusal, sizeof refusal, "%s: line 2: the size line '2147483647 2147483647 1' is "
                                      "refused: m=2147483647 n=128 k=2147483647",
             huge);
    snprintf(args, sizeof args, "--op csrmm --w %s " SMALL, huge);
    expect(args, ESMM_EXIT_RUNTIME, refusal, false);
    snprintf(args, sizeof args, "--op csrmv --w %s " SMALL, tall);
    expect(args, ESMM_EXIT_OK, "pass", true);

    snprintf(args, sizeof args, "--op csrmm --w %s/no-such.mtx " SMALL, temp_dir);
    expect(args, ESMM_EXIT_RUNTIME, "no-such.mtx", false);
    const char *not_npy = temp_path("not.npy");
    CHECK(write_text(not_npy, "hello, this is text and not an array"), "writing not.npy");
    snprintf(args, sizeof args, "--op csrmm --w %s --b %s " SMALL, w, not_npy);
    expect(args, ESMM_EXIT_RUNTIME, "not a .npy file", false);
    snprintf(args, sizeof args, "--op csrmm --rows 4 " SMALL " --json %s/no-dir/out.json", temp_dir);
    expect(args, ESMM_EXIT_RUNTIME, "cannot create", false);
}

static void test_command_line(void)
{
    expect("--op csrmm --help", ESMM_EXIT_OK, "usage: esmm bench --op csrmm|csrmv", true);
    expect("--help", ESMM_EXIT_OK, "--op sgemm|csrmm|csrmv", true);
    expect("--op csrmm --bogus", ESMM_EXIT_USAGE, "unknown option '--bogus'", false);
    expect("--op csrmm --kernel nosuch", ESMM_EXIT_USAGE, "unknown kernel 'nosuch'", false);
    expect("--op csrmv --n 3", ESMM_EXIT_USAGE, "n is 1", false);
    expect("--op gemm", ESMM_EXIT_USAGE, "expected sgemm, csrmm or csrmv", false);
    expect("--op", ESMM_EXIT_USAGE, "--op needs a value", false);
    expect("--op csrmm --rows 8 --cols 8 --nnz-per-row 2 --kernel csr-dense-b " SMALL,
           ESMM_EXIT_USAGE, "none of the kernels", false);
    expect("--op csrmm --rows 8 --cols 8 --nnz-per-row 2 --kernel esmm,cusparse " SMALL,
           ESMM_EXIT_OK, "cusparse: unavailable without a CUDA device; skipped", true);
    expect("--op csrmm --sweep csr-targets " SMALL, ESMM_EXIT_OK, "nothing run", true);
    /* sgemm is unchanged with --op sgemm. */
    expect("--op sgemm --size 16 " SMALL, ESMM_EXIT_OK, "sgemm m=16", true);
}

static void test_sweep(void)
{
    const char *json = temp_path("sweep.json");
    char args[512];
    snprintf(args, sizeof args,
             "--op csrmm --sweep csr-targets --rows 30 --cols 25 --nnz-per-row 3 --n 6 " SMALL
             " --runs 1 --json %s",
             json);
    expect(args, ESMM_EXIT_OK, "sweep csr-targets", true);
    check_results_file(json, "sweep", 12);
    loaded_results_t file;
    if (!load_results(json, &file)) {
        free(file.text);
        return;
    }
    static const char *const cases[] = {"reference N", "reference T", "homogeneous N",
                                        "homogeneous T", "n = 3 N", "n = 3 T", "15 nnz/row N",
                                        "15 nnz/row T", "B dense N", "B dense T", "SpMV N",
                                        "SpMV T"};
    for (int i = 0; i < file.count && i < 12; i++) {
        char label[64];
        snprintf(label, sizeof label, "\"%s\"", cases[i]);
        CHECK(field_is(file.results[i], "case", label) &&
                  field_is(file.results[i], "check", "\"pass\"") &&
                  field(file.results[i], "target_speedup", label, sizeof label),
              "sweep result %d is case '%s' and passes: %s", i, cases[i], file.results[i]);
    }
    CHECK(file.count == 12 && field_is(file.results[10], "op", "\"csrmv\"") &&
              field_is(file.results[1], "transpose", "\"T\"") &&
              field_is(file.results[2], "homogeneous", "true") &&
              field_is(file.results[8], "density_b", "1"),
          "sweep cases differ as the table says");
    free(file.text);
}

/* ---- the CUDA backend -------------------------------------------------- */

static void test_gpu(void)
{
    esmm_handle_t handle = NULL;
    if (esmm_create(&handle, ESMM_BACKEND_CUDA) != ESMM_STATUS_SUCCESS) {
        check_skip("no CUDA device: the esmm and cuSPARSE rows on the GPU");
        return;
    }
    esmm_destroy(handle);
    /* The last two read test_files' .mtx: an empty row, rows put in column
     * order, a repeated column. */
    char from_file[2][600];
    snprintf(from_file[0], sizeof from_file[0], "--op csrmm --w %s --n 8", temp_path("w.mtx"));
    snprintf(from_file[1], sizeof from_file[1], "--op csrmv --w %s --transpose T",
             temp_path("w.mtx"));
    const char *const cases[] = {
        "--op csrmm --rows 300 --cols 200 --nnz-per-row 20 --n 24",
        "--op csrmm --rows 300 --cols 200 --nnz-per-row 20 --n 24 --transpose T --beta 0.5",
        "--op csrmm --rows 100 --cols 90 --nnz-per-row 9 --n 33 --homogeneous --b-density 1",
        "--op csrmv --rows 500 --cols 400 --nnz-per-row 30",
        "--op csrmv --rows 500 --cols 400 --nnz-per-row 30 --transpose T --alpha 2 --beta -1",
        from_file[0],
        from_file[1],
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *json = temp_path("gpu.json");
        const char *what = cases[i];
        char args[1024];
        snprintf(args, sizeof args, "%s --backend cuda --runs 3 --json %s", what, json);
        expect(args, ESMM_EXIT_OK, "baseline: CUSPARSE_", true);
        check_results_file(json, what, -1);
        loaded_results_t file;
        if (!load_results(json, &file)) {
            free(file.text);
            continue;
        }
        int esmm_rows = 0, cusparse_rows = 0;
        for (int r = 0; r < file.count; r++) {
            const char *result = file.results[r];
            char kernel[64];
            field(result, "kernel", kernel, sizeof kernel);
            bool cusparse = strncmp(kernel, "\"cusparse", 9) == 0;
            cusparse_rows += cusparse;
            esmm_rows += !cusparse;
            CHECK(field_is(result, "check", "\"pass\"") ||
                      (cusparse && field_is(result, "not_supported", "true")),
                  "%s: %s passes (or cuSPARSE does not support it): %s", what, kernel, result);
            CHECK(field_is(result, "baseline", "\"cusparse\"") &&
                      !field_is(result, "baseline_kernel", "null") &&
                      !field_is(result, "baseline_ms", "null"),
                  "%s: %s has cuSPARSE's fastest as its baseline: %s", what, kernel, result);
        }
        CHECK(esmm_rows >= 1 && cusparse_rows >= 3, "%s: %d esmm rows, %d cuSPARSE rows", what,
              esmm_rows, cusparse_rows);
        free(file.text);
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(temp_dir, sizeof temp_dir, "%s/esmm-test-cli-csr-XXXXXX",
             tmp != NULL && *tmp ? tmp : "/tmp");
    if (mkdtemp(temp_dir) == NULL) {
        fprintf(stderr, "test_cli_csr: cannot create a temporary directory\n");
        return 1;
    }
    test_parsing();
    test_kernel_selection();
    test_command_line();
    test_generated_runs();
    test_files();
    test_sweep();
    test_gpu();

    static const char *const leftovers[] = {
        "generated.json", "homogeneous.json", "w.mtx",      "pattern.mtx",   "b.npy",
        "x.npy",          "files.json",       "header.mtx", "banner.mtx",    "range.mtx",
        "truncated.mtx",  "value.mtx",        "not.npy",    "sweep.json",    "gpu.json",
        "huge.mtx",       "tall.mtx"};
    for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++)
        remove(temp_path(leftovers[i]));
    rmdir(temp_dir);
    return check_finish();
}
