/* Metrics (supervisor/metrics.h, metrics_serve.h): records counted by
 * their labels, coalesced ones too; histograms cumulative; label values
 * escaped; only loopback or Unix endpoints; the HTTP endpoint answers a
 * scrape, refuses what is not one, and a client that sends nothing does
 * not hold the next. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/metrics.h"
#include "supervisor/metrics_serve.h"
#include "tests/unit/check_main.h"

static json_t *rec(const char *event, const char *cat, const char *verdict,
		   const char *layer, json_int_t latency_ns)
{
	json_t *r = json_object();

	json_object_set_new(r, "event", json_string(event));
	if (cat)
		json_object_set_new(r, "category", json_string(cat));
	if (verdict)
		json_object_set_new(r, "verdict", json_string(verdict));
	if (layer)
		json_object_set_new(r, "layer", json_string(layer));
	if (latency_ns)
		json_object_set_new(r, "latency_ns", json_integer(latency_ns));
	return r;
}

static void feed(struct hx_metrics *m, json_t *r, bool coalesced)
{
	hx_metrics_record(m, r, coalesced);
	json_decref(r);
}

static char *render(struct hx_metrics *m)
{
	char *out;
	size_t len;

	ck_assert_int_eq(hx_metrics_render(m, &out, &len), 0);
	ck_assert_uint_eq(strlen(out), len);
	return out;
}

START_TEST(records_counted_by_labels)
{
	struct hx_metrics *m;
	char *t;

	ck_assert_int_eq(hx_metrics_new("s1", "enforce", "abc", &m), 0);
	feed(m, rec("open", "file_write", "deny", "shim", 40000), false);
	feed(m, rec("open", "file_write", "deny", "shim", 60000), false);
	feed(m, rec("open", "file_write", "deny", "shim", 2000000), true);
	feed(m, rec("connect", "net_connect", "allow", "kernel", 0), false);
	feed(m, rec("session_start", "process", NULL, NULL, 0), false);
	t = render(m);
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_events_total{session=\"s1\",category=\"file_"
		      "write\",verdict=\"deny\",layer=\"shim\"} 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_events_total{session=\"s1\",category=\"net_"
		      "connect\",verdict=\"allow\",layer=\"kernel\"} 1\n"));
	/* a record without a verdict is no decision */
	ck_assert_ptr_null(strstr(t, "category=\"process\",verdict"));
	ck_assert_ptr_nonnull(strstr(
	    t,
	    "harness_audit_records_total{session=\"s1\",event=\"open\"} 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_audit_records_coalesced_total{session=\"s1\"} "
		      "1\n"));
	/* cumulative: 40 us and 60 us are <= 1e-4; 2 ms is not */
	ck_assert_ptr_nonnull(strstr(
	    t, "harness_decision_latency_seconds_bucket{session=\"s1\","
	       "category=\"file_write\",layer=\"shim\",le=\"5e-05\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(
	    t, "harness_decision_latency_seconds_bucket{session=\"s1\","
	       "category=\"file_write\",layer=\"shim\",le=\"0.0001\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(
	    t, "harness_decision_latency_seconds_bucket{session=\"s1\","
	       "category=\"file_write\",layer=\"shim\",le=\"0.0025\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(
	    t, "harness_decision_latency_seconds_bucket{session=\"s1\","
	       "category=\"file_write\",layer=\"shim\",le=\"+Inf\"} 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_decision_latency_seconds_count{session=\"s1\","
		      "category=\"file_write\",layer=\"shim\"} 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_session_running{session=\"s1\"} 1\n"));
	free(t);
	hx_metrics_set_ended(m);
	t = render(m);
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_session_running{session=\"s1\"} 0\n"));
	free(t);
	hx_metrics_free(m);
}
END_TEST

