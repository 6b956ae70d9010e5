/*
 * patch.c - request bodies and patches.
 *
 * mu__json_body() decodes a body with limits (size, duplicate keys, an
 * object at the top).  mu__merge_patch() is RFC 7386 JSON merge patch.
 * mu__strategic_patch() is Kubernetes' strategic merge patch for the
 * built-in kinds, without their Go schemas: lists whose field name is known
 * to carry a merge key (containers, env, volumes by name, conditions by
 * type, ...) merge element by element, `finalizers` merge as a set, and
 * every other list is replaced.  The directives kubectl sends are
 * understood: `$patch: replace|delete|merge`, `$setElementOrder/<list>`,
 * `$retainKeys` and `$deleteFromPrimitiveList/<list>`.
 *
 * Both patches change the target in place; they recurse once per nesting
 * level of the patch and stop at MAX_DEPTH.  mu__json_copy() is the deep
 * copy the write path makes of a stored object before patching it;
 * mu__json_copy_for() copies only what a given patch changes and shares
 * the rest (a status write's patch of a Job: its metadata, annotations and
 * conditions are copied, its spec and template shared).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

#define MAX_DEPTH 64

json_t *mu__json_body(const char *body, size_t len, size_t max, char *err, size_t errlen)
{
	if (len > max) {
		snprintf(err, errlen, "the request body is larger than %zu bytes", max);
		return NULL;
	}
	if (len == 0) {
		snprintf(err, errlen, "the request body is empty");
		return NULL;
	}
	/* util's single pass (a Binding's 200 bytes cost json_loadb 36,000
	 * instructions); json_loadb answers for what it does not take, with
	 * its error's line and column */
	json_error_t je;
	json_t *o = mu__json_fast_strict(body, len);
	if (!o)
		o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		snprintf(err, errlen, "the request body is not valid JSON: line %d column %d: %s",
			 je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(o) && !json_is_array(o)) {
		snprintf(err, errlen, "the request body must be a JSON object");
		json_decref(o);
		return NULL;
	}
	int d = mu__json_depth(o, MU__MAX_DEPTH);
	if (d > MU__MAX_DEPTH) {
		snprintf(err, errlen, "the request body nests more than %d levels deep: at most %d are accepted, "
			 "because deeper objects cannot be read back by ordinary clients (the official Python "
			 "client's JSON decoder stops near 1000)", MU__MAX_DEPTH, MU__MAX_DEPTH);
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Below this depth mu__json_copy hands over to json_deep_copy. */
#define COPY_DEPTH (MU__MAX_DEPTH + 4)

static json_t *copy_at(const json_t *v, int depth)
{
	if (depth > COPY_DEPTH)
		return json_deep_copy(v);
	if (json_is_object(v)) {
		json_t *c = json_object();
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			if (!c || json_object_set_new_nocheck(c, k, copy_at(x, depth + 1)) != 0) {
				json_decref(c);
				return NULL;
			}
		return c;
	}
	if (json_is_array(v)) {
		json_t *c = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			if (!c || json_array_append_new(c, copy_at(x, depth + 1)) != 0) {
				json_decref(c);
				return NULL;
			}
		return c;
	}
	if (json_is_string(v))
		return json_stringn_nocheck(json_string_value(v), json_string_length(v));
	return json_deep_copy(v); /* numbers; true, false and null are shared */
}

json_t *mu__json_copy(const json_t *v)
{
	return copy_at(v, 0);
}

/* mu__json_copy_for's work at one level: v an object, patch an object,
 * top whether this is the top level (its "metadata" copied, its member
 * deep copied deep). */
static json_t *copy_for(const json_t *v, const json_t *patch, bool top, const char *deep, int depth)
{
	if (depth > COPY_DEPTH)
		return mu__json_copy(v);
	json_t *c = json_object();
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)v, k, x) {
		json_t *p = json_object_get(patch, k);
		json_t *y;
		if (top && deep && !strcmp(k, deep))
			y = mu__json_copy(x);
		else if (p && json_is_object(p) && json_is_object(x))
			y = copy_for(x, p, false, NULL, depth + 1);
		else if (p)
			y = mu__json_copy(x);
		else if (top && !strcmp(k, "metadata") && json_is_object(x))
			y = json_copy(x); /* its members are set in place by every write */
		else
			y = json_incref(x);
		if (!c || !y || json_object_set_new_nocheck(c, k, y) != 0) {
			json_decref(c);
			return NULL;
		}
	}
	/* the lists a directive changes in place (strategic merge patch) */
	json_object_foreach((json_t *)patch, k, x) {
		const char *l = !strncmp(k, "$setElementOrder/", 17) ? k + 17
			: !strncmp(k, "$deleteFromPrimitiveList/", 25) ? k + 25 : NULL;
		json_t *cur = l ? json_object_get(c, l) : NULL;
		if (!cur || json_object_get(patch, l))
			continue; /* absent, or copied above */
		json_t *y = mu__json_copy(cur);
		if (!y || json_object_set_new_nocheck(c, l, y) != 0) {
			json_decref(c);
			return NULL;
		}
	}
	return c;
}

