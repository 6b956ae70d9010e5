/*
 * crd.c - CustomResourceDefinitions and the structural schemas of the
 * custom types they make, as kube-apiserver's apiextensions does it:
 *
 *   - a CRD is checked (names, group, scope, versions, one storage
 *     version, a structural openAPIV3Schema per version) and gets the
 *     status its controllers would write (NamesAccepted, Established,
 *     acceptedNames, storedVersions);
 *   - a custom object is pruned of the fields its schema does not specify
 *     (unless x-kubernetes-preserve-unknown-fields; apiVersion, kind and
 *     metadata are kept at the root and in x-kubernetes-embedded-resource
 *     objects), nulls of non-nullable fields are dropped, defaults filled;
 *   - then validated: type (x-kubernetes-int-or-string, nullable),
 *     required, enum, minimum/maximum (exclusive), multipleOf,
 *     minLength/maxLength, pattern, format (crd_format.c), min/maxItems,
 *     min/maxProperties, x-kubernetes-list-type set and map,
 *     allOf/anyOf/oneOf/not, and the CEL rules of x-kubernetes-validations
 *     within muster's subset (crd_cel.c).
 *
 * Patterns are POSIX extended regular expressions (RE2's common subset),
 * and a pattern POSIX cannot compile, longer than 1,024 bytes or with
 * back-references is not checked.
 * Every walk is bounded by the object's (or schema's) size and by
 * MU__MAX_DEPTH levels.
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/crd.h"

#define REQ "FieldValueRequired"
#define INV "FieldValueInvalid"
#define TYP "FieldValueTypeInvalid"
#define UNS "FieldValueNotSupported"
#define DUP "FieldValueDuplicate"
#define LONG "FieldValueTooLong"
#define MANY "FieldValueTooMany"
#define FORB "FieldValueForbidden"

/* --- paths and values --------------------------------------------------- */

typedef struct path {
	char b[512];
	size_t n;
	bool no_cel;  /* validation without the CEL rules (a default's first pass) */
} path_t;

/* Appends ".key" (or "key" at the root) or "[i]"; returns the old length. */
static size_t push_key(path_t *p, const char *k)
{
	size_t was = p->n;
	int w = snprintf(p->b + p->n, sizeof p->b - p->n, "%s%s", p->n ? "." : "", k);
	if (w > 0 && (size_t)w < sizeof p->b - p->n)
		p->n += (size_t)w;
	p->b[p->n] = '\0';
	return was;
}

static size_t push_idx(path_t *p, size_t i)
{
	size_t was = p->n;
	int w = snprintf(p->b + p->n, sizeof p->b - p->n, "[%zu]", i);
	if (w > 0 && (size_t)w < sizeof p->b - p->n)
		p->n += (size_t)w;
	p->b[p->n] = '\0';
	return was;
}

static void pop(path_t *p, size_t was)
{
	p->n = was;
	p->b[was] = '\0';
}

/* A number as Go's %v prints a float64: the shortest digits that read
 * back the same, in exponent form when the exponent is below -4 or at
 * least 6 ("5", "0.1", "1e+06"). */
