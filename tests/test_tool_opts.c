/* The tools' option parser (tools/common/opts.c): values land in their fields, strict numbers
 * in range, choices, operands in order wherever they stand, "--", "=value", and refusals
 * (exit 2) for every malformed argument. The messages are checked by tests/cli_errors.sh. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/testutil.h"
#include "opts.h"

typedef struct settings {
    size_t count;
    int flag, mode, whole;
    float real;
    uint64_t big;
    const char *text;
} settings;

#define AT(f) offsetof(settings, f)
static const int modes[] = {10, 20, 30};
static const opt_def defs[] = {
    {OPT_SIZE, "count", AT(count), 1, 100, .value = "N"},
    {OPT_FLAG, "flag", AT(flag), 0, 0, .help = "a flag"},
    {OPT_CHOICE, "mode", AT(mode), 0, 0, "a|bb|c", modes, .help = "a choice"},
    {OPT_INT, "whole", AT(whole), -5, 5, .value = "N"},
    {OPT_FLOAT, "real", AT(real), 0, 0, .value = "R"},
    {OPT_U64, "big", AT(big), 0, 0, .value = "N"},
    {OPT_TEXT, "text", AT(text), 0, 0, .value = "S"},
};
static const opt_tool tool = {"t", "1", "usage: t\n", NULL, defs, sizeof defs / sizeof defs[0],
                              0, 3, "up to 3 words"};

/* Parses the words (argv[0] added); returns the status, the operands into ops. */
static int parse(settings *s, char **ops, size_t *n, const char *const *words)
{
    char *argv[16] = {"t"};
    int argc = 1;
    while (words[argc - 1])
        argv[argc] = (char *)words[argc - 1], argc++;
    memset(s, 0, sizeof *s);
    int rc = opts_parse(&tool, argc, argv, s, n);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        ops[i] = argv[1 + i];
    return rc;
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void values_land_in_their_fields(void **state)
{
    (void)state;
    settings s;
    char *ops[16];
    size_t n;
    assert_int_equal(parse(&s, ops, &n, WORDS("x", "--count", "7", "--flag", "y", "--mode=bb",
                                               "--whole", "-5", "--real", "2.5e-3", "--big",
                                               "18446744073709551615", "--text", "-", "z")), 0);
    assert_int_equal(s.count, 7);
    assert_int_equal(s.flag, 1);
    assert_int_equal(s.mode, 20);
    assert_int_equal(s.whole, -5);
    assert_true(s.real == 2.5e-3f);
    assert_true(s.big == UINT64_MAX);
    assert_string_equal(s.text, "-");
    assert_int_equal(n, 3); /* operands in order, wherever they stood */
    assert_string_equal(ops[0], "x");
    assert_string_equal(ops[1], "y");
    assert_string_equal(ops[2], "z");
    /* after "--" every word is an operand, even one that looks like an option */
    assert_int_equal(parse(&s, ops, &n, WORDS("--", "--count", "-h")), 0);
    assert_int_equal(n, 2);
    assert_string_equal(ops[0], "--count");
    assert_int_equal(s.count, 0);
}

static void malformed_arguments_are_refused(void **state)
{
    (void)state;
    settings s;
    char *ops[16];
    size_t n;
    const char *const *bad[] = {
        WORDS("--count", "0"),     WORDS("--count", "101"),  WORDS("--count", "-1"),
        WORDS("--count", "5x"),    WORDS("--count", ""),     WORDS("--count", "1e2"),
        WORDS("--count", "99999999999999999999"),           WORDS("--count"),
        WORDS("--whole", "6"),     WORDS("--whole", "2.5"),  WORDS("--real", "nan"),
        WORDS("--real", "1e999"),  WORDS("--real", "abc"),   WORDS("--big", "-1"),
        WORDS("--mode", "b"),      WORDS("--flag=1"),        WORDS("-count", "3"),
        WORDS("--bogus"),          WORDS("-x"),              WORDS("a", "b", "c", "d"),
        WORDS("--text", ""),       WORDS("--text", "--flag"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(&s, ops, &n, bad[i]);
        if (rc != 2)
            fail_msg("case %zu (%s %s) returned %d, want 2", i, bad[i][0],
                     bad[i][1] ? bad[i][1] : "", rc);
    }
}

static void help_and_version_stop_parsing(void **state)
{
    (void)state;
    settings s;
    char *ops[16];
    size_t n;
    assert_int_equal(parse(&s, ops, &n, WORDS("--count", "3", "-h")), -1);
    assert_int_equal(parse(&s, ops, &n, WORDS("--version")), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_land_in_their_fields),
        cmocka_unit_test(malformed_arguments_are_refused),
        cmocka_unit_test(help_and_version_stop_parsing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
