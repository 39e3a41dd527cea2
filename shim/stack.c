/* libunwind call stack capture; see stack.h. */
#define _GNU_SOURCE
#include "shim/stack.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <errno.h>
#include <string.h>

#include "shim/tls.h"
#include "common/sys.h"

#include <fcntl.h>
#include <sys/stat.h>

/* libunwind 1.6.2 validates memory through a pipe it creates on first
 * use (pipe2: the lowest free fds, i.e. 3 and 4) and later read(2)s and
 * write(2)s those fd numbers, re-creating the pipe when a read fails.
 * In a program that closes or reuses low fds that would consume or write
 * bytes on the program's own files. So libunwind is only entered while
 * every free fd below HX_UW_FLOOR is held by a placeholder (the pipe lands
 * high), and not at all once the program has put its own file on the
 * pipe's numbers. The floor is low because filling it costs two
 * syscalls a slot, once per process: 32 keeps the program's own first
 * opens at 3, 4, 5... and costs about 20 us. */
#define HX_UW_FLOOR 32
#define HX_UW_PROBE 16

static int (*uw_backtrace)(void **ips, int n);
static atomic_int uw_loaded; /* 0: not tried, 1: loaded, -1: unavailable */
static int uw_fd[2] = {-1, -1};
static dev_t uw_dev[2];
static ino_t uw_ino[2];

/* 1: both pipe fds are libunwind's; 0: one was closed (libunwind will
 * re-create it); -1: a number now holds something else. */
static int uw_pipe_state(void)
{
	struct stat st;

	if (uw_fd[0] < 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		long r = hx_sys2(SYS_fstat, uw_fd[i], &st);

		if (r == -EBADF)
			return 0;
		if (r < 0 || st.st_dev != uw_dev[i] || st.st_ino != uw_ino[i])
			return -1;
	}
	return 1;
}

static void release(const unsigned char *held, int n)
{
	for (int fd = 0; fd < n; fd++)
		if (held[fd / 8] & (1u << (fd % 8)))
			hx_close(fd);
}

/* Runs unw_backtrace with the low fds occupied, and learns the pipe. */
static int guarded_backtrace(void **ips, int n)
{
	unsigned char held[HX_UW_FLOOR / 8] = {0};
	unsigned char before[HX_UW_PROBE / 8] = {0};
	struct stat st;
	long src, fd;
	int got, k = 0;

	src =
	    hx_sys4(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC, 0);
	if (src < 0)
		return 0;
	while ((fd = hx_sys3(SYS_fcntl, src, F_DUPFD_CLOEXEC, 3)) >= 0 &&
	       fd < HX_UW_FLOOR)
		held[fd / 8] |= (unsigned char)(1u << (fd % 8));
	if (fd >= 0)
		hx_close((int)fd);
	if (src < HX_UW_FLOOR)
		held[src / 8] |= (unsigned char)(1u << (src % 8));
	else
		hx_close((int)src);
	for (int i = 0; i < HX_UW_PROBE; i++)
		if (hx_sys2(SYS_fcntl, HX_UW_FLOOR + i, F_GETFD) >= 0)
			before[i / 8] |= (unsigned char)(1u << (i % 8));
	got = uw_backtrace(ips, n);
	for (int i = 0; i < HX_UW_PROBE && k < 2; i++) {
		if (before[i / 8] & (1u << (i % 8)))
			continue;
		if (hx_sys2(SYS_fstat, HX_UW_FLOOR + i, &st) == 0 &&
		    S_ISFIFO(st.st_mode)) {
			uw_fd[k] = HX_UW_FLOOR + i;
			uw_dev[k] = st.st_dev;
			uw_ino[k] = st.st_ino;
			k++;
		}
	}
	if (k != 2 && uw_pipe_state() != 1)
		uw_fd[0] = uw_fd[1] = -1;
	release(held, HX_UW_FLOOR);
	return got;
}

/* libunwind (and the liblzma it pulls in) is loaded on the first call
 * stack, not with the shim: mapping two more libraries into every
 * process costs more than most short-lived tools run, and most of them
 * never decide anything that takes a stack. Stacks are only taken on the
 * shared connection's path (never in a vfork child), where dlopen is
 * safe. */

