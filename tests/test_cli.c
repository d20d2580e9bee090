/* Tests of the esmm command-line tool's parts: argument parsing (bench and
 * analyze), kernel lists and sizes, sweep cases, .npy loading and saving
 * (malformed files included), the input generators, operand statistics,
 * error measurement, JSON output and the sweep table.
 *
 * `test_cli --write-fixtures DIR` instead writes the .npy (and .mtx) files
 * that the CTest runs of the esmm binary load (see cli.cmake, mtx.cmake). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze.h"
#include "bench.h"
#include "check.h"
#include "cli_args.h"
#include "generate.h"
#include "json.h"
#include "npy.h"
#include "operand_stats.h"
#include "report.h"
#include "results_file.h"
#include "sweep.h"
#include "verify.h"

/* ---- helpers ---------------------------------------------------------- */

static bool contains(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

/* Splits a space-separated command line (no quoting) into argv; returns argc. */
static int split_line(const char *line, char **argv)
{
    static char buffer[512];
    int argc = 0;
    snprintf(buffer, sizeof buffer, "%s", line);
    for (char *token = strtok(buffer, " "); token != NULL && argc < 32; token = strtok(NULL, " "))
        argv[argc++] = token;
    return argc;
}

static int parse_line(const char *line, bench_options_t *o, cli_error_t *err)
{
    char *argv[32];
    int argc = split_line(line, argv);
    err->text[0] = '\0';
    return bench_parse_args(argc, argv, o, err);
}

static int parse_analyze_line(const char *line, analyze_options_t *o, cli_error_t *err)
{
    char *argv[32];
    int argc = split_line(line, argv);
    err->text[0] = '\0';
    return analyze_parse_args(argc, argv, o, err);
}

static char temp_dir[256];

static const char *temp_path(const char *name)
{
    static char path[2][512];
    static int which;
    which ^= 1;
    snprintf(path[which], sizeof path[which], "%s/%s", temp_dir, name);
    return path[which];
}

static bool write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool ok = fwrite(bytes, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* A .npy image: magic, version, header length (2 bytes for 1.x, 4 after),
 * the header text as given, then data_bytes bytes of float data. */
static size_t build_npy(unsigned char *buf, size_t cap, unsigned major, unsigned minor,
                        const char *header, size_t data_bytes)
{
    size_t header_length = strlen(header);
    size_t at = 0;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = (unsigned char)minor;
    at = 8;
    size_t length_size = major == 1 ? 2 : 4;
    for (size_t i = 0; i < length_size; i++)
        buf[at++] = (unsigned char)(header_length >> (8 * i));
    memcpy(buf + at, header, header_length);
    at += header_length;
    for (size_t i = 0; i < data_bytes && at < cap; i++)
        buf[at++] = (unsigned char)(i % 4 == 3 ? 0x3f : 0x00); /* 0.5f when 4-aligned */
    return at;
}

/* ---- number and option parsing --------------------------------------- */

static void test_number_parsing(void)
{
    cli_error_t err;
    int64_t i64 = 0;
    CHECK(cli_parse_int64("--x", "42", 1, 100, &i64, &err) == 0 && i64 == 42, "plain integer");
    CHECK(cli_parse_int64("--x", "+7", 1, 100, &i64, &err) == 0 && i64 == 7, "leading plus");
    static const char *const bad_integers[] = {"", " 4", "4 ", "4x", "0x10", "1e3", "--4", "-",
                                               "99999999999999999999", "-99999999999999999999",
                                               "101", "0"};
    for (size_t i = 0; i < sizeof bad_integers / sizeof bad_integers[0]; i++) {
        err.text[0] = '\0';
        CHECK(cli_parse_int64("--x", bad_integers[i], 1, 100, &i64, &err) == -1 &&
                  contains(err.text, "--x"),
              "integer '%s' refused with a message (got '%s')", bad_integers[i], err.text);
    }
    uint64_t u64 = 0;
    CHECK(cli_parse_uint64("--seed", "18446744073709551615", &u64, &err) == 0 && u64 == UINT64_MAX,
          "largest seed");
    CHECK(cli_parse_uint64("--seed", "-1", &u64, &err) == -1, "negative seed refused");
    CHECK(cli_parse_uint64("--seed", "18446744073709551616", &u64, &err) == -1, "seed overflow");
    double d = 0.0;
    CHECK(cli_parse_double("--d", "0.25", 0, 1, &d, &err) == 0 && d == 0.25, "plain double");
    CHECK(cli_parse_double("--d", "1e-400", -1, 1, &d, &err) == 0, "underflow to zero is fine");
    static const char *const bad_doubles[] = {"", " 1", "nan", "inf", "-inf", "1e999", "0.5x",
                                              "1.5", "-0.1", "x"};
    for (size_t i = 0; i < sizeof bad_doubles / sizeof bad_doubles[0]; i++)
        CHECK(cli_parse_double("--d", bad_doubles[i], 0, 1, &d, &err) == -1,
              "double '%s' refused", bad_doubles[i]);
    char pattern[9];
    CHECK(cli_parse_pattern("--p", "10110001", pattern, &err) == 0 && strcmp(pattern, "10110001") == 0,
          "pattern");
    CHECK(cli_parse_pattern("--p", "1011000", pattern, &err) == -1, "short pattern");
    CHECK(cli_parse_pattern("--p", "101100011", pattern, &err) == -1, "long pattern");
    CHECK(cli_parse_pattern("--p", "1011000x", pattern, &err) == -1, "non-binary pattern");
}

static void test_good_options(void)
{
    bench_options_t o;
    cli_error_t err;
    CHECK(parse_line("", &o, &err) == 0, "no options: %s", err.text);
    CHECK(o.size == 0 && o.m == 0 && o.runs == BENCH_DEFAULT_RUNS && o.warmup == -1 && o.check &&
              o.seed == 1 && o.alpha == 1.0 && o.beta == 0.0 && strcmp(o.kernels, "all") == 0 &&
              o.backend == ESMM_BACKEND_AUTO && o.reference == BENCH_REFERENCE_AUTO &&
              o.transa == ESMM_OP_N &&
              o.gen_a.kind == GENERATOR_DENSE && o.gen_b.kind == GENERATOR_DENSE,
          "defaults");

    CHECK(parse_line("--size 128 --m=10 --n 20 --k=30 --runs 1 --warmup 0", &o, &err) == 0,
          "sizes: %s", err.text);
    CHECK(o.size == 128 && o.m == 10 && o.n == 20 && o.k == 30 && o.runs == 1 && o.warmup == 0,
          "sizes parsed");

    CHECK(parse_line("--transa T --transb t --alpha -1.5 --beta=2 --seed 7 --no-check", &o, &err) == 0,
          "ops and scalars: %s", err.text);
    CHECK(o.transa == ESMM_OP_T && o.transb == ESMM_OP_T && o.alpha == -1.5 && o.beta == 2.0 &&
              o.seed == 7 && !o.check,
          "ops and scalars parsed");

    CHECK(parse_line("--pattern 11110000 --pattern-b 10101010", &o, &err) == 0, "patterns: %s",
          err.text);
    CHECK(o.gen_a.kind == GENERATOR_PATTERN && strcmp(o.gen_a.pattern, "11110000") == 0 &&
              o.gen_b.kind == GENERATOR_PATTERN && strcmp(o.gen_b.pattern, "10101010") == 0,
          "--pattern-b overrides --pattern for B only");

    CHECK(parse_line("--density-a 0.5", &o, &err) == 0, "density: %s", err.text);
    CHECK(o.gen_a.kind == GENERATOR_DENSITY && o.gen_a.keep == 0.5 && o.gen_b.kind == GENERATOR_DENSE,
          "density A only");

    CHECK(parse_line("--random 0.3", &o, &err) == 0, "random: %s", err.text);
    CHECK(o.gen_a.kind == GENERATOR_RANDOM && o.gen_b.kind == GENERATOR_RANDOM &&
              o.gen_a.zero_probability == 0.3,
          "random applies to both");

    CHECK(parse_line("--load-a a.npy --density-b 0.25 --kernel naive,cublas --json o.json "
                     "--commit abc --backend cpu",
                     &o, &err) == 0,
          "files: %s", err.text);
    CHECK(strcmp(o.load_a, "a.npy") == 0 && o.gen_b.kind == GENERATOR_DENSITY &&
              strcmp(o.kernels, "naive,cublas") == 0 && strcmp(o.json_path, "o.json") == 0 &&
              strcmp(o.commit, "abc") == 0 && o.backend == ESMM_BACKEND_CPU,
          "files parsed");

    CHECK(parse_line("--reference cpu", &o, &err) == 0 && o.reference == BENCH_REFERENCE_CPU,
          "--reference cpu");
    CHECK(parse_line("", &o, &err) == 0 && !o.skip_stats && !o.cached_b && !o.keep_copy &&
              o.sweep == SWEEP_NONE && !o.kernels_given && !o.both_esmm_rows,
          "new flags are off by default");
    CHECK(parse_line("--cached-b --keep-copy", &o, &err) == 0 && o.cached_b && o.keep_copy,
          "--cached-b --keep-copy: %s", err.text);
    CHECK(parse_line("--skip-stats --cached-b --kernel esmm", &o, &err) == 0 && o.skip_stats &&
              o.cached_b && o.kernels_given,
          "--skip-stats --cached-b: %s", err.text);
    CHECK(parse_line("--sweep targets --runs 3 --json t.json", &o, &err) == 0 &&
              o.sweep == SWEEP_TARGETS && o.runs == 3,
          "--sweep targets: %s", err.text);
    CHECK(parse_line("--sweep=density --size 256 --cached-b --kernel sparse-joint --no-check", &o,
                     &err) == 0 &&
              o.sweep == SWEEP_DENSITY && o.size == 256 && o.cached_b && !o.check,
          "--sweep density with a size and extra kernels: %s", err.text);
    CHECK(parse_line("--size 8 --help --bogus", &o, &err) == 0 && o.help, "--help stops parsing");
    CHECK(parse_line("-h", &o, &err) == 0 && o.help, "-h");
    CHECK(parse_line("--alpha -2", &o, &err) == 0 && o.alpha == -2.0, "negative value after a flag");
    /* FLT_MAX and FLT_MIN as numpy prints them round to them in float32. */
    CHECK(parse_line("--alpha 3.4028235e38 --beta -1.17549435e-38", &o, &err) == 0 &&
              (float)o.alpha == FLT_MAX && (float)o.beta == -FLT_MIN,
          "FLT_MAX and FLT_MIN as printed: %s", err.text);
}

static void test_bad_options(void)
{
    static const struct {
        const char *line;
        const char *message; /* expected part of the message */
    } cases[] = {
        {"--size", "--size needs a value"},
        {"--size --runs 3", "--size needs a value"},
        {"--size abc", "not an integer"},
        {"--size -5", "out of range"},
        {"--size 0", "out of range"},
        {"--size 99999999999999999999", "out of range"},
        {"--size 12abc", "not an integer"},
        {"--m 1.5", "not an integer"},
        {"--runs 0", "out of range"},
        {"--warmup -1", "out of range"},
        {"--seed -1", "non-negative"},
        {"--alpha nan", "not a finite number"},
        {"--alpha inf", "not a finite number"},
        {"--alpha 1e39", "out of range"},
        {"--alpha -3.4028236e38", "out of range"},
        {"--beta", "--beta needs a value"},
        {"--density-a 1.5", "out of range"},
        {"--density-b -0.1", "out of range"},
        {"--random 2", "out of range"},
        {"--pattern 0101", "not a pattern"},
        {"--pattern-a 1111000x", "not a pattern"},
        {"--transa X", "expected N or T"},
        {"--backend gpu", "expected auto, cpu or cuda"},
        {"--reference gpu", "expected auto, cpu or cublas"},
        {"--bogus", "unknown option '--bogus'"},
        {"--bogus=3", "unknown option '--bogus'"},
        {"-x", "unexpected argument"},
        {"positional", "unexpected argument 'positional'"},
        {"--no-check=1", "takes no value"},
        {"--kernel=", "empty kernel list"},
        {"--json=", "empty file name"},
        {"--alpha 1e-50", "rounds to zero in float32"},
        {"--beta -1e-46", "rounds to zero in float32"},
        {"--alpha 1e-400", "underflows to zero"},
        {"--beta -1e-40", "subnormal in float32"},
        {"--load-a=", "empty file name"},
        {"--pattern 11110000 --density-a 0.5", "one kind at a time"},
        {"--random 0.5 --density-b 0.5", "one kind at a time"},
        {"--load-a a.npy --density-a 0.5", "--density-a would change A"},
        {"--load-a a.npy --random 0.5", "--random would change A"},
        {"--load-b b.npy --pattern 11110000", "--pattern would change B"},
        {"--load-b b.npy --pattern-b 11110000", "--pattern-b would change B"},
        {"--skip-stats=1", "--skip-stats takes no value"},
        {"--cached-b=yes", "--cached-b takes no value"},
        {"--sweep", "--sweep needs a value"},
        {"--sweep fast", "expected targets or density, got 'fast'"},
        {"--sweep Targets", "expected targets or density"},
        {"--sweep targets --density-a 0.5", "--density-* cannot be used with it"},
        {"--sweep density --pattern 11110000", "--pattern* cannot be used"},
        {"--sweep density --random 0.5", "--random cannot be used"},
        {"--sweep targets --load-a a.npy", "--load-* cannot be used"},
        {"--sweep targets --m 64", "--m/--n/--k cannot be used"},
        {"--k 64 --sweep density", "--m/--n/--k cannot be used"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench_options_t o;
        cli_error_t err;
        int rc = parse_line(cases[i].line, &o, &err);
        CHECK(rc == -1 && contains(err.text, cases[i].message),
              "'%s' must fail with '%s', got rc %d and '%s'", cases[i].line, cases[i].message, rc,
              err.text);
    }
}

static void test_kernel_lists(void)
{
    static const char *const available[] = {"naive", "smem", "cpu-skip-a"};
    const char *out[3 + BENCH_EXTRA_KERNELS];
    cli_error_t err;
    int count = bench_resolve_kernels("all", available, 3, false, out, &err);
    CHECK(count == 5 && strcmp(out[0], "naive") == 0 && strcmp(out[2], "cpu-skip-a") == 0 &&
              strcmp(out[3], "esmm") == 0 && strcmp(out[4], "cublas") == 0,
          "all expands in order (count %d)", count);
    count = bench_resolve_kernels("all", available, 3, true, out, &err);
    CHECK(count == 7 && strcmp(out[4], "cublas") == 0 && strcmp(out[5], "extract-a") == 0 &&
              strcmp(out[6], "extract-b") == 0,
          "all with extraction ends with extract-a, extract-b (count %d)", count);
    count = bench_resolve_kernels("smem,naive,smem,all", available, 3, false, out, &err);
    CHECK(count == 5 && strcmp(out[0], "smem") == 0 && strcmp(out[1], "naive") == 0,
          "duplicates dropped, order kept (count %d)", count);
    count = bench_resolve_kernels("cublas", available, 3, false, out, &err);
    CHECK(count == 1 && strcmp(out[0], "cublas") == 0, "cublas alone");
    count = bench_resolve_kernels("extract-b,esmm,extract-a", available, 3, false, out, &err);
    CHECK(count == 3 && strcmp(out[0], "extract-b") == 0 && strcmp(out[2], "extract-a") == 0,
          "extraction rows are accepted by name everywhere (count %d: %s)", count, err.text);
    static const struct {
        const char *list, *message;
    } bad[] = {
        {"nosuch", "unknown kernel 'nosuch'"},
        {"naive,nosuch", "unknown kernel 'nosuch'"},
        {"naive,,smem", "empty name"},
        {",", "empty name"},
        {"naive,", "empty name"},
        {"Naive", "unknown kernel 'Naive'"},
        {"nai", "unknown kernel 'nai'"},
        {"alll", "unknown kernel 'alll'"},
        {"extract", "unknown kernel 'extract'"},
        {"extract-c", "unknown kernel 'extract-c'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.text[0] = '\0';
        count = bench_resolve_kernels(bad[i].list, available, 3, true, out, &err);
        CHECK(count == -1 && contains(err.text, bad[i].message), "kernel list '%s': '%s'",
              bad[i].list, err.text);
    }
    err.text[0] = '\0';
    bench_resolve_kernels("x", available, 3, false, out, &err);
    CHECK(contains(err.text, "naive, smem, cpu-skip-a, esmm, cublas, extract-a, extract-b, all"),
          "the message lists the kernels: '%s'", err.text);
}

static void test_sweeps(void)
{
    sweep_case_t cases[SWEEP_MAX_CASES];
    CHECK(sweep_cases(SWEEP_NONE, 4096, cases) == 0, "no sweep, no cases");
    int count = sweep_cases(SWEEP_TARGETS, 4096, cases);
    CHECK(count == 14, "the target table has 14 rows (got %d)", count);
    int both = 0, a_only = 0, b_only = 0, random = 0, at_base = 0;
    for (int i = 0; i < count; i++) {
        const sweep_case_t *c = &cases[i];
        bool a_density = c->gen_a.kind == GENERATOR_DENSITY;
        bool b_density = c->gen_b.kind == GENERATOR_DENSITY;
        both += a_density && b_density && c->gen_a.keep == c->gen_b.keep;
        a_only += a_density && c->gen_b.kind == GENERATOR_DENSE;
        b_only += b_density && c->gen_a.kind == GENERATOR_DENSE;
        random += c->gen_a.kind == GENERATOR_RANDOM && c->gen_b.kind == GENERATOR_RANDOM &&
                  c->gen_a.zero_probability == 0.5;
        at_base += c->size == 4096;
        CHECK(c->target > 0.0 && c->label[0] != '\0', "case %d has a label and a target", i);
    }
    CHECK(both == 7 && a_only == 3 && b_only == 3 && random == 1 && at_base == 11,
          "4 + 3 sizes both, 3 A only, 3 B only, 1 random; 11 at the base size "
          "(%d, %d, %d, %d, %d)", both, a_only, b_only, random, at_base);
    CHECK(cases[0].gen_a.keep == 1.0 && cases[0].target == 0.97 && cases[3].gen_a.keep == 0.125 &&
              cases[3].target == 12.0 && strcmp(cases[3].label, "d = 0.125 (both)") == 0,
          "first and last density rows: '%s' %g", cases[3].label, cases[3].target);
    CHECK(cases[4].gen_a.keep == 0.5 && cases[4].target == 1.7 && cases[9].gen_b.keep == 0.125 &&
              cases[9].target == 6.0 && contains(cases[9].label, "B only"),
          "one-operand rows: '%s'", cases[9].label);
    CHECK(cases[10].size == 1024 && cases[11].size == 2048 && cases[12].size == 8192 &&
              cases[10].gen_a.keep == 0.25 && contains(cases[12].label, "8192"),
          "the size rows at 4096: %lld %lld %lld", (long long)cases[10].size,
          (long long)cases[11].size, (long long)cases[12].size);
    count = sweep_cases(SWEEP_TARGETS, 2, cases);
    bool positive = true;
    for (int i = 0; i < count; i++)
        positive = positive && cases[i].size >= 1;
    CHECK(positive && cases[10].size == 1 && cases[12].size == 4, "a tiny base keeps sizes >= 1");
    count = sweep_cases(SWEEP_DENSITY, 512, cases);
    CHECK(count == 9 && cases[0].gen_a.keep == 1.0 && cases[1].gen_b.keep == 0.875 &&
              cases[7].gen_a.keep == 0.125 && cases[8].gen_b.keep == 0.0625 && cases[8].size == 512 &&
              cases[8].target == 0.0,
          "density sweep: 1, 0.875, ..., 0.125, 0.0625 (count %d)", count);
    CHECK(strcmp(sweep_name(SWEEP_TARGETS), "targets") == 0 &&
              strcmp(sweep_name(SWEEP_DENSITY), "density") == 0,
          "sweep names");
}

static void test_analyze_options(void)
{
    analyze_options_t o;
    cli_error_t err;
    CHECK(parse_analyze_line("a.npy", &o, &err) == 0 && strcmp(o.path_a, "a.npy") == 0 &&
              o.path_b == NULL && !o.bench && o.check && o.n == 0 && o.runs == BENCH_DEFAULT_RUNS &&
              o.transa == ESMM_OP_N && o.backend == ESMM_BACKEND_AUTO,
          "A only, defaults: %s", err.text);
    CHECK(parse_analyze_line("--transa T a.npy --bench b.npy --transb=t --runs 3 --warmup 0 "
                             "--json r.json --commit x --backend cpu --no-check",
                             &o, &err) == 0 &&
              strcmp(o.path_b, "b.npy") == 0 && o.transa == ESMM_OP_T && o.transb == ESMM_OP_T &&
              o.bench && o.runs == 3 && o.warmup == 0 && strcmp(o.json_path, "r.json") == 0 &&
              o.backend == ESMM_BACKEND_CPU && !o.check,
          "files among options: %s", err.text);
    CHECK(parse_analyze_line("a.npy --n 64 --seed 9", &o, &err) == 0 && o.n == 64 && o.seed == 9,
          "--n without B: %s", err.text);
    CHECK(parse_analyze_line("--runs 4 --no-check a.npy --bench", &o, &err) == 0 && o.bench &&
              o.runs == 4 && !o.check,
          "--bench's options before --bench: %s", err.text);
    CHECK(parse_analyze_line("--help a b c d", &o, &err) == 0 && o.help, "--help");
    static const struct {
        const char *line, *message;
    } bad[] = {
        {"", "no matrix given"},
        {"--bench", "no matrix given"},
        {"a.npy b.npy c.npy", "at most two files"},
        {"a.npy b.npy --n 8", "--n is for a run without B.npy"},
        {"a.npy --json r.json", "--json is an option of --bench, which is not given; add --bench"},
        {"a.npy --runs 3", "--runs is an option of --bench"},
        {"a.npy --warmup 0", "--warmup is an option of --bench"},
        {"a.npy --no-check", "--no-check is an option of --bench"},
        {"--commit x a.npy", "--commit is an option of --bench"},
        {"a.npy --commit x --runs 3 --backend cpu", "--commit is an option of --bench"},
        {"a.npy -x", "unexpected argument '-x'"},
        {"a.npy --size 8", "unknown option '--size'"},
        {"a.npy --n 0", "out of range"},
        {"a.npy --runs", "--runs needs a value"},
        {"a.npy --transb X", "expected N or T"},
        {"a.npy --backend gpu", "expected auto, cpu or cuda"},
        {"a.npy --bench=1", "takes no value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse_analyze_line(bad[i].line, &o, &err);
        CHECK(rc == -1 && contains(err.text, bad[i].message), "analyze '%s' must fail with '%s': '%s'",
              bad[i].line, bad[i].message, err.text);
    }
}

static void test_shapes(void)
{
    bench_options_t o;
    cli_error_t err;
    stored_shape_t none = {0, 0, NULL};
    int64_t m, n, k;
    parse_line("", &o, &err);
    CHECK(bench_resolve_shape(&o, none, none, 512, &m, &n, &k, &err) == 0 && m == 512 && n == 512 &&
              k == 512,
          "default size");
    parse_line("--size 100 --n 7", &o, &err);
    CHECK(bench_resolve_shape(&o, none, none, 512, &m, &n, &k, &err) == 0 && m == 100 && n == 7 &&
              k == 100,
          "--n overrides --size");

    stored_shape_t a = {64, 32, "a.npy"}, b = {32, 16, "b.npy"};
    parse_line("--load-a a.npy", &o, &err);
    CHECK(bench_resolve_shape(&o, a, none, 512, &m, &n, &k, &err) == 0 && m == 64 && k == 32 &&
              n == 512,
          "A N: m x k from the file, n default");
    parse_line("--load-a a.npy --transa T", &o, &err);
    CHECK(bench_resolve_shape(&o, a, none, 512, &m, &n, &k, &err) == 0 && m == 32 && k == 64,
          "A T: stored k x m");
    parse_line("--load-a a.npy --load-b b.npy", &o, &err);
    CHECK(bench_resolve_shape(&o, a, b, 512, &m, &n, &k, &err) == 0 && m == 64 && k == 32 && n == 16,
          "both files");
    parse_line("--load-a a.npy --load-b b.npy --transb T", &o, &err);
    err.text[0] = '\0';
    CHECK(bench_resolve_shape(&o, a, b, 512, &m, &n, &k, &err) == -1 && contains(err.text, "disagree"),
          "B T stored 32 x 16 gives k = 16, A says 32: '%s'", err.text);
    parse_line("--load-a a.npy --m 10", &o, &err);
    CHECK(bench_resolve_shape(&o, a, none, 512, &m, &n, &k, &err) == -1 &&
              contains(err.text, "m = 10 from --m") && contains(err.text, "a.npy"),
          "--m against the file: '%s'", err.text);
    parse_line("--load-a a.npy --size 64", &o, &err);
    CHECK(bench_resolve_shape(&o, a, none, 512, &m, &n, &k, &err) == -1, "--size 64 vs k = 32");
}

/* ---- .npy ------------------------------------------------------------- */

static void test_npy_round_trip(void)
{
    cli_error_t err;
    /* A 3 x 5 matrix inside a leading dimension of 7, with special values. */
    float source[3 * 7];
    for (int i = 0; i < 3 * 7; i++)
        source[i] = (float)i * 0.37f - 2.0f;
    source[1] = -0.0f;
    source[2] = NAN;
    source[3] = INFINITY;
    source[7 + 4] = -INFINITY;
    source[14] = 1e-40f; /* subnormal */
    const char *path = temp_path("round.npy");
    CHECK(npy_save_f32(path, source, 3, 5, 7, &err) == NPY_OK, "save: %s", err.text);
    npy_matrix_t loaded;
    CHECK(npy_load_f32(path, &loaded, &err) == NPY_OK, "load: %s", err.text);
    CHECK(loaded.rows == 3 && loaded.cols == 5, "shape %lld x %lld", (long long)loaded.rows,
          (long long)loaded.cols);
    bool equal = loaded.data != NULL;
    for (int i = 0; equal && i < 3; i++)
        equal = memcmp(loaded.data + i * 5, source + i * 7, 5 * sizeof(float)) == 0;
    CHECK(equal, "round trip is bit for bit");
    npy_matrix_free(&loaded);

    /* numpy aligns the data to 64 bytes. */
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_size - 3 * 5 * 4) % 64 == 0, "header padded to 64 bytes");

    float one = 3.5f;
    CHECK(npy_save_f32(temp_path("one.npy"), &one, 1, 1, 1, &err) == NPY_OK &&
              npy_load_f32(temp_path("one.npy"), &loaded, &err) == NPY_OK && loaded.rows == 1 &&
              loaded.cols == 1 && loaded.data[0] == 3.5f,
          "1 x 1 round trip");
    npy_matrix_free(&loaded);
    CHECK(npy_save_f32(temp_path("bad.npy"), source, 3, 5, 4, &err) == NPY_ERR_SHAPE,
          "save refuses ld < cols");
    CHECK(npy_save_f32("/nonexistent-dir/x.npy", source, 3, 5, 7, &err) == NPY_ERR_IO &&
              contains(err.text, "cannot create"),
          "save into a missing directory: '%s'", err.text);
}

/* A file holding no element loads as such, and is refused as an operand. */
static void test_npy_operand(void)
{
    cli_error_t err = {""};
    npy_matrix_t loaded;
    static const int64_t shapes[][2] = {{0, 5}, {4, 0}, {0, 0}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t rows = shapes[i][0], cols = shapes[i][1];
        const char *path = temp_path("no_element.npy");
        CHECK(npy_save_f32(path, NULL, rows, cols, cols > 0 ? cols : 1, &err) == NPY_OK,
              "save %lld x %lld: %s", (long long)rows, (long long)cols, err.text);
        CHECK(npy_load_f32(path, &loaded, &err) == NPY_OK && loaded.rows == rows &&
                  loaded.cols == cols,
              "%lld x %lld loads: %s", (long long)rows, (long long)cols, err.text);
        npy_matrix_free(&loaded);
        char expected[64];
        snprintf(expected, sizeof expected, "no_element.npy: B is empty (%lld x %lld)",
                 (long long)rows, (long long)cols);
        CHECK(npy_load_operand(path, "B", &loaded, &err) == -1 && contains(err.text, expected) &&
                  loaded.data == NULL && loaded.rows == 0 && loaded.cols == 0,
              "%lld x %lld is refused as an operand, the output left empty: '%s'", (long long)rows,
              (long long)cols, err.text);
    }
    float one = 2.0f;
    const char *path = temp_path("one.npy");
    CHECK(npy_save_f32(path, &one, 1, 1, 1, &err) == NPY_OK &&
              npy_load_operand(path, "A", &loaded, &err) == 0 && loaded.rows == 1 &&
              loaded.cols == 1 && loaded.data[0] == 2.0f,
          "a 1 x 1 operand loads: %s", err.text);
    npy_matrix_free(&loaded);
    CHECK(npy_load_operand(temp_path("does-not-exist.npy"), "A", &loaded, &err) == -1 &&
              contains(err.text, "cannot open"),
          "an operand that cannot be read: '%s'", err.text);
    remove(temp_path("no_element.npy"));
}

/* Loads the bytes through a pipe (/dev/fd/N), which cannot seek, as from
 * `cat x.npy | esmm analyze /dev/stdin`. A writer process feeds it, so more
 * than the pipe's buffer can pass. */
static npy_status_t load_from_pipe(const unsigned char *bytes, size_t n, npy_matrix_t *out,
                                   cli_error_t *err)
{
    int fds[2];
    if (pipe(fds) != 0) {
        cli_error_set(err, "pipe: %s", strerror(errno));
        return NPY_ERR_IO;
    }
    pid_t writer = fork();
    if (writer == 0) {
        close(fds[0]);
        for (size_t done = 0; done < n;) {
            ssize_t written = write(fds[1], bytes + done, n - done);
            if (written <= 0)
                _exit(1);
            done += (size_t)written;
        }
        _exit(0);
    }
    close(fds[1]);
    npy_status_t st = NPY_ERR_IO;
    if (writer < 0) {
        cli_error_set(err, "fork: %s", strerror(errno));
    } else {
        char path[64];
        snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
        st = npy_load_f32(path, out, err);
    }
    close(fds[0]); /* a writer the loader stopped reading from ends on SIGPIPE */
    if (writer > 0)
        waitpid(writer, NULL, 0);
    return st;
}

/* A pipe's length is unknown until it ends: what a header declares must not
 * be allocated before the data arrives, and what does arrive must load. */
static void test_npy_from_pipe(void)
{
    unsigned char buf[256];
    npy_matrix_t loaded;
    cli_error_t err = {""};

    /* Past the first buffer (1 MiB), so the buffer grows twice. */
    const int64_t rows = 700, cols = 1000;
    char header[128];
    snprintf(header, sizeof header,
             "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld), }\n",
             (long long)rows, (long long)cols);
    size_t header_bytes = build_npy(buf, sizeof buf, 1, 0, header, 0);
    const size_t data_bytes = (size_t)(rows * cols) * sizeof(float);
    const size_t total = header_bytes + data_bytes;
    unsigned char *file = malloc(total);
    CHECK(file != NULL, "out of host memory");
    if (file == NULL)
        return;
    memcpy(file, buf, header_bytes);
    for (int64_t i = 0; i < rows * cols; i++) {
        float x = (float)i * 0.25f - 3.0f;
        memcpy(file + header_bytes + (size_t)i * sizeof x, &x, sizeof x);
    }
    npy_status_t st = load_from_pipe(file, total, &loaded, &err);
    bool equal = st == NPY_OK && loaded.rows == rows && loaded.cols == cols &&
                 memcmp(loaded.data, file + header_bytes, data_bytes) == 0;
    CHECK(equal, "a %lld x %lld matrix through a pipe loads bit for bit: %d '%s'", (long long)rows,
          (long long)cols, (int)st, err.text);
    npy_matrix_free(&loaded);
    st = load_from_pipe(file, total - 4, &loaded, &err);
    CHECK(st == NPY_ERR_TRUNCATED && contains(err.text, "(2799996 of 2800000 bytes present)"),
          "one float short through a pipe: %d '%s'", (int)st, err.text);
    free(file);

    size_t n = build_npy(buf, sizeof buf, 1, 0,
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 20);
    st = load_from_pipe(buf, n, &loaded, &err);
    CHECK(st == NPY_ERR_TRAILING && contains(err.text, "unexpected bytes"),
          "trailing bytes through a pipe: %d '%s'", (int)st, err.text);

    /* Headers declaring 2^40 and 2^60 elements (4 TiB and 4 EiB, which no
     * machine allocates), then 16 bytes: truncated, not out of memory. */
    static const char *const huge[][2] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }\n",
         "(16 of 4398046511104 bytes present)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 536870912), }\n",
         "(16 of 4611686018427387904 bytes present)"},
    };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        n = build_npy(buf, sizeof buf, 1, 0, huge[i][0], 16);
        st = load_from_pipe(buf, n, &loaded, &err);
        CHECK(st == NPY_ERR_TRUNCATED && contains(err.text, "truncated") &&
                  contains(err.text, huge[i][1]) && loaded.data == NULL,
              "a header promising more than the pipe holds: %d '%s'", (int)st, err.text);
    }
}

