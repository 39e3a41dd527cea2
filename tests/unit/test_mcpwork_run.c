/* harness-mcp-worker's loop (tools/mcpwork/loop.c) driven over a
 * socketpair as the front drives it: the hello, hostile lines, and
 * code_run's output limits, timeout, cancellation, environment, cwd and
 * stdin, its process group killed with the background processes in it. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/check_main.h"
#include "tools/mcpwork/bounds.h"
#include "tools/mcpwork/loop.h"

/* ---- the loop, over a socketpair ---- */

struct conn {
	int fd;
	pid_t pid;
	char buf[1 << 16];
	size_t len;
};

static void worker_start(struct conn *c)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c->len = 0;
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (!c->pid) {
		close(sv[0]);
		_exit(hx_mw_loop_run(sv[1]) == 0 ? 0 : 1);
	}
	close(sv[1]);
	c->fd = sv[0];
}

static void say(struct conn *c, const char *line)
{
	size_t n = strlen(line);

	ck_assert_int_eq(write(c->fd, line, n), (ssize_t)n);
	ck_assert_int_eq(write(c->fd, "\n", 1), 1);
}

/* The next message; fails the test after 10 s without one. */
static json_t *hear(struct conn *c)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	char *nl;
	json_t *m;
	ssize_t n;

	while (!(nl = memchr(c->buf, '\n', c->len))) {
		ck_assert_int_eq(poll(&p, 1, 10000), 1);
		n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
		ck_assert_int_gt(n, 0);
		c->len += (size_t)n;
	}
	m = json_loadb(c->buf, (size_t)(nl - c->buf), 0, NULL);
	ck_assert_ptr_nonnull(m);
	c->len -= (size_t)(nl + 1 - c->buf);
	memmove(c->buf, nl + 1, c->len);
	return m;
}

/* Messages up to id's reply, which is returned ("result" or "error");
 * *started the pid of its "started", *progress how many came. */
static json_t *reply_of(struct conn *c, long id, long *started, int *progress)
{
	json_t *m, *r;

	for (;;) {
		m = hear(c);
		if (json_integer_value(json_object_get(m, "id")) != id) {
			/* Another call's news: never its reply. */
			ck_assert(!json_object_get(m, "result"));
			ck_assert(!json_object_get(m, "error"));
			json_decref(m);
			continue;
		}
		if (json_object_get(m, "started") && started)
			*started = json_integer_value(json_object_get(
			    json_object_get(m, "started"), "pid"));
		if (json_object_get(m, "progress") && progress)
			(*progress)++;
		r = json_object_get(m, "result");
		if (!r)
			r = json_object_get(m, "error");
		if (r) {
			json_incref(r);
			json_decref(m);
			return r;
		}
		json_decref(m);
	}
}

