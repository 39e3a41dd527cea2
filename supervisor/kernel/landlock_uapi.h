/* The Landlock UAPI as of ABI 6 (Linux 6.12), declared here because the
 * build machine's <linux/landlock.h> may be older than the kernel the
 * harness runs on. Names carry the hx_ prefix so that this header never
 * clashes with the system one. Values are the kernel's
 * (include/uapi/linux/landlock.h); the ABI that introduced each bit is
 * noted, and supervisor/landlock.c masks requests down to what the
 * running kernel reports. Private to supervisor/landlock*.c. */
#ifndef HX_LANDLOCK_UAPI_H
#define HX_LANDLOCK_UAPI_H

#include <stdint.h>

/* x86_64, arm64 and every other architecture share these numbers
 * (they were allocated after the syscall table unification). */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* Size-versioned by the kernel: later fields must be zero on kernels
 * that do not know them, so one struct serves every ABI. */
struct hx_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

/* landlock_create_ruleset(NULL, 0, flag): returns the ABI version. */
#define HX_LL_CREATE_RULESET_VERSION (1u << 0)

enum hx_ll_rule_type {
	HX_LL_RULE_PATH_BENEATH = 1,
	HX_LL_RULE_NET_PORT = 2, /* ABI 4 */
};

struct hx_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct hx_ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#define HX_LL_FS_EXECUTE     (1ull << 0)
#define HX_LL_FS_WRITE_FILE  (1ull << 1)
#define HX_LL_FS_READ_FILE   (1ull << 2)
#define HX_LL_FS_READ_DIR    (1ull << 3)
#define HX_LL_FS_REMOVE_DIR  (1ull << 4)
#define HX_LL_FS_REMOVE_FILE (1ull << 5)
#define HX_LL_FS_MAKE_CHAR   (1ull << 6)
#define HX_LL_FS_MAKE_DIR    (1ull << 7)
#define HX_LL_FS_MAKE_REG    (1ull << 8)
#define HX_LL_FS_MAKE_SOCK   (1ull << 9)
#define HX_LL_FS_MAKE_FIFO   (1ull << 10)
#define HX_LL_FS_MAKE_BLOCK  (1ull << 11)
#define HX_LL_FS_MAKE_SYM    (1ull << 12)
#define HX_LL_FS_REFER	     (1ull << 13) /* ABI 2 */
#define HX_LL_FS_TRUNCATE    (1ull << 14) /* ABI 3 */
#define HX_LL_FS_IOCTL_DEV   (1ull << 15) /* ABI 5 */

/* What ABI 1 knows: EXECUTE through MAKE_SYM. */
#define HX_LL_FS_ABI1 ((1ull << 13) - 1)

/* The rights a rule on a non-directory may carry; the others make
 * landlock_add_rule fail with EINVAL. */
#define HX_LL_FS_FILE_RIGHTS                                                   \
	(HX_LL_FS_EXECUTE | HX_LL_FS_WRITE_FILE | HX_LL_FS_READ_FILE |         \
	 HX_LL_FS_TRUNCATE | HX_LL_FS_IOCTL_DEV)

#define HX_LL_NET_BIND_TCP    (1ull << 0) /* ABI 4 */
#define HX_LL_NET_CONNECT_TCP (1ull << 1) /* ABI 4 */

#define HX_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0) /* ABI 6 */
#define HX_LL_SCOPE_SIGNAL		 (1ull << 1) /* ABI 6 */

/* landlock_restrict_self flags (ABI 7): whether refusals make audit
 * records (kaudit.h). By default only those of the process that
 * restricted itself, until it execs: the agent's need NEW_EXEC_ON. */
#define HX_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF  (1u << 0)
#define HX_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON    (1u << 1)
#define HX_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1u << 2)

#endif
