/* Names of the enumerations both sides share (common/types.h): the one
 * table of each, for the audit log, the policy and the shim's notice. */
#include "common/names.h"

static const char *const verdict_names[] = {
    [HX_VERDICT_ALLOW] = "allow",
    [HX_VERDICT_ASK] = "ask",
    [HX_VERDICT_DENY] = "deny",
};

static const char *const category_names[HX_CAT_COUNT] = {
    [HX_CAT_EXEC] = "exec",
    [HX_CAT_FILE_READ] = "file_read",
    [HX_CAT_FILE_WRITE] = "file_write",
    [HX_CAT_NET_CONNECT] = "net_connect",
    [HX_CAT_NET_SEND] = "net_send",
    [HX_CAT_NET_RESOLVE] = "net_resolve",
    [HX_CAT_PROCESS] = "process",
    [HX_CAT_NET_LISTEN] = "net_listen",
};

static const char *const risk_names[] = {
    [HX_RISK_LOW] = "low",
    [HX_RISK_MEDIUM] = "medium",
    [HX_RISK_HIGH] = "high",
    [HX_RISK_CRITICAL] = "critical",
};

static const char *const op_names[HX_OP_COUNT] = {
    [HX_OP_EXEC] = "exec",	 [HX_OP_READ] = "read",
    [HX_OP_WRITE] = "write",	 [HX_OP_RENAME] = "rename",
    [HX_OP_UNLINK] = "unlink",	 [HX_OP_RMDIR] = "rmdir",
    [HX_OP_MKDIR] = "mkdir",	 [HX_OP_LINK] = "link",
    [HX_OP_SYMLINK] = "symlink", [HX_OP_TRUNCATE] = "truncate",
    [HX_OP_CONNECT] = "connect", [HX_OP_SEND] = "send",
    [HX_OP_RESOLVE] = "resolve", [HX_OP_LISTEN] = "listen",
};

const char *hx_verdict_name(enum hx_verdict v)
{
	return (unsigned)v <= HX_VERDICT_DENY ? verdict_names[v] : "?";
}

const char *hx_category_name(enum hx_category c)
{
	return (unsigned)c < HX_CAT_COUNT ? category_names[c] : "?";
}

const char *hx_risk_name(enum hx_risk r)
{
	return (unsigned)r <= HX_RISK_CRITICAL ? risk_names[r] : "?";
}

const char *hx_op_name(enum hx_op op)
{
	return (unsigned)op < HX_OP_COUNT ? op_names[op] : "?";
}
