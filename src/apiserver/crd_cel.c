/*
 * crd_cel.c - the CEL validation rules of a CRD's schema
 * (x-kubernetes-validations: rule and message), as kube-apiserver's
 * apiextensions validation runs them, within the subset of
 * include/muster/cel.h (self, oldSelf and their fields, has(), size(),
 * all(), exists(), `in` a list literal, literals, comparisons, &&, ||, !).
 *
 * At CRD create and update a rule that is not CEL (or is empty) gets the
 * CRD refused with the reason (`...x-kubernetes-validations[0].rule:
 * Invalid value: "...": compilation failed: ...`), as kube-apiserver
 * refuses it.  A rule that is CEL but outside the subset (indexing, other
 * macros and functions, arithmetic, ...), or that has messageExpression,
 * reason, fieldPath or optionalOldSelf, is not evaluated, and the CRD's
 * create or update answers with a Warning that names each such rule:
 * refusing them would refuse CRDs that kube-apiserver accepts.
 * On an object, each rule runs with self the value its schema node
 * validates; a transition rule (one that reads oldSelf: `self == oldSelf`
 * for an immutable field) runs only on an update whose old object has a
 * value there (list elements correlate by their map keys, set elements by
 * value), as kube's do.  A rule that is false (or fails, as a missing
 * field does) is a FieldValueInvalid cause at that field whose value is
 * the schema's type, with the rule's message or "failed rule: RULE", as
 * kube-apiserver reports it.  A rule costs O(its length x field lookups x
 * the elements its all()/exists() visit).
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/crd.h"
#include "muster/cel.h"

#define INV "FieldValueInvalid"
#define FORB "FieldValueForbidden"

/* --- the JSON document a rule reads ---------------------------------------- */

static int j_kind(const void *n, int64_t *i, bool *b, const char **s)
{
	const json_t *v = n;
	switch (json_typeof(v)) {
	case JSON_INTEGER: *i = json_integer_value(v); return MU_CEL_NODE_INT;
	case JSON_TRUE:
	case JSON_FALSE: *b = json_is_true(v); return MU_CEL_NODE_BOOL;
	case JSON_STRING: *s = json_string_value(v); return MU_CEL_NODE_STRING;
	case JSON_REAL: return MU_CEL_NODE_DOUBLE;
	case JSON_ARRAY: return MU_CEL_NODE_LIST;
	case JSON_OBJECT: return MU_CEL_NODE_MAP;
	default: return MU_CEL_NODE_NULL;
	}
}

static const void *j_field(const void *map, const char *name)
{
	return json_object_get(map, name);
}

static size_t j_size(const void *n)
{
	return json_is_array((const json_t *)n) ? json_array_size(n) : json_object_size(n);
}

static const void *j_elem(const void *list, size_t i)
{
	return json_array_get(list, i);
}

static bool j_equal(const void *a, const void *b)
{
	return json_equal(a, b);
}

static const mu_cel_doc_t json_doc = {j_kind, j_field, j_size, j_elem, j_equal};

/* --- objects ------------------------------------------------------------- */

static bool rule_ok(const json_t *r, int *rc, bool *transition, char *why, size_t len);

/* Whether rule r is one muster evaluates (*transition: it reads oldSelf). */
static bool evaluated(const json_t *r, bool *transition)
{
	int rc;
	char why[300];
	return rule_ok(r, &rc, transition, why, sizeof why);
}

void mu__crd_cel_check(const json_t *v, const json_t *ov, const json_t *s, const char *path, mu__verr_t *e,
		       bool transitions_only)
{
	const json_t *rules = json_object_get(s, "x-kubernetes-validations");
	const char *ty = json_string_value(json_object_get(s, "type"));
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		const char *rule = json_string_value(json_object_get(r, "rule"));
		const char *msg = json_string_value(json_object_get(r, "message"));
		bool ok = false;
		char why[300];
		bool transition = false;
		if (!evaluated(r, &transition))
			continue; /* the CRD's create said so in a Warning */
		if ((transition && !ov) || (!transition && transitions_only))
			continue; /* a create, or nothing there before; or ratcheted */
		int rc = mu_cel_rule_eval_old(rule, &json_doc, v, ov, &ok, why, sizeof why);
		if (ok)
			continue;
		if (rc != MU_OK)
			mu__verr_add(e, path, INV, "Invalid value: \"%s\": %s evaluating rule: %.200s", ty ? ty : "object",
				     why, rule ? rule : "");
		else if (msg && *msg)
			mu__verr_add(e, path, INV, "Invalid value: \"%s\": %.300s", ty ? ty : "object", msg);
		else
			mu__verr_add(e, path, INV, "Invalid value: \"%s\": failed rule: %.300s", ty ? ty : "object", rule);
	}
}