static const char *num_text(double x, char *buf, size_t len)
{
	int prec = 1;
	for (; prec < 17; prec++) {
		snprintf(buf, len, "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	snprintf(buf, len, "%.*e", prec - 1, x);
	const char *ep = strchr(buf, 'e');
	int exp = ep ? atoi(ep + 1) : 0;
	if (exp >= -4 && exp < 6)
		snprintf(buf, len, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, x);
	return buf;
}

/* A value as kube-apiserver quotes it in messages: strings quoted,
 * numbers as Go prints them, the rest as JSON, cut to fit buf. */
static const char *show(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v)) {
		snprintf(buf, len, "\"%.100s\"", json_string_value(v));
		return buf;
	}
	if (json_is_real(v))
		return num_text(json_real_value(v), buf, len);
	char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	snprintf(buf, len, "%.100s", t ? t : "null");
	free(t);
	return buf;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

static bool flag(const json_t *s, const char *k)
{
	return json_is_true(json_object_get(s, k));
}

/* --- pruning and defaults ----------------------------------------------- */

typedef struct prune_ctx {
	bool prune;
	bool bare;          /* kube's pruning.Prune alone: no nulls dropped, no defaults (a CRD's defaults) */
	mu__unknown_t *u;
} prune_ctx_t;

static void note(mu__unknown_t *u, const char *path)
{
	size_t l = strlen(u->text);
	if (l + 40 < sizeof u->text)
		snprintf(u->text + l, sizeof u->text - l, "%sunknown field \"%s\"", u->n ? ", " : "", path);
	u->n++;
}

static void prune_value(prune_ctx_t *c, json_t *v, const json_t *s, path_t *p, int depth, bool root);

/* The schema of key k of an object whose schema is s: its property, or
 * additionalProperties; *keep is set when anything goes (no schema). */
static const json_t *child_schema(const json_t *s, const char *k, bool *keep)
{
	const json_t *props = json_object_get(s, "properties");
	const json_t *sub = json_object_get(props, k);
	*keep = false;
	if (sub)
		return sub;
	const json_t *ap = json_object_get(s, "additionalProperties");
	if (json_is_object(ap))
		return ap;
	*keep = json_is_true(ap) || flag(s, "x-kubernetes-preserve-unknown-fields");
	return NULL;
}

static void prune_object(prune_ctx_t *c, json_t *v, const json_t *s, path_t *p, int depth, bool root)
{
	bool embedded = root || flag(s, "x-kubernetes-embedded-resource");
	const char *k;
	json_t *it, *tmp;
	json_object_foreach_safe(v, tmp, k, it) {
		if (embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
			continue;
		bool keep;
		const json_t *sub = child_schema(s, k, &keep);
		if (sub && json_is_null(it) && !flag(sub, "nullable") && !c->bare) {
			json_object_del(v, k); /* a null of a non-nullable field is dropped, then defaulted */
		} else if (!sub && !keep) {
			size_t was = push_key(p, k);
			note(c->u, p->b);
			pop(p, was);
			if (c->prune)
				json_object_del(v, k);
		}
	}
	json_t *pv;
	json_object_foreach(json_object_get(s, "properties"), k, pv) {
		json_t *d = json_object_get(pv, "default");
		if (d && !json_object_get(v, k) && !c->bare)
			json_object_set_new(v, k, json_deep_copy(d));
	}
	json_object_foreach(v, k, it) {
		if (embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
			continue;
		bool keep;
		const json_t *sub = child_schema(s, k, &keep);
		if (sub) {
			size_t was = push_key(p, k);
			prune_value(c, it, sub, p, depth + 1, false);
			pop(p, was);
		}
	}
}

static void prune_value(prune_ctx_t *c, json_t *v, const json_t *s, path_t *p, int depth, bool root)
{
	if (!json_is_object(s) || depth > MU__MAX_DEPTH)
		return;
	if (json_is_object(v)) {
		prune_object(c, v, s, p, depth, root);
	} else if (json_is_array(v)) {
		const json_t *items = json_object_get(s, "items");
		size_t i;
		json_t *it;
		json_array_foreach(v, i, it) {
			size_t was = push_idx(p, i);
			prune_value(c, it, items, p, depth + 1, false);
			pop(p, was);
		}
	}
}

void mu__crd_prune(const mu__crdtype_t *c, int vi, json_t *obj, bool prune, mu__unknown_t *u)
{
	memset(u, 0, sizeof *u);
	if (vi < 0 || vi >= c->nver || !c->v[vi].schema)
		return;
	prune_ctx_t pc = {prune, false, u};
	path_t p = {"", 0, false};
	prune_value(&pc, obj, c->v[vi].schema, &p, 0, true);
}

/* --- validation --------------------------------------------------------- */

/* v is validated against schema s; ov is the value at the same place
 * before an update (NULL: a create, or not there before), for transition
 * rules. */
static void check(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, bool root,
		  mu__verr_t *e);

static bool type_ok(const json_t *v, const json_t *s)
{
	if (flag(s, "x-kubernetes-int-or-string"))
		return json_is_integer(v) || json_is_string(v);
	const char *ty = json_string_value(json_object_get(s, "type"));
	if (!ty || !*ty)
		return true;
	if (!strcmp(ty, "object"))
		return json_is_object(v);
	if (!strcmp(ty, "array"))
		return json_is_array(v);
	if (!strcmp(ty, "string"))
		return json_is_string(v);
	if (!strcmp(ty, "integer"))
		return json_is_integer(v) || (json_is_real(v) && json_real_value(v) == (double)(long long)json_real_value(v));
	if (!strcmp(ty, "number"))
		return json_is_number(v);
	if (!strcmp(ty, "boolean"))
		return json_is_boolean(v);
	return true;
}

static size_t utf8_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void check_string(const char *sv, const json_t *v, const json_t *s, path_t *p, mu__verr_t *e)
{
	char vb[128];
	const json_t *mx = json_object_get(s, "maxLength"), *mn = json_object_get(s, "minLength");
	size_t len = utf8_len(sv);
	if (json_is_integer(mx) && (json_int_t)len > json_integer_value(mx))
		mu__verr_add(e, p->b, LONG, "Too long: may not be longer than %lld", (long long)json_integer_value(mx));
	if (json_is_integer(mn) && (json_int_t)len < json_integer_value(mn))
		mu__verr_add(e, p->b, INV, "Invalid value: %s: %s in body should be at least %lld chars long",
			     show(v, vb, sizeof vb), p->b, (long long)json_integer_value(mn));
	const char *pat = json_string_value(json_object_get(s, "pattern"));
	regex_t re;
	/* back-references can make POSIX matching exponential: not checked */
	bool backref = false;
	for (const char *q = pat; q && *q && !backref; q++)
		backref = q[0] == '\\' && q[1] >= '1' && q[1] <= '9';
	if (pat && !backref && strlen(pat) <= 1024 && strlen(sv) < 65536 &&
	    regcomp(&re, pat, REG_EXTENDED | REG_NOSUB) == 0) {
		if (regexec(&re, sv, 0, NULL, 0) != 0)
			mu__verr_add(e, p->b, INV, "Invalid value: %s: %s in body should match '%.200s'",
				     show(v, vb, sizeof vb), p->b, pat);
		regfree(&re);
	}
	const char *fmt = json_string_value(json_object_get(s, "format"));
	if (fmt && !mu__crd_format_ok(fmt, sv))
		mu__verr_add(e, p->b, INV, "Invalid value: %s: %s in body must be of type %.40s: %s",
			     show(v, vb, sizeof vb), p->b, fmt, show(v, vb, sizeof vb));
}

/* multipleOf as kube-openapi's validator checks it: an integer against an
 * integral factor exactly; otherwise data/factor (or data*(1/factor) for a
 * factor below 1) must be a JSON integer within 1e-9; a factor that is not
 * positive is itself an error. */
static void check_multiple(const json_t *v, const json_t *s, path_t *p, mu__verr_t *e)
{
	const json_t *mo = json_object_get(s, "multipleOf");
	if (!json_is_number(mo))
		return;
	char vb[128], fb[40];
	double f = json_number_value(mo), x = json_number_value(v);
	if (f <= 0) {
		mu__verr_add(e, p->b, INV, "Invalid value: %s: factor MultipleOf declared for %s must be positive: %s",
			     show(v, vb, sizeof vb), p->b, num_text(f, fb, sizeof fb));
		return;
	}
	bool ok;
	if (json_is_integer(v) && f == (double)(json_int_t)f && f < 9.2e18) {
		json_int_t fi = (json_int_t)f;
		ok = json_integer_value(v) % fi == 0;
	} else {
		double m = f < 1 ? (1 / f) * x : x / f;
		ok = isfinite(m) && fabs(m) <= 9007199254740991.0 && fabs(m - nearbyint(m)) < 1e-9;
	}
	if (!ok)
		mu__verr_add(e, p->b, INV, "Invalid value: %s: %s in body should be a multiple of %s",
			     show(v, vb, sizeof vb), p->b, num_text(f, fb, sizeof fb));
}

static void check_number(const json_t *v, const json_t *s, path_t *p, mu__verr_t *e)
{
	char vb[128];
	double x = json_number_value(v);
	const json_t *mx = json_object_get(s, "maximum"), *mn = json_object_get(s, "minimum");
	bool xmax = flag(s, "exclusiveMaximum"), xmin = flag(s, "exclusiveMinimum");
	if (json_is_number(mx) && (xmax ? x >= json_number_value(mx) : x > json_number_value(mx)))
		mu__verr_add(e, p->b, INV, "Invalid value: %s: %s in body should be less than %s%g",
			     show(v, vb, sizeof vb), p->b, xmax ? "" : "or equal to ", json_number_value(mx));
	if (json_is_number(mn) && (xmin ? x <= json_number_value(mn) : x < json_number_value(mn)))
		mu__verr_add(e, p->b, INV, "Invalid value: %s: %s in body should be greater than %s%g",
			     show(v, vb, sizeof vb), p->b, xmin ? "" : "or equal to ", json_number_value(mn));
	check_multiple(v, s, p, e);
}

/* Whether list items a and b have equal values for every map key. */
static bool same_keys(const json_t *a, const json_t *b, const json_t *keys)
{
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *kn = json_string_value(k);
		if (!kn || !json_equal(json_object_get(a, kn), json_object_get(b, kn)))
			return false;
	}
	return true;
}

static void check_array(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, mu__verr_t *e)
{
	char vb[128];
	size_t n = json_array_size(v);
	const json_t *mx = json_object_get(s, "maxItems"), *mn = json_object_get(s, "minItems");
	if (json_is_integer(mx) && (json_int_t)n > json_integer_value(mx))
		mu__verr_add(e, p->b, MANY, "Too many: %zu: must have at most %lld items", n,
			     (long long)json_integer_value(mx));
	if (json_is_integer(mn) && (json_int_t)n < json_integer_value(mn))
		mu__verr_add(e, p->b, INV, "Invalid value: %zu: %s in body should have at least %lld items", n, p->b,
			     (long long)json_integer_value(mn));
	const char *lt = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
	const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
	bool set = lt && !strcmp(lt, "set"), map = lt && !strcmp(lt, "map") && json_array_size(keys);
	for (size_t i = 0; (set || map) && n <= 4096 && i < n; i++)
		for (size_t j = 0; j < i; j++) {
			const json_t *a = json_array_get(v, i), *b = json_array_get(v, j);
			if (set ? json_equal(a, b) : same_keys(a, b, keys)) {
				size_t was = push_idx(p, i);
				mu__verr_add(e, p->b, DUP, "Duplicate value: %s", show(a, vb, sizeof vb));
				pop(p, was);
				break;
			}
		}
	const json_t *items = json_object_get(s, "items");
	size_t i;
	json_t *it;
	if (json_is_object(items))
		json_array_foreach(v, i, it) {
			/* old elements correlate as kube's do: by key in a map
			 * list, by value in a set, not at all otherwise */
			const json_t *oit = NULL;
			size_t j;
			json_t *o;
			json_array_foreach(map || set ? ov : NULL, j, o)
				if (set ? json_equal(o, it) : same_keys(o, it, keys)) {
					oit = o;
					break;
				}
			size_t was = push_idx(p, i);
			check(it, oit, items, p, depth + 1, false, e);
			pop(p, was);
		}
}

static void check_object(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, bool root,
			 mu__verr_t *e)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(s, "required"), i, r) {
		const char *k = json_string_value(r);
		if (k && !json_object_get(v, k)) {
			size_t was = push_key(p, k);
			mu__verr_add(e, p->b, REQ, "Required value");
			pop(p, was);
		}
	}
	const json_t *mx = json_object_get(s, "maxProperties"), *mn = json_object_get(s, "minProperties");
	size_t n = json_object_size(v);
	if (json_is_integer(mx) && (json_int_t)n > json_integer_value(mx))
		mu__verr_add(e, p->b, MANY, "Too many: %zu: must have at most %lld items", n,
			     (long long)json_integer_value(mx));
	if (json_is_integer(mn) && (json_int_t)n < json_integer_value(mn))
		mu__verr_add(e, p->b, INV, "Invalid value: %zu: %s in body should have at least %lld properties", n,
			     p->b, (long long)json_integer_value(mn));
	bool embedded = root || flag(s, "x-kubernetes-embedded-resource");
	const char *k;
	json_t *it;
	json_object_foreach((json_t *)v, k, it) {
		if (embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
			continue;
		bool keep;
		const json_t *sub = child_schema(s, k, &keep);
		if (sub) {
			size_t was = push_key(p, k);
			check(it, json_object_get(ov, k), sub, p, depth + 1, false, e);
			pop(p, was);
		}
	}
}

/* How many of the schemas in the array sub v satisfies. */
static int passing(const json_t *v, const json_t *ov, const json_t *subs, path_t *p, int depth, int *total)
{
	int ok = 0;
	size_t i;
	json_t *sc;
	*total = 0;
	json_array_foreach(subs, i, sc) {
		mu__verr_t tmp = {0};
		check(v, ov, sc, p, depth + 1, false, &tmp);
		ok += tmp.n == 0;
		(*total)++;
	}
	return ok;
}

static void check_combinators(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth,
			      mu__verr_t *e)
{
	size_t i;
	json_t *sc;
	json_array_foreach(json_object_get(s, "allOf"), i, sc)
		check(v, ov, sc, p, depth + 1, false, e);
	int total, ok = passing(v, ov, json_object_get(s, "anyOf"), p, depth, &total);
	if (total && !ok)
		mu__verr_add(e, p->b, INV, "Invalid value: \"\": %s in body must match at least one schema (anyOf)",
			     p->b);
	ok = passing(v, ov, json_object_get(s, "oneOf"), p, depth, &total);
	if (total && ok != 1)
		mu__verr_add(e, p->b, INV, "Invalid value: \"\": %s in body must match exactly one schema (oneOf)",
			     p->b);
	const json_t *not = json_object_get(s, "not");
	if (json_is_object(not)) {
		mu__verr_t tmp = {0};
		check(v, ov, not, p, depth + 1, false, &tmp);
		if (!tmp.n)
			mu__verr_add(e, p->b, INV, "Invalid value: \"\": %s in body must not match the schema (not)",
				     p->b);
	}
}

/* The CEL rules of the schemas under s (with transitions_only, only those
 * that read oldSelf), run over v and an old value ov equal to it, in the
 * places check() would run them: what a ratcheted subtree still answers
 * for, as kube never ratchets a rule that reads oldSelf; and a default's
 * rules, which kube runs with the default as both self and oldSelf.
 * Bounded as check(). */
static void cel_walk(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, bool transitions_only,
		     mu__verr_t *e)
{
	if (!json_is_object(s) || depth > MU__MAX_DEPTH || e->n >= MU__VERR_MAX || json_is_null(v))
		return;
	mu__crd_cel_check(v, ov, s, p->b, e, transitions_only);
	const json_t *items = json_object_get(s, "items");
	size_t i;
	json_t *it;
	if (json_is_array(v) && json_is_object(items))
		json_array_foreach(v, i, it) { /* v equals ov: element i correlates with element i */
			size_t was = push_idx(p, i);
			cel_walk(it, json_array_get(ov, i), items, p, depth + 1, transitions_only, e);
			pop(p, was);
		}
	const char *k;
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, it) {
			bool keep;
			const json_t *sub = child_schema(s, k, &keep);
			size_t was = push_key(p, k);
			cel_walk(it, json_object_get(ov, k), sub, p, depth + 1, transitions_only, e);
			pop(p, was);
		}
}