START_TEST(label_values_escaped_and_tables_bounded)
{
	struct hx_metrics *m;
	char cat[32], *t;

	ck_assert_int_eq(hx_metrics_new("s2", "audit", "", &m), 0);
	feed(m, rec("x", "a\"b\\c\nd", "deny", "shim", 0), false);
	for (int i = 0; i < 500; i++) {
		snprintf(cat, sizeof(cat), "c%d", i);
		feed(m, rec("x", cat, "deny", "shim", 0), false);
	}
	t = render(m);
	ck_assert_ptr_nonnull(strstr(t, "category=\"a\\\"b\\\\c\\nd\""));
	/* 96 series a family and 48 kinds for the process groups, the
	 * rest counted as dropped, not grown: 501 - 96 + 501 - 48 */
	ck_assert_ptr_null(strstr(t, "category=\"c499\""));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_metrics_series_dropped_total{session=\"s2\"} "
		      "858\n"));
	/* pid 0 has no group: its kinds are counted under "other" */
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_process_group_events_total{session=\"s2\","
		      "pgid=\"other\",category=\"c46\",verdict=\"deny\"} 1\n"));
	ck_assert_ptr_null(strstr(t, "pgid=\"other\",category=\"c47\""));
	free(t);
	hx_metrics_free(m);
}
END_TEST

struct counts {
	unsigned long long n;
};

static void source(void *arg, struct hx_metrics_source *out)
{
	struct counts *c = arg;

	out->notify = true;
	out->notified = c->n;
	out->emulated = c->n - 1;
	out->gate_checked = 7;
}

START_TEST(source_read_and_kept_once_gone)
{
	struct hx_metrics *m;
	struct counts c = {5};
	char *t;

	ck_assert_int_eq(hx_metrics_new("s3", "enforce", "", &m), 0);
	hx_metrics_set_source(m, source, &c);
	c.n = 9;
	t = render(m);
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_notified_syscalls_total{session=\"s3\"} 9\n"));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_notified_syscall_outcomes_total{session=\"s3\","
		      "outcome=\"emulated\"} 8\n"));
	free(t);
	c.n = 11;
	hx_metrics_set_source(m, NULL, NULL);
	c.n = 1000; /* what it read is gone: its last word stays */
	t = render(m);
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_notified_syscalls_total{session=\"s3\"} 11\n"));
	ck_assert_ptr_nonnull(
	    strstr(t, "harness_exec_gate_checks_total{session=\"s3\"} 7\n"));
	free(t);
	hx_metrics_free(m);
}
END_TEST

START_TEST(only_loopback_or_unix)
{
	static const char *const ok[] = {"0", "127.0.0.1:0", "localhost:0",
					 "127.1.2.3:0", "[::1]:0"};
	static const char *const refused[] = {"0.0.0.0:9464", "10.1.2.3:1",
					      "[::]:1", "192.168.0.1:80"};
	static const char *const bad[] = {"x:1", "127.0.0.1:99999",
					  "127.0.0.1:", "unix:rel/path"};
	char bound[128], err[256], path[64];
	int fd;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(!hx_metrics_listen(ok[i], &fd, bound,
						 sizeof(bound), err,
						 sizeof(err)),
			      "%s: %s", ok[i], err);
		ck_assert_ptr_nonnull(strrchr(bound, ':'));
		ck_assert_str_ne(strrchr(bound, ':'), ":0");
		close(fd);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_int_eq(hx_metrics_listen(refused[i], &fd, bound,
						   sizeof(bound), err,
						   sizeof(err)),
				 -EPERM);
		ck_assert_int_eq(fd, -1);
		ck_assert_ptr_nonnull(strstr(err, "not a loopback address"));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(hx_metrics_listen(bad[i], &fd, bound,
						   sizeof(bound), err,
						   sizeof(err)),
				 -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, "--metrics"));
	}
	snprintf(path, sizeof(path), "/tmp/hx-metrics-%d.sock", (int)getpid());
	unlink(path);
	ck_assert_int_eq(hx_metrics_listen(path, &fd, bound, sizeof(bound), err,
					   sizeof(err)),
			 0);
	{
		struct stat st;

		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0600);
	}
	/* an existing file is never taken over */
	ck_assert_int_eq(hx_metrics_listen(path, &fd, bound, sizeof(bound), err,
					   sizeof(err)),
			 -EADDRINUSE);
	ck_assert_ptr_nonnull(strstr(err, "the file exists"));
	unlink(path);
}
END_TEST

