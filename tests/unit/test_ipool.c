/* The pool of unnamed files for carved directories (supervisor/ipool.h):
 * filling, linking one in under a name, an existing name, a directory
 * without a pool, a pool used up, the mode, a grant that refuses. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/kernel/ipool.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static char top[64], carved[128], other[128];
static int ngrants, refuse_every;

static void setup(void)
{
	strcpy(top, "/tmp/hx-ipool-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(carved, sizeof(carved), "%s/home", top);
	snprintf(other, sizeof(other), "%s/other", top);
	ck_assert_int_eq(mkdir(carved, 0755), 0);
	ck_assert_int_eq(mkdir(other, 0755), 0);
	ngrants = 0;
	refuse_every = 0;
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

static int grant(int fd, void *arg)
{
	struct stat st;

	(void)arg;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISREG(st.st_mode) && st.st_nlink == 0); /* unnamed */
	ngrants++;
	return refuse_every && ngrants % refuse_every == 0 ? -EBADF : 0;
}

static int dir_fd(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(fill_link_and_use_up)
{
	struct hx_ipool *p;
	char path[192], buf[8];
	struct stat st;
	int dfd, fd;

	ck_assert_int_eq(hx_ipool_new(&p), 0);
	ck_assert_int_eq(hx_ipool_fill(p, carved, 3, grant, NULL), 3);
	ck_assert_int_eq(ngrants, 3);
	ck_assert_uint_eq(hx_ipool_left(p), 3);
	/* Nothing named in the directory until a creation. */
	snprintf(path, sizeof(path), "ls -A %s | grep -q .", carved);
	ck_assert_int_ne(system(path), 0);
	dfd = dir_fd(carved);
	fd = hx_ipool_create(p, dfd, "a.tmp", O_WRONLY | O_CREAT | O_TRUNC,
			     0444);
	ck_assert_int_ge(fd, 0);
	/* Opened as asked, writable although the new mode says 0444, and
	 * by its name: not "#INODE (deleted)", on which an fchmod through
	 * it was decided (and denied). */
	ck_assert_int_eq(write(fd, "hi", 2), 2);
	snprintf(path, sizeof(path), "%s/a.tmp", carved);
	{
		char link[64], got[192];
		ssize_t k;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		k = readlink(link, got, sizeof(got) - 1);
		ck_assert_int_gt(k, 0);
		got[k] = '\0';
		ck_assert_str_eq(got, path);
	}
	close(fd);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0444);
	ck_assert_int_eq(st.st_nlink, 1);
	ck_assert_int_eq(st.st_size, 2);
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 2);
	close(fd);
	/* An existing name is EEXIST, and the file goes back to the pool. */
	ck_assert_int_eq(hx_ipool_create(p, dfd, "a.tmp", O_RDWR, 0600),
			 -EEXIST);
	ck_assert_uint_eq(hx_ipool_left(p), 2);
	ck_assert_int_ge((fd = hx_ipool_create(p, dfd, "b", O_RDWR, 0600)), 0);
	close(fd);
	ck_assert_int_ge((fd = hx_ipool_create(p, dfd, "c", O_RDWR, 0600)), 0);
	close(fd);
	/* Used up: the caller makes it as usual. */
	ck_assert_int_eq(hx_ipool_create(p, dfd, "d", O_RDWR, 0600), -ENOENT);
	ck_assert_uint_eq(hx_ipool_used(p), 3);
	ck_assert_uint_eq(hx_ipool_left(p), 0);
	close(dfd);
	hx_ipool_free(p);
}
END_TEST

START_TEST(no_pool_elsewhere)
{
	struct hx_ipool *p;
	char path[192];
	int dfd;

	ck_assert_int_eq(hx_ipool_new(&p), 0);
	ck_assert_int_eq(hx_ipool_fill(p, carved, 2, grant, NULL), 2);
	dfd = dir_fd(other);
	ck_assert_int_eq(hx_ipool_create(p, dfd, "x", O_RDWR, 0600), -ENOENT);
	close(dfd);
	snprintf(path, sizeof(path), "%s/x", other);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_uint_eq(hx_ipool_left(p), 2);
	/* A missing directory is no pool; NULL pools nothing. */
	snprintf(path, sizeof(path), "%s/missing", top);
	ck_assert_int_eq(hx_ipool_fill(p, path, 2, grant, NULL), -ENOENT);
	ck_assert_int_eq(hx_ipool_create(NULL, 0, "x", O_RDWR, 0600), -ENOENT);
	ck_assert_uint_eq(hx_ipool_left(NULL), 0);
	hx_ipool_free(p);
	hx_ipool_free(NULL);
}
END_TEST

START_TEST(refused_grants_are_dropped)
{
	struct hx_ipool *p;

	refuse_every = 2; /* every second file gets no rule: not pooled */
	ck_assert_int_eq(hx_ipool_new(&p), 0);
	ck_assert_int_eq(hx_ipool_fill(p, carved, 3, grant, NULL), 2);
	ck_assert_int_eq(ngrants, 3);
	ck_assert_uint_eq(hx_ipool_left(p), 2);
	hx_ipool_free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ipool");
	TCase *c = tcase_create("pool");

	tcase_add_checked_fixture(c, setup, teardown);
	tcase_add_test(c, fill_link_and_use_up);
	tcase_add_test(c, no_pool_elsewhere);
	tcase_add_test(c, refused_grants_are_dropped);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
