/* A sendmmsg whose first message goes out but whose sent count cannot
 * be written back (test_attack12.py): built static (no shim), so the
 * kernel layer alone sees it.
 *
 *   static_mmsg_fault PORT
 *
 * The mmsghdr ends a writable page: its msg_hdr is read, the datagram
 * "exfil" sent to 127.0.0.1:PORT, and its msg_len lies on the next,
 * read-only, page. The kernel answers EFAULT then, the datagram gone.
 * Prints "ret R errno E". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char data[] = "exfil";
	struct sockaddr_in to = {.sin_family = AF_INET};
	struct iovec iov = {data, sizeof(data) - 1};
	long pg = sysconf(_SC_PAGESIZE);
	char *m;
	struct mmsghdr *v;
	int s, r;

	if (argc != 2)
		return 2;
	to.sin_port = htons((unsigned short)atoi(argv[1]));
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + pg, (size_t)pg, PROT_READ))
		return 2;
	v = (struct mmsghdr *)(m + pg - sizeof(struct msghdr));
	v->msg_hdr = (struct msghdr){.msg_name = &to,
				     .msg_namelen = sizeof(to),
				     .msg_iov = &iov,
				     .msg_iovlen = 1};
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return 2;
	r = sendmmsg(s, v, 1, 0);
	printf("ret %d errno %s\n", r, r < 0 ? strerrorname_np(errno) : "0");
	return 0;
}
