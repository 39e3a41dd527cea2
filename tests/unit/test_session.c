/* Unit tests of session.h: a session's names and protections, and the
 * removal of its TMPDIR tree (rmtree.c). */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/glob.h"
#include "supervisor/session.h"
#include "tests/unit/check_main.h"

/* Whether one of s's globs of other sessions matches run_dir/rest. */
static bool others_match(const struct hx_session *s, const char *rest)
{
	char path[PATH_MAX];
	bool hit = false;

	snprintf(path, sizeof(path), "%s/%s", s->run_dir, rest);
	for (size_t i = 0; i < s->nothers; i++)
		hit |= hx_glob_match(s->others_buf[i], path);
	return hit;
}

START_TEST(session_paths)
{
	struct hx_session s;
	char id[32];
	int i;

	setenv("XDG_STATE_HOME", "/xdg", 1);
	ck_assert_int_eq(hx_session_init(&s, "n1", NULL, "/p/pol.yaml"), 0);
	ck_assert_str_eq(s.dir, "/xdg/harness/sessions/n1");
	ck_assert_str_eq(s.audit_path, "/xdg/harness/sessions/n1/audit.jsonl");
	ck_assert_str_eq(s.sock_path, "/xdg/harness/sessions/n1/sock");
	ck_assert_str_eq(s.ask_path, "/xdg/harness/sessions/n1/ask");
	ck_assert_uint_eq(s.nprotect, 13);
	ck_assert_str_eq(s.protect[0], "/xdg/harness/sessions/n1/**");
	/* every session's sockets that fell back to the run dir */
	ck_assert_str_eq(s.protect[4] + strlen(s.run_dir), "/*.sock");
	ck_assert_str_eq(s.protect[6] + strlen(s.run_dir), "/*.control");
	/* and every session's TMPDIR lock (the sweep's) */
	ck_assert_str_eq(s.protect[7] + strlen(s.run_dir),
			 "/*/harness-session.lock");
	/* every other session's tmp_root, and not this one's */
	ck_assert_uint_eq(s.nothers, 4);
	ck_assert(!others_match(&s, "n1/tmp/x") && !others_match(&s, "n1"));
	ck_assert(others_match(&s, "n2/tmp/x") && others_match(&s, "n") &&
		  others_match(&s, "n10/tmp") && others_match(&s, "m1") &&
		  others_match(&s, "1/tmp") && others_match(&s, "n1-/tmp/x"));
	ck_assert_str_eq(s.protect[12], "/p/pol.yaml");
	/* --no-kernel-notify: the socket out of the session dir, which a
	 * write root would mask, and protected where it is */
	ck_assert_int_eq(hx_session_sock_in_run_dir(&s), 0);
	ck_assert_ptr_nonnull(strstr(s.sock_path, "/tmp/harness-"));
	ck_assert_str_eq(strstr(s.sock_path, "/n1.sock"), "/n1.sock");
	ck_assert_str_eq(s.protect[s.nprotect - 1], s.sock_path);
	/* a deep state dir does not fit sun_path: /tmp fallback */
	setenv("XDG_STATE_HOME",
	       "/a/very/long/state/directory/that/goes/on/and/on/and/on/"
	       "for/more/than/one/hundred/and/eight/bytes",
	       1);
	ck_assert_int_eq(hx_session_init(&s, "n1", NULL, NULL), 0);
	ck_assert_ptr_nonnull(strstr(s.sock_path, "/tmp/harness-"));
	/* the ask socket beside it, protected by its own glob */
	ck_assert_ptr_nonnull(strstr(s.ask_path, "/tmp/harness-"));
	ck_assert_str_eq(s.protect[s.nprotect - s.nothers - 5], s.ask_path);
	ck_assert_int_eq(hx_session_init(&s, "bad/name", NULL, NULL), -EINVAL);
	setenv("XDG_STATE_HOME", "/x[y]", 1);
	ck_assert_int_eq(hx_session_init(&s, "n1", NULL, NULL), 0);
	ck_assert_str_eq(s.protect[0], "/x\\[y\\]/harness/sessions/n1/**");
	unsetenv("XDG_STATE_HOME");
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(hx_session_new_id(id, sizeof(id)), 0);
		ck_assert_uint_eq(strlen(id), 23);
		ck_assert(hx_session_name_valid(id));
	}
}
END_TEST

