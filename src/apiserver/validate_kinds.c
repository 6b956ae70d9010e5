/*
 * validate_kinds.c - validation and defaults of ConfigMap, Secret and
 * PriorityClass, following kube-apiserver's rules for them: config keys
 * (IsConfigMapKey), the 1 MiB total of a ConfigMap or Secret, base64 data,
 * stringData folded into data, and a PriorityClass's value range, reserved
 * names, immutable value and preemption policy.
 *
 * Every check is bounded by the object's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

#define INV "FieldValueInvalid"
#define REQ "FieldValueRequired"
#define TOOLONG "FieldValueTooLong"
#define FORB "FieldValueForbidden"
#define UNS "FieldValueNotSupported"

#define MAX_CONFIG_BYTES (1024 * 1024)
#define HIGHEST_USER_PRIORITY 1000000000

/* IsConfigMapKey: [-._a-zA-Z0-9]+, at most 253, not "." or "..". */
static bool config_key(const char *k)
{
	size_t n = strlen(k);
	return n && n <= 253 && strspn(k, "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == n &&
	       strcmp(k, ".") && strcmp(k, "..");
}

/* Checks a map of keys to strings (base64 when b64); returns its bytes. */
static size_t check_data(const json_t *m, const char *field, bool b64, mu__verr_t *e)
{
	if (!m || json_is_null(m))
		return 0;
	if (!json_is_object(m)) {
		mu__verr_add(e, field, INV, "must be a map of strings");
		return 0;
	}
	size_t total = 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)m, k, v) {
		char f[320];
		snprintf(f, sizeof f, "%s[%.250s]", field, k);
		if (!config_key(k))
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": a valid config key must consist of "
				     "alphanumeric characters, '-', '_' or '.'", k);
		if (!json_is_string(v)) {
			mu__verr_add(e, f, INV, "must be a string");
			continue;
		}
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		if (b64) {
			size_t pad = n && s[n - 1] == '=' ? (n > 1 && s[n - 2] == '=' ? 2 : 1) : 0;
			if (n % 4 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") != n - pad)
				mu__verr_add(e, f, INV, "illegal base64 data");
			n = n / 4 * 3 - pad;
		}
		total += strlen(k) + n;
	}
	return total;
}

void mu__validate_configmap(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	size_t n = check_data(json_object_get(obj, "data"), "data", false, e) +
		   check_data(json_object_get(obj, "binaryData"), "binaryData", true, e);
	const json_t *d = json_object_get(obj, "data"), *b = json_object_get(obj, "binaryData");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)d, k, v)
		if (json_object_get(b, k))
			mu__verr_add(e, "data", INV, "Invalid value: \"%.100s\": duplicate of key present in binaryData", k);
	if (n > MAX_CONFIG_BYTES)
		mu__verr_add(e, "[]", TOOLONG, "Too long: must have at most %d bytes", MAX_CONFIG_BYTES);
	if (old && json_is_true(json_object_get(old, "immutable")) &&
	    (!json_equal(d, json_object_get(old, "data")) || !json_equal(b, json_object_get(old, "binaryData"))))
		mu__verr_add(e, "data", FORB, "Forbidden: field is immutable when `immutable` is set");
}

void mu__validate_secret(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	if (check_data(json_object_get(obj, "data"), "data", true, e) > MAX_CONFIG_BYTES)
		mu__verr_add(e, "data", TOOLONG, "Too long: may not be more than %d bytes", MAX_CONFIG_BYTES);
	const char *ty = mu__jstr(obj, "type");
	if (old && ty && mu__jstr(old, "type") && strcmp(ty, mu__jstr(old, "type")))
		mu__verr_add(e, "type", INV, "field is immutable");
	if (old && json_is_true(json_object_get(old, "immutable")) &&
	    !json_equal(json_object_get(obj, "data"), json_object_get(old, "data")))
		mu__verr_add(e, "data", FORB, "Forbidden: field is immutable when `immutable` is set");
}

