/*
 * load_yaml_dra.c - the DRA documents of scenario files (docs/scenarios.md,
 * "DRA"): resource.k8s.io/v1beta1 ResourceSlice, DeviceClass,
 * ResourceClaim and ResourceClaimTemplate, v1alpha3 DeviceTaintRule, and a pod template's
 * spec.resourceClaims.  They are kept as JSON text (into->dra, a pod set's
 * dra_claims) for the scenario runner, which hands them to the DRA
 * allocator (load/dra.c) as Kubernetes objects.  The YAML tree is turned
 * into JSON as a Kubernetes API server would read it: a plain scalar that
 * reads as an integer, a boolean or null is one; everything else (quoted
 * scalars included) is a string.  Here only the shape the runner relies on
 * is checked (names, one claim source per pod claim); the allocator judges
 * the contents and says why it refuses them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "load_yaml.h"
#include "muster/util.h"

#define DRA_MAX_DEPTH 64

/* The JSON value of a scalar: integer, bool or null when plain and it
 * reads as one, else a string.  NULL on OOM. */
static json_t *scalar_json(const mu__ynode_t *n)
{
	const char *s = n->s;
	if (n->plain) {
		if (!strcmp(s, "true") || !strcmp(s, "True"))
			return json_true();
		if (!strcmp(s, "false") || !strcmp(s, "False"))
			return json_false();
		if (!*s || !strcmp(s, "null") || !strcmp(s, "~"))
			return json_null();
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (!*end && errno == 0 && end != s)
			return json_integer(v);
	}
	return json_string(s);
}

/* Converts the tree at n into *out (owned by the caller).  MU_EPARSE when
 * it nests deeper than DRA_MAX_DEPTH.  Linear in the tree. */
static int to_json(mu__yload_t *L, const mu__ynode_t *n, int depth, json_t **out)
{
	*out = NULL;
	if (depth > DRA_MAX_DEPTH)
		return mu__y_err(L, n, NULL, MU_EPARSE, "nested deeper than %d levels",
				 DRA_MAX_DEPTH);
	if (n->type == MU__Y_SCALAR) {
		*out = scalar_json(n);
		return *out ? MU_OK : mu__y_oom(L);
	}
	bool map = n->type == MU__Y_MAP;
	json_t *v = map ? json_object() : json_array();
	if (!v)
		return mu__y_oom(L);
	for (const mu__ynode_t *c = n->head; c; c = c->next) {
		json_t *x;
		int rc = to_json(L, c, depth + 1, &x);
		if (rc == MU_OK && (map ? json_object_set_new(v, c->key, x) : json_array_append_new(v, x)))
			rc = mu__y_oom(L);
		if (rc) {
			json_decref(v);
			return rc;
		}
	}
	*out = v;
	return MU_OK;
}

/* Dumps v (its reference taken) into the arena at *out. */
static int keep_json(mu__yload_t *L, json_t *v, const char **out)
{
	char *txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	*out = txt ? mu_arena_strdup(&L->into->arena, txt) : NULL;
	free(txt);
	return *out ? MU_OK : mu__y_oom(L);
}

/* A DeviceTaintRule's spec: a taint with a key and the effect NoSchedule
 * or NoExecute (what resource.k8s.io/v1alpha3 validation asks); its
 * deviceSelector is checked by the allocator (load/dra.c). */
static int taint_rule(mu__yload_t *L, const mu__ynode_t *spec)
{
	const mu__ynode_t *taint, *eff;
	const char *key;
	int rc;
	if ((rc = mu__y_map_at(L, spec, "taint", true, &taint)) ||
	    (rc = mu__y_str_at(L, taint, "key", true, &key)))
		return rc;
	if (!*key)
		return mu__y_err(L, mu__y_get(taint, "key"), NULL, MU_EINVAL, "expected a taint key, got \"\"");
	eff = mu__y_get(taint, "effect");
	if (!eff || eff->type != MU__Y_SCALAR || (strcmp(eff->s, "NoSchedule") && strcmp(eff->s, "NoExecute")))
		return mu__y_err(L, eff ? eff : taint, eff ? NULL : "effect", MU_EINVAL,
				 "expected effect NoSchedule or NoExecute");
	return MU_OK;
}

int mu__y_dra(mu__yload_t *L, const mu__ynode_t *root)
{
	const mu__ynode_t *meta, *spec;
	const char *name, *kind = mu__y_get(root, "kind")->s;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &name)) ||
	    (rc = mu__y_map_at(L, root, "spec", true, &spec)))
		return rc;
	if (!strcmp(kind, "ResourceClaimTemplate")) {
		const mu__ynode_t *inner;
		if ((rc = mu__y_map_at(L, spec, "spec", true, &inner)))
			return rc;
	}
	if (!strcmp(kind, "DeviceTaintRule") && (rc = taint_rule(L, spec)))
		return rc;
	if (mu__y_get(root, "status") && strcmp(kind, "ResourceClaim"))
		return mu__y_err(L, mu__y_get(root, "status"), NULL, MU_EINVAL,
				 "a %s has no status", kind);
	json_t *v;
	const char **slot;
	if ((rc = to_json(L, root, 0, &v)))
		return rc;
	if (!(slot = mu_specs_add_dra(L->into))) {
		json_decref(v);
		return mu__y_oom(L);
	}
	return keep_json(L, v, slot);
}

int mu__y_pod_claims(mu__yload_t *L, const mu__ynode_t *claims, const char **out)
{
	int rc;
	*out = NULL;
	if ((rc = mu__y_want_seq(L, claims)))
		return rc;
	for (const mu__ynode_t *c = claims->head; c; c = c->next) {
		const char *name, *a = NULL, *b = NULL;
		if ((rc = mu__y_want_map(L, c)) ||
		    (rc = mu__y_name_at(L, c, "name", true, &name)) ||
		    (rc = mu__y_name_at(L, c, "resourceClaimName", false, &a)) ||
		    (rc = mu__y_name_at(L, c, "resourceClaimTemplateName", false, &b)))
			return rc;
		if (!a == !b)
			return mu__y_err(L, c, NULL, MU_EINVAL, "expected exactly one of "
					 "resourceClaimName and resourceClaimTemplateName");
		for (const mu__ynode_t *d = claims->head; d != c; d = d->next)
			if (!strcmp(mu__y_get(d, "name")->s, name))
				return mu__y_err(L, c, "name", MU_EINVAL, "%s is given twice", name);
	}
	json_t *v;
	if ((rc = to_json(L, claims, 0, &v)))
		return rc;
	return keep_json(L, v, out);
}