/* --- schemas ------------------------------------------------------------- */

/* Whether rule r is one muster evaluates: a rule in the subset, with no
 * field muster does not evaluate. */
static bool rule_ok(const json_t *r, int *rc, bool *transition, char *why, size_t len)
{
	static const char *const unsupported[] = {"messageExpression", "reason", "fieldPath", "optionalOldSelf"};
	const char *rule = json_string_value(json_object_get(r, "rule"));
	*rc = rule && *rule ? mu_cel_rule_compile(rule, transition, why, len) : MU_EPARSE;
	if (*rc != MU_OK)
		return false;
	for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++)
		if (json_object_get(r, unsupported[k])) {
			snprintf(why, len, "%s is not evaluated", unsupported[k]);
			*rc = MU_EINVAL;
			return false;
		}
	return true;
}

void mu__crd_cel_schema(const json_t *s, const char *path, mu__verr_t *e, char *warn, size_t warnlen)
{
	const json_t *rules = json_object_get(s, "x-kubernetes-validations");
	if (!rules)
		return;
	char at[700];
	if (!json_is_array(rules)) {
		snprintf(at, sizeof at, "%s.x-kubernetes-validations", path);
		mu__verr_add(e, at, INV, "Invalid value: must be a list of rules");
		return;
	}
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		const char *rule = json_string_value(json_object_get(r, "rule"));
		char why[300];
		int rc;
		snprintf(at, sizeof at, "%s.x-kubernetes-validations[%zu].rule", path, i);
		bool transition;
		if (rule_ok(r, &rc, &transition, why, sizeof why))
			continue;
		if (!rule || !*rule) {
			mu__verr_add(e, at, "FieldValueRequired", "Required value: a rule is required");
		} else if (rc == MU_EPARSE) {
			mu__verr_add(e, at, INV, "Invalid value: \"%.200s\": compilation failed: %s", rule, why);
		} else if (warn) {
			size_t l = strlen(warn);
			if (l + 80 < warnlen)
				snprintf(warn + l, warnlen - l, "%smuster up does not evaluate %s: \"%.120s\" (%s)",
					 l ? "; " : "", at, rule, why);
		}
	}
}

bool mu__crd_cel_evaluated(const json_t *rule)
{
	bool transition;
	return evaluated(rule, &transition);
}

/* Appends the warnings of schema s (at path) and of the schemas under it. */
static void warn_walk(const json_t *s, char *path, size_t plen, int depth, char *warn, size_t warnlen)
{
	if (!json_is_object(s) || depth > MU__MAX_DEPTH)
		return;
	mu__verr_t e = {0};
	mu__crd_cel_schema(s, path, &e, warn, warnlen);
	size_t n = strlen(path);
	const char *k;
	json_t *sub;
	json_object_foreach((json_t *)json_object_get(s, "properties"), k, sub) {
		snprintf(path + n, plen - n, ".properties[%.100s]", k);
		warn_walk(sub, path, plen, depth + 1, warn, warnlen);
	}
	static const char *const one[] = {"items", "additionalProperties"};
	for (int i = 0; i < 2; i++) {
		snprintf(path + n, plen - n, ".%s", one[i]);
		warn_walk(json_object_get(s, one[i]), path, plen, depth + 1, warn, warnlen);
	}
	path[n] = '\0';
}

void mu__crd_cel_warnings(const json_t *crd, char *warn, size_t warnlen)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, v) {
		char path[700];
		snprintf(path, sizeof path, "spec.versions[%zu].schema.openAPIV3Schema", i);
		warn_walk(json_object_get(json_object_get(v, "schema"), "openAPIV3Schema"), path, sizeof path, 0, warn,
			  warnlen);
	}
}
