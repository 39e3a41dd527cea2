/* A JSON Schema subset checker; see schema.h. */
#define _GNU_SOURCE
#include "supervisor/mcp/schema.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define DEPTH_MAX 16

static bool fail(char *err, size_t len, const char *at, const char *what)
{
	snprintf(err, len, "%s: %s", at, what);
	return false;
}

/* 2.0 is an integer to JSON Schema (without libm's floor). */
static bool whole(const json_t *v)
{
	double d = json_real_value(v);

	return d > -9e15 && d < 9e15 && d == (double)(long long)d;
}

static bool is_type(const json_t *v, const char *t)
{
	if (!strcmp(t, "object"))
		return json_is_object(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "integer"))
		return json_is_integer(v) || (json_is_real(v) && whole(v));
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	if (!strcmp(t, "null"))
		return json_is_null(v);
	return false;
}

static bool type_ok(const json_t *type, const json_t *v)
{
	size_t i;
	json_t *t;

	if (json_is_string(type))
		return is_type(v, json_string_value(type));
	json_array_foreach(type, i,
			   t) if (json_is_string(t) &&
				  is_type(v, json_string_value(t))) return true;
	return false;
}

/* Code points of a UTF-8 string (jansson has checked it is UTF-8). */
static size_t code_points(const json_t *s)
{
	const unsigned char *p = (const unsigned char *)json_string_value(s);
	size_t n = json_string_length(s), k = 0;

	for (size_t i = 0; i < n; i++)
		k += (p[i] & 0xc0) != 0x80;
	return k;
}

static bool in_enum(const json_t *e, const json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(e, i, x) if (json_equal(x, v)) return true;
	return false;
}

static double num(const json_t *v)
{
	return json_number_value(v);
}

static bool check_at(const json_t *s, const json_t *v, const char *at,
		     char *err, size_t len, int depth);

static bool check_bounds(const json_t *s, const json_t *v, const char *at,
			 char *err, size_t len)
{
	json_t *k;
	char what[96];

	if ((k = json_object_get(s, "minimum")) && json_is_number(v) &&
	    num(v) < num(k)) {
		snprintf(what, sizeof(what), "must be at least %g", num(k));
		return fail(err, len, at, what);
	}
	if ((k = json_object_get(s, "maximum")) && json_is_number(v) &&
	    num(v) > num(k)) {
		snprintf(what, sizeof(what), "must be at most %g", num(k));
		return fail(err, len, at, what);
	}
	if (json_is_string(v) && (k = json_object_get(s, "minLength")) &&
	    code_points(v) < (size_t)json_integer_value(k))
		return fail(err, len, at, "is too short");
	if (json_is_string(v) && (k = json_object_get(s, "maxLength")) &&
	    code_points(v) > (size_t)json_integer_value(k)) {
		snprintf(what, sizeof(what), "is longer than %lld characters",
			 (long long)json_integer_value(k));
		return fail(err, len, at, what);
	}
	if (json_is_array(v) && (k = json_object_get(s, "minItems")) &&
	    json_array_size(v) < (size_t)json_integer_value(k))
		return fail(err, len, at, "has too few items");
	if (json_is_array(v) && (k = json_object_get(s, "maxItems")) &&
	    json_array_size(v) > (size_t)json_integer_value(k))
		return fail(err, len, at, "has too many items");
	return true;
}

static bool check_object(const json_t *s, const json_t *v, const char *at,
			 char *err, size_t len, int depth)
{
	json_t *props = json_object_get(s, "properties");
	json_t *extra = json_object_get(s, "additionalProperties");
	json_t *req = json_object_get(s, "required"), *x, *ps;
	const char *key;
	char sub[256];
	size_t i;

	json_array_foreach(req, i,
			   x) if (json_is_string(x) &&
				  !json_object_get(v, json_string_value(x)))
	{
		snprintf(sub, sizeof(sub), "%s.%s", at, json_string_value(x));
		return fail(err, len, sub, "is required");
	}
	json_object_foreach((json_t *)v, key, x)
	{
		snprintf(sub, sizeof(sub), "%s.%.100s", at, key);
		ps = props ? json_object_get(props, key) : NULL;
		if (!ps && json_is_false(extra))
			return fail(err, len, sub, "is not a known argument");
		if (!ps && json_is_object(extra))
			ps = extra;
		if (ps && !check_at(ps, x, sub, err, len, depth + 1))
			return false;
	}
	return true;
}

static bool check_at(const json_t *s, const json_t *v, const char *at,
		     char *err, size_t len, int depth)
{
	json_t *k, *x;
	char sub[256], what[96];
	size_t i;

	if (depth > DEPTH_MAX)
		return fail(err, len, at, "is nested too deeply");
	if ((k = json_object_get(s, "type")) && !type_ok(k, v)) {
		snprintf(what, sizeof(what), "must be %s",
			 json_is_string(k) ? json_string_value(k)
					   : "of another type");
		return fail(err, len, at, what);
	}
	if ((k = json_object_get(s, "enum")) && !in_enum(k, v))
		return fail(err, len, at, "is not one of the allowed values");
	if (!check_bounds(s, v, at, err, len))
		return false;
	if (json_is_object(v))
		return check_object(s, v, at, err, len, depth);
	if (json_is_array(v) && (k = json_object_get(s, "items")))
		json_array_foreach(v, i, x)
		{
			snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
			if (!check_at(k, x, sub, err, len, depth + 1))
				return false;
		}
	return true;
}

bool hx_schema_check(const json_t *schema, const json_t *v, const char *at,
		     char *err, size_t errlen)
{
	return check_at(schema, v, at, err, errlen, 0);
}

static const char *const known[] = {
    "type",	   "properties", "required", "additionalProperties",
    "enum",	   "minimum",	 "maximum",  "minLength",
    "maxLength",   "minItems",	 "maxItems", "items",
    "description", "title",	 "default",  NULL};

static bool keyword_known(const char *k)
{
	for (size_t i = 0; known[i]; i++)
		if (!strcmp(known[i], k))
			return true;
	return false;
}

bool hx_schema_supported(const json_t *schema, char *err, size_t errlen)
{
	const char *key, *k2;
	json_t *v, *p;

	if (!json_is_object(schema))
		return fail(err, errlen, "schema", "not an object");
	json_object_foreach((json_t *)schema, key, v)
	{
		if (!keyword_known(key))
			return fail(err, errlen, key, "keyword not checked");
		if (!strcmp(key, "properties"))
			json_object_foreach(
			    v, k2,
			    p) if (!hx_schema_supported(p, err,
							errlen)) return false;
		if ((!strcmp(key, "items") ||
		     !strcmp(key, "additionalProperties")) &&
		    json_is_object(v) && !hx_schema_supported(v, err, errlen))
			return false;
	}
	return true;
}