static void check_node(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, bool root,
		       mu__verr_t *e);

/* Validates v against s (old value ov, correlated as kube correlates it:
 * by property name, by map key in a map list, by value in a set; NULL
 * when there is none).  Ratcheting, as kube 1.30+'s CRDValidationRatcheting
 * (beta and on by default in 1.32, GA in 1.33): on an update, the errors
 * of a value equal to its correlated old value (it and everything under
 * it) are dropped, save those of transition rules; the equality is only
 * computed when the value has errors, as kube's validator does. */
static void check(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, bool root,
		  mu__verr_t *e)
{
	int before = e->n;
	check_node(v, ov, s, p, depth, root, e);
	if (e->n > before && ov && json_equal(v, ov)) {
		e->n = before;
		if (!p->no_cel)
			cel_walk(v, ov, s, p, depth, true, e);
	}
}

static void check_node(const json_t *v, const json_t *ov, const json_t *s, path_t *p, int depth, bool root,
		       mu__verr_t *e)
{
	char vb[128];
	if (!json_is_object(s) || depth > MU__MAX_DEPTH || e->n >= MU__VERR_MAX)
		return;
	if (json_is_null(v)) {
		if (!flag(s, "nullable") && json_object_get(s, "type"))
			mu__verr_add(e, p->b, TYP, "Invalid value: \"null\": %s in body must be of type %s: \"null\"",
				     p->b, json_string_value(json_object_get(s, "type")));
		return;
	}
	if (!type_ok(v, s)) {
		const char *want = flag(s, "x-kubernetes-int-or-string")
					   ? "integer,string"
					   : json_string_value(json_object_get(s, "type"));
		mu__verr_add(e, p->b, TYP, "Invalid value: \"%s\": %s in body must be of type %s: %s", type_name(v),
			     p->b, want, show(v, vb, sizeof vb));
		return;
	}
	const json_t *en = json_object_get(s, "enum");
	if (json_array_size(en)) {
		bool found = false;
		size_t i;
		json_t *x;
		json_array_foreach(en, i, x)
			found = found || json_equal(x, v);
		if (!found) {
			char list[400] = "";
			json_array_foreach(en, i, x) {
				size_t l = strlen(list);
				snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", show(x, vb, sizeof vb));
			}
			mu__verr_add(e, p->b, UNS, "Unsupported value: %s: supported values: %s",
				     show(v, vb, sizeof vb), list);
		}
	}
	if (json_is_string(v))
		check_string(json_string_value(v), v, s, p, e);
	else if (json_is_number(v))
		check_number(v, s, p, e);
	else if (json_is_array(v))
		check_array(v, ov, s, p, depth, e);
	else if (json_is_object(v))
		check_object(v, ov, s, p, depth, root, e);
	check_combinators(v, ov, s, p, depth, e);
	if (!p->no_cel)
		mu__crd_cel_check(v, json_is_null(ov) ? NULL : ov, s, p->b, e, false);
}

