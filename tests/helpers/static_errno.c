/* The errno of each call of the user-notify set, for the table of
 * tests/integration/test_errno.py: built static (no shim: only the
 * kernel layer sees it) and, as helpers/dyn_errno, dynamic (the shim
 * decides first). Calls go through libc, so the shim interposes the
 * dynamic build's. Calls are separated by ",":
 *
 *   static_errno CALL ARGS... [, CALL ARGS...]...
 *
 * and one line is printed per call: "OK" or the errno's name (EEXIST).
 *
 *   open PATH FLAGS       FLAGS: RDONLY|WRONLY|RDWR|ACCMODE|CREAT|EXCL|TRUNC|
 *                         APPEND|DIRECTORY|NOFOLLOW|TMPFILE (mode 0644)
 *   openat2 PATH FLAGS    the same through openat2 (MODE: pass the mode
 *                         without a creation flag)
 *   creat PATH            mkdir PATH        rmdir PATH      unlink PATH
 *   rename OLD NEW        renameat2 OLD NEW NOREPLACE|EXCHANGE
 *   link OLD NEW          symlink TEXT PATH truncate PATH   (to 1 byte)
 *   chmod PATH            (0640)            chown PATH      (own ids)
 *   connect unix:PATH|tcp:PORT      stream connect (127.0.0.1)
 *   sendto unix:PATH|udp:PORT|unspec:PORT   one datagram "x" (unspec:
 *                         127.0.0.1:PORT with family AF_UNSPEC)
 *   netlink PROTO PID     a NETLINK_ROUTE-style dump request (RTM_GETLINK)
 *                         sent with sendto to nl_pid PID on a PROTO
 *                         socket (route, generic, audit...); "OK N"
 *                         with N reply messages read */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define HX_MODE 0x80000000u /* openat2: a mode without O_CREAT */

struct name {
	const char *s;
	unsigned v;
};

static const struct name open_flags[] = {
    {"RDONLY", O_RDONLY},
    {"WRONLY", O_WRONLY},
    {"RDWR", O_RDWR},
    {"ACCMODE", O_ACCMODE}, /* 3: neither read nor write, both checked */
    {"CREAT", O_CREAT},
    {"EXCL", O_EXCL},
    {"TRUNC", O_TRUNC},
    {"APPEND", O_APPEND},
    {"DIRECTORY", O_DIRECTORY},
    {"NOFOLLOW", O_NOFOLLOW},
    {"TMPFILE", O_TMPFILE},
    {"NOREPLACE", RENAME_NOREPLACE},
    {"EXCHANGE", RENAME_EXCHANGE},
    {"MODE", HX_MODE},
    {NULL, 0},
};

static const struct name nl_protos[] = {
    {"route", NETLINK_ROUTE},		{"generic", NETLINK_GENERIC},
    {"audit", NETLINK_AUDIT},		{"diag", NETLINK_SOCK_DIAG},
    {"uevent", NETLINK_KOBJECT_UEVENT}, {NULL, 0},
};

static int lookup(const struct name *t, const char *s, unsigned *v)
{
	for (; t->s; t++)
		if (!strcmp(t->s, s)) {
			*v = t->v;
			return 0;
		}
	return -1;
}

static unsigned parse_flags(const char *s)
{
	char buf[256], *save = NULL;
	unsigned f = 0, v;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *w = strtok_r(buf, "|", &save); w;
	     w = strtok_r(NULL, "|", &save)) {
		if (lookup(open_flags, w, &v)) {
			fprintf(stderr, "unknown flag %s\n", w);
			exit(2);
		}
		f |= v;
	}
	return f;
}

/* Closes fd; r (-1: failed, errno kept) as the call's result. */
static long close_keep_errno(int fd, long r)
{
	int e = errno;

	close(fd);
	errno = e;
	return r < 0 ? -1 : 0;
}

/* "unix:PATH" or "tcp:PORT"/"udp:PORT" (127.0.0.1). */
static socklen_t parse_addr(const char *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!strncmp(s, "unix:", 5)) {
		struct sockaddr_un *un = (void *)ss;

		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof(un->sun_path), "%s", s + 5);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				   strlen(un->sun_path) + 1);
	} else {
		struct sockaddr_in *in = (void *)ss;

		/* "unspec:PORT": udp_sendmsg() takes an AF_UNSPEC address
		 * for an IPv4 one. */
		in->sin_family = strncmp(s, "unspec:", 7) ? AF_INET : AF_UNSPEC;
		in->sin_port = htons((uint16_t)atoi(strchr(s, ':') + 1));
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*in);
	}
}

