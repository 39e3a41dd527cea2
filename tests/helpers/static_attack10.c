/* Attacks of issue 10 (classes 1, 2, 6), one per subcommand, static so
 * that only the kernel layers see them. Each prints one line: what the
 * kernel answered, or "ESCAPED ..." when the forbidden effect happened
 * (the integration test checks the effect itself too).
 *
 *   send-swap TCPPORT UDPPORT   sendmsg(fd, no name) on a TCP socket to
 *                               TCPPORT while a thread dup2()s a UDP
 *                               socket onto fd and sets msg_name to
 *                               127.0.0.1:UDPPORT
 *   abstract-swap NAME PATH     connect to "\0NAME" while a thread turns
 *                               the address into the unix path PATH, or
 *                               with PATH inet:PORT into 127.0.0.2:PORT
 *   magic-open FILE             open("/proc/self/fd/1", O_WRONLY) while
 *                               a thread dup2()s a read-only fd of FILE
 *                               onto 1
 *   meta FILE DIR               fchmod/fchown/fsetxattr/futimens on a
 *                               read-only fd of FILE, setxattr/utimes/
 *                               chmod by path, mknod and bind in DIR,
 *                               setxattrat by number
 *   ldso PROG ARGS...           execv(ld.so, [ld.so, PROG, ARGS...])
 *   ldso-memfd                  ld.so /proc/self/fd/N of a memfd copy
 *                               of /bin/true
 *   chattr FILE                 on a read-only fd of FILE: the nodump
 *                               flag through FS_IOC_SETFLAGS and
 *                               FS_IOC_FSSETXATTR, FS_IOC_SETVERSION and
 *                               FS_IOC_ENABLE_VERITY (and ext4's number)
 *   btrfs DIR NAME DEST DNAME   on btrfs: a subvolume DIR/NAME with a
 *                               file in it, snapshotted as DEST/DNAME,
 *                               and an empty one DEST/DNAME-empty
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define LDSO "/lib64/ld-linux-x86-64.so.2"

static atomic_bool stop;
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- send-swap ---- */
static int s_fd, s_tcp, s_udp;
static struct sockaddr_in s_dst;
static struct msghdr s_mh;

static void *send_flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dup2(s_udp, s_fd);
		s_mh.msg_name = &s_dst;
		s_mh.msg_namelen = sizeof(s_dst);
		dup2(s_tcp, s_fd);
		s_mh.msg_name = NULL;
		s_mh.msg_namelen = 0;
	}
	return NULL;
}

static int send_swap(int tport, int uport)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct iovec iov = {"leak", 4};
	pthread_t th;
	long ok = 0, fail = 0;
	double end;

	s_tcp = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_port = htons((uint16_t)tport);
	if (connect(s_tcp, (void *)&a, sizeof(a))) {
		printf("tcp connect %s\n", strerror(errno));
		return 1;
	}
	s_udp = socket(AF_INET, SOCK_DGRAM, 0);
	s_dst = a;
	s_dst.sin_port = htons((uint16_t)uport);
	s_fd = dup(s_tcp);
	s_mh.msg_iov = &iov;
	s_mh.msg_iovlen = 1;
	pthread_create(&th, NULL, send_flipper, NULL);
	for (end = now() + 2; now() < end;) {
		if (sendmsg(s_fd, &s_mh, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			ok++;
		else
			fail++;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("sends %ld ok %ld failed\n", ok, fail);
	return 0;
}

/* ---- abstract-swap ---- */
static struct sockaddr_un a_abs, a_path, a_cur;
static socklen_t a_abs_len, a_path_len;

static void *addr_flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		/* The barriers keep the compiler from dropping the first
		 * store as dead. */
		memcpy(&a_cur, &a_path, sizeof(a_cur));
		__asm__ volatile("" ::: "memory");
		memcpy(&a_cur, &a_abs, sizeof(a_cur));
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static int abstract_swap(const char *name, const char *path)
{
	pthread_t th;
	long ok = 0, n = 0, errs[256] = {0};
	double end;

	a_abs.sun_family = a_path.sun_family = AF_UNIX;
	snprintf(a_abs.sun_path + 1, sizeof(a_abs.sun_path) - 1, "%s", name);
	a_abs_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				strlen(name));
	if (!strncmp(path, "inet:", 5)) {
		/* 127.0.0.2:PORT: a port Landlock lets through, an address
		 * the policy does not name. */
		struct sockaddr_in in = {.sin_family = AF_INET,
					 .sin_port =
					     htons((uint16_t)atoi(path + 5)),
					 .sin_addr.s_addr = htonl(0x7f000002)};

		memset(&a_path, 0, sizeof(a_path));
		memcpy(&a_path, &in, sizeof(in));
	} else
		snprintf(a_path.sun_path, sizeof(a_path.sun_path), "%s", path);
	a_path_len = sizeof(a_path);
	memcpy(&a_cur, &a_abs, sizeof(a_cur));
	pthread_create(&th, NULL, addr_flipper, NULL);
	for (end = now() + 2; now() < end; n++) {
		/* An IP socket for an IP swap: the kernel connects it to
		 * whatever family the address has by then. */
		int fd = socket(a_path.sun_family, SOCK_STREAM, 0);

		/* The length fits both: the path's NUL ends it early. */
		if (!connect(fd, (void *)&a_cur, sizeof(a_cur)))
			ok++;
		else if (errno < 256)
			errs[errno]++;
		close(fd);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("connects %ld ok of %ld", ok, n);
	for (int e = 0; e < 256; e++)
		if (errs[e])
			printf(" %s:%ld", strerrorname_np(e), errs[e]);
	printf("\n");
	return 0;
}

/* ---- magic-open ---- */
static int m_ro, m_pipe;

static void *fd_flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dup2(m_ro, 1);
		dup2(m_pipe, 1);
	}
	return NULL;
}

