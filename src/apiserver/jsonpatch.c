/*
 * jsonpatch.c - JSON patch (RFC 6902) over JSON pointers (RFC 6901), the
 * patch type `kubectl patch --type=json` and the JavaScript client's
 * default patch send (Content-Type application/json-patch+json).
 *
 * A patch is an array of operations: add, remove, replace, move, copy and
 * test, each with a "path" (and "from" for move and copy).  Pointers are
 * "/"-separated tokens in which "~1" stands for "/" and "~0" for "~"; an
 * array index is a decimal number without leading zeros, and "-" means the
 * end of the array (add only).  Operations apply in order to the document in
 * place; the first that fails stops the patch, and the caller discards the
 * half-patched copy, so a patch applies wholly or not at all.
 *
 * Bounds: at most MU__JSONPATCH_MAX_OPS operations (kube-apiserver's limit
 * too); every pointer walk is bounded by the pointer's length, and test
 * compares values recursively up to the body's nesting limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

#define MAX_TOKEN 512

/* Reads the next reference token of *p (after a '/') into tok, unescaping
 * ~0 and ~1; advances *p.  Returns false on a bad escape or an overlong
 * token. */
static bool next_token(const char **p, char *tok, size_t cap)
{
	size_t n = 0;
	const char *s = *p + 1; /* skip '/' */
	while (*s && *s != '/') {
		char c = *s++;
		if (c == '~') {
			if (*s == '0')
				c = '~';
			else if (*s == '1')
				c = '/';
			else
				return false;
			s++;
		}
		if (n + 1 >= cap)
			return false;
		tok[n++] = c;
	}
	tok[n] = '\0';
	*p = s;
	return true;
}

/* Parses an array index token; -1 for "-", -2 when not an index. */
static long long array_index(const char *tok)
{
	if (!strcmp(tok, "-"))
		return -1;
	size_t n = strlen(tok);
	if (n == 0 || n > 9 || strspn(tok, "0123456789") != n || (n > 1 && tok[0] == '0'))
		return -2;
	return strtoll(tok, NULL, 10);
}

/* Resolves every token of ptr but the last: *parent gets the container, last
 * the last token (unescaped).  The root pointer "" has no parent (*parent
 * NULL).  Returns MU_OK or MU_EINVAL with a message. */
static int resolve_parent(json_t *doc, const char *ptr, json_t **parent, char *last, char *err, size_t errlen)
{
	*parent = NULL;
	if (!*ptr)
		return MU_OK;
	if (*ptr != '/') {
		snprintf(err, errlen, "the JSON pointer \"%.200s\" does not start with '/'", ptr);
		return MU_EINVAL;
	}
	json_t *cur = doc;
	const char *p = ptr;
	char tok[MAX_TOKEN];
	for (;;) {
		if (!next_token(&p, tok, sizeof tok)) {
			snprintf(err, errlen, "the JSON pointer \"%.200s\" has a bad escape or an overlong token", ptr);
			return MU_EINVAL;
		}
		if (!*p) {
			*parent = cur;
			snprintf(last, MAX_TOKEN, "%s", tok);
			return MU_OK;
		}
		json_t *nx = NULL;
		if (json_is_object(cur)) {
			nx = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			long long i = array_index(tok);
			nx = i >= 0 ? json_array_get(cur, (size_t)i) : NULL;
		}
		if (!nx) {
			snprintf(err, errlen, "the path \"%.200s\" does not exist (at \"%.100s\")", ptr, tok);
			return MU_EINVAL;
		}
		cur = nx;
	}
}

/* The value at ptr (borrowed), or NULL with a message. */
static json_t *get_at(json_t *doc, const char *ptr, char *err, size_t errlen)
{
	json_t *parent;
	char last[MAX_TOKEN];
	if (resolve_parent(doc, ptr, &parent, last, err, errlen) != MU_OK)
		return NULL;
	if (!parent)
		return doc;
	json_t *v = NULL;
	if (json_is_object(parent)) {
		v = json_object_get(parent, last);
	} else if (json_is_array(parent)) {
		long long i = array_index(last);
		v = i >= 0 ? json_array_get(parent, (size_t)i) : NULL;
	}
	if (!v)
		snprintf(err, errlen, "the path \"%.200s\" does not exist", ptr);
	return v;
}

/* add (replace_only false) or replace (true) v at ptr; steals v. */
static int put_at(json_t **doc, const char *ptr, json_t *v, bool replace_only, char *err, size_t errlen)
{
	json_t *parent;
	char last[MAX_TOKEN];
	if (resolve_parent(*doc, ptr, &parent, last, err, errlen) != MU_OK) {
		json_decref(v);
		return MU_EINVAL;
	}
	if (!parent) {
		json_decref(*doc);
		*doc = v;
		return MU_OK;
	}
	if (json_is_object(parent)) {
		if (replace_only && !json_object_get(parent, last)) {
			snprintf(err, errlen, "replace: the path \"%.200s\" does not exist", ptr);
			json_decref(v);
			return MU_EINVAL;
		}
		return json_object_set_new(parent, last, v) ? MU_ENOMEM : MU_OK;
	}
	if (!json_is_array(parent)) {
		snprintf(err, errlen, "the parent of \"%.200s\" is neither an object nor an array", ptr);
		json_decref(v);
		return MU_EINVAL;
	}
	long long i = array_index(last);
	size_t n = json_array_size(parent);
	if (i == -1 && !replace_only)
		i = (long long)n;
	if (i < 0 || (replace_only ? (size_t)i >= n : (size_t)i > n)) {
		snprintf(err, errlen, "the array index \"%.100s\" of \"%.200s\" is out of range (the array has %zu items)",
			 last, ptr, n);
		json_decref(v);
		return MU_EINVAL;
	}
	int rc = replace_only ? json_array_set_new(parent, (size_t)i, v) : json_array_insert_new(parent, (size_t)i, v);
	return rc ? MU_ENOMEM : MU_OK;
}