static bool uw_load(void)
{
	int state = atomic_load(&uw_loaded);
	void *h, *fn = NULL;

	if (state)
		return state > 0;
	h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h)
		fn = dlsym(h, "unw_backtrace");
	uw_backtrace = (int (*)(void **, int))fn;
	atomic_store(&uw_loaded, fn ? 1 : -1);
	return fn != NULL;
}

static int safe_backtrace(void **ips, int n)
{
	if (!uw_load())
		return 0;
	switch (uw_pipe_state()) {
	case 1:
		return uw_backtrace(ips, n);
	case 0:
		return guarded_backtrace(ips, n);
	default:
		return 0;
	}
}

size_t hx_stack_format(char *buf, size_t cap, const char *module,
		       unsigned long off, const char *symbol)
{
	static const char hex[] = "0123456789abcdef";
	char num[20];
	size_t len = 0, n, i = sizeof(num);
	const char *m = module && *module ? module : "?";
	const char *slash = strrchr(m, '/');

	if (cap == 0)
		return 0;
	if (slash && slash[1])
		m = slash + 1;
	do {
		num[--i] = hex[off & 0xf];
		off >>= 4;
	} while (off && i > 0);
#define PUT(s, l)                                                              \
	do {                                                                   \
		n = (l);                                                       \
		if (n > cap - 1 - len)                                         \
			n = cap - 1 - len;                                     \
		memcpy(buf + len, (s), n);                                     \
		len += n;                                                      \
	} while (0)
	PUT(m, strlen(m));
	PUT("+0x", 3);
	PUT(num + i, sizeof(num) - i);
	if (symbol && *symbol) {
		PUT(" ", 1);
		PUT(symbol, strlen(symbol));
	}
#undef PUT
	buf[len] = '\0';
	return len;
}

/* Frames whose symbol is looked up. dladdr scans an object's whole
 * symbol table (tens of microseconds per frame in libc), so only the
 * innermost frames, the ones that say who made the call, get a name;
 * the rest are module+offset from _dl_find_object, which is cheap. And
 * none in a huge object: Claude Code's 100 MB Bun executable took 0.2 s
 * a dladdr, 0.65 s a write request. */
#define HX_NAMED_FRAMES	  3
#define HX_NAMED_MAX_SIZE (16u << 20)

int hx_stack_put(struct hx_wbuf *w, const void *self_base)
{
	void *ips[HX_WIRE_MAX_FRAMES + 16];
	char line[256];
	int n, added = 0, prev = hx_tls_foreign_enter();

	n = safe_backtrace(ips, (int)(sizeof(ips) / sizeof(ips[0])));
	for (int i = 0; i < n && added < HX_WIRE_MAX_FRAMES; i++) {
		struct dl_find_object fo;
		Dl_info info;
		const char *module, *sym = NULL;
		/* A return address points after the call: look up the call. */
		const char *pc = (const char *)ips[i] - (i ? 1 : 0);

		if (_dl_find_object((void *)pc, &fo) != 0) {
			hx_stack_format(line, sizeof(line), "?",
					(unsigned long)ips[i], NULL);
		} else {
			if (fo.dlfo_map_start == self_base)
				continue;
			module = fo.dlfo_link_map && fo.dlfo_link_map->l_name[0]
				     ? fo.dlfo_link_map->l_name
				     : "exe";
			if (added < HX_NAMED_FRAMES &&
			    (size_t)((const char *)fo.dlfo_map_end -
				     (const char *)fo.dlfo_map_start) <=
				HX_NAMED_MAX_SIZE &&
			    dladdr(pc, &info))
				sym = info.dli_sname;
			hx_stack_format(
			    line, sizeof(line), module,
			    (unsigned long)((const char *)ips[i] -
					    (const char *)fo.dlfo_map_start),
			    sym);
		}
		if (hx_wire_put_str(w, HX_TAG_FRAME, line))
			break;
		added++;
	}
	hx_tls_foreign_leave(prev);
	return added;
}

void hx_stack_warm(void)
{
	void *ips[4];
	int prev = hx_tls_foreign_enter();

	safe_backtrace(ips, 4);
	hx_tls_foreign_leave(prev);
}