static int magic_open(const char *file)
{
	int p[2], saved = dup(1);
	pthread_t th;
	long wrote = 0, n = 0;
	double end;

	m_ro = open(file, O_RDONLY);
	if (m_ro < 0 || pipe(p)) {
		dprintf(saved, "setup %s\n", strerror(errno));
		return 1;
	}
	m_pipe = p[1];
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	dup2(m_pipe, 1);
	pthread_create(&th, NULL, fd_flipper, NULL);
	for (end = now() + 2; now() < end; n++) {
		char junk[4096];
		int fd = open("/proc/self/fd/1", O_WRONLY | O_APPEND);

		if (fd >= 0) {
			if (write(fd, "X", 1) == 1) {
				struct stat st;

				if (!fstat(fd, &st) && S_ISREG(st.st_mode))
					wrote++;
			}
			close(fd);
		}
		while (read(p[0], junk, sizeof(junk)) > 0)
			;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	dprintf(saved, "opens %ld file-writes %ld\n", n, wrote);
	return 0;
}

/* ---- meta ---- */
static const char *res(int r)
{
	static char buf[16][32];
	static int k;
	char *b = buf[k++ % 16];

	snprintf(b, 32, "%s", r == 0 ? "ok" : strerrorname_np(errno));
	return b;
}

static int meta(const char *file, const char *dir)
{
	int fd = open(file, O_RDONLY), s;
	struct timespec ts[2] = {{1, 0}, {1, 0}};
	struct timeval tv[2] = {{1, 0}, {1, 0}};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char p1[4096], p2[4096];

	if (fd < 0) {
		printf("open %s\n", strerror(errno));
		return 1;
	}
	printf("fchmod %s\n", res(fchmod(fd, 0777)));
	printf("fchown %s\n", res(fchown(fd, getuid(), getgid())));
	printf("fsetxattr %s\n", res(fsetxattr(fd, "user.hx", "1", 1, 0)));
	printf("futimens %s\n", res(futimens(fd, ts)));
	printf("fchownat-empty %s\n",
	       res(fchownat(fd, "", getuid(), getgid(), AT_EMPTY_PATH)));
	printf("setxattr %s\n", res(setxattr(file, "user.hx", "1", 1, 0)));
	printf("utimes %s\n", res(utimes(file, tv)));
	printf("utimensat %s\n", res(utimensat(AT_FDCWD, file, ts, 0)));
	printf("setxattrat %s\n",
	       res((int)syscall(463, AT_FDCWD, file, 0, "user.hx", NULL, 0)));
	snprintf(p1, sizeof(p1), "%s/node", dir);
	printf("mknod %s\n", res(mknod(p1, S_IFREG | 0644, 0)));
	snprintf(p2, sizeof(p2), "%s/fifo", dir);
	printf("mkfifo %s\n", res(mknod(p2, S_IFIFO | 0644, 0)));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/s.sock", dir);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("bind %s\n", res(bind(s, (void *)&sun, sizeof(sun))));
	return 0;
}

static int ldso(int argc, char **argv)
{
	char *av[16] = {LDSO};
	int i;

	for (i = 0; i < argc && i < 14; i++)
		av[i + 1] = argv[i];
	av[i + 1] = NULL;
	execv(LDSO, av);
	printf("exec %s\n", strerrorname_np(errno));
	return 0;
}

static int ldso_memfd(void)
{
	int fd = memfd_create("payload", 0), in = open("/bin/true", O_RDONLY);
	char buf[65536], path[64];
	ssize_t n;
	pid_t p;
	int st;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			return 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	p = fork();
	if (p == 0) {
		execl(LDSO, LDSO, path, (char *)NULL);
		_exit(errno == EACCES ? 40 : 41);
	}
	waitpid(p, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		printf("ESCAPED the memfd ran through ld.so\n");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 40)
		printf("exec EACCES\n");
	else
		printf("status 0x%x\n", st);
	return 0;
}

/* ---- chattr ---- */
static int chattr(const char *file)
{
	int fd = open(file, O_RDONLY), f = 0, v = 7;
	struct fsxattr fx;
	struct fsverity_enable_arg va = {
	    .version = 1, .hash_algorithm = 1, .block_size = 4096};

	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &f)) {
		printf("SKIPPED no attribute flags here\n");
		return 0;
	}
	f |= FS_NODUMP_FL;
	printf("setflags %s", res(ioctl(fd, FS_IOC_SETFLAGS, &f)));
	if (!ioctl(fd, FS_IOC_FSGETXATTR, &fx)) {
		fx.fsx_xflags |= FS_XFLAG_NODUMP;
		printf(" fssetxattr %s",
		       res(ioctl(fd, FS_IOC_FSSETXATTR, &fx)));
	}
	printf(" setversion %s", res(ioctl(fd, FS_IOC_SETVERSION, &v)));
	/* ext4's own number for the same (an attack review found it). */
	printf(" ext4-setversion %s",
	       res(ioctl(fd, _IOW('f', 4, long), &(long){7})));
	printf(" verity %s\n", res(ioctl(fd, FS_IOC_ENABLE_VERITY, &va)));
	return 0;
}