static long net(const char *call, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(addr, &ss);
	int fd = socket(ss.ss_family == AF_UNSPEC ? AF_INET : ss.ss_family,
			(!strcmp(call, "connect") ? SOCK_STREAM : SOCK_DGRAM) |
			    SOCK_CLOEXEC,
			0);
	long r;

	if (fd < 0)
		return -1;
	if (!strcmp(call, "connect"))
		r = connect(fd, (struct sockaddr *)&ss, len);
	else
		r = sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len);
	return close_keep_errno(fd, r);
}

/* What getifaddrs() and `ip link` send: a dump of the links. */
static long netlink(const char *proto, const char *pid, int *replies)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
	} req = {.h = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 1},
		 .g = {.rtgen_family = AF_UNSPEC}};
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK,
				 .nl_pid = (unsigned)atoi(pid)};
	char buf[16384];
	unsigned p;
	int fd;
	long r;

	if (lookup(nl_protos, proto, &p)) {
		fprintf(stderr, "unknown netlink protocol %s\n", proto);
		exit(2);
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, (int)p);
	if (fd < 0)
		return -1;
	r = sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa,
		   sizeof(sa));
	/* A reply proves the kernel got the request; route only. */
	if (r >= 0 && p == NETLINK_ROUTE)
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			(*replies)++;
	return close_keep_errno(fd, r);
}

static long run(int argc, char **argv, int *replies)
{
	const char *c = argv[0];
	long fd;

#define NEED(n)                                                                \
	do {                                                                   \
		if (argc < (n) + 1) {                                          \
			fprintf(stderr, "%s: %d arguments\n", c, n);           \
			exit(2);                                               \
		}                                                              \
	} while (0)
	if (!strcmp(c, "open") || !strcmp(c, "openat2")) {
		unsigned f;

		NEED(2);
		f = parse_flags(argv[2]);
		if (!strcmp(c, "open")) {
			fd = open(argv[1], (int)f, 0644);
		} else {
			struct open_how how = {.flags = f};

			/* A mode without a creation is EINVAL: MODE asks
			 * for one anyway. */
			if ((f & (O_CREAT | HX_MODE)) ||
			    (f & O_TMPFILE) == O_TMPFILE)
				how.mode = 0644;
			how.flags &= ~(unsigned)HX_MODE;
			fd = syscall(SYS_openat2, AT_FDCWD, argv[1], &how,
				     sizeof(how));
		}
		if (fd >= 0)
			close((int)fd);
		return fd < 0 ? -1 : 0;
	}
	if (!strcmp(c, "creat")) {
		NEED(1);
		fd = creat(argv[1], 0644);
		if (fd >= 0)
			close((int)fd);
		return fd < 0 ? -1 : 0;
	}
	if (!strcmp(c, "mkdir") && argc > 1)
		return mkdir(argv[1], 0755);
	if (!strcmp(c, "rmdir") && argc > 1)
		return rmdir(argv[1]);
	if (!strcmp(c, "unlink") && argc > 1)
		return unlink(argv[1]);
	if (!strcmp(c, "truncate") && argc > 1)
		return truncate(argv[1], 1);
	if (!strcmp(c, "chmod") && argc > 1)
		return chmod(argv[1], 0640);
	if (!strcmp(c, "chown") && argc > 1)
		return chown(argv[1], getuid(), getgid());
	if (!strcmp(c, "rename") && argc > 2)
		return rename(argv[1], argv[2]);
	if (!strcmp(c, "renameat2") && argc > 3)
		return renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2],
				 parse_flags(argv[3]));
	if (!strcmp(c, "link") && argc > 2)
		return link(argv[1], argv[2]);
	if (!strcmp(c, "symlink") && argc > 2)
		return symlink(argv[1], argv[2]);
	if ((!strcmp(c, "connect") || !strcmp(c, "sendto")) && argc > 1)
		return net(c, argv[1]);
	if (!strcmp(c, "netlink") && argc > 2)
		return netlink(argv[1], argv[2], replies);
	fprintf(stderr, "unknown call or missing arguments: %s\n", c);
	exit(2);
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc) {
		int j = i, replies = 0;

		while (j < argc && strcmp(argv[j], ","))
			j++;
		argv[j < argc ? j : argc] = NULL;
		if (run(j - i, argv + i, &replies) < 0)
			printf("%s\n", strerrorname_np(errno)
					   ? strerrorname_np(errno)
					   : "?");
		else if (!strcmp(argv[i], "netlink"))
			printf("OK %d\n", replies);
		else
			printf("OK\n");
		fflush(stdout);
		i = j + 1;
	}
	return 0;
}
