/*
 * jpath.c - dotted-path lookups into jansson objects ("metadata.name"),
 * shared by the control plane and the Kubernetes daemon.  Read-only: the
 * caller owns the object, and the result borrows from it.  Also the
 * metav1.LabelSelector match both use (PodDisruptionBudgets).
 */
#include <stdbool.h>
#include <string.h>

#include "muster/jpath.h"

json_t *mu__jget(const json_t *o, const char *path)
{
	char seg[128];
	while (o && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof seg || !json_is_object(o))
			return NULL;
		memcpy(seg, path, n);
		seg[n] = '\0';
		o = json_object_get(o, seg);
		path += n + (dot != NULL);
	}
	return (json_t *)o;
}

const char *mu__jstr(const json_t *o, const char *path)
{
	return json_string_value(mu__jget(o, path));
}

/* Whether the string array vals holds s. */
static bool in_values(const json_t *vals, const char *s)
{
	size_t i;
	const json_t *v;
	json_array_foreach(vals, i, v)
		if (json_is_string(v) && s && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

/* One matchExpressions term (In, NotIn, Exists, DoesNotExist); an unknown
 * operator matches nothing, as the API server would have refused it. */
static bool expr_match(const json_t *x, const json_t *labels)
{
	const char *key = json_string_value(json_object_get(x, "key"));
	const char *op = json_string_value(json_object_get(x, "operator"));
	const json_t *vals = json_object_get(x, "values");
	if (!key || !op)
		return false;
	const char *have = json_string_value(json_object_get(labels, key));
	if (!strcmp(op, "In"))
		return have && in_values(vals, have);
	if (!strcmp(op, "NotIn"))
		return !have || !in_values(vals, have);
	if (!strcmp(op, "Exists"))
		return have != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return have == NULL;
	return false;
}

bool mu_label_selector_match(const json_t *sel, const json_t *labels)
{
	if (!json_is_object(sel))
		return false;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, v) {
		const char *have = json_string_value(json_object_get(labels, k));
		if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
			return false;
	}
	size_t i;
	const json_t *x;
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, x)
		if (!expr_match(x, labels))
			return false;
	return true;
}
