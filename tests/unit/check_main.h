/* The one main() of every Check program: run the suite, exit non-zero
 * when a test failed. */
#ifndef HX_TESTS_CHECK_MAIN_H
#define HX_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define HX_TEST_MAIN(suite_fn)                                                 \
	int main(void)                                                         \
	{                                                                      \
		SRunner *sr = srunner_create(suite_fn());                      \
		int failed;                                                    \
                                                                               \
		srunner_run_all(sr, CK_NORMAL);                                \
		failed = srunner_ntests_failed(sr);                            \
		srunner_free(sr);                                              \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;                   \
	}

#endif
