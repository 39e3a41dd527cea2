/* Keyrings: keyctl, add_key, request_key. */
#include "escape.h"

#include <linux/keyctl.h>
#include <sys/syscall.h>

int main(void)
{
	long k = syscall(__NR_keyctl, KEYCTL_GET_KEYRING_ID,
			 KEY_SPEC_SESSION_KEYRING, 0);
	int e1 = errno;
	long a = syscall(__NR_add_key, "user", "hx", "v", 1,
			 KEY_SPEC_PROCESS_KEYRING);
	int e2 = errno;
	long q = syscall(__NR_request_key, "user", "hx", NULL, 0);
	int e3 = errno;

	if (k >= 0 || a >= 0 || q >= 0)
		ESCAPED("keyctl %ld, add_key %ld, request_key %ld", k, a, q);
	if (e1 != EPERM || e2 != EPERM || e3 != EPERM)
		ESCAPED("unexpected errno %d/%d/%d", e1, e2, e3);
	BLOCKED("keyctl/add_key/request_key: EPERM");
}