/* Subvolumes are made by the file system, no mkdir: the write roots'
 * hooks (Landlock's, user-notify's) never see the directory appear. */
static int btrfs(const char *dir, const char *name, const char *dest,
		 const char *dname)
{
	struct btrfs_ioctl_vol_args va = {0};
	char p[PATH_MAX];
	int pfd = open(dir, O_RDONLY | O_DIRECTORY), dfd, sfd, fd;

	snprintf(va.name, sizeof(va.name), "%s", name);
	printf("subvol %s", res(ioctl(pfd, BTRFS_IOC_SUBVOL_CREATE, &va)));
	snprintf(p, sizeof(p), "%s/%s/config.fish", dir, name);
	if ((fd = open(p, O_WRONLY | O_CREAT, 0644)) >= 0) {
		(void)!write(fd, "echo ESCAPED\n", 13);
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	sfd = open(p, O_RDONLY | O_DIRECTORY);
	dfd = open(dest, O_RDONLY | O_DIRECTORY);
	memset(&va, 0, sizeof(va));
	va.fd = sfd;
	snprintf(va.name, sizeof(va.name), "%s", dname);
	printf(" snap %s", res(ioctl(dfd, BTRFS_IOC_SNAP_CREATE, &va)));
	memset(&va, 0, sizeof(va));
	snprintf(va.name, sizeof(va.name), "%s-empty", dname);
	printf(" outside %s\n", res(ioctl(dfd, BTRFS_IOC_SUBVOL_CREATE, &va)));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "send-swap"))
		return send_swap(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "abstract-swap"))
		return abstract_swap(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "magic-open"))
		return magic_open(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "meta"))
		return meta(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "ldso"))
		return ldso(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "ldso-memfd"))
		return ldso_memfd();
	if (argc >= 3 && !strcmp(argv[1], "chattr"))
		return chattr(argv[2]);
	if (argc >= 6 && !strcmp(argv[1], "btrfs"))
		return btrfs(argv[2], argv[3], argv[4], argv[5]);
	fprintf(stderr, "usage: see the source\n");
	return 2;
}