json_t *mu__json_copy_for(const json_t *v, const json_t *patch, const char *deep)
{
	if (!json_is_object(v))
		return NULL;
	return copy_for(v, json_is_object(patch) ? patch : NULL, true, deep, 0);
}

int mu__json_depth(const json_t *v, int max)
{
	if (!json_is_object(v) && !json_is_array(v))
		return 0;
	if (max < 0)
		return 1;
	int deepest = 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *c;
		json_object_foreach((json_t *)v, k, c) {
			int d = mu__json_depth(c, max - 1);
			if (d > deepest)
				deepest = d;
			if (deepest > max)
				break;
		}
	} else {
		size_t i;
		json_t *c;
		json_array_foreach(v, i, c) {
			int d = mu__json_depth(c, max - 1);
			if (d > deepest)
				deepest = d;
			if (deepest > max)
				break;
		}
	}
	return deepest + 1;
}

/* --- RFC 7386 ----------------------------------------------------------- */

/* Merges patch into *target (replacing it when needed); depth-bounded. */
static int merge(json_t **target, const json_t *patch, int depth)
{
	if (depth > MAX_DEPTH)
		return MU_ELIMIT;
	if (!json_is_object(patch)) {
		json_t *c = mu__json_copy(patch);
		if (!c)
			return MU_ENOMEM;
		json_decref(*target);
		*target = c;
		return MU_OK;
	}
	if (!json_is_object(*target)) {
		json_decref(*target);
		if (!(*target = json_object()))
			return MU_ENOMEM;
	}
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)patch, k, v) {
		if (json_is_null(v)) {
			json_object_del(*target, k);
			continue;
		}
		json_t *cur = json_incref(json_object_get(*target, k));
		int rc = merge(&cur, v, depth + 1);
		if (rc == MU_OK && json_object_set(*target, k, cur))
			rc = MU_ENOMEM;
		json_decref(cur);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

int mu__merge_patch(json_t *target, const json_t *patch)
{
	if (!json_is_object(target) || !json_is_object(patch))
		return MU_EINVAL;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)patch, k, v) {
		if (json_is_null(v)) {
			json_object_del(target, k);
			continue;
		}
		json_t *cur = json_incref(json_object_get(target, k));
		int rc = merge(&cur, v, 1);
		if (rc == MU_OK && json_object_set(target, k, cur))
			rc = MU_ENOMEM;
		json_decref(cur);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

/* --- strategic merge ---------------------------------------------------- */

/* The merge keys of the list fields of the built-in kinds. */
static const char *const merge_keys[][2] = {
	{"containers", "name"}, {"initContainers", "name"}, {"ephemeralContainers", "name"},
	{"env", "name"}, {"volumes", "name"}, {"imagePullSecrets", "name"},
	{"resourceClaims", "name"}, {"hostAliases", "ip"}, {"ports", "containerPort"},
	{"volumeMounts", "mountPath"}, {"volumeDevices", "devicePath"},
	{"conditions", "type"}, {"addresses", "type"}, {"ownerReferences", "uid"},
	{"topologySpreadConstraints", "topologyKey"}, {"containerStatuses", "name"},
	{"initContainerStatuses", "name"},
};

/* The merge key of a list field of the built-in kinds, or NULL. */
const char *mu__merge_key(const char *field)
{
	for (size_t i = 0; i < sizeof merge_keys / sizeof *merge_keys; i++)
		if (!strcmp(merge_keys[i][0], field))
			return merge_keys[i][1];
	return NULL;
}

bool mu__merge_key_field(const char *field)
{
	if (!strcmp(field, "protocol")) /* the second key of ports (ssa.c) */
		return true;
	for (size_t i = 0; i < sizeof merge_keys / sizeof *merge_keys; i++)
		if (merge_keys[i][1][0] == field[0] && !strcmp(merge_keys[i][1], field))
			return true;
	return false;
}

static bool is_set_list(const char *field)
{
	return !strcmp(field, "finalizers");
}

/* A deep copy of v without directive keys ("$..."); NULL on OOM. */
static json_t *strip(const json_t *v, int depth)
{
	if (depth > MAX_DEPTH)
		return NULL;
	if (json_is_object(v)) {
		json_t *o = json_object();
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			if (k[0] == '$' || json_is_null(x))
				continue;
			json_t *c = strip(x, depth + 1);
			if (!c || json_object_set_new(o, k, c)) {
				json_decref(o);
				return NULL;
			}
		}
		return o;
	}
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			if (json_is_object(x) && json_object_get(x, "$patch"))
				continue;
			json_t *c = strip(x, depth + 1);
			if (!c || json_array_append_new(a, c)) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	return mu__json_copy(v);
}

