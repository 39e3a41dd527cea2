/* Enumerations shared by the policy engine, the wire protocol and the
 * shim. Plain C, no dependencies: the shim includes this. */
#ifndef HX_COMMON_TYPES_H
#define HX_COMMON_TYPES_H

/* Ordered by strength: precedence is deny > ask > allow. */
enum hx_verdict {
	HX_VERDICT_ALLOW = 0,
	HX_VERDICT_ASK = 1,
	HX_VERDICT_DENY = 2,
};

enum hx_mode {
	HX_MODE_ENFORCE = 0,
	HX_MODE_AUDIT = 1,
};

/* DESIGN.md section 4. */
enum hx_category {
	HX_CAT_EXEC = 0,
	HX_CAT_FILE_READ,
	HX_CAT_FILE_WRITE,
	HX_CAT_NET_CONNECT,
	HX_CAT_NET_SEND,
	HX_CAT_NET_RESOLVE,
	HX_CAT_PROCESS,
	HX_CAT_NET_LISTEN,
	HX_CAT_COUNT,
};

enum hx_risk {
	HX_RISK_LOW = 0,
	HX_RISK_MEDIUM,
	HX_RISK_HIGH,
	HX_RISK_CRITICAL,
};

/* What a process tried to do, independent of the libc call used. */
enum hx_op {
	HX_OP_EXEC = 0, /* path: executable, argv */
	HX_OP_READ,	/* path: opened read-only */
	HX_OP_WRITE,	/* path: opened for writing or created */
	HX_OP_RENAME,	/* path: source, path2: destination; both writes */
	HX_OP_UNLINK,	/* path */
	HX_OP_RMDIR,	/* path */
	HX_OP_MKDIR,	/* path */
	HX_OP_LINK,	/* path: new name (write), path2: existing (read) */
	HX_OP_SYMLINK,	/* path: new link (write), path2: its target text */
	HX_OP_TRUNCATE, /* path */
	HX_OP_CONNECT,	/* addr (+ names known for it) */
	HX_OP_SEND,	/* addr given to sendto/sendmsg */
	HX_OP_RESOLVE,	/* host: the name looked up */
	HX_OP_LISTEN,	/* addr: what a server binds (or listens on) */
	HX_OP_COUNT,
};

#endif