static int dial(const char *bound)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_port = htons((uint16_t)atoi(strrchr(bound, ':') + 1));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert_int_eq(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return s;
}

/* The whole reply to req (NULL: send nothing), read until close. */
static char *ask(const char *bound, const char *req)
{
	static char buf[65536];
	size_t n = 0;
	ssize_t r;
	int s = dial(bound);

	if (req)
		ck_assert_int_eq(write(s, req, strlen(req)),
				 (ssize_t)strlen(req));
	while ((r = read(s, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(s);
	return buf;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

START_TEST(http_scrape_and_hostile_clients)
{
	struct hx_metrics *m;
	struct hx_metrics_serve *srv;
	char bound[128], err[256], big[10000], *r;
	int fd, idle;
	double t0;

	ck_assert_int_eq(hx_metrics_new("s4", "enforce", "", &m), 0);
	feed(m, rec("open", "file_write", "deny", "kernel", 1000), false);
	ck_assert_int_eq(hx_metrics_listen("127.0.0.1:0", &fd, bound,
					   sizeof(bound), err, sizeof(err)),
			 0);
	ck_assert_int_eq(hx_metrics_serve_start(m, fd, NULL, NULL, &srv), 0);
	r = ask(bound, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: "
		       "text/plain\r\n\r\n");
	ck_assert_msg(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17), "%s", r);
	ck_assert_ptr_nonnull(strstr(r, "text/plain; version=0.0.4"));
	ck_assert_ptr_nonnull(
	    strstr(r, "verdict=\"deny\",layer=\"kernel\"} 1"));
	r = ask(bound, "HEAD /metrics HTTP/1.0\r\n\r\n");
	ck_assert(!strncmp(r, "HTTP/1.1 200 OK", 15) &&
		  !strstr(r, "harness_events_total"));
	r = ask(bound, "POST /metrics HTTP/1.1\r\n\r\n");
	ck_assert_msg(!strncmp(r, "HTTP/1.1 405", 12), "%s", r);
	r = ask(bound, "GET /secrets HTTP/1.1\r\n\r\n");
	ck_assert_msg(!strncmp(r, "HTTP/1.1 404", 12), "%s", r);
	r = ask(bound, "GET /metrics SMTP\r\n\r\n");
	ck_assert_msg(!strncmp(r, "HTTP/1.1 400", 12), "%s", r);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "GET /", 5);
	r = ask(bound, big);
	ck_assert_msg(!strncmp(r, "HTTP/1.1 431", 12), "%s", r);
	/* one that sends nothing holds the endpoint a second at most */
	idle = dial(bound);
	t0 = now_s();
	r = ask(bound, "GET /metrics HTTP/1.1\r\n\r\n");
	ck_assert(!strncmp(r, "HTTP/1.1 200 OK", 15));
	ck_assert_msg(now_s() - t0 < 3, "waited %.1f s", now_s() - t0);
	close(idle);
	hx_metrics_serve_stop(srv);
	hx_metrics_free(m);
}
END_TEST

START_TEST(textfile_replaced_whole)
{
	struct hx_metrics *m;
	char path[64], tmp[80], buf[256];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/hx-metrics-%d.prom", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(hx_metrics_new("s5", "enforce", "", &m), 0);
	/* a leftover of a session that died, a symlink among them, is
	 * replaced, never followed */
	ck_assert_int_eq(symlink("/etc/hx-never", tmp), 0);
	ck_assert_int_eq(hx_metrics_write_file(m, path), 0);
	ck_assert_int_ne(lstat(tmp, &st), 0);
	ck_assert_int_ne(access("/etc/hx-never", F_OK), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	ck_assert_ptr_nonnull(strstr(buf, "# HELP harness_session_info"));
	fclose(f);
	unlink(path);
	hx_metrics_free(m);
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("metrics");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, records_counted_by_labels);
	tcase_add_test(tc, label_values_escaped_and_tables_bounded);
	tcase_add_test(tc, source_read_and_kept_once_gone);
	tcase_add_test(tc, only_loopback_or_unix);
	tcase_add_test(tc, http_scrape_and_hostile_clients);
	tcase_add_test(tc, textfile_replaced_whole);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(metrics_suite)