void mu__crd_validate(const mu__crdtype_t *c, int vi, const json_t *obj, const json_t *old, mu__verr_t *e)
{
	if (vi < 0 || vi >= c->nver || !c->v[vi].schema)
		return;
	path_t p = {"", 0, false};
	check(obj, old, c->v[vi].schema, &p, 0, true, e);
}

/* --- structural schemas ------------------------------------------------- */

/* The CRD-level checks kube-apiserver lets an updated CRD keep breaking
 * when the old CRD already broke them (its validationOptions from the old
 * spec: requireAtomicSetType, requireMapListKeysMapSetValidation,
 * requirePrunedDefaults), each over the whole CRD, not per field. */
enum { R_SET = 1, R_MAPSET = 2, R_PRUNED = 4 };
typedef struct sopts {
	unsigned relax; /* R_*: not checked */
	unsigned seen;  /* R_*: broken somewhere (the old CRD's walk) */
} sopts_t;

/* A cause at p's path plus ".key". */
static void add_at(mu__verr_t *e, path_t *p, const char *key, const char *reason, const char *msg)
{
	size_t was = push_key(p, key);
	mu__verr_add(e, p->b, reason, "%s", msg);
	pop(p, was);
}

/* x-kubernetes-map-type and x-kubernetes-list-type as kube-apiserver's
 * CRD validation checks them: the type they need, their values, map keys
 * that are scalar properties of object items, required or defaulted and
 * not nullable, set and map items not nullable. */
static void check_list_map_types(const json_t *s, path_t *p, sopts_t *o, mu__verr_t *e)
{
	char m[300];
	const char *ty = json_string_value(json_object_get(s, "type"));
	const char *mt = json_string_value(json_object_get(s, "x-kubernetes-map-type"));
	const char *lt = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
	const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
	const json_t *items = json_object_get(s, "items");
	static const char *const need[2][2] = {{"object", "x-kubernetes-map-type"}, {"array", "x-kubernetes-list-type"}};
	for (int i = 0; i < 2; i++) {
		if (!(i ? lt : mt) || (ty && !strcmp(ty, need[i][0])))
			continue;
		if (!ty || !*ty)
			snprintf(m, sizeof m, "Required value: must be %s if %s is specified", need[i][0], need[i][1]);
		else
			snprintf(m, sizeof m, "Invalid value: \"%.60s\": must be %s if %s is specified", ty, need[i][0],
				 need[i][1]);
		add_at(e, p, "type", ty && *ty ? INV : REQ, m);
	}
	if (mt && strcmp(mt, "atomic") && strcmp(mt, "granular")) {
		snprintf(m, sizeof m, "Unsupported value: \"%.60s\": supported values: \"atomic\", \"granular\"", mt);
		add_at(e, p, "x-kubernetes-map-type", UNS, m);
	}
	if (lt && strcmp(lt, "atomic") && strcmp(lt, "set") && strcmp(lt, "map")) {
		snprintf(m, sizeof m, "Unsupported value: \"%.60s\": supported values: \"atomic\", \"set\", \"map\"", lt);
		add_at(e, p, "x-kubernetes-list-type", UNS, m);
	}
	if (json_array_size(keys) && (!lt || strcmp(lt, "map"))) {
		if (!lt)
			snprintf(m, sizeof m, "Required value: must be map if x-kubernetes-list-map-keys is non-empty");
		else
			snprintf(m, sizeof m, "Invalid value: \"%.60s\": must be map if x-kubernetes-list-map-keys is "
				 "non-empty", lt);
		add_at(e, p, "x-kubernetes-list-type", lt ? INV : REQ, m);
	}
	if (!lt || (strcmp(lt, "map") && strcmp(lt, "set")) || !json_is_object(items))
		return;
	bool mapset = !(o->relax & R_MAPSET); /* kube's validateMapListKeysMapSet */
	if (mapset && flag(items, "nullable")) {
		snprintf(m, sizeof m, "Forbidden: cannot be nullable when x-kubernetes-list-type is %s", lt);
		add_at(e, p, "items.nullable", FORB, m);
		o->seen |= R_MAPSET;
	}
	if (strcmp(lt, "map"))
		return;
	const char *ity = json_string_value(json_object_get(items, "type"));
	if (!json_array_size(keys))
		add_at(e, p, "x-kubernetes-list-map-keys", REQ,
		       "Required value: must not be empty if x-kubernetes-list-type is map");
	if (!ity || strcmp(ity, "object")) {
		snprintf(m, sizeof m, "Invalid value: \"%.60s\": must be object if parent array's x-kubernetes-list-type "
			 "is map", ity ? ity : "");
		add_at(e, p, "items.type", INV, m);
		return;
	}
	size_t i;
	json_t *k;
	char *klist = json_dumps(keys, JSON_COMPACT | JSON_ENCODE_ANY);
	json_array_foreach(keys, i, k) {
		const char *kn = json_string_value(k);
		const json_t *prop = kn ? json_object_get(json_object_get(items, "properties"), kn) : NULL;
		bool dup = false;
		for (size_t j = 0; j < i; j++)
			dup = dup || json_equal(json_array_get(keys, j), k);
		if (!prop || dup) {
			snprintf(m, sizeof m, "Invalid value: %.180s: %s", klist ? klist : "[]",
				 dup ? "must not contain duplicate entries" : "entries must all be names of item properties");
			add_at(e, p, "x-kubernetes-list-map-keys", INV, m);
		}
		if (!prop)
			continue;
		char key[200];
		const char *pty = json_string_value(json_object_get(prop, "type"));
		if (pty && (!strcmp(pty, "array") || !strcmp(pty, "object"))) {
			snprintf(key, sizeof key, "items.properties[%.100s].type", kn);
			add_at(e, p, key, INV, "Invalid value: \"object\": must be a scalar type if parent array's "
			       "x-kubernetes-list-type is map");
		}
		bool required = false;
		size_t j;
		json_t *r;
		json_array_foreach(json_object_get(items, "required"), j, r)
			required = required || (json_is_string(r) && !strcmp(json_string_value(r), kn));
		if (mapset && !required && !json_object_get(prop, "default")) {
			o->seen |= R_MAPSET;
			snprintf(key, sizeof key, "items.properties[%.100s].default", kn);
			add_at(e, p, key, REQ, "Required value: this property is in x-kubernetes-list-map-keys, so it must "
			       "have a default or be a required property");
		}
		if (mapset && flag(prop, "nullable")) {
			o->seen |= R_MAPSET;
			snprintf(key, sizeof key, "items.properties[%.100s].nullable", kn);
			add_at(e, p, key, FORB, "Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be "
			       "nullable");
		}
	}
	free(klist);
}