static int smp_obj(json_t *target, const json_t *patch, int depth, bool lmk);

/* Whether ports a and b have the same protocol (TCP, its default, when
 * left out). */
static bool same_protocol(const json_t *a, const json_t *b)
{
	const json_t *pa = json_object_get(a, "protocol"), *pb = json_object_get(b, "protocol");
	const char *sa = pa ? json_string_value(pa) : "TCP", *sb = pb ? json_string_value(pb) : "TCP";
	return sa && sb && !strcmp(sa, sb);
}

/* Index in list of the element whose key field equals that of elem; with
 * lmk (apply) by the list-map keys of kube's OpenAPI, which add protocol
 * to a container port's containerPort. */
static long find_keyed(const json_t *list, const char *key, const json_t *elem, bool lmk)
{
	const json_t *kv = json_object_get(elem, key);
	size_t i;
	json_t *x;
	if (!kv)
		return -1;
	bool port = lmk && !strcmp(key, "containerPort");
	json_array_foreach(list, i, x)
		if (json_equal(json_object_get(x, key), kv) && (!port || same_protocol(x, elem)))
			return (long)i;
	return -1;
}

/* The text find_keyed compares an element by: its key field's JSON (and,
 * for a port by the list-map keys, its protocol), malloc'd; NULL when the
 * element cannot match any (no key, a protocol not a string). */
static char *keyed_text(const json_t *elem, const char *key, bool port)
{
	const json_t *kv = json_object_get(elem, key);
	if (!kv)
		return NULL;
	const json_t *pr = port ? json_object_get(elem, "protocol") : NULL;
	if (pr && !json_is_string(pr))
		return NULL;
	char *t = json_dumps(kv, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
	if (!t || !port)
		return t;
	const char *p = pr ? json_string_value(pr) : "TCP";
	size_t n = strlen(t) + strlen(p) + 2;
	char *u = malloc(n);
	if (u)
		snprintf(u, n, "%s\n%s", t, p);
	free(t);
	return u;
}

/* A long list's index for find_keyed: {keyed_text: position of the first
 * element with it}, so that merging n patch elements into n is not n
 * scans of the list (kube's strategic merge keys a map by the merge key
 * too).  NULL when the list and the npatch elements merged into it are
 * few.  Bounded by the list's size. */
static json_t *keyed_index(const json_t *list, size_t npatch, const char *key, bool port)
{
	if (json_array_size(list) + npatch <= 8)
		return NULL;
	json_t *idx = json_object();
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x) {
		char *t = keyed_text(x, key, port);
		if (t && !json_object_get(idx, t))
			json_object_set_new(idx, t, json_integer((json_int_t)i));
		free(t);
	}
	return idx;
}

