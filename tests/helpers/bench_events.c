/* Times single calls for `make bench`: each kind of event N times, then
 * prints "KIND median_ns p99_ns" per kind. Run bare and under
 * harness-exec; the difference is the harness's cost per event. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static void report(const char *kind, long long *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_ll);
	printf("%s %lld %lld\n", kind, t[n / 2], t[(n * 99) / 100]);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	const char *dir = argc > 1 ? argv[1] : ".";
	long long *t = calloc((size_t)n, sizeof(*t));
	char path[4096];

	if (!t || n < 10)
		return 2;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/bench-%d", dir, i % 50);
		long long t0 = now_ns();
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		t[i] = now_ns() - t0;
		if (fd < 0)
			return perror(path), 1;
		close(fd);
	}
	report("open_write", t, n);
	for (int i = 0; i < n; i++) {
		long long t0 = now_ns();
		int fd = open("/etc/hostname", O_RDONLY);
		t[i] = now_ns() - t0;
		if (fd >= 0)
			close(fd);
	}
	report("open_read", t, n);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/bench-%d", dir, i % 50);
		long long t0 = now_ns();
		int rc = rename(path, path);
		t[i] = now_ns() - t0;
		if (rc < 0)
			return perror("rename"), 1;
	}
	report("rename", t, n);
	free(t);
	return 0;
}