/* A set's items as kube-apiserver's structural check wants them: an array
 * item atomic (the default), an object item x-kubernetes-map-type atomic. */
static void check_set_items(const json_t *s, path_t *p, sopts_t *o, mu__verr_t *e)
{
	if (o->relax & R_SET)
		return;
	const char *lt = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
	const char *ty = json_string_value(json_object_get(s, "type"));
	const json_t *items = json_object_get(s, "items");
	if (!lt || strcmp(lt, "set") || !ty || strcmp(ty, "array") || !json_is_object(items))
		return;
	const char *ity = json_string_value(json_object_get(items, "type"));
	const char *ilt = json_string_value(json_object_get(items, "x-kubernetes-list-type"));
	const char *imt = json_string_value(json_object_get(items, "x-kubernetes-map-type"));
	char m[200];
	/* kube prints the item's x-kubernetes-list-type in both messages */
	snprintf(m, sizeof m, "Invalid value: \"%.60s\": must be atomic as item of a list with x-kubernetes-list-type=set",
		 ilt ? ilt : "null");
	if (ity && !strcmp(ity, "array") && ilt && strcmp(ilt, "atomic"))
		add_at(e, p, "items.x-kubernetes-list-type", INV, m);
	else if (ity && !strcmp(ity, "object") && (!imt || strcmp(imt, "atomic")))
		add_at(e, p, "items.x-kubernetes-map-type", INV, m);
	else
		return;
	o->seen |= R_SET;
}

/* A default as kube-apiserver's CRD validation checks it: pruned against
 * its own schema node it must not change ("must not have unknown fields"),
 * and it must validate against that node (the object messages, at the path
 * of the default), then, when it does, against the node's CEL rules, run
 * with the default as both self and oldSelf, as kube's ValidateDefaults
 * runs them.  Bounded by the size of the default. */
static void check_default(const json_t *s, path_t *p, int depth, sopts_t *o, mu__verr_t *e)
{
	const json_t *d = json_object_get(s, "default");
	if (!d)
		return;
	size_t was = push_key(p, "default");
	json_t *cp = json_deep_copy(d);
	mu__unknown_t u = {0};
	prune_ctx_t pc = {true, true, &u};
	path_t q = {"", 0, false};
	if (cp)
		prune_value(&pc, cp, s, &q, depth, flag(s, "x-kubernetes-embedded-resource"));
	if (cp && !json_equal(cp, d) && !(o->relax & R_PRUNED)) {
		char *text = json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY);
		mu__verr_add(e, p->b, INV, "Invalid value: %.200s: must not have unknown fields", text ? text : "");
		free(text);
		o->seen |= R_PRUNED;
	} else if (cp) {
		int before = e->n;
		p->no_cel = true;
		check(d, NULL, s, p, depth, flag(s, "x-kubernetes-embedded-resource"), e);
		p->no_cel = false;
		if (e->n == before)
			cel_walk(d, d, s, p, depth, false, e);
	}
	json_decref(cp);
	pop(p, was);
}

static void schema_walk(const json_t *s, path_t *p, int depth, bool typed, sopts_t *o, mu__verr_t *e)
{
	if (depth > MU__MAX_DEPTH || e->n >= MU__VERR_MAX)
		return;
	if (!json_is_object(s)) {
		mu__verr_add(e, p->b, INV, "Invalid value: must be a schema object");
		return;
	}
	static const char *const forbidden[] = {"$ref", "$schema", "definitions", "dependencies", "id",
						"patternProperties", "additionalItems"};
	for (size_t i = 0; i < sizeof forbidden / sizeof *forbidden; i++)
		if (json_object_get(s, forbidden[i])) {
			size_t was = push_key(p, forbidden[i]);
			mu__verr_add(e, p->b, FORB, "Forbidden: %s is not supported", forbidden[i]);
			pop(p, was);
		}
	if (flag(s, "uniqueItems")) {
		size_t was = push_key(p, "uniqueItems");
		mu__verr_add(e, p->b, FORB, "Forbidden: uniqueItems cannot be set to true since the runtime "
			     "complexity becomes quadratic");
		pop(p, was);
	}
	const json_t *ty = json_object_get(s, "type");
	bool ios = flag(s, "x-kubernetes-int-or-string"), pres = flag(s, "x-kubernetes-preserve-unknown-fields");
	if (ty && !json_is_string(ty)) {
		size_t was = push_key(p, "type");
		mu__verr_add(e, p->b, INV, "Invalid value: must be a string");
		pop(p, was);
	}
	if (typed && !ios && !pres && (!json_is_string(ty) || !*json_string_value(ty))) {
		size_t was = push_key(p, "type");
		mu__verr_add(e, p->b, REQ, "Required value: must not be empty for specified object fields");
		pop(p, was);
	}
	mu__crd_cel_schema(s, p->b, e, NULL, 0);
	check_list_map_types(s, p, o, e);
	check_set_items(s, p, o, e);
	check_default(s, p, depth, o, e);
	if (json_object_get(s, "properties") && json_is_object(json_object_get(s, "additionalProperties")))
		mu__verr_add(e, p->b, FORB, "Forbidden: additionalProperties and properties are mutual exclusive");
	const char *k;
	json_t *sub;
	json_object_foreach(json_object_get(s, "properties"), k, sub) {
		size_t was = push_key(p, "properties"), w2 = p->n;
		(void)w2;
		char key[300];
		snprintf(key, sizeof key, "[%.280s]", k);
		size_t l = strlen(p->b);
		snprintf(p->b + l, sizeof p->b - l, "%s", key);
		p->n = strlen(p->b);
		schema_walk(sub, p, depth + 1, typed, o, e);
		pop(p, was);
	}
	static const char *const one[] = {"items", "additionalProperties", "not"};
	for (size_t i = 0; i < 3; i++) {
		sub = json_object_get(s, one[i]);
		if (json_is_object(sub)) {
			size_t was = push_key(p, one[i]);
			schema_walk(sub, p, depth + 1, typed && i < 2, o, e);
			pop(p, was);
		}
	}
	static const char *const many[] = {"allOf", "anyOf", "oneOf"};
	for (size_t i = 0; i < 3; i++) {
		size_t j;
		json_array_foreach(json_object_get(s, many[i]), j, sub) {
			size_t was = push_key(p, many[i]);
			push_idx(p, j);
			schema_walk(sub, p, depth + 1, false, o, e);
			pop(p, was);
		}
	}
}

