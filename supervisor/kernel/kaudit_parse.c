/* Audit record text, parsed: see kaudit.h. Pure: no system calls. */
#define _GNU_SOURCE
#include "supervisor/kernel/kaudit.h"
#include "common/sbuf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/types.h"

int hx_kaudit_header(const char *text, size_t len, struct timespec *when,
		     uint64_t *serial)
{
	unsigned long long sec = 0, ms = 0, ser = 0;
	size_t i = 6, d;

	if (len < 6 || memcmp(text, "audit(", 6))
		return -1;
	for (d = 0; i < len && text[i] >= '0' && text[i] <= '9'; i++, d++)
		sec = sec * 10 + (unsigned)(text[i] - '0');
	if (!d || d > 18 || i >= len || text[i++] != '.')
		return -1;
	for (d = 0; i < len && text[i] >= '0' && text[i] <= '9'; i++, d++)
		ms = ms * 10 + (unsigned)(text[i] - '0');
	if (d != 3 || i >= len || text[i++] != ':')
		return -1;
	for (d = 0; i < len && text[i] >= '0' && text[i] <= '9'; i++, d++)
		ser = ser * 10 + (unsigned)(text[i] - '0');
	if (!d || d > 19 || i + 1 >= len || text[i] != ')' ||
	    text[i + 1] != ':')
		return -1;
	i += 2;
	if (i < len && text[i] == ' ')
		i++;
	when->tv_sec = (time_t)sec;
	when->tv_nsec = (long)ms * 1000000L;
	*serial = ser;
	return (int)i;
}

/* Keys whose value is an untrusted string: quoted, or hex. Any other
 * value is taken as it is (a number, "fs.read_file,fs.read_dir"). */
static bool untrusted(const char *key)
{
	static const char *const keys[] = {"path", "name",  "exe",	"comm",
					   "dev",  "ocomm", "proctitle"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

int hx_kaudit_field(const char *text, size_t len, const char *key, char *out,
		    size_t outlen)
{
	size_t klen = strlen(key), i = 0, j, vend, n = 0;

	if (!outlen)
		return -1;
	while (i < len) {
		while (i < len && text[i] == ' ')
			i++;
		/* One token: no value of the kernel's has a space (an
		 * untrusted string with one is written in hex). */
		for (j = i; j < len && text[j] != ' '; j++)
			;
		if (j - i > klen && !memcmp(text + i, key, klen) &&
		    text[i + klen] == '=')
			break;
		i = j;
	}
	if (i >= len)
		return -1;
	i += klen + 1;
	vend = j;
	if (i < vend && text[i] == '"') {
		if (vend - i < 2 || text[vend - 1] != '"')
			return -1;
		for (i++; i < vend - 1; i++) {
			if (n + 1 >= outlen)
				return -1;
			out[n++] = text[i];
		}
	} else if (untrusted(key) &&
		   !(vend - i == 6 && !memcmp(text + i, "(null)", 6))) {
		size_t k = (size_t)(vend - i) / 2;

		if ((vend - i) % 2 || n + k >= outlen ||
		    hx_hex_decode(text + i, (uint8_t *)out + n, k))
			return -1;
		n += k;
		/* A NUL inside is not a path (proctitle separates argv so:
		 * the first word is kept). */
		out[n] = '\0';
		return (int)strlen(out);
	} else {
		for (; i < vend; i++) {
			if (n + 1 >= outlen)
				return -1;
			out[n++] = text[i];
		}
	}
	out[n] = '\0';
	return (int)n;
}

static const struct {
	const char *name;
	int op; /* -1: no operation of the policy's */
	int category, risk;
} blockers[] = {
    {"fs.execute", HX_OP_EXEC, HX_CAT_EXEC, HX_RISK_HIGH},
    {"fs.write_file", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.read_file", HX_OP_READ, HX_CAT_FILE_READ, HX_RISK_MEDIUM},
    {"fs.read_dir", HX_OP_READ, HX_CAT_FILE_READ, HX_RISK_MEDIUM},
    {"fs.remove_dir", HX_OP_RMDIR, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.remove_file", HX_OP_UNLINK, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_char", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_dir", HX_OP_MKDIR, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_reg", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_sock", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_fifo", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_block", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.make_sym", HX_OP_SYMLINK, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.refer", HX_OP_RENAME, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.truncate", HX_OP_TRUNCATE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"fs.ioctl_dev", HX_OP_WRITE, HX_CAT_FILE_WRITE, HX_RISK_HIGH},
    {"net.connect_tcp", HX_OP_CONNECT, HX_CAT_NET_CONNECT, HX_RISK_MEDIUM},
    {"net.bind_tcp", -1, HX_CAT_NET_CONNECT, HX_RISK_MEDIUM},
    {"scope.abstract_unix_socket", HX_OP_CONNECT, HX_CAT_NET_CONNECT,
     HX_RISK_MEDIUM},
    {"scope.signal", -1, HX_CAT_PROCESS, HX_RISK_HIGH},
    {"ptrace", -1, HX_CAT_PROCESS, HX_RISK_HIGH},
    {"fs.change_topology", -1, HX_CAT_PROCESS, HX_RISK_HIGH},
};

bool hx_kaudit_blocker(const char *blocker, int *op, int *category, int *risk)
{
	for (size_t i = 0; i < sizeof(blockers) / sizeof(*blockers); i++)
		if (!strcmp(blocker, blockers[i].name)) {
			*op = blockers[i].op;
			*category = blockers[i].category;
			*risk = blockers[i].risk;
			return true;
		}
	return false;
}