/* Removes the value at ptr; *out (may be NULL) gets it (owned). */
static int remove_at(json_t *doc, const char *ptr, json_t **out, char *err, size_t errlen)
{
	json_t *parent;
	char last[MAX_TOKEN];
	if (resolve_parent(doc, ptr, &parent, last, err, errlen) != MU_OK)
		return MU_EINVAL;
	if (!parent) {
		snprintf(err, errlen, "the whole document cannot be removed");
		return MU_EINVAL;
	}
	json_t *v = NULL;
	if (json_is_object(parent)) {
		v = json_object_get(parent, last);
		if (v) {
			json_incref(v);
			json_object_del(parent, last);
		}
	} else if (json_is_array(parent)) {
		long long i = array_index(last);
		v = i >= 0 ? json_array_get(parent, (size_t)i) : NULL;
		if (v) {
			json_incref(v);
			json_array_remove(parent, (size_t)i);
		}
	}
	if (!v) {
		snprintf(err, errlen, "remove: the path \"%.200s\" does not exist", ptr);
		return MU_EINVAL;
	}
	if (out)
		*out = v;
	else
		json_decref(v);
	return MU_OK;
}

/* RFC 6902 equality: numbers compare by value (1 equals 1.0), objects by
 * members regardless of order, arrays element by element. */
static bool equal(const json_t *a, const json_t *b, int depth)
{
	if (depth > MU__MAX_DEPTH * 2)
		return false;
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_object(a)) {
		if (json_object_size(a) != json_object_size(b))
			return false;
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)a, k, v) {
			const json_t *w = json_object_get(b, k);
			if (!w || !equal(v, w, depth + 1))
				return false;
		}
		return true;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!equal(json_array_get(a, i), json_array_get(b, i), depth + 1))
				return false;
		return true;
	}
	return json_equal(a, b);
}

/* Applies one operation. */
static int apply_op(json_t **doc, const json_t *op, size_t idx, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(op, "op"));
	const char *path = json_string_value(json_object_get(op, "path"));
	const char *from = json_string_value(json_object_get(op, "from"));
	json_t *value = json_object_get(op, "value");
	if (!json_is_object(op) || !name || !path) {
		snprintf(err, errlen, "operation %zu: \"op\" and \"path\" (strings) are required", idx);
		return MU_EPARSE;
	}
	bool needs_value = !strcmp(name, "add") || !strcmp(name, "replace") || !strcmp(name, "test");
	bool needs_from = !strcmp(name, "move") || !strcmp(name, "copy");
	if ((needs_value && !value) || (needs_from && !from)) {
		snprintf(err, errlen, "operation %zu (%s): missing \"%s\"", idx, name, needs_value ? "value" : "from");
		return MU_EPARSE;
	}
	char e[1024] = "";
	int rc;
	if (!strcmp(name, "add") || !strcmp(name, "replace")) {
		json_t *c = json_deep_copy(value);
		rc = c ? put_at(doc, path, c, !strcmp(name, "replace"), e, sizeof e) : MU_ENOMEM;
	} else if (!strcmp(name, "remove")) {
		rc = remove_at(*doc, path, NULL, e, sizeof e);
	} else if (!strcmp(name, "move")) {
		size_t fl = strlen(from);
		json_t *v = NULL;
		if (!strncmp(path, from, fl) && path[fl] == '/') {
			snprintf(e, sizeof e, "move: \"%.200s\" cannot be moved into its own child \"%.200s\"", from, path);
			rc = MU_EINVAL;
		} else if ((rc = remove_at(*doc, from, &v, e, sizeof e)) == MU_OK) {
			rc = put_at(doc, path, v, false, e, sizeof e);
		}
	} else if (!strcmp(name, "copy")) {
		json_t *v = get_at(*doc, from, e, sizeof e);
		json_t *c = v ? json_deep_copy(v) : NULL;
		rc = !v ? MU_EINVAL : !c ? MU_ENOMEM : put_at(doc, path, c, false, e, sizeof e);
	} else if (!strcmp(name, "test")) {
		json_t *v = get_at(*doc, path, e, sizeof e);
		rc = v ? MU_OK : MU_EINVAL;
		if (v && !equal(v, value, 0)) {
			snprintf(e, sizeof e, "test: the value at \"%.200s\" differs from the expected one", path);
			rc = MU_EINVAL;
		}
	} else {
		snprintf(err, errlen, "operation %zu: unknown op \"%.40s\" (add, remove, replace, move, copy or test)",
			 idx, name);
		return MU_EPARSE;
	}
	if (rc == MU_EINVAL)
		snprintf(err, errlen, "operation %zu (%.10s): %.900s", idx, name, e);
	return rc;
}

int mu__json_patch(json_t **doc, const json_t *ops, char *err, size_t errlen)
{
	if (!json_is_array(ops)) {
		snprintf(err, errlen, "a JSON patch must be an array of operations");
		return MU_EPARSE;
	}
	if (json_array_size(ops) > MU__JSONPATCH_MAX_OPS) {
		snprintf(err, errlen, "the JSON patch has %zu operations: at most %d are accepted",
			 json_array_size(ops), MU__JSONPATCH_MAX_OPS);
		return MU_EPARSE;
	}
	size_t i;
	json_t *op;
	json_array_foreach(ops, i, op) {
		int rc = apply_op(doc, op, i, err, errlen);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}