/* find_keyed through idx when there is one. */
static long find_indexed(const json_t *idx, const json_t *list, const char *key, const json_t *elem, bool lmk)
{
	if (!idx)
		return find_keyed(list, key, elem, lmk);
	char *t = keyed_text(elem, key, lmk && !strcmp(key, "containerPort"));
	const json_t *p = t ? json_object_get(idx, t) : NULL;
	free(t);
	return p ? (long)json_integer_value(p) : -1;
}

/* Merges a keyed list: patch elements update, add or ($patch: delete)
 * remove target elements; {$patch: replace} replaces the list.  A long
 * list is indexed by key (keyed_index) until an element is deleted. */
static int merge_keyed(json_t *list, const json_t *patch, const char *key, int depth, bool lmk)
{
	size_t i;
	json_t *pe;
	json_array_foreach(patch, i, pe) {
		if (!json_is_object(pe))
			return MU_EINVAL;
		const char *d = json_string_value(json_object_get(pe, "$patch"));
		if (d && !strcmp(d, "replace")) {
			json_t *c = strip(patch, depth);
			if (!c)
				return MU_ELIMIT;
			json_array_clear(list);
			json_array_extend(list, c);
			json_decref(c);
			return MU_OK;
		}
	}
	bool port = lmk && !strcmp(key, "containerPort");
	json_t *idx = json_array_size(patch) > 1 ? keyed_index(list, json_array_size(patch), key, port) : NULL;
	int rc = MU_OK;
	json_array_foreach(patch, i, pe) {
		const char *d = json_string_value(json_object_get(pe, "$patch"));
		long at = find_indexed(idx, list, key, pe, lmk);
		if (d && !strcmp(d, "delete")) {
			json_decref(idx); /* positions move: scan from here on */
			idx = NULL;
			while (at >= 0) {
				json_array_remove(list, (size_t)at);
				at = find_keyed(list, key, pe, lmk);
			}
			continue;
		}
		if (d && strcmp(d, "merge")) {
			rc = MU_EINVAL;
			break;
		}
		if (at >= 0) {
			rc = smp_obj(json_array_get(list, (size_t)at), pe, depth + 1, lmk);
			if (rc != MU_OK)
				break;
		} else {
			json_t *c = strip(pe, depth);
			if (!c || json_array_append_new(list, c)) {
				rc = MU_ELIMIT;
				break;
			}
			char *t = idx ? keyed_text(c, key, port) : NULL;
			if (t && !json_object_get(idx, t))
				json_object_set_new(idx, t, json_integer((json_int_t)json_array_size(list) - 1));
			free(t);
		}
	}
	json_decref(idx);
	return rc;
}

/* $setElementOrder/<field>: puts the listed elements first, in order. */
static void set_order(json_t *list, const json_t *order, const char *key)
{
	json_t *out = json_array();
	size_t i;
	json_t *o;
	if (!out)
		return;
	json_array_foreach(order, i, o) {
		long at = key ? find_keyed(list, key, o, false) : -1;
		if (!key) {
			size_t j;
			json_t *x;
			json_array_foreach(list, j, x)
				if (json_equal(x, o)) {
					at = (long)j;
					break;
				}
		}
		if (at >= 0) {
			json_array_append(out, json_array_get(list, (size_t)at));
			json_array_remove(list, (size_t)at);
		}
	}
	json_array_extend(out, list);
	json_array_clear(list);
	json_array_extend(list, out);
	json_decref(out);
}