/* Checks schema (at path) with options o: mu__crd_check_schema. */
static void check_schema(const json_t *schema, const char *path, sopts_t *o, mu__verr_t *e)
{
	path_t p = {"", 0, false};
	snprintf(p.b, sizeof p.b, "%s", path);
	p.n = strlen(p.b);
	schema_walk(schema, &p, 0, true, o, e);
	const char *ty = json_string_value(json_object_get(schema, "type"));
	if (json_is_object(schema) && (!ty || strcmp(ty, "object"))) {
		size_t was = push_key(&p, "type");
		mu__verr_add(e, p.b, INV, "Invalid value: \"%s\": must be object at the root", ty ? ty : "");
		pop(&p, was);
	}
}

void mu__crd_check_schema(const json_t *schema, const char *path, mu__verr_t *e)
{
	sopts_t o = {0, 0};
	check_schema(schema, path, &o, e);
}

/* Which of the R_* checks the CRD old (before an update; NULL on a
 * create) breaks: an update need not meet those, as kube's
 * ValidateCustomResourceDefinitionUpdate takes its options from the old
 * spec.  Work: a walk of old's schemas. */
static unsigned old_breaks(const json_t *old)
{
	sopts_t o = {0, 0};
	mu__verr_t *scratch = old ? calloc(1, sizeof *scratch) : NULL;
	size_t i;
	json_t *v;
	json_array_foreach(scratch ? mu__jget(old, "spec.versions") : NULL, i, v) {
		const json_t *sc = mu__jget(v, "schema.openAPIV3Schema");
		scratch->n = 0; /* the causes are not wanted, only o.seen */
		if (sc)
			check_schema(sc, "", &o, scratch);
	}
	free(scratch);
	return o.seen;
}

/* --- the CRD itself ----------------------------------------------------- */

static void check_names(const json_t *names, mu__verr_t *e)
{
	static const char *const label[] = {"plural", "singular"};
	for (size_t i = 0; i < 2; i++) {
		const char *v = json_string_value(json_object_get(names, label[i]));
		char f[64];
		snprintf(f, sizeof f, "spec.names.%s", label[i]);
		if (!v || !*v) {
			if (!i)
				mu__verr_add(e, f, REQ, "Required value");
		} else if (!mu__valid_dns_label(v)) {
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": a lowercase RFC 1123 label must consist of "
				     "lower case alphanumeric characters or '-', and must start and end with an "
				     "alphanumeric character", v);
		}
	}
	const char *kind = json_string_value(json_object_get(names, "kind"));
	if (!kind || !*kind)
		mu__verr_add(e, "spec.names.kind", REQ, "Required value");
	const char *lk = json_string_value(json_object_get(names, "listKind"));
	if (lk && kind && !strcmp(lk, kind))
		mu__verr_add(e, "spec.names.listKind", INV, "Invalid value: \"%.100s\": kind and listKind may not "
			     "be the same", lk);
}

/* A scale path of version i (kind: "specReplicasPath", ...) as
 * kube-apiserver's CRD validation checks it: starting with "." and under
 * one of the prefixes. */
static void check_scale_path(const json_t *scale, size_t i, const char *kind, const char *const *prefixes,
			     const char *under, mu__verr_t *e)
{
	char f[160];
	snprintf(f, sizeof f, "spec.versions[%zu].subresources.scale.%s", i, kind);
	const json_t *pv = json_object_get(scale, kind);
	const char *path = json_string_value(pv);
	if (!path || !*path) {
		if (strcmp(kind, "labelSelectorPath"))
			mu__verr_add(e, f, REQ, "Required value");
		return;
	}
	if (path[0] != '.') {
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be a simple json path starting with .", path);
		return;
	}
	for (const char *const *p = prefixes; *p; p++)
		if (!strncmp(path, *p, strlen(*p)))
			return;
	mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": should be a json path under %s", path, under);
}

static void check_subresources(const json_t *v, size_t i, mu__verr_t *e)
{
	const json_t *scale = mu__jget(v, "subresources.scale");
	if (!scale)
		return;
	static const char *const spec[] = {".spec.", NULL}, *const status[] = {".status.", NULL},
				 *const either[] = {".spec.", ".status.", NULL};
	check_scale_path(scale, i, "specReplicasPath", spec, ".spec", e);
	check_scale_path(scale, i, "statusReplicasPath", status, ".status", e);
	check_scale_path(scale, i, "labelSelectorPath", either, "either .spec or .status", e);
}

static void check_versions(const json_t *vers, unsigned relax, mu__verr_t *e)
{
	size_t i, j;
	json_t *v, *w;
	int storage = 0;
	if (!json_array_size(vers))
		mu__verr_add(e, "spec.versions", INV, "Invalid value: null: must have exactly one version marked as "
			     "storage version");
	json_array_foreach(vers, i, v) {
		char f[160];
		const char *nm = json_string_value(json_object_get(v, "name"));
		snprintf(f, sizeof f, "spec.versions[%zu].name", i);
		if (!nm || !mu__valid_dns_label(nm))
			mu__verr_add(e, f, INV, "Invalid value: \"%.60s\": a DNS-1035 label must consist of lower case "
				     "alphanumeric characters or '-'", nm ? nm : "");
		json_array_foreach(vers, j, w)
			if (j < i && nm && json_string_value(json_object_get(w, "name")) &&
			    !strcmp(nm, json_string_value(json_object_get(w, "name"))))
				mu__verr_add(e, f, DUP, "Duplicate value: \"%.60s\"", nm);
		storage += json_is_true(json_object_get(v, "storage"));
		check_subresources(v, i, e);
		const json_t *sc = mu__jget(v, "schema.openAPIV3Schema");
		snprintf(f, sizeof f, "spec.versions[%zu].schema.openAPIV3Schema", i);
		if (!sc)
			mu__verr_add(e, f, REQ, "Required value: schemas are required");
		else {
			sopts_t o = {relax, 0};
			check_schema(sc, f, &o, e);
		}
	}
	if (json_array_size(vers) && storage != 1)
		mu__verr_add(e, "spec.versions", INV, "Invalid value: must have exactly one version marked as storage "
			     "version");
}

/* clientConfig.url as kube-apiserver's webhook URL check (forceHttps): an
 * https scheme, a host, no user information, fragment or query. */
static void check_webhook_url(const char *u, mu__verr_t *e)
{
	static const char *const f = "spec.conversion.webhook.clientConfig.url";
	static const char *const form = "; desired format: https://host[/path]";
	const char *sep = strstr(u, "://");
	size_t sl = sep ? (size_t)(sep - u) : 0;
	const char *auth = sep ? sep + 3 : u;
	size_t al = strcspn(auth, "/?#");
	const char *at = memchr(auth, '@', al);
	if (!sep || strncmp(u, "https", sl) || sl != 5)
		mu__verr_add(e, f, INV, "Invalid value: \"%.*s\": 'https' is the only allowed URL scheme%s",
			     (int)(sl < 60 ? sl : 60), u, form);
	if ((at ? al - (size_t)(at + 1 - auth) : al) == 0)
		mu__verr_add(e, f, INV, "Invalid value: \"\": host must be provided%s", form);
	if (at)
		mu__verr_add(e, f, INV, "Invalid value: \"%.*s\": user information is not permitted in the URL",
			     (int)((size_t)(at - auth) < 60 ? (size_t)(at - auth) : 60), auth);
	const char *hash = strchr(u, '#'), *q = strchr(u, '?');
	if (hash && hash[1])
		mu__verr_add(e, f, INV, "Invalid value: \"%.60s\": fragments are not permitted in the URL", hash + 1);
	if (q && (!hash || q < hash) && q[1] && q[1] != '#')
		mu__verr_add(e, f, INV, "Invalid value: \"%.*s\": query parameters are not permitted in the URL",
			     (int)(hash ? (hash - q - 1 < 60 ? hash - q - 1 : 60) : 60), q + 1);
}