static void test_npy_variants(void)
{
    cli_error_t err;
    unsigned char buf[512];
    npy_matrix_t loaded;

    /* Fortran order: the stored column-major 2 x 3 [[1,2,3],[4,5,6]] is 1,4,2,5,3,6. */
    const float column_major[6] = {1, 4, 2, 5, 3, 6};
    size_t n = build_npy(buf, sizeof buf, 1, 0,
                         "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", 0);
    memcpy(buf + n, column_major, sizeof column_major);
    write_bytes(temp_path("fortran.npy"), buf, n + sizeof column_major);
    CHECK(npy_load_f32(temp_path("fortran.npy"), &loaded, &err) == NPY_OK, "fortran: %s", err.text);
    bool ok = loaded.rows == 2 && loaded.cols == 3;
    for (int i = 0; ok && i < 6; i++)
        ok = loaded.data[i] == (float)(i + 1);
    CHECK(ok, "Fortran order is transposed to row-major");
    npy_matrix_free(&loaded);

    /* Version 2.0 (4-byte header length), double quotes, no trailing comma. */
    n = build_npy(buf, sizeof buf, 2, 0,
                  "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}   \n", 8);
    write_bytes(temp_path("v2.npy"), buf, n);
    CHECK(npy_load_f32(temp_path("v2.npy"), &loaded, &err) == NPY_OK && loaded.rows == 1 &&
              loaded.cols == 2 && loaded.data[0] == 0.5f,
          "version 2.0: %s", err.text);
    npy_matrix_free(&loaded);

    n = build_npy(buf, sizeof buf, 3, 0, "{'descr':'<f4','fortran_order':False,'shape':(2,1,)}", 8);
    write_bytes(temp_path("v3.npy"), buf, n);
    CHECK(npy_load_f32(temp_path("v3.npy"), &loaded, &err) == NPY_OK && loaded.rows == 2 &&
              loaded.cols == 1,
          "version 3.0, compact header: %s", err.text);
    npy_matrix_free(&loaded);
}