/* type Opaque; stringData is written into data (base64), as the API server
 * does on every write of a Secret. */
void mu__defaults_secret(json_t *obj)
{
	if (!mu__jstr(obj, "type") || !*mu__jstr(obj, "type"))
		json_object_set_new(obj, "type", json_string("Opaque"));
	json_t *sd = json_object_get(obj, "stringData");
	if (!json_is_object(sd))
		return;
	json_t *data = json_object_get(obj, "data");
	if (!json_is_object(data)) {
		data = json_object();
		json_object_set_new(obj, "data", data);
	}
	const char *k;
	json_t *v;
	json_object_foreach(sd, k, v) {
		if (!json_is_string(v))
			continue;
		char *b = mu__b64enc(json_string_value(v), json_string_length(v));
		if (b)
			json_object_set_new(data, k, json_string(b));
		free(b);
	}
	json_object_del(obj, "stringData");
}

void mu__defaults_priorityclass(json_t *obj)
{
	if (!mu__jstr(obj, "preemptionPolicy"))
		json_object_set_new(obj, "preemptionPolicy", json_string("PreemptLowerPriority"));
}

/* policy/v1 PodDisruptionBudget: minAvailable or maxUnavailable (not both),
 * each a non-negative integer or a percentage. */
void mu__validate_pdb(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	const json_t *min = mu__jget(obj, "spec.minAvailable"), *max = mu__jget(obj, "spec.maxUnavailable");
	if (min && max)
		mu__verr_add(e, "spec", INV, "Invalid value: minAvailable and maxUnavailable cannot be both set");
	const json_t *v[2] = {min, max};
	const char *f[2] = {"spec.minAvailable", "spec.maxUnavailable"};
	for (int i = 0; i < 2; i++) {
		const char *s = json_string_value(v[i]);
		size_t n = s ? strlen(s) : 0;
		if (v[i] && !(json_is_integer(v[i]) && json_integer_value(v[i]) >= 0) &&
		    !(s && n > 1 && s[n - 1] == '%' && strspn(s, "0123456789") == n - 1))
			mu__verr_add(e, f[i], INV, "Invalid value: must be a non-negative integer or a percentage");
	}
	const json_t *sel = mu__jget(obj, "spec.selector");
	if (sel && !json_is_object(sel))
		mu__verr_add(e, "spec.selector", INV, "Invalid value: must be a label selector");
}

void mu__validate_priorityclass(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	const json_t *v = json_object_get(obj, "value");
	const char *name = mu__jstr(obj, "metadata.name");
	bool system = name && !strncmp(name, "system-", 7);
	if (!json_is_integer(v))
		mu__verr_add(e, "value", REQ, "Required value");
	else if (!system && json_integer_value(v) > HIGHEST_USER_PRIORITY)
		mu__verr_add(e, "value", FORB, "Forbidden: maximum allowed value of a user defined priority is %d",
			     HIGHEST_USER_PRIORITY);
	if (system && strcmp(name, "system-node-critical") && strcmp(name, "system-cluster-critical"))
		mu__verr_add(e, "metadata.name", INV, "Invalid value: \"%s\": priority class names with 'system-' "
			     "prefix are reserved", name);
	const char *pp = mu__jstr(obj, "preemptionPolicy");
	if (pp && strcmp(pp, "PreemptLowerPriority") && strcmp(pp, "Never"))
		mu__verr_add(e, "preemptionPolicy", UNS, "Unsupported value: \"%.40s\": supported values: "
			     "\"Never\", \"PreemptLowerPriority\"", pp);
	if (old && !json_equal(v, json_object_get(old, "value")))
		mu__verr_add(e, "value", FORB, "Forbidden: may not be changed in an update.");
	if (old && pp && mu__jstr(old, "preemptionPolicy") && strcmp(pp, mu__jstr(old, "preemptionPolicy")))
		mu__verr_add(e, "preemptionPolicy", INV, "field is immutable");
}
