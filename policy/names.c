/* The policy's own names (limits, default rules), and the category and
 * risk of each op; the names of the shared enumerations are in
 * common/names.c. */
#include "policy/policy_int.h"

#include <string.h>

static const char *const limit_names[HX_LIMIT_COUNT + 1] = {
    [HX_LIMIT_CPU] = "cpu",
    [HX_LIMIT_FILE_SIZE] = "file_size",
    [HX_LIMIT_OPEN_FILES] = "open_files",
    [HX_LIMIT_ADDRESS_SPACE] = "address_space",
    [HX_LIMIT_CORE] = "core",
    [HX_LIMIT_PROCESSES] = "processes",
};

const char *const *hx_limit_names = limit_names;

const char *hx_limit_name(enum hx_limit l)
{
	return (unsigned)l < HX_LIMIT_COUNT ? limit_names[l] : "?";
}

static const char *const default_rules[HX_CAT_COUNT] = {
    [HX_CAT_EXEC] = "default:exec",
    [HX_CAT_FILE_READ] = "default:file_read",
    [HX_CAT_FILE_WRITE] = "default:file_write",
    [HX_CAT_NET_CONNECT] = "default:net_connect",
    [HX_CAT_NET_SEND] = "default:net_send",
    [HX_CAT_NET_RESOLVE] = "default:net_resolve",
    [HX_CAT_PROCESS] = "default:process",
    [HX_CAT_NET_LISTEN] = "default:net_listen",
};

/* DESIGN.md section 4; the supervisor refines exec by argv. */
static const enum hx_risk category_risks[HX_CAT_COUNT] = {
    [HX_CAT_EXEC] = HX_RISK_HIGH,	[HX_CAT_FILE_READ] = HX_RISK_MEDIUM,
    [HX_CAT_FILE_WRITE] = HX_RISK_HIGH, [HX_CAT_NET_CONNECT] = HX_RISK_MEDIUM,
    [HX_CAT_NET_SEND] = HX_RISK_HIGH,	[HX_CAT_NET_RESOLVE] = HX_RISK_LOW,
    [HX_CAT_PROCESS] = HX_RISK_LOW,	[HX_CAT_NET_LISTEN] = HX_RISK_MEDIUM,
};

enum hx_category hx_op_category(enum hx_op op)
{
	switch (op) {
	case HX_OP_EXEC:
		return HX_CAT_EXEC;
	case HX_OP_READ:
		return HX_CAT_FILE_READ;
	case HX_OP_CONNECT:
		return HX_CAT_NET_CONNECT;
	case HX_OP_SEND:
		return HX_CAT_NET_SEND;
	case HX_OP_RESOLVE:
		return HX_CAT_NET_RESOLVE;
	case HX_OP_LISTEN:
		return HX_CAT_NET_LISTEN;
	case HX_OP_WRITE:
	case HX_OP_RENAME:
	case HX_OP_UNLINK:
	case HX_OP_RMDIR:
	case HX_OP_MKDIR:
	case HX_OP_LINK:
	case HX_OP_SYMLINK:
	case HX_OP_TRUNCATE:
	case HX_OP_COUNT:
		break;
	}
	return HX_CAT_FILE_WRITE;
}

const char *hx_default_rule_name(enum hx_category c)
{
	return (unsigned)c < HX_CAT_COUNT ? default_rules[c] : "default:?";
}

enum hx_risk hx_category_risk(enum hx_category c)
{
	return (unsigned)c < HX_CAT_COUNT ? category_risks[c] : HX_RISK_HIGH;
}

static const struct {
	const char *name;
	enum hx_risk risk;
} classes[HX_CLASS_COUNT] = {
    [HX_CLASS_READ_ONLY] = {"read_only", HX_RISK_LOW},
    [HX_CLASS_MUTATING] = {"mutating", HX_RISK_MEDIUM},
    [HX_CLASS_OTHER] = {"other", HX_RISK_HIGH},
    [HX_CLASS_CODE] = {"code", HX_RISK_HIGH},
    [HX_CLASS_PACKAGE_INSTALL] = {"package_install", HX_RISK_HIGH},
    [HX_CLASS_NETWORK] = {"network", HX_RISK_HIGH},
    [HX_CLASS_UNPARSABLE] = {"unparsable", HX_RISK_HIGH},
    [HX_CLASS_DESTRUCTIVE] = {"destructive", HX_RISK_HIGH},
    [HX_CLASS_PRIVILEGE] = {"privilege", HX_RISK_CRITICAL},
};

const char *hx_cmd_class_name(enum hx_cmd_class c)
{
	return (unsigned)c < HX_CLASS_COUNT ? classes[c].name : NULL;
}

enum hx_cmd_class hx_cmd_class_parse(const char *name)
{
	for (int c = HX_CLASS_NONE + 1; c < HX_CLASS_COUNT; c++)
		if (!strcmp(classes[c].name, name))
			return (enum hx_cmd_class)c;
	return HX_CLASS_NONE;
}

enum hx_risk hx_cmd_class_risk(enum hx_cmd_class c)
{
	return (unsigned)c < HX_CLASS_COUNT && c != HX_CLASS_NONE
		   ? classes[c].risk
		   : HX_RISK_HIGH;
}