static void test_npy_malformed(void)
{
    static const char good_header[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
    static const struct {
        const char *name;
        unsigned major, minor;
        const char *header; /* NULL: the raw bytes below are the whole file */
        size_t data_bytes;
        const char *raw;
        size_t raw_length;
        npy_status_t expected;
        const char *message;
    } cases[] = {
        {"empty.npy", 0, 0, NULL, 0, "", 0, NPY_ERR_MAGIC, "too short"},
        {"short.npy", 0, 0, NULL, 0, "\x93NUM", 4, NPY_ERR_MAGIC, "too short"},
        {"magic.npy", 0, 0, NULL, 0, "\x93NUMPX\x01\x00\x10\x00{}", 12, NPY_ERR_MAGIC, "not a .npy"},
        {"text.npy", 0, 0, NULL, 0, "hello, world, this is text", 26, NPY_ERR_MAGIC, "not a .npy"},
        {"v4.npy", 4, 0, good_header, 16, NULL, 0, NPY_ERR_VERSION, "version 4.0"},
        {"v11.npy", 1, 1, good_header, 16, NULL, 0, NPY_ERR_VERSION, "version 1.1"},
        {"v0.npy", 0, 0, good_header, 16, NULL, 0, NPY_ERR_VERSION, "version 0.0"},
        {"nolength.npy", 0, 0, NULL, 0, "\x93NUMPY\x01\x00\x10", 9, NPY_ERR_HEADER, "header length"},
        {"huge_header.npy", 0, 0, NULL, 0, "\x93NUMPY\x02\x00\xf0\xff\xff\xff{", 13, NPY_ERR_HEADER,
         "implausible"},
        {"cut_header.npy", 0, 0, NULL, 0, "\x93NUMPY\x01\x00\x40\x00{'descr'", 18, NPY_ERR_HEADER,
         "ends inside the header"},
        {"f8.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 32, NULL, 0,
         NPY_ERR_DTYPE, "'<f8'"},
        {"bigendian.npy", 1, 0, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", 16,
         NULL, 0, NPY_ERR_DTYPE, "'>f4'"},
        {"int.npy", 1, 0, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", 16, NULL, 0,
         NPY_ERR_DTYPE, "'<i4'"},
        {"structured.npy", 1, 0, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
         8, NULL, 0, NPY_ERR_HEADER, "quoted string"},
        {"rank1.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16, NULL, 0,
         NPY_ERR_RANK, "has 1, shape (4,)"},
        {"rank3.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1), }", 16,
         NULL, 0, NPY_ERR_RANK, "has 3, shape (2, 2, 1)"},
        {"rank0.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, NULL, 0,
         NPY_ERR_RANK, "has 0"},
        {"truncated.npy", 1, 0, good_header, 12, NULL, 0, NPY_ERR_TRUNCATED, "truncated"},
        {"nodata.npy", 1, 0, good_header, 0, NULL, 0, NPY_ERR_TRUNCATED, "truncated"},
        {"trailing.npy", 1, 0, good_header, 20, NULL, 0, NPY_ERR_TRAILING, "4 unexpected bytes"},
        {"unknown_key.npy", 1, 0,
         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}", 16, NULL, 0,
         NPY_ERR_HEADER, "unknown key"},
        {"missing_key.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False}", 16, NULL, 0,
         NPY_ERR_HEADER, "missing key"},
        {"repeated_key.npy", 1, 0,
         "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}", 16, NULL, 0,
         NPY_ERR_HEADER, "repeated key"},
        {"not_dict.npy", 1, 0, "garbage garbage garbage", 16, NULL, 0, NPY_ERR_HEADER, "expected '{'"},
        {"bad_bool.npy", 1, 0, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 2)}", 16, NULL,
         0, NPY_ERR_HEADER, "True or False"},
        {"bad_dim.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}", 16, NULL,
         0, NPY_ERR_HEADER, "dimension"},
        {"negative_dim.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2)}", 16,
         NULL, 0, NPY_ERR_HEADER, "dimension"},
        {"no_comma.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 2)}", 16, NULL,
         0, NPY_ERR_HEADER, "expected ',' or ')'"},
        {"open_tuple.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2", 16, NULL,
         0, NPY_ERR_HEADER, "malformed"},
        {"unterminated.npy", 1, 0, "{'descr': '<f4", 16, NULL, 0, NPY_ERR_HEADER, "unterminated"},
        {"after_brace.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)} x", 16,
         NULL, 0, NPY_ERR_HEADER, "after '}'"},
        {"overflow_dim.npy", 1, 0,
         "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 2)}", 16, NULL, 0,
         NPY_ERR_HEADER, "too large"},
        {"overflow_bytes.npy", 1, 0,
         "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", 16, NULL, 0,
         NPY_ERR_SHAPE, "too large"},
        {"huge_promise.npy", 1, 0,
         "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000)}", 16, NULL, 0,
         NPY_ERR_TRUNCATED, "truncated"},
        {"long_descr.npy", 1, 0,
         "{'descr': '<f4aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'fortran_order': False}", 16,
         NULL, 0, NPY_ERR_HEADER, "too long"},
    };
    unsigned char buf[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n;
        if (cases[i].header != NULL) {
            n = build_npy(buf, sizeof buf, cases[i].major, cases[i].minor, cases[i].header,
                          cases[i].data_bytes);
        } else {
            memcpy(buf, cases[i].raw, cases[i].raw_length);
            n = cases[i].raw_length;
        }
        const char *path = temp_path(cases[i].name);
        CHECK(write_bytes(path, buf, n), "writing %s", path);
        npy_matrix_t loaded = {7, 7, NULL};
        cli_error_t err = {""};
        npy_status_t st = npy_load_f32(path, &loaded, &err);
        CHECK(st == cases[i].expected && contains(err.text, cases[i].message) &&
                  contains(err.text, cases[i].name),
              "%s: expected status %d with '%s', got %d: '%s'", cases[i].name, (int)cases[i].expected,
              cases[i].message, (int)st, err.text);
        CHECK(loaded.data == NULL && loaded.rows == 0 && loaded.cols == 0, "%s: output left empty",
              cases[i].name);
        remove(path);
    }
    /* A NUL inside the header. */
    size_t n = build_npy(buf, sizeof buf, 1, 0, "{'descr': '<f4', 'fortran_order': False}", 0);
    buf[12] = '\0';
    write_bytes(temp_path("nul.npy"), buf, n);
    npy_matrix_t loaded;
    cli_error_t err = {""};
    CHECK(npy_load_f32(temp_path("nul.npy"), &loaded, &err) == NPY_ERR_HEADER,
          "NUL in the header: '%s'", err.text);
    remove(temp_path("nul.npy"));

    CHECK(npy_load_f32(temp_path("does-not-exist.npy"), &loaded, &err) == NPY_ERR_IO &&
              contains(err.text, "cannot open"),
          "missing file: '%s'", err.text);
    CHECK(npy_load_f32(temp_dir, &loaded, &err) == NPY_ERR_IO, "a directory: '%s'", err.text);
}

