/* libFuzzer target for the policy loader: any bytes must load or fail
 * cleanly, and whatever loads must decide and run its examples. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const protect[] = {"/state/s1/**"};

static void ignore(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct hx_policy_vars vars = {
	    .home = "/home/u",
	    .cwd = "/work/p",
	    .tmpdir = "/tmp/s1",
	    .session = "s1",
	    .protect = protect,
	    .nprotect = 1,
	};
	static const char *const argv[] = {"git", "push", "origin"};
	static const char *const names[] = {"api.example.com"};
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	struct hx_event ev[] = {
	    {.op = HX_OP_READ, .path = "/home/u/.ssh/id_rsa"},
	    {.op = HX_OP_WRITE, .path = "/work/p/a.c"},
	    {.op = HX_OP_RENAME, .path = "/work/p/a", .path2 = "/etc/x"},
	    {.op = HX_OP_LINK, .path = "/work/p/a", .path2 = "/etc/x"},
	    {.op = HX_OP_EXEC, .path = "/usr/bin/git", .argv = argv, .argc = 3},
	    {.op = HX_OP_CONNECT,
	     .addr = (struct sockaddr *)&in,
	     .addrlen = sizeof(in),
	     .names = names,
	     .nnames = 1},
	    {.op = HX_OP_RESOLVE, .host = "api.example.com"},
	};
	struct hx_policy_error err;
	struct hx_decision d;
	struct hx_policy *p;
	char buf[1024];

	in.sin_addr.s_addr = htonl(0x7f000001);
	if (hx_policy_load_buffer("fuzz.yaml", (const char *)data, size, &vars,
				  &p, &err)) {
		hx_policy_error_format(&err, buf, sizeof(buf));
		return 0;
	}
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		hx_policy_decide(p, &ev[i], &d);
	hx_policy_check_examples(p, ignore, NULL);
	hx_policy_free(p);
	return 0;
}