/* spec.conversion as kube-apiserver checks it: strategy None (the
 * default) or Webhook, a webhook (with a url or a service and the
 * ConversionReview versions) exactly when the strategy is Webhook. */
/* clientConfig.service as kube's ValidateWebhookService checks it: a name
 * and a namespace, a port in 1..65535 (443 when absent), a path that
 * starts with '/' and whose segments are lowercase RFC 1123 subdomains.
 * muster up does not call a webhook through it (crd_webhook.c). */
static void check_webhook_service(const json_t *svc, mu__verr_t *e)
{
	static const char f[] = "spec.conversion.webhook.clientConfig.service";
	char at[100];
	const char *name = mu__jstr(svc, "name"), *ns = mu__jstr(svc, "namespace"), *path = mu__jstr(svc, "path");
	snprintf(at, sizeof at, "%s.name", f);
	if (!name || !*name)
		mu__verr_add(e, at, REQ, "Required value: service name is required");
	snprintf(at, sizeof at, "%s.namespace", f);
	if (!ns || !*ns)
		mu__verr_add(e, at, REQ, "Required value: service namespace is required");
	const json_t *port = json_object_get(svc, "port");
	snprintf(at, sizeof at, "%s.port", f);
	if (port && (!json_is_integer(port) || json_integer_value(port) < 1 || json_integer_value(port) > 65535))
		mu__verr_add(e, at, INV, "Invalid value: %lld: port is not valid: must be between 1 and 65535, inclusive",
			     (long long)json_integer_value(port));
	if (!path || !*path || !strcmp(path, "/"))
		return;
	snprintf(at, sizeof at, "%s.path", f);
	if (path[0] != '/') {
		mu__verr_add(e, at, INV, "Invalid value: \"%.200s\": must start with a '/'", path);
		return;
	}
	char seg[254];
	size_t n = strlen(path + 1), i = 0;
	if (n && path[n] == '/')
		n--; /* one trailing '/' is allowed */
	for (const char *p = path + 1; p <= path + 1 + n && e->n < MU__VERR_MAX; i++) {
		size_t l = strcspn(p, "/");
		if (p + l > path + 1 + n)
			l = (size_t)(path + 1 + n - p);
		snprintf(seg, sizeof seg, "%.*s", (int)(l < 253 ? l : 253), p);
		if (!l)
			mu__verr_add(e, at, INV, "Invalid value: \"%.200s\": segment[%zu] may not be empty", path, i);
		else if (l > 253 || !mu__valid_dns_subdomain(seg))
			mu__verr_add(e, at, INV, "Invalid value: \"%.200s\": segment[%zu]: a lowercase RFC 1123 subdomain "
				     "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
				     "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
				     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", path, i);
		p += l + 1;
	}
}

static void check_conversion(const json_t *conv, mu__verr_t *e)
{
	if (!conv)
		return;
	const char *st = mu__jstr(conv, "strategy");
	const json_t *wh = json_object_get(conv, "webhook");
	if (!st || (strcmp(st, "None") && strcmp(st, "Webhook"))) {
		mu__verr_add(e, "spec.conversion.strategy", UNS,
			     "Unsupported value: \"%.60s\": supported values: \"None\", \"Webhook\"", st ? st : "");
		return;
	}
	if (!strcmp(st, "None")) {
		if (wh && !json_is_null(wh))
			mu__verr_add(e, "spec.conversion.webhook", FORB,
				     "Forbidden: should not be set when strategy is not set to Webhook");
		return;
	}
	if (!json_is_object(wh)) {
		mu__verr_add(e, "spec.conversion.webhook", REQ, "Required value: required when strategy is set to Webhook");
		return;
	}
	const json_t *cc = json_object_get(wh, "clientConfig");
	bool url = mu__jstr(cc, "url") != NULL, svc = json_is_object(json_object_get(cc, "service"));
	if (!cc)
		mu__verr_add(e, "spec.conversion.webhook.clientConfig", REQ,
			     "Required value: required when strategy is set to Webhook");
	else if (url == svc)
		mu__verr_add(e, "spec.conversion.webhook.clientConfig", REQ,
			     "Required value: exactly one of url or service is required");
	if (url)
		check_webhook_url(mu__jstr(cc, "url"), e);
	else if (svc)
		check_webhook_service(json_object_get(cc, "service"), e);
	bool known = false;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(wh, "conversionReviewVersions"), i, v)
		known = known || (json_is_string(v) && (!strcmp(json_string_value(v), "v1") ||
							!strcmp(json_string_value(v), "v1beta1")));
	if (!known)
		mu__verr_add(e, "spec.conversion.webhook.conversionReviewVersions", REQ,
			     "Required value: must include at least one of v1, v1beta1");
}

/* status.storedVersions as kube-apiserver's
 * ValidateCustomResourceDefinitionStoredVersions checks it: not empty, with
 * the storage version, and each in spec.versions.  On a spec update they
 * are the stored ones and the storage version (mu__crd_status); through
 * the status subresource they are what the writer sent, so a storage
 * migration can trim them. */