/* ---- generators ------------------------------------------------------- */

static void test_dense_generator(void)
{
    const int64_t m = 37, k = 45;
    float *a_n = malloc(sizeof(float) * (size_t)(m * k));
    float *a_t = malloc(sizeof(float) * (size_t)(m * k));
    generator_t dense = {GENERATOR_DENSE, "", 1.0, 0.0};
    operand_view_t vn = operand_view_a(a_n, ESMM_OP_N, m, k);
    operand_view_t vt = operand_view_a(a_t, ESMM_OP_T, m, k);
    generate_operand(&vn, &dense, 5, GENERATE_STREAM_A);
    generate_operand(&vt, &dense, 5, GENERATE_STREAM_A);
    bool in_range = true, same = true;
    double sum = 0.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++) {
            float x = a_n[operand_index(&vn, i, kk)];
            in_range = in_range && x != 0.0f && x > -1.0f && x < 1.0f;
            same = same && x == a_t[operand_index(&vt, i, kk)];
            sum += x;
        }
    CHECK(in_range, "dense values in (-1, 1) and never zero");
    CHECK(same, "op(A) does not depend on the storage order");
    CHECK(fabs(sum / (double)(m * k)) < 0.1, "mean near zero (%g)", sum / (double)(m * k));

    generate_operand(&vt, &dense, 6, GENERATE_STREAM_A);
    int differ = 0;
    for (int64_t i = 0; i < m * k; i++)
        differ += a_n[i] != a_t[operand_index(&vt, i / k, i % k)];
    CHECK(differ > m * k * 9 / 10, "another seed gives other values");
    free(a_n);
    free(a_t);
}

