/* hx_event_parse: events as a user writes them, for `harness-policy
 * explain`. Touches the OS only to make paths absolute and to look an
 * executable up in $PATH. */
#include "policy/policy_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/path.h"

__attribute__((format(printf, 3, 4))) static int bad(char *err, size_t errlen,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Absolute and normalized by the one normalizer the shim and the
 * supervisor use (no symlinks: the supervisor judges the path the program
 * names, normalized). */
static int absolute(const char *in, char *out, size_t size)
{
	char cwd[PATH_MAX];
	long n;

	if (in[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	n = hx_path_normalize(in[0] == '/' ? NULL : cwd, in, out, size);
	return n < 0 ? (int)n : 0;
}

/* The executable a bare name runs, as execvp would find it. */
static const char *path_lookup(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		if (len > 0 &&
		    snprintf(buf, size, "%.*s/%s", (int)len, path, name) <
			(int)size &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0)
			return buf;
		path += len + (end ? 1 : 0);
	}
	return name;
}

static int parse_addr(const char *text, struct hx_event *ev,
		      struct hx_event_storage *st, char *err, size_t errlen)
{
	const char *colon, *host = text;
	size_t hlen;
	char *end;
	long port;
	uint8_t a[16];
	int fam;

	memset(&st->addr, 0, sizeof(st->addr));
	ev->addr = (const struct sockaddr *)&st->addr;
	/* "tcp:" or "udp:": the socket's protocol, for rules by protocol */
	if (!strncmp(text, "tcp:", 4) || !strncmp(text, "udp:", 4)) {
		ev->proto = text[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP;
		host = text += 4;
	}
	if (!strncmp(text, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&st->addr;
		const char *name = text + 5;
		size_t n = strlen(name);

		if (n == 0 || n >= sizeof(un->sun_path))
			return bad(err, errlen, "bad unix socket address '%s'",
				   text);
		un->sun_family = AF_UNIX;
		if (name[0] == '@') {
			/* Abstract: a leading NUL, no terminator. */
			memcpy(un->sun_path + 1, name + 1, n - 1);
			ev->addrlen =
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					n);
		} else {
			memcpy(un->sun_path, name, n);
			ev->addrlen =
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					n + 1);
		}
		return 0;
	}
	if (text[0] == '[') {
		const char *rb = strchr(text, ']');

		if (!rb || rb[1] != ':')
			return bad(err, errlen,
				   "expected [IPv6]:PORT, not '%s'", text);
		host = text + 1;
		hlen = (size_t)(rb - host);
		colon = rb + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon)
			return bad(err, errlen, "expected HOST:PORT, not '%s'",
				   text);
		hlen = (size_t)(colon - text);
	}
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 0 || port > 65535)
		return bad(err, errlen, "bad port in '%s'", text);
	fam = hx_parse_ip(host, hlen, a);
	if (fam == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&st->addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(&in6->sin6_addr, a, 16);
		ev->addrlen = sizeof(*in6);
		return 0;
	}
	struct sockaddr_in *in = (struct sockaddr_in *)&st->addr;

	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	ev->addrlen = sizeof(*in);
	if (fam == AF_INET) {
		memcpy(&in->sin_addr, a, 4);
		return 0;
	}
	/* A name: its address is unknown (0.0.0.0), the name is known. */
	if (hlen == 0 || hlen >= sizeof(st->path))
		return bad(err, errlen, "bad host in '%s'", text);
	memcpy(st->path, host, hlen);
	st->path[hlen] = '\0';
	st->names[0] = st->path;
	ev->names = st->names;
	ev->nnames = 1;
	return 0;
}

static int lookup_op(const char *w, enum hx_op *op)
{
	for (int i = 0; i < HX_OP_COUNT; i++) {
		if (!strcmp(hx_op_name((enum hx_op)i), w)) {
			*op = (enum hx_op)i;
			return 0;
		}
	}
	return -EINVAL;
}

int hx_event_parse(int argc, char *const *argv, struct hx_event *ev,
		   struct hx_event_storage *st, char *err, size_t errlen)
{
	static const char ops[] = "exec, read, write, rename, unlink, rmdir, "
				  "mkdir, link, symlink, truncate, connect, "
				  "send, resolve, listen";
	int want, ret = 0;
	enum hx_op op;

	memset(ev, 0, sizeof(*ev));
	if (argc < 1 || !argv[0])
		return bad(err, errlen, "no event given (one of: %s)", ops);
	if (lookup_op(argv[0], &op)) {
		snprintf(err, errlen, "unknown event '%s' (one of: %s)",
			 argv[0], ops);
		return -EINVAL;
	}
	ev->op = op;
	switch (op) {
	case HX_OP_EXEC:
		if (argc < 2)
			return bad(err, errlen, "%s needs a command", argv[0]);
		ev->argv = (const char *const *)argv + 1;
		ev->argc = (size_t)argc - 1;
		if (strchr(argv[1], '/'))
			ret = absolute(argv[1], st->path, sizeof(st->path));
		else if (path_lookup(argv[1], st->path, sizeof(st->path)) !=
			 st->path)
			snprintf(st->path, sizeof(st->path), "%s", argv[1]);
		ev->path = st->path;
		ev->cwd = getcwd(st->cwd, sizeof(st->cwd));
		break;
	case HX_OP_RENAME:
	case HX_OP_LINK:
	case HX_OP_SYMLINK:
		want = 3;
		if (argc != want)
			return bad(err, errlen, "%s takes two paths", argv[0]);
		if (op == HX_OP_RENAME) { /* rename SRC DST */
			/* A hypothetical rename may move a directory. */
			ev->moves_tree = true;
			ret = absolute(argv[1], st->path, sizeof(st->path));
			if (!ret)
				ret = absolute(argv[2], st->path2,
					       sizeof(st->path2));
		} else { /* link EXISTING NEW, symlink TARGET NEW */
			ret = absolute(argv[2], st->path, sizeof(st->path));
			if (!ret && op == HX_OP_LINK)
				ret = absolute(argv[1], st->path2,
					       sizeof(st->path2));
			else if (!ret)
				snprintf(st->path2, sizeof(st->path2), "%s",
					 argv[1]);
		}
		ev->path = st->path;
		ev->path2 = st->path2;
		break;
	case HX_OP_CONNECT:
	case HX_OP_SEND:
	case HX_OP_LISTEN:
		if (argc != 2)
			return bad(err, errlen,
				   "%s takes one address: HOST:PORT or "
				   "unix:PATH",
				   argv[0]);
		return parse_addr(argv[1], ev, st, err, errlen);
	case HX_OP_RESOLVE:
		if (argc != 2)
			return bad(err, errlen, "%s takes one host name",
				   argv[0]);
		ev->host = argv[1];
		break;
	default:
		if (argc != 2)
			return bad(err, errlen, "%s takes one path", argv[0]);
		ret = absolute(argv[1], st->path, sizeof(st->path));
		ev->path = st->path;
		break;
	}
	if (ret) {
		snprintf(err, errlen, "bad path: %s", strerror(-ret));
		return -EINVAL;
	}
	return 0;
}
