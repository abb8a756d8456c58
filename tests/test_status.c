/* Status names, the thread-local last error and the version string. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "common/testutil.h"

static void every_status_has_a_unique_name(void **state)
{
    (void)state;
    const char *seen[64];
    int n = 0;
    for (int s = CLG_OK; s >= CLG_STATUS_MIN; s--) {
        const char *name = clg_status_name((clg_status)s);
        assert_non_null(name);
        assert_int_equal(strncmp(name, "CLG_", 4), 0);
        assert_string_not_equal(name, "CLG_ERR_UNKNOWN");
        for (int i = 0; i < n; i++)
            assert_string_not_equal(name, seen[i]);
        seen[n++] = name;
    }
    assert_string_equal(clg_status_name(CLG_OK), "CLG_OK");
    assert_string_equal(clg_status_name(CLG_ERR_SHAPE), "CLG_ERR_SHAPE");
    assert_string_equal(clg_status_name((clg_status)1), "CLG_ERR_UNKNOWN");
    assert_string_equal(clg_status_name((clg_status)(CLG_STATUS_MIN - 1)), "CLG_ERR_UNKNOWN");
}

static void *other_thread(void *arg)
{
    /* A fresh thread starts with no error, whatever failed elsewhere. */
    snprintf(arg, 256, "%s", clg_last_error());
    return NULL;
}

static void last_error_is_per_thread(void **state)
{
    (void)state;
    clg_exec_env env;
    CLG_ASSERT_STATUS(clg_exec_env_parse("tpu", &env), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "tpu"));
    char seen[256] = "unset";
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, seen), 0);
    pthread_join(t, NULL);
    assert_string_equal(seen, "");
    assert_non_null(strstr(clg_last_error(), "tpu"));
}

static void version_is_semantic(void **state)
{
    (void)state;
    unsigned a, b, c;
    assert_int_equal(sscanf(clg_version(), "%u.%u.%u", &a, &b, &c), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_status_has_a_unique_name),
        cmocka_unit_test(last_error_is_per_thread),
        cmocka_unit_test(version_is_semantic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