/* Every (strip, kk) slice is entirely zero or entirely nonzero. */
static void check_strips(const operand_view_t *v, int64_t *zero_slices, int64_t *kept_slices,
                         bool *all_or_nothing)
{
    *zero_slices = *kept_slices = 0;
    *all_or_nothing = true;
    for (int64_t strip = 0; strip * GENERATE_STRIP < v->outer; strip++)
        for (int64_t kk = 0; kk < v->k; kk++) {
            int64_t zeros = 0, size = 0;
            for (int64_t x = strip * GENERATE_STRIP; x < v->outer && x < (strip + 1) * GENERATE_STRIP;
                 x++, size++)
                zeros += v->data[operand_index(v, x, kk)] == 0.0f;
            if (zeros == size)
                (*zero_slices)++;
            else if (zeros == 0)
                (*kept_slices)++;
            else
                *all_or_nothing = false;
        }
}

static void test_density_generator(void)
{
    const int64_t outer = 100, k = 64; /* 100 rows: a partial last strip */
    float *data = malloc(sizeof(float) * (size_t)(outer * k));
    for (int transposed = 0; transposed < 2; transposed++) {
        for (int operand = 0; operand < 2; operand++) {
            esmm_operation_t op = transposed ? ESMM_OP_T : ESMM_OP_N;
            operand_view_t v = operand == 0 ? operand_view_a(data, op, outer, k)
                                            : operand_view_b(data, op, k, outer);
            generator_t g = {GENERATOR_DENSITY, "", 0.5, 0.0};
            generate_operand(&v, &g, 11, operand == 0 ? GENERATE_STREAM_A : GENERATE_STREAM_B);
            int64_t zero_slices, kept_slices;
            bool all_or_nothing;
            check_strips(&v, &zero_slices, &kept_slices, &all_or_nothing);
            CHECK(all_or_nothing, "density %s op %d: strips are all zero or all nonzero",
                  operand ? "B" : "A", transposed);
            /* 4 strips x 64 columns at probability 1/2. */
            CHECK(zero_slices > 80 && kept_slices > 80, "density %s op %d: %lld zero, %lld kept",
                  operand ? "B" : "A", transposed, (long long)zero_slices, (long long)kept_slices);
            int64_t counts[64];
            count_nonzeros_per_k(&v, counts);
            bool consistent = true;
            for (int64_t kk = 0; kk < k; kk++)
                consistent = consistent && (counts[kk] >= 0 && counts[kk] <= outer);
            CHECK(consistent, "nonzero counts in range");
        }
    }
    operand_view_t v = operand_view_a(data, ESMM_OP_N, outer, k);
    int64_t zero_slices, kept_slices;
    bool all_or_nothing;
    generator_t keep_all = {GENERATOR_DENSITY, "", 1.0, 0.0};
    generate_operand(&v, &keep_all, 3, GENERATE_STREAM_A);
    check_strips(&v, &zero_slices, &kept_slices, &all_or_nothing);
    CHECK(zero_slices == 0 && kept_slices == 4 * k, "density 1 keeps everything");
    generator_t keep_none = {GENERATOR_DENSITY, "", 0.0, 0.0};
    generate_operand(&v, &keep_none, 3, GENERATE_STREAM_A);
    check_strips(&v, &zero_slices, &kept_slices, &all_or_nothing);
    CHECK(zero_slices == 4 * k && kept_slices == 0, "density 0 zeroes everything");
    free(data);
}