/* One field of a strategic patch. */
static int smp_field(json_t *target, const char *k, const json_t *v, int depth, bool lmk)
{
	json_t *cur = json_object_get(target, k);
	if (json_is_null(v)) {
		json_object_del(target, k);
		return MU_OK;
	}
	if (json_is_object(v) && json_is_object(cur)) {
		const char *d = json_string_value(json_object_get(v, "$patch"));
		if (d && !strcmp(d, "delete")) {
			json_object_del(target, k);
			return MU_OK;
		}
		return smp_obj(cur, v, depth + 1, lmk);
	}
	if (json_is_array(v) && json_is_array(cur)) {
		const char *mk = mu__merge_key(k);
		if (mk)
			return merge_keyed(cur, v, mk, depth + 1, lmk);
		if (is_set_list(k)) {
			size_t i;
			json_t *x;
			json_array_foreach(v, i, x) {
				size_t j;
				json_t *y;
				bool have = false;
				json_array_foreach(cur, j, y)
					have = have || json_equal(x, y);
				if (!have)
					json_array_append(cur, x);
			}
			return MU_OK;
		}
	}
	if (json_is_object(v)) {
		const char *d = json_string_value(json_object_get(v, "$patch"));
		if (d && !strcmp(d, "delete")) {
			json_object_del(target, k);
			return MU_OK;
		}
	}
	json_t *c = strip(v, depth);
	if (!c || json_object_set_new(target, k, c))
		return MU_ELIMIT;
	return MU_OK;
}

static int smp_obj(json_t *target, const json_t *patch, int depth, bool lmk)
{
	if (depth > MAX_DEPTH)
		return MU_ELIMIT;
	if (!json_is_object(target) || !json_is_object(patch))
		return MU_EINVAL;
	const char *d = json_string_value(json_object_get(patch, "$patch"));
	if (d && !strcmp(d, "replace")) {
		json_t *c = strip(patch, depth);
		if (!c)
			return MU_ELIMIT;
		json_object_clear(target);
		json_object_update(target, c);
		json_decref(c);
		return MU_OK;
	}
	if (d && strcmp(d, "merge"))
		return MU_EINVAL;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)patch, k, v) {
		if (k[0] == '$')
			continue;
		int rc = smp_field(target, k, v, depth, lmk);
		if (rc != MU_OK)
			return rc;
	}
	/* directives that apply after the fields */
	json_object_foreach((json_t *)patch, k, v) {
		if (k[0] != '$')
			continue;
		if (!strncmp(k, "$setElementOrder/", 17)) {
			json_t *list = json_object_get(target, k + 17);
			if (json_is_array(list) && json_is_array(v))
				set_order(list, v, mu__merge_key(k + 17));
		} else if (!strncmp(k, "$deleteFromPrimitiveList/", 25)) {
			json_t *list = json_object_get(target, k + 25);
			size_t i;
			json_t *x;
			json_array_foreach(v, i, x)
				for (size_t j = json_array_size(list); j-- > 0;)
					if (json_equal(json_array_get(list, j), x))
						json_array_remove(list, j);
		} else if (!strcmp(k, "$retainKeys")) {
			if (!json_is_array(v))
				return MU_EINVAL;
			const char *tk;
			json_t *tv, *tmp;
			json_object_foreach_safe(target, tmp, tk, tv) {
				size_t i;
				json_t *x;
				bool keep = false;
				json_array_foreach(v, i, x)
					keep = keep || (json_is_string(x) && !strcmp(json_string_value(x), tk));
				if (!keep)
					json_object_del(target, tk);
			}
		} else if (strcmp(k, "$patch")) {
			return MU_EINVAL;
		}
	}
	return MU_OK;
}

int mu__strategic_patch(json_t *target, const json_t *patch)
{
	const char *d = json_string_value(json_object_get(patch, "$patch"));
	if (d && !strcmp(d, "delete"))
		return MU_EINVAL;
	return smp_obj(target, patch, 0, false);
}

int mu__apply_merge(json_t *target, const json_t *applied)
{
	return smp_obj(target, applied, 0, true);
}