START_TEST(rmtree_no_follow)
{
	char dir[] = "/tmp/hx-test-rm-XXXXXX",
	     keep[] = "/tmp/hx-test-keep-XXXXXX";
	char p[256];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(mkdtemp(keep));
	snprintf(p, sizeof(p), "%s/file", keep);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	snprintf(p, sizeof(p), "%s/sub/deep", dir);
	mkdir(strrchr(strcpy(p, dir), '\0') ? p : p, 0700);
	snprintf(p, sizeof(p), "%s/sub", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/sub/escape", dir);
	ck_assert_int_eq(symlink(keep, p), 0);
	ck_assert_int_eq(hx_rmtree(dir), 0);
	ck_assert_int_ne(stat(dir, &st), 0);
	snprintf(p, sizeof(p), "%s/file", keep);
	ck_assert_int_eq(stat(p, &st), 0); /* the link target survived */
	unlink(p);
	rmdir(keep);
}
END_TEST

/* Entries of dir, or -1. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

/* A process writing in the tree while it is removed (an audit-mode
 * agent of another session in a killed session's TMPDIR) swaps a
 * directory being emptied for a symlink to another tree: a removal by
 * path (nftw's, before) then unlinked that tree's files. */
/* What an agent leaves in its TMPDIR that a plain walk cannot remove:
 * a directory of mode 0500 or 0 (the owner's, not root's), a tree
 * deeper than the walk holds fds for. A symlink to a directory of mode
 * 0500 is removed, its target's mode left. */
START_TEST(rmtree_modes_and_depth)
{
	char dir[] = "/tmp/hx-test-rmk-XXXXXX",
	     keep[] = "/tmp/hx-test-kp-XXXXXX";
	char p[4096];
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(mkdtemp(keep));
	ck_assert_int_eq(chmod(keep, 0500), 0);
	snprintf(p, sizeof(p), "%s/ro", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/ro/f", dir);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	snprintf(p, sizeof(p), "%s/ro/link", dir);
	ck_assert_int_eq(symlink(keep, p), 0);
	snprintf(p, sizeof(p), "%s/ro", dir);
	ck_assert_int_eq(chmod(p, 0500), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 300; i++) {
		int next;

		ck_assert_int_eq(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		ck_assert_int_ge(next, 0);
		if (i % 50 == 0)
			fchmod(fd, 0); /* no search, no read, no write */
		close(fd);
		fd = next;
	}
	close(fd);
	ck_assert_int_eq(hx_rmtree(dir), 0);
	ck_assert_int_ne(lstat(dir, &st), 0);
	ck_assert_int_eq(stat(keep, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0500);
	rmdir(keep);
}
END_TEST

START_TEST(rmtree_swapped_dir_is_not_followed)
{
	char keep[] = "/tmp/hx-test-keep-XXXXXX", top[64], d[96], p[160];
	enum { FILES = 40, ROUNDS = 150 };

	ck_assert_ptr_nonnull(mkdtemp(keep));
	for (int i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%d", keep, i);
		close(open(p, O_CREAT | O_WRONLY, 0600));
	}
	for (int round = 0; round < ROUNDS; round++) {
		pid_t racer;

		snprintf(top, sizeof(top), "/tmp/hx-test-rt-%d-%d", getpid(),
			 round);
		snprintf(d, sizeof(d), "%s/d", top);
		ck_assert_int_eq(mkdir(top, 0700), 0);
		ck_assert_int_eq(mkdir(d, 0700), 0);
		for (int i = 0; i < FILES; i++) {
			snprintf(p, sizeof(p), "%s/f%d", d, i);
			close(open(p, O_CREAT | O_WRONLY, 0600));
		}
		racer = fork();
		if (racer == 0) {
			char moved[128];
			int n;

			snprintf(moved, sizeof(moved), "%s/moved", top);
			while ((n = count_entries(d)) == FILES)
				;
			_exit(n > 0 && !rename(d, moved) && !symlink(keep, d)
				  ? 0
				  : 1);
		}
		hx_rmtree(top);
		kill(racer, SIGKILL);
		waitpid(racer, NULL, 0);
		hx_rmtree(top); /* what the swap left */
		ck_assert_int_eq(count_entries(keep), FILES);
	}
	for (int i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%d", keep, i);
		unlink(p);
	}
	rmdir(keep);
}
END_TEST

static Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("units");

	tcase_add_test(tc, session_paths);
	tcase_add_test(tc, rmtree_no_follow);
	tcase_add_test(tc, rmtree_swapped_dir_is_not_followed);
	tcase_add_test(tc, rmtree_modes_and_depth);
	/* the rmtree races fork and spin: past Check's 4 s on a loaded
	 * machine (a helper's run saw it) */
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(session_suite)