static void test_pattern_and_random_generators(void)
{
    const int64_t outer = 40, k = 27;
    float data[40 * 27];
    generator_t pattern = {GENERATOR_PATTERN, "10110010", 1.0, 0.0};
    operand_view_t vb = operand_view_b(data, ESMM_OP_N, k, outer);
    generate_operand(&vb, &pattern, 1, GENERATE_STREAM_B);
    bool follows = true;
    for (int64_t x = 0; x < outer; x++)
        for (int64_t kk = 0; kk < k; kk++) {
            bool zero = data[operand_index(&vb, x, kk)] == 0.0f;
            follows = follows && zero == (pattern.pattern[kk % 8] == '0');
        }
    CHECK(follows, "pattern: row kk of op(B) is zero exactly where P[kk %% 8] == '0'");
    CHECK(generator_density(&pattern) == 0.5, "pattern density is its share of ones");

    operand_view_t va = operand_view_a(data, ESMM_OP_T, outer, k);
    generator_t random = {GENERATOR_RANDOM, "", 1.0, 0.3};
    generate_operand(&va, &random, 9, GENERATE_STREAM_A);
    int64_t zeros = 0;
    for (int64_t i = 0; i < outer * k; i++)
        zeros += data[i] == 0.0f;
    double fraction = (double)zeros / (double)(outer * k);
    CHECK(fraction > 0.25 && fraction < 0.35, "random 0.3: %.3f zeros", fraction);
    random.zero_probability = 0.0;
    generate_operand(&va, &random, 9, GENERATE_STREAM_A);
    zeros = 0;
    for (int64_t i = 0; i < outer * k; i++)
        zeros += data[i] == 0.0f;
    CHECK(zeros == 0, "random 0: no zeros");
    random.zero_probability = 1.0;
    generate_operand(&va, &random, 9, GENERATE_STREAM_A);
    zeros = 0;
    for (int64_t i = 0; i < outer * k; i++)
        zeros += data[i] == 0.0f;
    CHECK(zeros == outer * k, "random 1: all zeros");
}

static void test_statistics(void)
{
    /* op(A) 2 x 3 = [[1, 0, 2], [0, 0, 3]]; op(B) 3 x 2 = [[1, 1], [5, 0], [0, NaN]]. */
    float a[6] = {1, 0, 2, 0, 0, 3};
    float b[6] = {1, 1, 5, 0, 0, NAN};
    operand_view_t va = operand_view_a(a, ESMM_OP_N, 2, 3);
    operand_view_t vb = operand_view_b(b, ESMM_OP_N, 3, 2);
    int64_t na[3], nb[3];
    count_nonzeros_per_k(&va, na);
    count_nonzeros_per_k(&vb, nb);
    CHECK(na[0] == 1 && na[1] == 0 && na[2] == 2, "A counts per column");
    CHECK(nb[0] == 2 && nb[1] == 1 && nb[2] == 1, "B counts per row (NaN counts as nonzero)");
    CHECK(effective_flops(na, nb, 3) == 2.0 * (1 * 2 + 0 * 1 + 2 * 1), "useful products");
    double norms[2];
    operand_norms(&va, norms);
    CHECK(fabs(norms[0] - sqrt(5.0)) < 1e-12 && norms[1] == 3.0, "row norms of op(A)");
    float bt[6] = {1, 5, 0, 1, 0, 2}; /* B^T stored: op(B) column j is row j */
    operand_view_t vbt = operand_view_b(bt, ESMM_OP_T, 3, 2);
    operand_norms(&vbt, norms);
    CHECK(fabs(norms[0] - sqrt(26.0)) < 1e-12 && fabs(norms[1] - sqrt(5.0)) < 1e-12,
          "column norms of op(B) through T");
}

/* The (x, kk) element of the operand test_operand_stats describes. */
static float stats_value(int64_t x, int64_t kk)
{
    switch (kk) {
    case 0: return 0.0f;                               /* dead */
    case 1: return x == 35 ? 2.0f : 0.0f;              /* second strip only */
    case 2: return x == 3 ? 1.0f : x == 36 ? -0.0f : 0.0f; /* first only; -0 is zero */
    case 3: return x == 0 ? NAN : 0.0f;                /* NaN is nonzero */
    default: return 1.0f;
    }
}

static void test_operand_stats(void)
{
    /* 40 x 10: two strips (32 + 8). */
    const int64_t outer = 40, k = 10;
    float data[40 * 10];
    for (int layout = 0; layout < 4; layout++) {
        esmm_operation_t op = layout % 2 ? ESMM_OP_T : ESMM_OP_N;
        operand_view_t v = layout < 2 ? operand_view_a(data, op, outer, k)
                                      : operand_view_b(data, op, k, outer);
        for (int64_t x = 0; x < outer; x++)
            for (int64_t kk = 0; kk < k; kk++)
                data[operand_index(&v, x, kk)] = stats_value(x, kk);
        operand_stats_t s;
        int64_t strips_per_k[10];
        CHECK(operand_stats(&v, &s, strips_per_k) == 0, "stats of layout %d", layout);
        CHECK(s.strips == 2 && s.k == 10 && s.outer == 40, "layout %d: shape", layout);
        CHECK(s.zero_elements == 157 && fabs(operand_zero_fraction(&s) - 157.0 / 400.0) < 1e-15,
              "layout %d: zero elements %lld", layout, (long long)s.zero_elements);
        CHECK(s.nonzero_slices == 15 && operand_slice_density(&s) == 0.75,
              "layout %d: 15 of 20 slices hold a nonzero (%lld)", layout, (long long)s.nonzero_slices);
        CHECK(s.dead_k == 1 && operand_dead_k_fraction(&s) == 0.1, "layout %d: one dead k", layout);
        CHECK(fabs(s.strip_density_min - 0.7) < 1e-15 && fabs(s.strip_density_max - 0.8) < 1e-15 &&
                  fabs(s.strip_density_median - 0.75) < 1e-15,
              "layout %d: strips 0.8 and 0.7 (%g %g %g)", layout, s.strip_density_min,
              s.strip_density_median, s.strip_density_max);
        const int64_t expected[10] = {0, 1, 1, 1, 2, 2, 2, 2, 2, 2};
        CHECK(memcmp(strips_per_k, expected, sizeof expected) == 0, "layout %d: strips per k",
              layout);
    }
    const int64_t a[10] = {0, 1, 1, 1, 2, 2, 2, 2, 2, 2}, b[10] = {1, 1, 0, 1, 1, 1, 1, 1, 1, 1};
    CHECK(fabs(joint_slice_density(a, 2, b, 1, 10) - 0.7) < 1e-15, "joint density 14 / 20");
    operand_view_t empty = operand_view_a(data, ESMM_OP_N, 0, 5);
    operand_stats_t s;
    CHECK(operand_stats(&empty, &s, NULL) == 0 && s.strips == 0 && operand_slice_density(&s) == 0.0,
          "an empty operand");
}

/* ---- verification and JSON ------------------------------------------- */

static void test_verify(void)
{
    CHECK(verify_tolerance(4096, false) < verify_tolerance(16384, false) &&
              verify_tolerance(4096, true) == 2 * verify_tolerance(4096, false),
          "tolerance grows with k, doubles against FP32");
    CHECK(verify_tolerance(4096, false) < 1.0 / 4096, "a missing product (~1/k) exceeds it");
    double ref[4] = {1.0, -2.0, NAN, INFINITY};
    double row_norm[2] = {1.0, 1.0}, col_norm[2] = {1.0, 1.0};
    verify_reference_t r = {2, 2, ref, row_norm, col_norm, 1.0, 0.0, NULL};
    float exact[4] = {1.0f, -2.0f, NAN, INFINITY};
    CHECK(verify_max_error(&r, exact) == 0.0, "exact result, NaN and Inf matching");
    float off[4] = {1.5f, -2.0f, NAN, INFINITY};
    CHECK(fabs(verify_max_error(&r, off) - 0.5 / 2.0) < 1e-12, "0.5 off: error 0.5 / (1 + 1)");
    float nan_where_finite[4] = {NAN, -2.0f, NAN, INFINITY};
    CHECK(isinf(verify_max_error(&r, nan_where_finite)), "NaN where the reference is finite");
    float finite_where_nan[4] = {1.0f, -2.0f, 0.0f, INFINITY};
    CHECK(isinf(verify_max_error(&r, finite_where_nan)), "finite where the reference is NaN");
    float wrong_inf[4] = {1.0f, -2.0f, NAN, -INFINITY};
    CHECK(isinf(verify_max_error(&r, wrong_inf)), "the other infinity");
    double beyond[4] = {1e39, -1e39, 1.0, 1.0};
    verify_reference_t big = {2, 2, beyond, row_norm, col_norm, 1.0, 0.0, NULL};
    float overflowed[4] = {INFINITY, -INFINITY, 1.0f, 1.0f};
    CHECK(verify_max_error(&big, overflowed) == 0.0, "a reference past FLT_MAX is infinity in float");
    overflowed[1] = INFINITY;
    CHECK(isinf(verify_max_error(&big, overflowed)), "with its sign");
    /* Zero scale: only an exact zero is right. */
    double zero_ref[1] = {0.0}, zero_norm[1] = {0.0};
    verify_reference_t z = {1, 1, zero_ref, zero_norm, zero_norm, 1.0, 0.0, NULL};
    float zero[1] = {0.0f}, tiny[1] = {1e-30f};
    CHECK(verify_max_error(&z, zero) == 0.0 && isinf(verify_max_error(&z, tiny)), "zero scale");
    /* beta: the initial C enters the scale. */
    float c0[1] = {4.0f};
    double beta_ref[1] = {2.0};
    verify_reference_t b = {1, 1, beta_ref, zero_norm, zero_norm, 1.0, 0.5, c0};
    float beta_off[1] = {2.5f};
    CHECK(fabs(verify_max_error(&b, beta_off) - 0.5 / 4.0) < 1e-12, "beta |C| in the scale");
}