static int worker_end(struct conn *c)
{
	int st;

	close(c->fd);
	ck_assert_int_eq(waitpid(c->pid, &st, 0), c->pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A process that runs (a zombie does not). */
static bool alive(long pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[2] != 'Z' && p[2] != 'X';
}

#define RSTR(r, k) json_string_value(json_object_get(r, k))
#define RINT(r, k) json_integer_value(json_object_get(r, k))

START_TEST(hello_and_hostile_lines)
{
	struct conn c;
	json_t *m, *r;
	char *big;
	size_t off = 0, n = HX_MW_LINE_MAX + 10;
	ssize_t w;

	worker_start(&c);
	m = hear(&c);
	ck_assert_int_eq(RINT(json_object_get(m, "hello"), "pid"), c.pid);
	ck_assert_int_eq(RINT(json_object_get(m, "hello"), "version"), 1);
	json_decref(m);
	say(&c, "garbage without an id");
	say(&c, "{\"id\":1,\"tool\":");
	r = reply_of(&c, 1, NULL, NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "EINVAL");
	json_decref(r);
	say(&c, "{\"id\":2,\"tool\":\"file_read\",\"args\":{\"path\":1}}");
	r = reply_of(&c, 2, NULL, NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "EINVAL");
	json_decref(r);
	say(&c, "{\"id\":3,\"tool\":\"rm_rf\",\"args\":{}}");
	r = reply_of(&c, 3, NULL, NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "ENOSYS");
	json_decref(r);
	/* Past 16 MiB: answered by the id it starts with, then dropped. */
	big = malloc(n);
	memset(big, ' ', n);
	memcpy(big, "{\"id\":4,\"tool\":\"x\",\"args\":\"", 27);
	big[n - 1] = '\n';
	while (off < n) {
		w = write(c.fd, big + off, n - off);
		ck_assert_int_gt(w, 0);
		off += (size_t)w;
	}
	free(big);
	r = reply_of(&c, 4, NULL, NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "E2BIG");
	json_decref(r);
	say(&c, "{\"id\":5,\"tool\":\"list_dir\",\"args\":{\"path\":\"/\"}}");
	r = reply_of(&c, 5, NULL, NULL);
	ck_assert(json_is_array(json_object_get(r, "entries")));
	json_decref(r);
	say(&c, "{\"exit\":true}");
	ck_assert_int_eq(worker_end(&c), 0);
	/* EOF ends it too. */
	worker_start(&c);
	ck_assert_int_eq(worker_end(&c), 0);
}
END_TEST

/* Runs one code_run (its args as JSON text) and returns its reply. */
static json_t *run(struct conn *c, long id, const char *args, long *pid)
{
	char line[2048];

	snprintf(line, sizeof(line),
		 "{\"id\":%ld,\"tool\":\"code_run\",\"args\":%s}", id, args);
	say(c, line);
	return reply_of(c, id, pid, NULL);
}

START_TEST(run_output_env_cwd_stdin)
{
	struct conn c;
	json_t *r;
	long pid = 0;

	worker_start(&c);
	r = run(&c, 1,
		"{\"command\":\"head -c 100000 /dev/zero | tr '\\\\0' a; echo "
		"err >&2\",\"cwd\":\"/\",\"max_output_bytes\":1000}",
		&pid);
	ck_assert_uint_eq(strlen(RSTR(r, "stdout")), 1000);
	ck_assert_int_eq(RINT(r, "stdout_bytes"), 100000);
	ck_assert(json_is_true(json_object_get(r, "stdout_truncated")));
	ck_assert_str_eq(RSTR(r, "stderr"), "err\n");
	ck_assert(json_is_false(json_object_get(r, "stderr_truncated")));
	ck_assert_int_eq(RINT(r, "exit_code"), 0);
	ck_assert_int_eq(RINT(r, "pid"), pid);
	json_decref(r);
	r = run(
	    &c, 2,
	    "{\"argv\":[\"sh\",\"-c\",\"cat; pwd; echo $HX_T\"],"
	    "\"cwd\":\"/tmp\",\"env\":{\"HX_T\":\"v\"},\"stdin\":\"in\\n\"}",
	    NULL);
	ck_assert_str_eq(RSTR(r, "stdout"), "in\n/tmp\nv\n");
	json_decref(r);
	/* Nothing of the worker's is open in the child: fds 0-2 only. */
	r = run(&c, 3,
		"{\"command\":\"for i in 3 4 5 6 7 8 9 10 11 12; do (: <&$i) "
		"2>/dev/null && echo $i; done; echo end\",\"cwd\":\"/\"}",
		NULL);
	ck_assert_str_eq(RSTR(r, "stdout"), "end\n");
	json_decref(r);
	r = run(&c, 4,
		"{\"language\":\"python\",\"code\":\"import sys; "
		"sys.stdout.buffer.write(b'\\\\xffok'); sys.exit(3)\","
		"\"cwd\":\"/\"}",
		NULL);
	ck_assert_int_eq(RINT(r, "exit_code"), 3);
	ck_assert_str_eq(RSTR(r, "stdout"), "\xef\xbf\xbdok");
	ck_assert(json_is_true(json_object_get(r, "lossy")));
	json_decref(r);
	r = run(&c, 5, "{\"command\":\"kill -KILL $$\",\"cwd\":\"/\"}", NULL);
	ck_assert_str_eq(RSTR(r, "signal"), "SIGKILL");
	ck_assert(json_is_null(json_object_get(r, "exit_code")));
	json_decref(r);
	r = run(&c, 6, "{\"argv\":[\"/no/such/prog\"],\"cwd\":\"/\"}", NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "ENOENT");
	ck_assert_ptr_nonnull(strstr(RSTR(r, "message"), "/no/such/prog"));
	json_decref(r);
	r = run(&c, 7, "{\"command\":\"true\",\"cwd\":\"/no/such/dir\"}", NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "ENOENT");
	ck_assert_ptr_nonnull(strstr(RSTR(r, "message"), "cwd"));
	json_decref(r);
	r = run(&c, 8, "{\"command\":\"true\",\"argv\":[\"x\"],\"cwd\":\"/\"}",
		NULL);
	ck_assert_str_eq(RSTR(r, "errno"), "EINVAL");
	json_decref(r);
	say(&c, "{\"exit\":true}");
	ck_assert_int_eq(worker_end(&c), 0);
}
END_TEST

/* Waits up to 3 s for pid to be gone. */
static bool dies(long pid)
{
	int i;

	for (i = 0; i < 300 && alive(pid); i++)
		usleep(10000);
	return !alive(pid);
}

START_TEST(timeout_kills_the_group)
{
	struct conn c;
	json_t *r;
	long bg;

	worker_start(&c);
	r = run(&c, 1,
		"{\"command\":\"sleep 100 & echo $!; wait\",\"cwd\":\"/\","
		"\"timeout_ms\":300}",
		NULL);
	ck_assert(json_is_true(json_object_get(r, "timed_out")));
	ck_assert_str_eq(RSTR(r, "signal"), "SIGTERM");
	ck_assert_int_lt(RINT(r, "duration_ms"), 2000);
	bg = atol(RSTR(r, "stdout"));
	ck_assert_int_gt(bg, 0);
	ck_assert(dies(bg));
	json_decref(r);
	/* Deaf to SIGTERM, the shell and its background child both: the
	 * SIGKILL 2 s later takes them. */
	r = run(&c, 2,
		"{\"command\":\"trap '' TERM; sleep 100 & echo $!; wait\","
		"\"cwd\":\"/\",\"timeout_ms\":200}",
		NULL);
	ck_assert(json_is_true(json_object_get(r, "timed_out")));
	ck_assert_str_eq(RSTR(r, "signal"), "SIGKILL");
	ck_assert_int_ge(RINT(r, "duration_ms"), 2000);
	bg = atol(RSTR(r, "stdout"));
	ck_assert_int_gt(bg, 0);
	ck_assert(dies(bg));
	json_decref(r);
	say(&c, "{\"exit\":true}");
	ck_assert_int_eq(worker_end(&c), 0);
}
END_TEST

START_TEST(cancel_and_exit_kill)
{
	char file[] = "/tmp/hx-mw-pid-XXXXXX", line[512];
	struct conn c;
	json_t *r;
	long bg = 0, pid = 0;
	int progress = 0, fd = mkstemp(file), i;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	close(fd);
	worker_start(&c);
	json_decref(hear(&c)); /* the hello */
	snprintf(line, sizeof(line),
		 "{\"id\":7,\"tool\":\"code_run\",\"args\":{\"command\":"
		 "\"sleep 100 & echo $! > %s; wait\",\"cwd\":\"/\"}}",
		 file);
	say(&c, line);
	r = hear(&c);
	pid = RINT(json_object_get(r, "started"), "pid");
	json_decref(r);
	ck_assert_int_gt(pid, 0);
	for (i = 0; i < 500 && bg <= 0; i++) {
		usleep(10000);
		f = fopen(file, "r");
		if (f && fscanf(f, "%ld", &bg) != 1)
			bg = 0;
		if (f)
			fclose(f);
	}
	unlink(file);
	ck_assert_int_gt(bg, 0);
	/* Served while the command runs. */
	say(&c, "{\"id\":8,\"tool\":\"list_dir\",\"args\":{\"path\":\"/\"}}");
	json_decref(reply_of(&c, 8, NULL, NULL));
	usleep(1200000);
	say(&c, "{\"cancel\":999}");
	say(&c, "{\"cancel\":7}");
	r = reply_of(&c, 7, NULL, &progress);
	ck_assert(json_is_true(json_object_get(r, "cancelled")));
	ck_assert_int_eq(RINT(r, "pid"), pid);
	ck_assert(json_is_false(json_object_get(r, "timed_out")));
	ck_assert_str_eq(RSTR(r, "signal"), "SIGKILL");
	ck_assert_int_ge(progress, 1);
	ck_assert(dies(bg));
	json_decref(r);
	/* exit: a running command does not outlive the worker. */
	say(&c, "{\"id\":9,\"tool\":\"code_run\",\"args\":{\"command\":"
		"\"sleep 100\",\"cwd\":\"/\"}}");
	r = hear(&c);
	pid = RINT(json_object_get(r, "started"), "pid");
	json_decref(r);
	ck_assert_int_gt(pid, 0);
	say(&c, "{\"exit\":true}");
	ck_assert_int_eq(worker_end(&c), 0);
	ck_assert(!alive(pid));
}
END_TEST

Suite *mcpwork_run_suite(void);
Suite *mcpwork_run_suite(void)
{
	Suite *s = suite_create("mcpwork_run");
	TCase *t = tcase_create("loop");

	tcase_set_timeout(t, 30);
	tcase_add_test(t, hello_and_hostile_lines);
	tcase_add_test(t, run_output_env_cwd_stdin);
	tcase_add_test(t, timeout_kills_the_group);
	tcase_add_test(t, cancel_and_exit_kill);
	suite_add_tcase(s, t);
	return s;
}

HX_TEST_MAIN(mcpwork_run_suite)
