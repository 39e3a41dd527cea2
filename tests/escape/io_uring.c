/* io_uring: setup must fail; if it did not, an IORING_OP_OPENAT of
 * argv[1] (the denied secret) shows what the kernel worker would do. */
#include "escape.h"

#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static int try_openat(int fd, struct io_uring_params *p, const char *path)
{
	size_t sql = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	size_t cql =
	    p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(0, sql, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			IORING_OFF_SQ_RING);
	char *cq = mmap(0, cql, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes =
	    mmap(0, p->sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, IORING_OFF_SQES);
	unsigned *tail, *array;
	struct io_uring_cqe *cqe;

	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return -9999;
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (unsigned long)path;
	sqes[0].open_flags = O_RDONLY;
	array = (unsigned *)(sq + p->sq_off.array);
	tail = (unsigned *)(sq + p->sq_off.tail);
	array[0] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL,
		    0) < 0)
		return -errno - 10000;
	cqe = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
	return cqe[0].res;
}

int main(int argc, char **argv)
{
	struct io_uring_params p;
	const char *path = argc > 1 ? argv[1] : "secret/key";
	long fd, e1, r2, e2;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 4, &p);
	e1 = errno;
	/* enter and register on a bogus fd: EBADF if they were reachable. */
	r2 = syscall(__NR_io_uring_register, 0, 0, NULL, 0);
	e2 = errno;
	if (fd >= 0) {
		int res = try_openat((int)fd, &p, path);

		ESCAPED("io_uring_setup worked; openat(%s) gave %d", path, res);
	}
	if (e1 != ENOSYS || r2 >= 0 || e2 != ENOSYS)
		ESCAPED("unexpected: setup errno %ld, register %ld/%ld", e1, r2,
			e2);
	BLOCKED("io_uring_setup/register: ENOSYS, no openat possible");
}
