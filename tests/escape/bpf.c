/* bpf(BPF_MAP_CREATE). */
#include "escape.h"

#include <linux/bpf.h>
#include <sys/syscall.h>

int main(void)
{
	union bpf_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	r = syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (r >= 0)
		ESCAPED("bpf map created: fd %ld", r);
	if (errno != EPERM)
		ESCAPED("unexpected errno %d", errno);
	BLOCKED("bpf: EPERM");
}