static void check_stored_versions(const json_t *obj, mu__verr_t *e)
{
	size_t i, j;
	json_t *sv, *v;
	const json_t *stored = mu__jget(obj, "status.storedVersions");
	char *text = json_dumps(stored ? stored : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
	if (!json_array_size(stored)) {
		mu__verr_add(e, "status.storedVersions", INV, "Invalid value: %.200s: must have at least one stored "
			     "version", text ? text : "null");
		free(text);
		return;
	}
	json_array_foreach(mu__jget(obj, "spec.versions"), j, v) {
		bool have = false;
		json_array_foreach(stored, i, sv)
			have = have || json_equal(json_object_get(v, "name"), sv);
		if (json_is_true(json_object_get(v, "storage")) && !have)
			mu__verr_add(e, "status.storedVersions", INV, "Invalid value: %.200s: must have the storage "
				     "version %.60s", text ? text : "", mu__jstr(v, "name") ? mu__jstr(v, "name") : "");
	}
	free(text);
	json_array_foreach(stored, i, sv) {
		bool have = false;
		json_array_foreach(mu__jget(obj, "spec.versions"), j, v)
			have = have || json_equal(json_object_get(v, "name"), sv);
		if (!have) {
			char f[64];
			snprintf(f, sizeof f, "status.storedVersions[%zu]", i);
			mu__verr_add(e, f, INV, "Invalid value: \"%.60s\": must appear in spec.versions",
				     json_string_value(sv) ? json_string_value(sv) : "");
		}
	}
}

void mu__validate_crd(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	const json_t *spec = json_object_get(obj, "spec");
	const char *g = json_string_value(json_object_get(spec, "group"));
	const char *plural = mu__jstr(spec, "names.plural");
	const char *name = mu__jstr(obj, "metadata.name");
	if (!g || !*g)
		mu__verr_add(e, "spec.group", REQ, "Required value");
	else if (!mu__valid_dns_subdomain(g) || !strchr(g, '.'))
		mu__verr_add(e, "spec.group", INV, "Invalid value: \"%.100s\": should be a domain with at least one dot",
			     g);
	check_names(json_object_get(spec, "names"), e);
	char want[600];
	snprintf(want, sizeof want, "%s.%s", plural ? plural : "", g ? g : "");
	if (name && plural && g && strcmp(name, want))
		mu__verr_add(e, "metadata.name", INV, "Invalid value: \"%.100s\": must be spec.names.plural+\".\"+spec.group",
			     name);
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	if (!scope || (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster")))
		mu__verr_add(e, "spec.scope", UNS, "Unsupported value: \"%.60s\": supported values: \"Cluster\", "
			     "\"Namespaced\"", scope ? scope : "");
	if (json_array_size(json_object_get(spec, "versions")) > MU__CRD_VERSIONS)
		mu__verr_add(e, "spec.versions", MANY, "Too many: muster up serves at most %d versions of a CRD",
			     MU__CRD_VERSIONS);
	check_versions(json_object_get(spec, "versions"), old_breaks(old), e);
	check_conversion(json_object_get(spec, "conversion"), e);
	if (json_object_get(obj, "status"))
		check_stored_versions(obj, e);
	if (old) {
		const json_t *os = json_object_get(old, "spec");
		if (!json_equal(json_object_get(os, "scope"), json_object_get(spec, "scope")))
			mu__verr_add(e, "spec.scope", INV, "Invalid value: \"%.60s\": field is immutable",
				     scope ? scope : "");
		if (!json_equal(mu__jget(os, "names.kind"), mu__jget(spec, "names.kind")))
			mu__verr_add(e, "spec.names.kind", INV, "Invalid value: field is immutable in muster up");
	}
}

void mu__crd_status(json_t *obj, const json_t *old, bool status_sub)
{
	json_t *st = json_object();
	json_t *stored = json_array();
	size_t i;
	json_t *v;
	/* a write to /status sets storedVersions (a storage migration trims
	 * them; mu__validate_crd checks them); any other write keeps them */
	const json_t *given = mu__jget(obj, "status.storedVersions");
	if (status_sub && json_is_array(given))
		json_array_extend(stored, (json_t *)given);
	else if (!status_sub)
		json_array_foreach(mu__jget(old, "status.storedVersions"), i, v)
			json_array_append(stored, v);
	json_array_foreach(mu__jget(obj, "spec.versions"), i, v) {
		if (status_sub || !json_is_true(json_object_get(v, "storage")))
			continue;
		bool have = false;
		size_t j;
		json_t *w;
		json_array_foreach(stored, j, w)
			have = have || json_equal(w, json_object_get(v, "name"));
		if (!have)
			json_array_append(stored, json_object_get(v, "name"));
	}
	json_t *names = json_deep_copy(mu__jget(obj, "spec.names"));
	if (names && !json_object_get(names, "singular") && json_string_value(json_object_get(names, "kind"))) {
		char lower[256];
		snprintf(lower, sizeof lower, "%s", json_string_value(json_object_get(names, "kind")));
		for (char *q = lower; *q; q++)
			if (*q >= 'A' && *q <= 'Z')
				*q = (char)(*q - 'A' + 'a');
		json_object_set_new(names, "singular", json_string(lower));
	}
	if (names && !json_object_get(names, "listKind") && json_string_value(json_object_get(names, "kind")))
		json_object_set_new(names, "listKind",
				    json_sprintf("%sList", json_string_value(json_object_get(names, "kind"))));
	json_object_set_new(st, "acceptedNames", names ? names : json_object());
	json_object_set_new(st, "storedVersions", stored);
	json_object_set_new(obj, "status", st);
	/* the conditions keep their transition time from the stored version */
	const char *since = NULL;
	size_t j;
	json_t *c;
	json_array_foreach(mu__jget(old, "status.conditions"), j, c)
		if (json_string_value(json_object_get(c, "lastTransitionTime")))
			since = json_string_value(json_object_get(c, "lastTransitionTime"));
	char ts[40];
	if (!since) {
		mu__rfc3339_format(mu__now_s() * 1000000, false, ts, sizeof ts);
		since = ts;
	}
	json_object_set_new(st, "conditions",
			    json_pack("[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}]", "type", "NamesAccepted",
				      "status", "True", "lastTransitionTime", since, "reason", "NoConflicts", "message",
				      "no conflicts found", "type", "Established", "status", "True",
				      "lastTransitionTime", since, "reason", "InitialNamesAccepted", "message",
				      "the initial names have been accepted"));
}

/* --- tables ------------------------------------------------------------- */

/* The value at a simple JSONPath (".a.b", ".a[0].b") of obj, or NULL. */
static const json_t *jsonpath(const json_t *obj, const char *jp)
{
	const json_t *v = obj;
	const char *q = jp;
	while (v && *q) {
		if (*q == '.') {
			q++;
			char key[128];
			size_t n = strcspn(q, ".[");
			if (n >= sizeof key)
				return NULL;
			memcpy(key, q, n);
			key[n] = '\0';
			v = json_object_get(v, key);
			q += n;
		} else if (*q == '[') {
			char *end;
			long i = strtol(q + 1, &end, 10);
			if (*end != ']' || i < 0)
				return NULL;
			v = json_array_get(v, (size_t)i);
			q = end + 1;
		} else {
			return NULL;
		}
	}
	return v;
}

void mu__crd_row(const mu__crdtype_t *c, const json_t *obj, int64_t now, json_t *cells)
{
	for (int i = 0; i < c->t.ncols; i++) {
		const char *jp = c->colpath[i];
		if (i == 0) {
			const char *nm = mu__jstr(obj, "metadata.name");
			json_array_append_new(cells, json_string(nm ? nm : ""));
			continue;
		}
		const json_t *v = jp ? jsonpath(obj, jp) : json_object_get(json_object_get(obj, "metadata"),
									   "creationTimestamp");
		if (!jp || !strcmp(jp, ".metadata.creationTimestamp") || !strcmp(c->t.cols[i].type, "date")) {
			char buf[32] = "<unknown>";
			int64_t t = mu__parse_rfc3339(json_string_value(v));
			if (t >= 0)
				mu__age(now - t, buf, sizeof buf);
			json_array_append_new(cells, json_string(json_is_string(v) ? buf : "<unknown>"));
		} else if (v && !json_is_object(v) && !json_is_array(v)) {
			json_array_append_new(cells, json_deep_copy(v));
		} else if (v) {
			char *t = json_dumps(v, JSON_COMPACT);
			json_array_append_new(cells, json_string(t ? t : ""));
			free(t);
		} else {
			json_array_append_new(cells, json_null());
		}
	}
	(void)now;
}
