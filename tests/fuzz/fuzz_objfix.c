/* libFuzzer target over a loose object the agent writes in its
 * repository, as the end's sweep reads it (supervisor/git/objfix.c):
 * zlib inflated from a file and its "type len\0" header parsed, hashed
 * (SHA-1 and SHA-256, as the sweep does both); and the header parse
 * alone on the input as inflated bytes, given in the chunks a stream
 * may cut it into. Nothing may crash, hang or read past the input. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "supervisor/git/objfix.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as inflated bytes, cut where its first byte says. */
static void header(const uint8_t *data, size_t size,
		   const struct nettle_hash *h)
{
	struct obj o = {.h = h};
	size_t cut = size ? 1 + data[0] % 16 : 1, k;

	h->init(&o.c);
	for (size_t at = 0; at < size; at += k) {
		k = size - at < cut ? size - at : cut;
		if (!take(&o, data + at, k))
			return;
		if (o.headed && o.got > o.need)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char want[SHA256_DIGEST_SIZE];
	static int fd = -1;
	const struct nettle_hash *h =
	    size && data[size - 1] & 1 ? &nettle_sha1 : &nettle_sha256;

	header(data, size, h);
	if (fd < 0 && (fd = memfd_create("objfix", MFD_CLOEXEC)) < 0)
		return 0;
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET))
		return 0;
	/* each input the sweep's bounds anew: 2 GiB, 5 s */
	spent = 0;
	sweep_end = ms_now() + SWEEP_MS;
	(void)hashes_as_named(fd, h, want);
	return 0;
}
