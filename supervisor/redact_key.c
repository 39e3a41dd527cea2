/* The user's redaction key (redact.h): 32 random bytes, in hex, in the
 * state dir, which no agent may read or write (harness:protect). The
 * user's and not the session's, so that one secret has one tag in all
 * of the user's logs. */
#define _GNU_SOURCE
#include "supervisor/redact.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sbuf.h"
#include "supervisor/fmt.h"

#define HEX_LEN (2 * HX_REDACT_KEY_LEN)

static int random_key(uint8_t *key)
{
	size_t got = 0;

	while (got < HX_REDACT_KEY_LEN) {
		ssize_t n = getrandom(key + got, HX_REDACT_KEY_LEN - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	return 0;
}

static int parse(const char *hex, size_t n, uint8_t *key)
{
	if (n != HEX_LEN && !(n == HEX_LEN + 1 && hex[HEX_LEN] == '\n'))
		return -EINVAL;
	return hx_hex_decode(hex, key, HX_REDACT_KEY_LEN) ? -EINVAL : 0;
}

static int read_key(const char *path, uint8_t *key)
{
	char buf[HEX_LEN + 2];
	struct stat st;
	ssize_t n;
	int e, fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	/* A key another user can read, or that is not ours, keys nothing
	 * the log's readers cannot recompute. */
	if (fstat(fd, &st))
		e = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		 (st.st_mode & 077))
		e = -EPERM;
	else {
		do
			n = read(fd, buf, sizeof(buf));
		while (n < 0 && errno == EINTR);
		e = n < 0 ? -errno : parse(buf, (size_t)n, key);
	}
	close(fd);
	return e;
}

/* Written whole under a name of its own, then linked into place: two
 * sessions that start at once end with one key, never half of one. */
static int make_key(const char *dir, const char *path, uint8_t *key)
{
	char tmp[PATH_MAX], hex[HEX_LEN + 2];
	int fd, e = random_key(key);

	if (e)
		return e;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.redact.key.%d", dir,
			     (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	hx_fmt_hex(key, HX_REDACT_KEY_LEN, hex);
	hex[HEX_LEN] = '\n';
	e = write(fd, hex, HEX_LEN + 1) == HEX_LEN + 1 && !fsync(fd) ? 0 : -EIO;
	close(fd);
	if (!e && link(tmp, path))
		e = -errno;
	unlink(tmp);
	return e == -EEXIST ? read_key(path, key) : e;
}

int hx_redact_key_load(const char *state_dir, uint8_t *key)
{
	char path[PATH_MAX];
	int e;

	if ((size_t)snprintf(path, sizeof(path), "%s/redact.key", state_dir) >=
	    sizeof(path))
		e = -ENAMETOOLONG;
	else if ((e = read_key(path, key)) == -ENOENT)
		e = make_key(state_dir, path, key);
	if (e && random_key(key))
		memset(key, 0, HX_REDACT_KEY_LEN); /* getrandom(2) failing */
	return e;
}