/* Reads a whole (small) file into text; returns false when it cannot. */
static bool read_text(const char *path, char *text, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t got = f != NULL ? fread(text, 1, cap - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    text[got] = '\0';
    return f != NULL;
}

/* Rows of a sweep: several runs in one file, cached B, skip stats, an
 * extraction row; and the sweep's closing table. */
static void test_json_sweep_rows(const bench_summary_t *base)
{
    const char *path = temp_path("sweep.json");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "open %s", path);
    if (f == NULL)
        return;
    bench_summary_t s = *base;
    s.case_label = "d = 0.5 (both)";
    s.target = 2.5;
    s.show_gbps = true;
    bench_row_t rows[3];
    memset(rows, 0, sizeof rows);
    rows[0] = (bench_row_t){.kernel = "esmm", .ran = true, .median_ms = 1.0, .min_ms = 1.0,
                            .max_error = 0.0, .check = "pass", .has_info = true,
                            .info = {ESMM_PATH_SPARSE, NULL, 0.5, -1.0, 0.25, -1.0, NULL,
                                     ESMM_MASKS_USED},
                            .info_kernel = "sparse-joint"};
    rows[1] = (bench_row_t){.kernel = "esmm", .cached_b = true, .ran = true, .median_ms = 0.5,
                            .min_ms = 0.5, .max_error = 0.0, .check = "pass"};
    rows[2] = (bench_row_t){.kernel = "extract-a", .operand = 'A', .bytes = 4e6, .ran = true,
                            .median_ms = 0.002, .min_ms = 0.002, .max_error = NAN, .check = "pass"};
    report_json_t j;
    report_json_begin(&j, f, "gpu", "abc", "2025-01-01T00:00:00Z");
    report_json_add(&j, &s, rows, 2);
    s.case_label = "random 0.5";
    report_json_add(&j, &s, rows + 2, 1);
    report_json_end(&j);
    fclose(f);
    char text[8192];
    CHECK(read_text(path, text, sizeof text), "read %s", path);
    CHECK(j.results == 3, "three results written");
    CHECK(contains(text, "\"kernel\": \"esmm\", \"case\": \"d = 0.5 (both)\""), "case label");
    CHECK(contains(text, "\"cached_b\": true") && contains(text, "\"cached_b\": false"),
          "cached_b per row");
    CHECK(contains(text, "\"target_speedup\": 2.5"), "the end-to-end row carries the target");
    CHECK(contains(text, "\"path\": \"sparse\", \"path_kernel\": \"sparse-joint\", "
                         "\"density_a_measured\": 0.5, \"density_b_measured\": null, "
                         "\"work_fraction\": 0.25, \"extraction_ms\": null, \"masks\": \"used\""),
          "skip stats; unmeasured figures are null");
    CHECK(contains(text, "{\"op\": \"extract\", \"kernel\": \"extract-a\", \"case\": \"random 0.5\""),
          "extraction row");
    CHECK(contains(text, "\"operand\": \"A\", \"bytes\": 4e+06, \"gbps\": 2000, "
                         "\"baseline\": \"none\", \"baseline_ms\": null, \"speedup\": null"),
          "extraction figures: %s", text);
    CHECK(contains(text, "},\n    {") && contains(text, "\"results\": [\n    {") &&
              contains(text, "}\n  ]\n}\n"),
          "results separated by commas, one per line");
    remove(path);

    /* The table rows of an extraction and of a row with skip stats. */
    f = fopen(path, "w");
    if (f == NULL)
        return;
    report_print_table_header(f, &s);
    report_print_row(f, &s, &rows[0]);
    report_print_row(f, &s, &rows[2]);
    bench_row_t small = rows[0];
    small.info = (esmm_info_t){ESMM_PATH_DENSE, NULL, -1.0, -1.0, 1.0, -1.0, NULL, ESMM_MASKS_SMALL};
    report_print_row(f, &s, &small);
    bench_row_t narrow = small;
    narrow.info.masks = ESMM_MASKS_NARROW;
    report_print_row(f, &s, &narrow);
    sweep_line_t lines[2] = {
        {"d = 0.5 (both)", 4096, 2.5, 2.6, 0.8, 0.7, true,
         {ESMM_PATH_SPARSE, NULL, 0.5, 0.5, 0.25, -1.0, NULL, ESMM_MASKS_USED}, "pass"},
        {"d = 0.25 (both)", 4096, 6.0, 2.6, 1.0, NAN, false,
         {ESMM_PATH_NONE, NULL, 0, 0, 0, 0, NULL, ESMM_MASKS_NONE}, "fail"},
    };
    report_print_sweep(f, "targets", "cublas", lines, 2);
    fclose(f);
    CHECK(read_text(path, text, sizeof text), "read %s", path);
    CHECK(contains(text, "GB/s") && contains(text, "2000.0"), "GB/s column: %s", text);
    CHECK(contains(text, "skip stats: path sparse, kernel sparse-joint; slice density A 50.00%, B -; "
                         "25.00% of dense work run, 75.00% skipped; probe and extraction not measured"),
          "skip stats line: %s", text);
    CHECK(!contains(text, "no masks: masks used") &&
              contains(text, "path dense, kernel sparse-joint; slice density A -, B -") &&
              contains(text, "no masks: under the size from which esmm_sgemm plans on the GPU"),
          "a row run dense under the planning size: %s", text);
    CHECK(contains(text, "no masks: C is at most ESMM_NARROW_C_SIDE (32) wide or tall, or at "
                         "most ESMM_NARROW_PLANNED_C_SIDE (64) and the product under 8 times"),
          "a row run dense as C is narrow: %s", text);
    CHECK(contains(text, "3.25") && contains(text, "yes") && contains(text, "NO") &&
              contains(text, "targets met: 1 of 2") && contains(text, "25.0%"),
          "sweep table: %s", text);
    remove(path);
}

static void test_json(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"", ""},
        {"a\"b\\c", "a\\\"b\\\\c"},
        {"line\nfeed\ttab\r\b\f", "line\\nfeed\\ttab\\r\\b\\f"},
        {"\x01\x1f", "\\u0001\\u001f"},
        {"slash / and \x7f", "slash / and \x7f"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"bad \xff byte", "bad \\ufffd byte"},
        {"cut \xc3", "cut \\ufffd"},
        {"overlong \xc0\xaf", "overlong \\ufffd\\ufffd"},
        {"surrogate \xed\xa0\x80", "surrogate \\ufffd\\ufffd\\ufffd"},
        {"too high \xf4\x90\x80\x80", "too high \\ufffd\\ufffd\\ufffd\\ufffd"},
        {"lone \x80", "lone \\ufffd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[128];
        size_t length = json_escape(cases[i].in, out, sizeof out);
        CHECK(strcmp(out, cases[i].out) == 0 && length == strlen(cases[i].out),
              "escape case %zu: got '%s'", i, out);
    }
    char small[6];
    size_t length = json_escape("a\"bcdef", small, sizeof small);
    CHECK(length == 8 && strcmp(small, "a\\\"bc") == 0, "truncation keeps the full length (%zu, '%s')",
          length, small);
    CHECK(json_escape("abc", NULL, 0) == 3, "length only");

    /* A whole results file: keys present, strings escaped, NaN as null. */
    const char *path = temp_path("results.json");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "open %s", path);
    if (f == NULL)
        return;
    bench_summary_t s = {.device = "GPU \"X\"", .backend = "cuda", .m = 8, .n = 9, .k = 10,
                         .transa = 'N', .transb = 'T', .alpha = 1.0, .beta = 0.0,
                         .generator = "density", .density_a = 0.5, .density_b = 1.0,
                         .nonzero_a = 0.5, .nonzero_b = 1.0, .seed = 1, .runs = 3, .warmup = 1,
                         .copies = 1, .clock = "CUDA events", .flops = 1440.0,
                         .effective_flops = 720.0, .baseline = "cublas", .baseline_ms = 2.0,
                         .reference = "cpu-float64", .tolerance = 1e-6};
    bench_row_t rows[2] = {
        {.kernel = "cublas", .ran = true, .median_ms = 2.0, .min_ms = 1.5, .max_error = 1e-7,
         .check = "pass"},
        {.kernel = "naive", .ran = false, .error = "naive: failed\n", .max_error = NAN,
         .check = "fail"},
    };
    report_write_json(f, &s, rows, 2, "c\\1", "2025-01-01T00:00:00Z");
    fclose(f);
    char text[4096] = "";
    f = fopen(path, "r");
    size_t got = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    text[got] = '\0';
    CHECK(contains(text, "\"device\": \"GPU \\\"X\\\"\""), "device escaped");
    CHECK(contains(text, "\"commit\": \"c\\\\1\""), "commit escaped");
    CHECK(contains(text, "\"date\": \"2025-01-01T00:00:00Z\""), "date");
    CHECK(contains(text, "\"op\": \"sgemm\", \"kernel\": \"cublas\""), "op and kernel");
    CHECK(contains(text, "\"generator\": \"density\", \"density_a\": 0.5, \"density_b\": 1"),
          "generator fields");
    CHECK(contains(text, "\"cached_b\": false"), "cached_b");
    CHECK(contains(text, "\"ms\": 2, \"min_ms\": 1.5"), "times");
    CHECK(contains(text, "\"baseline\": \"cublas\", \"baseline_ms\": 2, \"speedup\": 1"), "baseline");
    CHECK(contains(text, "\"check\": \"pass\""), "check");
    CHECK(contains(text, "\"ms\": null"), "a failed kernel has null times");
    CHECK(contains(text, "\"error\": \"naive: failed\\n\""), "error message escaped");
    CHECK(contains(text, "\"transb\": \"T\""), "transb");
    int depth = 0;
    bool balanced = true, in_string = false;
    for (const char *p = text; *p; p++) {
        if (in_string) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            balanced = balanced && --depth >= 0;
        }
    }
    CHECK(balanced && depth == 0 && !in_string, "brackets and strings balanced");
    remove(path);
    test_json_sweep_rows(&s);
}

/* ---- fixtures for the CTest runs of the binary ------------------------ */

