/* Arguments and error replies; see args.h. */
#define _GNU_SOURCE
#include "tools/mcpwork/args.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcpwork/text.h"

const char *hx_mw_args_errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

json_t *hx_mw_args_string_lossy(const char *p, size_t n, bool *lossy)
{
	json_t *s;
	char *fixed;
	size_t len;
	int rc;

	if (hx_mw_text_utf8_valid(p, n, NULL))
		return json_stringn(p, n);
	rc = hx_mw_text_lossy(p, n, &fixed, &len);
	if (rc < 0)
		return NULL;
	if (lossy)
		*lossy = true;
	s = json_stringn(fixed, len);
	free(fixed);
	return s;
}

int hx_mw_args_error(json_t **res, int e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *m;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A cut in the middle of a character is repaired by the lossy copy. */
	m = hx_mw_args_string_lossy(msg, strlen(msg), NULL);
	*res = json_pack("{s:s, s:i, s:o*}", "errno", hx_mw_args_errname(e),
			 "code", e, "message", m);
	return -e;
}

int hx_mw_args_only(json_t *args, const char *const *keys, json_t **res)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach(args, k, v)
	{
		for (i = 0; keys[i]; i++)
			if (!strcmp(k, keys[i]))
				break;
		if (!keys[i])
			return hx_mw_args_error(res, EINVAL,
						"unknown argument \"%s\"", k);
	}
	return 0;
}

int hx_mw_args_str(json_t *args, const char *key, const char **s, size_t *n,
		   json_t **res)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return 0;
	if (!json_is_string(v))
		return hx_mw_args_error(
		    res, EINVAL, "argument \"%s\" must be a string", key);
	*s = json_string_value(v);
	if (n)
		*n = json_string_length(v);
	return 1;
}

int hx_mw_args_path(json_t *args, const char *key, const char **path,
		    json_t **res)
{
	size_t n;
	int rc = hx_mw_args_str(args, key, path, &n, res);

	if (rc < 0)
		return rc;
	if (!rc)
		return hx_mw_args_error(res, EINVAL, "argument \"%s\" missing",
					key);
	if (strlen(*path) != n)
		return hx_mw_args_error(res, EINVAL,
					"%s: the path holds a NUL byte", key);
	if ((*path)[0] != '/')
		return hx_mw_args_error(res, EINVAL,
					"%s: \"%s\" is not an absolute path",
					key, *path);
	if (n >= PATH_MAX)
		return hx_mw_args_error(res, ENAMETOOLONG,
					"%s: the path is %zu bytes long", key,
					n);
	return 0;
}

int hx_mw_args_uint(json_t *args, const char *key, uint64_t def, uint64_t lo,
		    uint64_t hi, uint64_t *v, bool *given, json_t **res)
{
	json_t *j = json_object_get(args, key);
	json_int_t i;

	if (given)
		*given = j != NULL;
	if (!j) {
		*v = def;
		return 0;
	}
	if (!json_is_integer(j))
		return hx_mw_args_error(
		    res, EINVAL, "argument \"%s\" must be an integer", key);
	i = json_integer_value(j);
	if (i < 0 || (uint64_t)i < lo || (uint64_t)i > hi)
		return hx_mw_args_error(
		    res, EINVAL, "argument \"%s\" must be in [%llu, %llu]", key,
		    (unsigned long long)lo, (unsigned long long)hi);
	*v = (uint64_t)i;
	return 0;
}

int hx_mw_args_bool(json_t *args, const char *key, bool def, bool *v,
		    json_t **res)
{
	json_t *j = json_object_get(args, key);

	if (!j) {
		*v = def;
		return 0;
	}
	if (!json_is_boolean(j))
		return hx_mw_args_error(
		    res, EINVAL, "argument \"%s\" must be a boolean", key);
	*v = json_is_true(j);
	return 0;
}

int hx_mw_args_encoding(json_t *args, bool *base64, json_t **res)
{
	const char *e = NULL;
	int rc = hx_mw_args_str(args, "encoding", &e, NULL, res);

	*base64 = false;
	if (rc <= 0)
		return rc;
	if (!strcmp(e, "base64"))
		*base64 = true;
	else if (strcmp(e, "utf-8"))
		return hx_mw_args_error(
		    res, EINVAL, "encoding must be \"utf-8\" or \"base64\"");
	return 0;
}
