/* Run with OCL_ICD_VENDORS pointing at a folder with no ICD, or with an ICD whose library is
 * missing: discovery must fail cleanly with CLG_ERR_NO_DEVICE and a hint. */
#include <string.h>
#include "common/testutil.h"

static void no_platform_is_a_clear_error(void **state)
{
    (void)state;
    clg_device_info *list = (clg_device_info *)1;
    size_t n = 99;
    CLG_ASSERT_STATUS(clg_devices_list(&list, &n), CLG_ERR_NO_DEVICE);
    assert_null(list);
    assert_int_equal(n, 0);
    assert_non_null(strstr(clg_last_error(), "pocl-opencl-icd"));
    assert_non_null(strstr(clg_last_error(), "/etc/OpenCL/vendors"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_platform_is_a_clear_error)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