static int write_fixtures(const char *dir)
{
    mkdir(dir, 0755);
    cli_error_t err;
    char path[1024];
    /* A 24 x 20 (m x k) and B 20 x 28 (k x n), with zero columns/rows. */
    float a[24 * 20], b[20 * 28];
    generator_t pattern = {GENERATOR_PATTERN, "11011101", 1.0, 0.0};
    operand_view_t va = operand_view_a(a, ESMM_OP_N, 24, 20);
    operand_view_t vb = operand_view_b(b, ESMM_OP_N, 20, 28);
    generate_operand(&va, &pattern, 1, GENERATE_STREAM_A);
    generate_operand(&vb, &pattern, 1, GENERATE_STREAM_B);
    snprintf(path, sizeof path, "%s/a.npy", dir);
    if (npy_save_f32(path, a, 24, 20, 20, &err) != NPY_OK)
        goto fail;
    snprintf(path, sizeof path, "%s/b.npy", dir);
    if (npy_save_f32(path, b, 20, 28, 28, &err) != NPY_OK)
        goto fail;
    /* The same op(B) stored transposed (n x k), for --transb T. */
    float bt[28 * 20];
    for (int j = 0; j < 28; j++)
        for (int kk = 0; kk < 20; kk++)
            bt[j * 20 + kk] = b[kk * 28 + j];
    snprintf(path, sizeof path, "%s/bt.npy", dir);
    if (npy_save_f32(path, bt, 28, 20, 20, &err) != NPY_OK)
        goto fail;
    /* A with no zero slice: the dense probe keeps analyze from extracting. */
    generator_t no_zeros = {GENERATOR_PATTERN, "11111111", 1.0, 0.0};
    generate_operand(&va, &no_zeros, 1, GENERATE_STREAM_A);
    snprintf(path, sizeof path, "%s/dense.npy", dir);
    if (npy_save_f32(path, a, 24, 20, 20, &err) != NPY_OK)
        goto fail;
    unsigned char buf[256];
    size_t n = build_npy(buf, sizeof buf, 1, 0,
                         "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 32);
    snprintf(path, sizeof path, "%s/f8.npy", dir);
    if (!write_bytes(path, buf, n)) {
        cli_error_set(&err, "cannot write %s", path);
        goto fail;
    }
    /* A 0 x 20 matrix: well formed, but no operand. */
    snprintf(path, sizeof path, "%s/zero_rows.npy", dir);
    if (npy_save_f32(path, NULL, 0, 20, 20, &err) != NPY_OK)
        goto fail;
    /* Symmetric W: one file with the lower triangle only, one listing (2, 1)
     * and (1, 2) both. */
    static const char *const mtx_files[][2] = {
        {"symmetric_lower.mtx",
         "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2.0\n2 1 0.5\n3 3 1.0\n"},
        {"symmetric_both.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n"
                               "1 1 2.0\n2 1 0.5\n1 2 0.5\n3 3 1.0\n"},
    };
    for (size_t i = 0; i < sizeof mtx_files / sizeof mtx_files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, mtx_files[i][0]);
        if (!write_bytes(path, mtx_files[i][1], strlen(mtx_files[i][1]))) {
            cli_error_set(&err, "cannot write %s", path);
            goto fail;
        }
    }
    printf("fixtures written to %s\n", dir);
    return 0;
fail:
    fprintf(stderr, "test_cli: %s\n", err.text);
    return 1;
}

/* Entries of the temporary directory whose names start with prefix. */
static int entries_starting(const char *prefix)
{
    DIR *d = opendir(temp_dir);
    int count = 0;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d))
        count += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d != NULL)
        closedir(d);
    return count;
}

/* The --json file (results_file.h): a run that fails leaves what the path
 * held and no partial file; a finished one replaces it, through a symbolic
 * link; the run's inputs are refused; a device is written in place. */
static void test_results_file(void)
{
    char path[512], input[512], target[512], text[64];
    snprintf(path, sizeof path, "%s", temp_path("out.json"));
    snprintf(input, sizeof input, "%s", temp_path("in.npy"));
    snprintf(target, sizeof target, "%s", temp_path("target.json"));
    CHECK(write_bytes(path, "kept", 4) && write_bytes(input, "input", 5), "write %s", path);
    cli_error_t err = {""};
    results_file_t rf;
    CHECK(results_file_open(&rf, path, NULL, 0, &err) == 0, "open %s: %s", path, err.text);
    fputs("partial", rf.file);
    results_file_discard(&rf);
    CHECK(read_text(path, text, sizeof text) && strcmp(text, "kept") == 0,
          "a discarded results file changed %s to \"%s\"", path, text);
    CHECK(entries_starting("out.json") == 1, "a discarded results file left a partial file");

    /* A run that wrote no results (a sweep with nothing to run) leaves it too. */
    report_json_t writer;
    CHECK(bench_json_open(&rf, path, NULL, 0, &writer, "cpu", "test", &err) == 0, "open %s: %s",
          path, err.text);
    CHECK(bench_json_finish(&writer, &rf, path) == ESMM_EXIT_OK &&
              read_text(path, text, sizeof text) && strcmp(text, "kept") == 0 &&
              entries_starting("out.json") == 1,
          "a results file with no results changed %s to \"%s\"", path, text);

    CHECK(results_file_open(&rf, path, NULL, 0, &err) == 0, "open %s: %s", path, err.text);
    fputs("done", rf.file);
    CHECK(results_file_commit(&rf, path, &err) == 0, "commit %s: %s", path, err.text);
    CHECK(read_text(path, text, sizeof text) && strcmp(text, "done") == 0,
          "the committed results file holds \"%s\"", text);
    CHECK(entries_starting("out.json") == 1, "a committed results file left a partial file");

    const char *const inputs[] = {NULL, input};
    CHECK(results_file_open(&rf, input, inputs, 2, &err) == -1 && rf.file == NULL &&
              contains(err.text, "would replace the input"),
          "a results file on an input: \"%s\"", err.text);
    CHECK(read_text(input, text, sizeof text) && strcmp(text, "input") == 0,
          "refusing the results file changed the input to \"%s\"", text);

    const char *link = temp_path("link.json");
    CHECK(write_bytes(target, "old", 3) && symlink(target, link) == 0, "symlink %s", link);
    CHECK(results_file_open(&rf, link, NULL, 0, &err) == 0, "open %s: %s", link, err.text);
    fputs("new", rf.file);
    CHECK(results_file_commit(&rf, link, &err) == 0, "commit %s: %s", link, err.text);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode) && read_text(target, text, sizeof text) &&
              strcmp(text, "new") == 0,
          "a results file through a link: the link %s, the target holds \"%s\"",
          S_ISLNK(st.st_mode) ? "kept" : "replaced", text);

    /* A dangling link: the file is made where it leads, relative to its
     * directory, and the link stays. */
    const char *dangling = temp_path("dangling.json");
    CHECK(symlink("made.json", dangling) == 0, "symlink %s", dangling);
    CHECK(results_file_open(&rf, dangling, NULL, 0, &err) == 0, "open %s: %s", dangling, err.text);
    fputs("made", rf.file);
    CHECK(results_file_commit(&rf, dangling, &err) == 0, "commit %s: %s", dangling, err.text);
    CHECK(lstat(dangling, &st) == 0 && S_ISLNK(st.st_mode) &&
              read_text(temp_path("made.json"), text, sizeof text) && strcmp(text, "made") == 0,
          "a results file through a dangling link: the link %s, its target holds \"%s\"",
          S_ISLNK(st.st_mode) ? "kept" : "replaced", text);

    /* A replaced file keeps its permissions. */
    CHECK(chmod(path, 0600) == 0, "chmod %s", path);
    CHECK(results_file_open(&rf, path, NULL, 0, &err) == 0, "open %s: %s", path, err.text);
    fputs("private", rf.file);
    CHECK(results_file_commit(&rf, path, &err) == 0 && stat(path, &st) == 0 &&
              (st.st_mode & 07777) == 0600,
          "a replaced results file's permissions went from 0600 to %04o",
          (unsigned)(st.st_mode & 07777));

    CHECK(results_file_open(&rf, "/dev/null", NULL, 0, &err) == 0 && rf.temp_path == NULL,
          "/dev/null: %s", err.text);
    fputs("x", rf.file);
    CHECK(results_file_commit(&rf, "/dev/null", &err) == 0 && stat("/dev/null", &st) == 0 &&
              S_ISCHR(st.st_mode),
          "/dev/null after a results file: %s", err.text);

    CHECK(results_file_open(&rf, temp_path("missing/out.json"), NULL, 0, &err) == -1 &&
              contains(err.text, "cannot create"),
          "a results file in a missing directory: \"%s\"", err.text);
    static const char *const made[] = {"out.json",      "in.npy",   "target.json",
                                       "link.json",     "made.json", "dangling.json"};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
        remove(temp_path(made[i]));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-fixtures") == 0)
        return write_fixtures(argv[2]);

    const char *tmp = getenv("TMPDIR");
    snprintf(temp_dir, sizeof temp_dir, "%s/esmm-test-cli-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
    if (mkdtemp(temp_dir) == NULL) {
        fprintf(stderr, "test_cli: cannot create a temporary directory\n");
        return 1;
    }
    test_number_parsing();
    test_good_options();
    test_bad_options();
    test_kernel_lists();
    test_sweeps();
    test_analyze_options();
    test_shapes();
    test_npy_round_trip();
    test_npy_operand();
    test_npy_from_pipe();
    test_npy_variants();
    test_npy_malformed();
    test_dense_generator();
    test_density_generator();
    test_pattern_and_random_generators();
    test_statistics();
    test_operand_stats();
    test_verify();
    test_json();
    test_results_file();

    static const char *const leftovers[] = {"round.npy", "one.npy", "bad.npy", "fortran.npy",
                                            "v2.npy", "v3.npy"};
    for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++)
        remove(temp_path(leftovers[i]));
    rmdir(temp_dir);
    return check_finish();
}
