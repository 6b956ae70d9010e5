/*
 * ssa.c - field ownership (metadata.managedFields) and server-side apply,
 * as kube-apiserver's field manager (k8s.io/apiserver/pkg/endpoints/
 * handlers/fieldmanager over sigs.k8s.io/structured-merge-diff) does them.
 *
 * A field set is kept in the FieldsV1 form it is served in: a JSON object
 * whose keys are path elements ("f:<field>", "k:<merge key as JSON>" for an
 * element of a keyed list, "v:<value as JSON>" for an element of a set
 * list, "." for the container itself) and whose values are the sub-sets; a
 * node without children (other than ".") is a leaf.  Which lists are keyed
 * comes from the strategic merge keys (patch.c: containers by name, ...),
 * which maps get "." from the kind's schema (schema.h); custom objects have
 * no schema here, so their lists are atomic and their maps carry no ".".
 *
 * Every write records ownership: a create owns every field of the stored
 * object (after defaulting, as kube decodes with defaults), an update or a
 * patch (operation Update) takes the fields whose values it changed away
 * from the other managers, and fields that disappear leave every set.  An
 * apply (operation Apply) owns exactly the fields of the applied
 * configuration: a field another manager owns with a different value is a
 * conflict (409 with one FieldManagerConflict cause per field) unless
 * forced, when the field changes owner; a field the manager applied before
 * and no longer applies is removed from the object unless another manager
 * owns it.  muster up's own controllers record their writes under the
 * names of the kube components that make them (mu__mgr_controller): the
 * simulated kubelets as "kubelet" (pod and node status through the status
 * subresource, node and lease creation), the Job, claim and node
 * lifecycle work as "kube-controller-manager".  A write that sets
 * managedFields to a non-empty list replaces them ([{}] clears them); an
 * empty list keeps them, as kube's field manager does.
 *
 * The simulated kubelets' status writes go through a memo of records by
 * the write's shape (mu__mf_memo_record, at the end), which answers as the
 * full record does.
 *
 * Ownership: every function borrows its inputs; results are new JSON
 * values the caller owns.  Work is bounded by the size of the objects and
 * sets; recursion by their nesting (MU__MAX_DEPTH).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/ssa.h"
#include "apiserver/api_int.h"
#include "apiserver/schema.h"

#define MAX_DEPTH (MU__MAX_DEPTH + 4)
#define MAX_MANAGERS 64
/* Lists longer than this get a key index (keyidx_t) when their elements
 * are looked up by key one after another. */
#ifndef IDX_MIN
#define IDX_MIN 8
#endif

/* --- building field sets ------------------------------------------------ */

/* A deep copy (mu__json_copy, patch.c: json_deep_copy without its guard
 * against cycles); NULL for NULL. */
static json_t *copy(const json_t *v)
{
	return v ? mu__json_copy(v) : NULL;
}

/* The schema field `name` of model, or NULL. */
static const mu__sfield_t *sfield(int model, const char *name)
{
	if (model < 0 || model >= mu__nsmodels)
		return NULL;
	const mu__smodel_t *m = &mu__smodels[model];
	for (int i = 0; i < m->n; i++)
		if (!strcmp(mu__sfields[m->first + i].name, name))
			return &mu__sfields[m->first + i];
	return NULL;
}

static json_t *fs_obj(const json_t *v, int model, bool is_map, int depth);

/* Sets key pre+text (pre is "f:", "k:" or "v:") of set n to sub (stolen).
 * The key is built on the stack unless long, and set without jansson's
 * UTF-8 check: text is an object key or JSON text jansson made, both
 * valid UTF-8 (one call per field of every set built). */
static void put(json_t *n, const char *pre, const char *text, json_t *sub)
{
	size_t l = strlen(text);
	char buf[256];
	char *k = l + 3 <= sizeof buf ? buf : malloc(l + 3);
	if (!k) {
		json_decref(sub);
		return;
	}
	memcpy(k, pre, 2);
	memcpy(k + 2, text, l + 1);
	json_object_set_new_nocheck(n, k, sub);
	if (k != buf)
		free(k);
}

/* The second key of a list keyed by mk with its default: a container's
 * ports are keyed by (containerPort, protocol) (the list-map keys of
 * kube's OpenAPI, protocol defaulting to TCP as its schema says), where
 * strategic merge keys them by containerPort alone.  NULL: one key. */
static const char *second_key(const char *mk, const char **dflt)
{
	*dflt = "TCP";
	return !strcmp(mk, "containerPort") ? "protocol" : NULL;
}

/* Whether key field f with value fv is the default an element that leaves
 * f out has. */
static bool key_default(const char *f, const json_t *fv)
{
	const char *dflt;
	second_key("containerPort", &dflt);
	return !strcmp(f, "protocol") && json_is_string(fv) && !strcmp(json_string_value(fv), dflt);
}

/* Whether jansson writes the n bytes of s into JSON text as they are
 * (no quote, backslash or control character to escape). */
static bool plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
			return false;
	return true;
}

/* The key of a keyed-list element: "{\"name\":\"c\"}" (malloc'd), or
 * NULL when the element lacks its key. */
static char *elem_key(const json_t *e, const char *mk)
{
	const json_t *kv = json_object_get(e, mk);
	if (!kv || json_is_object(kv) || json_is_array(kv))
		return NULL;
	const char *dflt0;
	size_t ml = strlen(mk), vl = json_string_length(kv);
	if (json_is_string(kv) && !second_key(mk, &dflt0) && plain(mk, ml) && plain(json_string_value(kv), vl)) {
		/* one plain string: the text json_dumps makes below, printed
		 * directly (conditions, containers and their statuses) */
		char *s = malloc(ml + vl + 8);
		if (s)
			snprintf(s, ml + vl + 8, "{\"%s\":\"%s\"}", mk, json_string_value(kv));
		return s;
	}
	json_t *o = json_object();
	json_object_set(o, mk, (json_t *)kv);
	const char *dflt, *k2 = second_key(mk, &dflt);
	if (k2) {
		const json_t *v2 = json_object_get(e, k2);
		if (v2 && !json_is_string(v2)) {
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, k2, v2 ? json_incref((json_t *)v2) : json_string(dflt));
	}
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

/* The set of field `name` whose value is v (schema shape and model of the
 * field given). */
static json_t *fs_val(const char *name, const json_t *v, int shape, int model, int depth)
{
	if (depth > MAX_DEPTH)
		return json_object();
	if (json_is_object(v))
		return fs_obj(v, model, shape == MU__SS_MAP, depth + 1);
	const char *mk = name ? mu__merge_key(name) : NULL;
	bool set = name && !strcmp(name, "finalizers");
	if (!json_is_array(v) || (!mk && !set) || json_array_size(v) == 0)
		return json_object();
	json_t *n = json_object();
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e) {
		char *k = mk ? elem_key(e, mk) : json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!k) { /* not keyed after all: the list is atomic */
			json_object_clear(n);
			return n;
		}
		json_t *sub = mk ? fs_obj(e, model, false, depth + 1) : json_object();
		if (mk)
			json_object_set_new(sub, ".", json_object());
		put(n, mk ? "k:" : "v:", k, sub);
		free(k);
	}
	return n;
}

/* The set of object v: of a map (is_map: "." and its entries, whose
 * model is model) or of a struct (model: its schema, or -1). */
static json_t *fs_obj(const json_t *v, int model, bool is_map, int depth)
{
	json_t *n = json_object();
	if (depth > MAX_DEPTH || json_object_size(v) == 0)
		return n;
	if (is_map)
		json_object_set_new(n, ".", json_object());
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)v, k, x) {
		int shape = MU__SS_SCALAR, m = -1;
		if (is_map) {
			m = model;
		} else {
			const mu__sfield_t *f = sfield(model, k);
			if (f)
				shape = f->shape, m = f->model;
		}
		put(n, "f:", k, fs_val(is_map ? NULL : k, x, shape, m, depth));
	}
	return n;
}

/* A view of obj without what no manager owns: apiVersion, kind, the
 * server's metadata, and status (main resource of a kind with a status
 * subresource) or all but status (the status subresource).  Shallow: it
 * shares obj's values, and is only read. */
static json_t *tracked(const json_t *obj, const mu__mgr_t *m)
{
	json_t *c = json_is_object(obj) ? json_copy((json_t *)obj) : json_object();
	if (!c)
		return NULL;
	if (m->status_sub && !m->status_meta) {
		json_t *st = json_incref(json_object_get(c, "status"));
		json_object_clear(c);
		if (st)
			json_object_set_new(c, "status", st);
		return c;
	}
	json_object_del(c, "apiVersion");
	json_object_del(c, "kind");
	if (m->status_meta)
		json_object_del(c, "spec");
	else if (m->reset_status)
		json_object_del(c, "status");
	json_t *md = json_object_get(c, "metadata");
	if (!json_is_object(md))
		return c;
	md = json_copy(md);
	static const char *const drop[] = {"name", "namespace", "uid", "resourceVersion", "generation",
					   "creationTimestamp", "managedFields", "selfLink",
					   "deletionTimestamp", "deletionGracePeriodSeconds"};
	for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
		json_object_del(md, drop[i]);
	if (!md || json_object_size(md) == 0) {
		json_decref(md);
		json_object_del(c, "metadata");
	} else {
		json_object_set_new(c, "metadata", md);
	}
	return c;
}

json_t *mu__fieldset(const json_t *obj, const mu__mgr_t *m)
{
	json_t *c = tracked(obj, m);
	json_t *s = c ? fs_obj(c, m->model, false, 0) : json_object();
	json_decref(c);
	return s;
}

/* --- walking objects along sets ----------------------------------------- */

static bool is_leaf(const json_t *n)
{
	size_t sz = json_object_size(n);
	return sz == 0 || (sz == 1 && json_object_get(n, "."));
}

/* The index in array a of the element path element key names, or -1. */
static long elem_index(const json_t *a, const char *key)
{
	if (!json_is_array(a) || (key[0] != 'k' && key[0] != 'v') || key[1] != ':')
		return -1;
	/* k:{"F":"V"} with plain F and V (as elem_key prints them): compared
	 * without parsing the key; F is not a key field with a default */
	const char *f0 = key + 4, *q1 = key[0] == 'k' && !strncmp(key + 2, "{\"", 2) ? strchr(f0, '"') : NULL;
	if (q1 && !strncmp(q1, "\":\"", 3)) {
		const char *v0 = q1 + 3, *q2 = strchr(v0, '"');
		size_t fl = (size_t)(q1 - f0), vl = q2 ? (size_t)(q2 - v0) : 0;
		char f[64];
		if (q2 && !strcmp(q2, "\"}") && fl < sizeof f && plain(f0, fl) && plain(v0, vl)) {
			memcpy(f, f0, fl);
			f[fl] = '\0';
			if (strcmp(f, "protocol")) {
				size_t i;
				json_t *e;
				json_array_foreach(a, i, e) {
					const json_t *have = json_object_get(e, f);
					if (json_is_string(have) && json_string_length(have) == vl &&
					    !memcmp(json_string_value(have), v0, vl))
						return (long)i;
				}
				return -1;
			}
		}
	}
	json_t *want = json_loads(key + 2, JSON_DECODE_ANY, NULL);
	if (!want)
		return -1;
	long at = -1;
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) {
		bool match;
		if (key[0] == 'v') {
			match = json_equal(e, want);
		} else {
			const char *f;
			json_t *fv;
			match = json_is_object(e) && json_is_object(want);
			json_object_foreach(want, f, fv) {
				const json_t *have = json_object_get(e, f);
				/* a key field left out has its default */
				if (!have && key_default(f, fv))
					continue;
				match = match && json_equal(have, fv);
			}
		}
		if (match) {
			at = (long)i;
			break;
		}
	}
	json_decref(want);
	return at;
}

/* --- key indexes of long lists ------------------------------------------ */

/* A key index of one list: the path element ("k:{...}" or "v:...", as
 * fs_val prints it) of each element to its position (the first element
 * with that key), so that the loops below, which look the elements of a
 * set up one after another, do not scan the list for each (structured-
 * merge-diff keeps such a map per list as well).  A key the index lacks
 * is looked up by elem_index when it is not printed as fs_val prints keys
 * (a client's managedFields may be), so answers are those of elem_index. */
typedef struct keyidx {
	const json_t *arr;
	json_t *pos; /* {path element: position}, or NULL: no index */
	char prefix[80]; /* how its "k:" elements begin: k:{"name": */
} keyidx_t;

/* The merge key of the list whose element path element is key: the
 * field a "k:" key names (containerPort of a port's pair), "" for a set
 * list's "v:", NULL when there is none to index by. */
static char *key_field(const char *key)
{
	if (key[0] == 'v' && key[1] == ':')
		return strdup("");
	if (key[0] != 'k' || key[1] != ':')
		return NULL;
	json_t *o = json_loads(key + 2, 0, NULL);
	char *f = NULL;
	if (json_is_object(o) && json_object_get(o, "containerPort"))
		f = strdup("containerPort");
	else if (json_is_object(o) && json_object_size(o) == 1)
		f = strdup(json_object_iter_key(json_object_iter(o)));
	json_decref(o);
	return f;
}

/* Builds the index of list a when it is long and the set node s (whose
 * children are a's path elements) names its elements.  Bounded by a's
 * size (one key printed per element). */
static void idx_build(keyidx_t *x, const json_t *a, const json_t *s)
{
	x->arr = a;
	x->pos = NULL;
	x->prefix[0] = '\0';
	if (!json_is_array(a) || json_array_size(a) <= IDX_MIN || !json_is_object(s))
		return;
	const char *k;
	json_t *v;
	char *mk = NULL;
	json_object_foreach((json_t *)s, k, v)
		if (strcmp(k, ".") && (mk = key_field(k)) != NULL)
			break;
	if (!mk)
		return;
	if (*mk && strlen(mk) > 60) {
		free(mk);
		return;
	}
	if (*mk)
		snprintf(x->prefix, sizeof x->prefix, "k:{\"%s\":", mk);
	x->pos = json_object();
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) {
		char *t = *mk ? elem_key(e, mk) : json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!t)
			continue;
		char *pk = malloc(strlen(t) + 3);
		if (pk) {
			snprintf(pk, strlen(t) + 3, "%s%s", *mk ? "k:" : "v:", t);
			if (!json_object_get(x->pos, pk))
				json_object_set_new(x->pos, pk, json_integer((json_int_t)i));
			free(pk);
		}
		free(t);
	}
	free(mk);
}

static void idx_free(keyidx_t *x)
{
	json_decref(x->pos);
	x->pos = NULL;
}

/* Whether path element key is printed as fs_val prints an element's:
 * JSON text as jansson writes it (a "k:" object's keys sorted, a port's
 * protocol given). */
static bool canonical(const char *key)
{
	json_t *v = json_loads(key + 2, JSON_DECODE_ANY, NULL);
	char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | (key[0] == 'k' ? JSON_SORT_KEYS : 0)) : NULL;
	bool ok = t && !strcmp(t, key + 2) &&
		  !(key[0] == 'k' && json_object_get(v, "containerPort") && !json_object_get(v, "protocol"));
	free(t);
	json_decref(v);
	return ok;
}

/* elem_index through the index when there is one. */
static long idx_find(const keyidx_t *x, const json_t *a, const char *key)
{
	if (!x || !x->pos || a != x->arr || (key[0] != 'k' && key[0] != 'v') || key[1] != ':')
		return elem_index(a, key);
	const json_t *p = json_object_get(x->pos, key);
	if (p)
		return (long)json_integer_value(p);
	/* a key of another field, or printed otherwise: as elem_index finds it */
	bool same = key[0] == 'v' ? !x->prefix[0] : x->prefix[0] && !strncmp(key, x->prefix, strlen(x->prefix));
	return same && canonical(key) ? -1 : elem_index(a, key);
}

/* The child of value c at path element key, or NULL; x: c's key index
 * (or NULL). */
static json_t *child_at(const json_t *c, const char *key, const keyidx_t *x)
{
	if (key[0] == 'f' && key[1] == ':')
		return json_is_object(c) ? json_object_get(c, key + 2) : NULL;
	long at = idx_find(x, c, key);
	return at < 0 ? NULL : json_array_get(c, (size_t)at);
}

static void del_child(json_t *c, const char *key)
{
	if (key[0] == 'f' && key[1] == ':') {
		if (json_is_object(c))
			json_object_del(c, key + 2);
		return;
	}
	long at = elem_index(c, key);
	if (at >= 0)
		json_array_remove(c, (size_t)at);
}

/* Appends path element key to path as kube prints field paths
 * (".spec.containers[name=\"c\"].image", "[=\"v\"]" for set members). */
static void path_add(char *path, size_t cap, const char *key)
{
	size_t l = strlen(path);
	if (key[0] == 'f')
		snprintf(path + l, cap - l, ".%s", key + 2);
	else if (key[0] == 'v')
		snprintf(path + l, cap - l, "[=%s]", key + 2);
	else {
		json_t *o = json_loads(key + 2, 0, NULL);
		const char *f;
		json_t *v;
		int n = 0;
		l += (size_t)snprintf(path + l, cap - l, "[");
		json_object_foreach(o, f, v) {
			char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			if (l < cap)
				l += (size_t)snprintf(path + l, cap - l, "%s%s=%s", n++ ? "," : "", f, s ? s : "");
			free(s);
		}
		if (l < cap)
			snprintf(path + l, cap - l, "]");
		json_decref(o);
	}
}

/* Whether value v at path element key merges element by element (a map
 * or struct, a keyed or set list), so that owning it whole as a leaf (an
 * empty one applied) changes none of what is in it. */
static bool granular(const char *key, const json_t *v)
{
	if (json_is_object(v))
		return true;
	return json_is_array(v) && key[0] == 'f' && (mu__merge_key(key + 2) || !strcmp(key + 2, "finalizers"));
}

/* --- set operations ----------------------------------------------------- */

/* dst |= src. */
static void set_union(json_t *dst, const json_t *src, int depth)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)src, k, v) {
		json_t *d = json_object_get(dst, k);
		if (!d)
			json_object_set_new(dst, k, copy(v));
		else if (depth < MAX_DEPTH)
			set_union(d, v, depth + 1);
	}
}

/* Removes from s the leaves of rm (and rm's "." markers), pruning
 * containers left empty. */
static void set_subtract(json_t *s, const json_t *rm, int depth)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)rm, k, v) {
		json_t *d = json_object_get(s, k);
		if (!d)
			continue;
		if (is_leaf(v) || depth >= MAX_DEPTH) {
			json_object_del(s, k);
			continue;
		}
		set_subtract(d, v, depth + 1);
		if (json_object_size(d) == 0)
			json_object_del(s, k);
	}
}

static bool same_sub(const json_t *e, const mu__mgr_t *m)
{
	const char *s = mu__jstr(e, "subresource");
	return !strcmp(s ? s : "", m->sub);
}

/* The fields of set was that set now lacks (a new set, NULL when none):
 * what an update removed, structured-merge-diff's compare.Removed. */
static json_t *set_removed(const json_t *was, const json_t *now, int depth)
{
	json_t *out = json_object();
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)was, k, v) {
		json_t *n = json_object_get(now, k);
		if (!n) {
			json_object_set_new(out, k, copy(v));
			continue;
		}
		if (is_leaf(v) || depth >= MAX_DEPTH)
			continue;
		json_t *r = set_removed(v, n, depth + 1);
		if (r)
			json_object_set_new(out, k, r);
	}
	if (json_object_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* Entry i of mf, replaced first by a copy of its own when another list
 * holds it too (a reference count above one), which it answers (on OOM
 * the shared entry itself: the old tree it came from is the caller's
 * parse, dropped after the write).  Work: a copy of the entry at most. */
static json_t *entry_cow(json_t *mf, size_t i)
{
	json_t *e = json_array_get(mf, i);
	if (!e || e->refcount == 1)
		return e; /* made here, or copied already */
	json_t *c = copy(e);
	if (!c || json_array_set_new(mf, i, c))
		return json_array_get(mf, i); /* OOM: changed in place */
	return c;
}

/* Whether set_subtract(s, rm) would change s: a field of rm that s holds
 * as a leaf of rm, or one below that changes or is empty in s.  Bounded
 * as set_subtract. */
static bool subtract_meets(const json_t *s, const json_t *rm, int depth)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)rm, k, v) {
		json_t *d = json_object_get(s, k);
		if (!d)
			continue;
		if (is_leaf(v) || depth >= MAX_DEPTH || json_object_size(d) == 0 || subtract_meets(d, v, depth + 1))
			return true;
	}
	return false;
}

/* set_subtract on entry i's set, the entry copied first when it changes. */
static void subtract_cow(json_t *mf, size_t i, const json_t *rm)
{
	if (subtract_meets(json_object_get(json_array_get(mf, i), "fieldsV1"), rm, 0))
		set_subtract(json_object_get(entry_cow(mf, i), "fieldsV1"), rm, 0);
}

/* Removes from every entry of mf with m's subresource (but skip) the
 * fields that the write removed (those of old's set not in live), as
 * kube's Updater does: a claim on a field that neither version has is
 * kept. */
static void drop_removed(json_t *mf, const json_t *skip, const json_t *old, const json_t *live, const mu__mgr_t *m)
{
	json_t *was = old ? mu__fieldset(old, m) : NULL;
	json_t *rm = was ? set_removed(was, live, 0) : NULL;
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
		if (rm && e != skip && same_sub(e, m))
			subtract_cow(mf, i, rm);
	json_decref(rm);
	json_decref(was);
}

/* The part of set s (of new value nv) whose values differ from ov. */
static json_t *changed(const json_t *s, const json_t *nv, const json_t *ov, int depth)
{
	if (!ov)
		return copy(s);
	if (is_leaf(s) || depth >= MAX_DEPTH)
		return json_equal(nv, ov) ? NULL : copy(s);
	json_t *out = json_object();
	const char *k;
	json_t *v;
	keyidx_t xn, xo;
	idx_build(&xn, nv, s);
	idx_build(&xo, ov, s);
	json_object_foreach((json_t *)s, k, v) {
		if (!strcmp(k, "."))
			continue;
		json_t *c = changed(v, child_at(nv, k, &xn), child_at(ov, k, &xo), depth + 1);
		if (c)
			json_object_set_new(out, k, c);
	}
	idx_free(&xn);
	idx_free(&xo);
	if (json_object_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* --- managedFields entries ---------------------------------------------- */

static bool entry_is(const json_t *e, const char *mgr, const char *op, const char *sub)
{
	const char *m = mu__jstr(e, "manager"), *o = mu__jstr(e, "operation"), *s = mu__jstr(e, "subresource");
	return m && o && !strcmp(m, mgr) && !strcmp(o, op) && !strcmp(s ? s : "", sub ? sub : "");
}

/* Whether entry e records writes to the part of the object m writes. */

/* A copy of obj's managedFields that are well formed (an array). */
static json_t *entries_of(const json_t *obj)
{
	json_t *mf = mu__jget(obj, "metadata.managedFields");
	json_t *c = json_is_array(mf) ? copy(mf) : json_array();
	for (size_t i = json_array_size(c); i-- > 0;)
		if (!json_is_object(json_object_get(json_array_get(c, i), "fieldsV1")))
			json_array_remove(c, i);
	return c;
}

/* The entry of (m, op) in mf, made (with an empty set) when absent. */
static json_t *own_entry(json_t *mf, const mu__mgr_t *m, const char *op)
{
	const char *sub = m->sub;
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
		if (entry_is(e, m->name, op, sub))
			return e;
	e = json_pack("{s:s, s:s, s:s, s:s, s:{}}", "manager", m->name, "operation", op, "apiVersion",
		      m->api_version, "fieldsType", "FieldsV1", "fieldsV1");
	if (*sub)
		json_object_set_new(e, "subresource", json_string(sub));
	json_array_append_new(mf, e);
	return e;
}

/* Sets the entry's set and apiVersion; its time changes with the set. */
static void entry_set(json_t *e, json_t *set, const mu__mgr_t *m)
{
	if (!json_equal(json_object_get(e, "fieldsV1"), set) || !json_object_get(e, "time")) {
		char ts[40];
		mu__timestamp(ts, sizeof ts, false);
		json_object_set_new(e, "time", json_string(ts));
	}
	json_object_set_new(e, "apiVersion", json_string(m->api_version));
	json_object_set_new(e, "fieldsV1", set);
}

/* Drops entries with empty sets; stores mf (stolen) in obj, in kube's
 * order (Apply entries and then Update entries, each in order of use). */
static void entries_store(json_t *obj, json_t *mf)
{
	for (size_t i = json_array_size(mf); i-- > 0;)
		if (json_object_size(json_object_get(json_array_get(mf, i), "fieldsV1")) == 0)
			json_array_remove(mf, i);
	json_t *md = json_object_get(obj, "metadata");
	if (json_array_size(mf) == 0)
		json_object_del(md, "managedFields");
	else
		json_object_set(md, "managedFields", mf);
	json_decref(mf);
}

/* Shallow views of old and nw (*ro, *rn: new references the caller
 * drops) without the top-level members other than metadata that the two
 * hold equal: what an update's record reads of them.  A set is made member
 * by member (fs_obj), so an equal member adds nothing to what the write
 * changed (changed) or removed (set_removed), and the record is the same
 * without it; a dispatcher's annotation PATCH of a Job then no longer
 * walks the spec three times (its set, old's set, the comparison).  *rn
 * shares nw's metadata, where the record lands.  Members that m's
 * tracked() view drops anyway are not compared, and a status write (whose
 * view is the status alone) gets no views.  NULL views (OOM, or none
 * made): the caller records on the whole objects.  Work: one json_equal
 * per member compared. */
static void same_dropped(const json_t *old, json_t *nw, const mu__mgr_t *m, json_t **ro, json_t **rn)
{
	*ro = *rn = NULL;
	if (!json_is_object(old) || !json_is_object(nw) || (m->status_sub && !m->status_meta))
		return; /* tracked() keeps the status alone: nothing to leave out */
	json_t *a = json_copy((json_t *)old), *b = json_copy(nw);
	if (!a || !b) {
		json_decref(a);
		json_decref(b);
		return;
	}
	const char *k;
	json_t *v;
	void *tmp;
	json_object_foreach_safe((json_t *)nw, tmp, k, v) {
		/* what tracked() drops anyway is not compared */
		if (!strcmp(k, "metadata") || (m->reset_status && !strcmp(k, "status")) ||
		    (m->status_meta && !strcmp(k, "spec")))
			continue;
		if (json_equal(v, json_object_get(old, k))) {
			json_object_del(a, k);
			json_object_del(b, k);
		}
	}
	*ro = a;
	*rn = b;
}

static void mf_record(const json_t *old, json_t *nw, const mu__mgr_t *m);

void mu__mf_record(const json_t *old, json_t *nw, const mu__mgr_t *m)
{
	if (m->verbatim)
		return; /* computed by the writer (an apply at another version) */
	json_t *ro = NULL, *rn = NULL;
	if (old && !m->whole)
		same_dropped(old, nw, m, &ro, &rn);
	if (!ro) {
		mf_record(old, nw, m);
		return;
	}
	mf_record(ro, rn, m);
	json_decref(ro);
	json_decref(rn);
}

/* obj's well-formed managedFields entries (those with a fieldsV1 object)
 * in a new list that shares them with obj: an entry the record changes is
 * copied first (entry_cow), and most are left as they are (the creator's,
 * which names every field of the spec, among them).  NULL on OOM. */
static json_t *entries_shared(const json_t *obj)
{
	json_t *mf = mu__jget(obj, "metadata.managedFields"), *c = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(json_is_array(mf) ? mf : NULL, i, e)
		if (c && json_is_object(json_object_get(e, "fieldsV1")))
			json_array_append(c, e);
	return c;
}

/* mu__mf_record's work, on the objects as given. */
static void mf_record(const json_t *old, json_t *nw, const mu__mgr_t *m)
{
	json_t *live = mu__fieldset(nw, m);
	json_t *ch;
	if (old) {
		json_t *tn = tracked(nw, m), *to = tracked(old, m);
		ch = changed(live, tn, to, 0);
		json_decref(tn);
		json_decref(to);
	} else {
		ch = json_incref(live); /* a create: every field is the writer's */
	}
	/* the other managers' sets lose fields that are gone; with the
	 * status subresource, only status fields are compared */
	json_t *mf = entries_shared(nw);
	size_t i;
	json_t *e;
	/* on a create (entries the request gave), kube's update removes from
	 * the others only what the creation added; on an update, also what it
	 * removed: what they claim outside both versions stays theirs */
	drop_removed(mf, NULL, old, live, m);
	json_array_foreach(mf, i, e) {
		if (ch && !entry_is(e, m->name, "Update", m->sub))
			subtract_cow(mf, i, ch);
	}
	if (ch) {
		json_t *own = own_entry(mf, m, "Update");
		for (i = 0; i < json_array_size(mf); i++)
			if (json_array_get(mf, i) == own) /* it changes: made the list's own */
				own = entry_cow(mf, i);
		json_t *had = json_object_get(own, "fieldsV1");
		json_t *set = json_object_size(had) ? copy(had) : NULL;
		if (set)
			set_union(set, ch, 0);
		entry_set(own, set ? set : json_incref(ch), m);
	}
	json_decref(ch);
	json_decref(live);
	entries_store(nw, mf);
}

void mu__mf_apply_create(json_t *obj, const json_t *applied, const mu__mgr_t *m)
{
	json_t *mf = json_array();
	json_t *own = own_entry(mf, m, "Apply");
	entry_set(own, mu__fieldset(applied, m), m);
	entries_store(obj, mf);
}

/* --- apply -------------------------------------------------------------- */

typedef struct conflicts {
	mu__verr_t *e;
	int n;
	json_t *paths;   /* [[manager index, [path elements...]], ...] */
	char text[1400];
} conflicts_t;

/* The manager as kube prints it in a conflict: "\"m\"" for Apply,
 * "\"m\" using v1" for Update (with " with subresource \"status\""). */
static void print_manager(const json_t *e, char *out, size_t cap)
{
	const char *m = mu__jstr(e, "manager"), *s = mu__jstr(e, "subresource"), *op = mu__jstr(e, "operation");
	int l = snprintf(out, cap, "\"%s\"", m ? m : "");
	if (s && *s && l >= 0 && (size_t)l < cap)
		l += snprintf(out + l, cap - (size_t)l, " with subresource \"%s\"", s);
	if (op && !strcmp(op, "Update") && l >= 0 && (size_t)l < cap) {
		const char *av = mu__jstr(e, "apiVersion"), *t = mu__jstr(e, "time");
		snprintf(out + l, cap - (size_t)l, " using %s%s%s", av ? av : "", t ? " at " : "", t ? t : "");
	}
}

/* Finds the leaves of applied set a that other's set o also holds with a
 * different live value (cur) than the applied one (app). */
static void find_conflicts(const json_t *a, const json_t *o, const json_t *app, const json_t *cur, json_t *elems,
			   int who, conflicts_t *c, int depth)
{
	const char *k;
	json_t *v;
	keyidx_t xa, xc;
	idx_build(&xa, app, a);
	idx_build(&xc, cur, a);
	json_object_foreach((json_t *)a, k, v) {
		json_t *ov = json_object_get(o, k);
		if (!ov || !strcmp(k, "."))
			continue;
		json_t *ac = child_at(app, k, &xa), *cc = child_at(cur, k, &xc);
		json_array_append_new(elems, json_string(k));
		if (is_leaf(v) || depth >= MAX_DEPTH) {
			if (!(ac == cc || (ac && cc && json_equal(ac, cc)) || (granular(k, ac) && granular(k, cc)))) {
				json_array_append_new(c->paths, json_pack("[i, o]", who, json_copy(elems)));
				c->n++;
			}
		} else {
			find_conflicts(v, ov, ac, cc, elems, who, c, depth + 1);
		}
		json_array_remove(elems, json_array_size(elems) - 1);
	}
	idx_free(&xa);
	idx_free(&xc);
}

typedef struct conflict_line {
	char mgr[300], path[600];
} conflict_line_t;

static int line_cmp(const void *a, const void *b)
{
	const conflict_line_t *x = a, *y = b;
	int d = strcmp(x->mgr, y->mgr);
	return d ? d : strcmp(x->path, y->path);
}

/* Writes c->text and c->e from c->paths, as kube's NewConflictError:
 * grouped by manager, sorted by manager and path. */
static void describe(conflicts_t *c, const json_t *mf)
{
	size_t n = json_array_size(c->paths), i;
	conflict_line_t *ls = calloc(n ? n : 1, sizeof *ls);
	if (!ls) {
		snprintf(c->text, sizeof c->text, "Apply failed with %d conflicts", c->n);
		return;
	}
	json_t *p;
	json_array_foreach(c->paths, i, p) {
		int who = (int)json_integer_value(json_array_get(p, 0));
		print_manager(json_array_get(mf, (size_t)who), ls[i].mgr, sizeof ls[i].mgr);
		size_t j;
		json_t *k;
		json_array_foreach(json_array_get(p, 1), j, k)
			path_add(ls[i].path, sizeof ls[i].path, json_string_value(k));
	}
	qsort(ls, n, sizeof *ls, line_cmp);
	int l = c->n == 1 ? snprintf(c->text, sizeof c->text, "Apply failed with 1 conflict: ")
			  : snprintf(c->text, sizeof c->text, "Apply failed with %d conflicts: ", c->n);
	for (i = 0; i < n; i++) {
		if (c->e->n < MU__VERR_MAX) {
			snprintf(c->e->c[c->e->n].reason, sizeof c->e->c[0].reason, "FieldManagerConflict");
			snprintf(c->e->c[c->e->n].field, sizeof c->e->c[0].field, "%.127s", ls[i].path);
			snprintf(c->e->c[c->e->n].msg, sizeof c->e->c[0].msg, "conflict with %.299s", ls[i].mgr);
			c->e->n++;
		}
		if (l < 0 || (size_t)l >= sizeof c->text)
			continue;
		if (c->n == 1)
			l += snprintf(c->text + l, sizeof c->text - (size_t)l, "conflict with %s: %s", ls[i].mgr,
				      ls[i].path);
		else if (i == 0 || strcmp(ls[i].mgr, ls[i - 1].mgr))
			l += snprintf(c->text + l, sizeof c->text - (size_t)l, "%sconflicts with %s:\n- %s",
				      i ? "\n" : "", ls[i].mgr, ls[i].path);
		else
			l += snprintf(c->text + l, sizeof c->text - (size_t)l, "\n- %s", ls[i].path);
	}
	free(ls);
}

/* Removes path elems from set s, pruning containers left empty. */
static void set_remove_path(json_t *s, const json_t *elems, size_t at)
{
	const char *k = json_string_value(json_array_get(elems, at));
	json_t *n = k ? json_object_get(s, k) : NULL;
	if (!n)
		return;
	if (at + 1 == json_array_size(elems)) {
		json_object_del(s, k);
		return;
	}
	set_remove_path(n, elems, at + 1);
	if (json_object_size(n) == 0)
		json_object_del(s, k);
}

/* Removes from value val what the applier owned (set p) and no longer
 * applies (set a, NULL: nothing under here), unless one of the other sets
 * os[0..no) holds it. */
static void remove_unapplied(const json_t *p, const json_t *a, json_t *const *os, int no, json_t *val, int depth)
{
	const char *k;
	json_t *v;
	keyidx_t x;
	idx_build(&x, val, p);
	/* with an index, the elements removed go after the loop (positions
	 * stay as indexed), last first */
	size_t n = x.pos ? json_array_size(val) : 0;
	bool *gone = n ? calloc(n, sizeof *gone) : NULL;
	if (n && !gone)
		idx_free(&x);
	json_object_foreach((json_t *)p, k, v) {
		if (!strcmp(k, ".") || !val)
			continue;
		json_t *ac = a ? json_object_get(a, k) : NULL;
		if (ac && is_leaf(ac) && !granular(k, child_at(val, k, &x)))
			continue;
		json_t *oc[MAX_MANAGERS];
		bool any = false;
		for (int i = 0; i < no; i++)
			any |= (oc[i] = os[i] ? json_object_get(os[i], k) : NULL) != NULL;
		/* only a member of p goes whole: a path that merely leads to
		 * members ("f:metadata" above an annotation) keeps what else
		 * is there, as structured-merge-diff's RemoveItems */
		if (!ac && !any && (is_leaf(v) || json_object_get(v, "."))) {
			long at = x.pos ? idx_find(&x, val, k) : -1;
			if (at >= 0)
				gone[at] = true;
			else if (!x.pos)
				del_child(val, k);
		} else if (depth < MAX_DEPTH) {
			remove_unapplied(v, ac, oc, no, child_at(val, k, &x), depth + 1);
		}
	}
	for (size_t i = n; x.pos && i-- > 0;)
		if (gone[i])
			json_array_remove(val, i);
	free(gone);
	idx_free(&x);
}

/* The object applied onto old: merged (strategic, with the list-map keys
 * of kube's OpenAPI, for built-in kinds,
 * RFC 7386 for the rest), then without what the manager stopped applying. */
static json_t *merged(const json_t *old, const json_t *app, const json_t *prev, const json_t *aset,
		      const json_t *mf, const mu__mgr_t *m, int *rc)
{
	json_t *nw = copy(old);
	if (!nw) {
		*rc = MU_ENOMEM;
		return NULL;
	}
	*rc = m->builtin ? mu__apply_merge(nw, app) : mu__merge_patch(nw, app);
	if (*rc != MU_OK) {
		json_decref(nw);
		return NULL;
	}
	if (prev) {
		json_t *os[MAX_MANAGERS];
		int no = 0;
		size_t i;
		json_t *e;
		json_array_foreach(mf, i, e)
			if (no < MAX_MANAGERS && !entry_is(e, m->name, "Apply", m->sub))
				os[no++] = json_object_get(e, "fieldsV1");
		remove_unapplied(prev, aset, os, no, nw, 0);
	}
	return nw;
}

/* Whether entry e is at version av (no apiVersion: taken as av). */
static bool at_version(const json_t *e, const char *av)
{
	const char *v = mu__jstr(e, "apiVersion");
	return !v || !strcmp(v, av);
}

/* The leaves of set s that set ch also holds (a change there), as
 * conflicts of manager who, at path elems. */
static void collect(const json_t *s, const json_t *ch, json_t *elems, int who, conflicts_t *c, int depth)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)s, k, v) {
		json_t *cv = json_object_get(ch, k);
		if (!cv || !strcmp(k, "."))
			continue;
		json_array_append_new(elems, json_string(k));
		if (is_leaf(v) || is_leaf(cv) || depth >= MAX_DEPTH) {
			json_array_append_new(c->paths, json_pack("[i, o]", who, json_copy(elems)));
			c->n++;
		} else {
			collect(v, cv, elems, who, c, depth + 1);
		}
		json_array_remove(elems, json_array_size(elems) - 1);
	}
}

/* kube's Updater.update for the managers of mf at version av (other than
 * m's own Apply entry): old and nw converted to av by conv, a manager
 * there conflicts on the fields it owns whose value the apply changed or
 * added, and loses those it removed.  MU_OK; MU_ENOENT when av is not a
 * version of the kind (those entries are dropped, as kube forgets a
 * manager whose version is gone); another error with msg. */
static int other_version(json_t *mf, const char *av, const json_t *old, const json_t *nw, const mu__mgr_t *m,
			 mu__ssa_conv_fn conv, void *ctx, conflicts_t *c, char *msg, size_t msglen)
{
	json_t *objs = json_pack("[o, o]", copy(old), copy(nw)); /* conv changes them */
	int rc = objs ? conv(ctx, objs, av, msg, msglen) : MU_ENOMEM;
	size_t i;
	json_t *e;
	json_array_foreach(rc == MU_ENOENT ? mf : NULL, i, e)
		if (!entry_is(e, m->name, "Apply", m->sub) && at_version(e, av))
			json_object_set_new(e, "fieldsV1", json_object()); /* dropped by entries_store */
	if (rc != MU_OK) {
		json_decref(objs);
		return rc == MU_ENOENT ? MU_OK : rc;
	}
	const json_t *ow = json_array_get(objs, 0), *nv = json_array_get(objs, 1);
	json_t *live = mu__fieldset(nv, m), *was = mu__fieldset(ow, m);
	json_t *tn = tracked(nv, m), *to = tracked(ow, m);
	json_t *ch = changed(live, tn, to, 0);
	json_t *rm = set_removed(was, live, 0);
	json_array_foreach(mf, i, e) {
		if (entry_is(e, m->name, "Apply", m->sub) || !at_version(e, av) || !same_sub(e, m))
			continue;
		json_t *elems = json_array();
		if (ch)
			collect(json_object_get(e, "fieldsV1"), ch, elems, (int)i, c, 0);
		json_decref(elems);
		if (rm)
			set_subtract(json_object_get(e, "fieldsV1"), rm, 0);
	}
	json_decref(rm);
	json_decref(ch);
	json_decref(tn);
	json_decref(to);
	json_decref(was);
	json_decref(live);
	json_decref(objs);
	return MU_OK;
}

/* Puts back into dst the members of set s (f: fields: a custom object's,
 * whose lists are atomic) that src has, as structured-merge-diff's
 * addBackOwnedItems.  Bounded by s. */
static void add_back(const json_t *s, const json_t *src, json_t *dst, int depth)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)s, k, v) {
		json_t *sv = strncmp(k, "f:", 2) ? NULL : json_object_get(src, k + 2);
		if (!sv || !json_is_object(dst))
			continue;
		if (is_leaf(v) || depth >= MAX_DEPTH || !json_is_object(sv)) {
			json_object_set_new(dst, k + 2, copy(sv));
			continue;
		}
		json_t *dv = json_object_get(dst, k + 2);
		if (!json_is_object(dv))
			json_object_set_new(dst, k + 2, dv = json_object());
		add_back(v, sv, dv, depth + 1);
	}
}

/* kube's Updater.prune when the applier's last apply (set prev) was at
 * another version pav: the merged object *nw converted to pav loses prev's
 * members that no other manager there owns, goes back to m's version, and
 * gets back from *nw what the new apply (aset) and the managers at m's
 * version own.  Two conversions; a version that is gone prunes nothing.
 * MU_OK, or a conversion's error with msg. */
static int prune_at(json_t **nw, const json_t *prev, const char *pav, const json_t *mf, const json_t *own,
		    const json_t *aset, const mu__mgr_t *m, mu__ssa_conv_fn conv, void *ctx, char *msg, size_t msglen)
{
	json_t *objs = json_pack("[o]", copy(*nw));
	int rc = pav && objs ? conv(ctx, objs, pav, msg, msglen) : MU_ENOMEM;
	if (rc == MU_OK) {
		json_t *os[MAX_MANAGERS];
		int no = 0;
		size_t i;
		json_t *e;
		json_array_foreach(mf, i, e)
			if (no < MAX_MANAGERS && e != own && at_version(e, pav) && same_sub(e, m))
				os[no++] = json_object_get(e, "fieldsV1");
		remove_unapplied(prev, NULL, os, no, json_array_get(objs, 0), 0);
		rc = conv(ctx, objs, m->api_version, msg, msglen);
	}
	if (rc == MU_OK) {
		json_t *p = json_incref(json_array_get(objs, 0));
		size_t i;
		json_t *e;
		add_back(aset, *nw, p, 0);
		json_array_foreach(mf, i, e)
			if (e != own && at_version(e, m->api_version))
				add_back(json_object_get(e, "fieldsV1"), *nw, p, 0);
		json_decref(*nw);
		*nw = p;
	}
	json_decref(objs);
	return rc == MU_ENOENT ? MU_OK : rc;
}

int mu__ssa_apply(const json_t *old, const json_t *applied, const mu__mgr_t *m, json_t **out, char *msg,
		  size_t msglen, mu__verr_t *e)
{
	return mu__ssa_apply_conv(old, applied, m, NULL, NULL, out, msg, msglen, e);
}

int mu__ssa_apply_conv(const json_t *old, const json_t *applied, const mu__mgr_t *m, mu__ssa_conv_fn conv,
		       void *ctx, json_t **out, char *msg, size_t msglen, mu__verr_t *e)
{
	*out = NULL;
	msg[0] = '\0';
	json_t *mf = entries_of(old);
	if (json_array_size(mf) > MAX_MANAGERS) {
		snprintf(msg, msglen, "the object has more than %d field managers", MAX_MANAGERS);
		json_decref(mf);
		return MU_ELIMIT;
	}
	size_t i;
	json_t *en;
	json_t *aset = mu__fieldset(applied, m);
	json_t *app = tracked(applied, m), *cur = tracked(old, m);
	conflicts_t c = {.e = e, .paths = json_array()};
	json_array_foreach(mf, i, en) {
		if (entry_is(en, m->name, "Apply", m->sub) || (conv && !at_version(en, m->api_version)))
			continue;
		json_t *elems = json_array();
		find_conflicts(aset, json_object_get(en, "fieldsV1"), app, cur, elems, (int)i, &c, 0);
		json_decref(elems);
	}
	int rc = MU_OK;
	json_t *own = own_entry(mf, m, "Apply");
	/* with a converter, the entries at m's version (and m's own) are
	 * compared on these objects (same); the others at their versions */
	json_t *same = json_array();
	json_array_foreach(mf, i, en)
		if (!conv || at_version(en, m->api_version) || en == own)
			json_array_append(same, en);
	/* the applier's earlier apply: what it stopped applying goes, at the
	 * version it was applied at */
	json_t *prev = json_object_size(json_object_get(own, "fieldsV1")) ? json_object_get(own, "fieldsV1") : NULL;
	bool here = !conv || at_version(own, m->api_version);
	json_t *nw = c.n && !m->force && !conv ? NULL : merged(old, applied, here ? prev : NULL, aset, same, m, &rc);
	if (nw && prev && !here && rc == MU_OK)
		rc = prune_at(&nw, prev, mu__jstr(own, "apiVersion"), mf, own, aset, m, conv, ctx, msg, msglen);
	/* the managers at other versions, one conversion per version */
	json_t *done = json_object();
	json_array_foreach(conv && nw ? mf : NULL, i, en) {
		const char *av = mu__jstr(en, "apiVersion");
		if (rc == MU_OK && en != own && av && !at_version(en, m->api_version) && !json_object_get(done, av)) {
			json_object_set_new(done, av, json_true());
			rc = other_version(mf, av, old, nw, m, conv, ctx, &c, msg, msglen);
		}
	}
	json_decref(done);
	if (rc != MU_OK) {
		if (!msg[0])
			snprintf(msg, msglen, "the applied configuration could not be merged: %s", mu_strerror(rc));
	} else if (c.n && !m->force) {
		describe(&c, mf);
		snprintf(msg, msglen, "%s", c.text);
		rc = MU_ESTATE;
	} else {
		json_array_foreach(c.paths, i, en) {
			json_t *owner = json_array_get(mf, (size_t)json_integer_value(json_array_get(en, 0)));
			set_remove_path(json_object_get(owner, "fieldsV1"), json_array_get(en, 1), 0);
		}
		entry_set(own, json_incref(aset), m);
		json_t *live = mu__fieldset(nw, m);
		drop_removed(same, own, old, live, m);
		json_decref(live);
		entries_store(nw, json_incref(mf));
		*out = json_incref(nw);
	}
	json_decref(nw);
	json_decref(same);
	json_decref(c.paths);
	json_decref(app);
	json_decref(cur);
	json_decref(aset);
	json_decref(mf);
	return rc;
}

int mu__mgr_init(mu__mgr_t *m, const mu__req_t *rq, const mu__rtype_t *t, char *msg, size_t msglen)
{
	memset(m, 0, sizeof *m);
	const char *fm = rq->q.field_manager;
	if (!*fm && rq->user_agent) {
		/* kube's default: the user agent up to its first '/' */
		size_t n = strcspn(rq->user_agent, "/");
		snprintf(m->name, sizeof m->name, "%.*s", (int)(n < 128 ? n : 128), rq->user_agent);
	} else {
		snprintf(m->name, sizeof m->name, "%.131s", fm);
	}
	if (strlen(fm) > 128) {
		snprintf(msg, msglen, "fieldManager: Too long: may not be more than 128 bytes");
		return MU_EINVAL;
	}
	for (const char *p = fm; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			snprintf(msg, msglen, "fieldManager: Invalid value: \"%.128s\": must only contain printable "
				 "characters", fm);
			return MU_EINVAL;
		}
	mu__rtype_apiversion(t, m->api_version, sizeof m->api_version);
	/* a custom type's entries carry the version the request named, as
	 * kube's field manager records them (f.groupVersion) */
	if (!t->builtin && *t->group && *rq->route.version && strcmp(rq->route.version, t->version))
		snprintf(m->api_version, sizeof m->api_version, "%s/%s", t->group, rq->route.version);
	m->verbatim = rq->mf_final;
	m->status_sub = !strcmp(rq->route.sub, "status") || !strcmp(rq->route.sub, "approval");
	snprintf(m->sub, sizeof m->sub, "%.15s", m->status_sub ? rq->route.sub : "");
	m->reset_status = (t->subs & MU__SUB_STATUS) && strcmp(t->kind, "Node") && strcmp(t->kind, "Namespace");
	m->status_meta = !strcmp(rq->route.sub, "status") && t->builtin && !strcmp(t->group, "batch") &&
			 !strcmp(t->kind, "Job");
	m->builtin = t->builtin;
	m->model = mu__schema_model(t->group, t->kind);
	m->force = rq->q.force;
	return MU_OK;
}

void mu__mgr_controller(mu__mgr_t *m, const mu__rtype_t *t, const char *name, bool status_sub)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%.128s", name);
	mu__rtype_apiversion(t, m->api_version, sizeof m->api_version);
	m->status_sub = status_sub;
	snprintf(m->sub, sizeof m->sub, "%s", status_sub ? "status" : "");
	m->reset_status = (t->subs & MU__SUB_STATUS) != 0;
	m->builtin = t->builtin;
	m->model = mu__schema_model(t->group, t->kind);
}

bool mu__mf_given(const json_t *mf)
{
	if (!json_is_array(mf) || json_array_size(mf) == 0)
		return false;
	size_t i;
	json_t *e;
	if (json_array_size(mf) == 1 && json_is_object(json_array_get(mf, 0)) &&
	    json_object_size(json_array_get(mf, 0)) == 0)
		return true; /* [{}]: kube's isResetManagedFields */
	json_array_foreach((json_t *)mf, i, e) {
		/* kube's decodeManagedFieldsEntrySet: an entry it cannot decode
		 * makes the whole list fall back to the stored one */
		const char *op = mu__jstr(e, "operation"), *ft = mu__jstr(e, "fieldsType");
		if (!json_is_object(e) || !op || (strcmp(op, "Apply") && strcmp(op, "Update")) || !ft ||
		    strcmp(ft, "FieldsV1") || !json_is_object(json_object_get(e, "fieldsV1")))
			return false;
	}
	return true;
}

json_t *mu__mf_before(const mu__rtype_t *t, const json_t *obj, bool status_sub)
{
	mu__mgr_t m;
	mu__mgr_controller(&m, t, "", status_sub);
	json_t *v = tracked(obj, &m);
	json_t *c = copy(v);
	json_decref(v);
	return c;
}

void mu__mf_controller(const mu__rtype_t *t, const json_t *old, json_t *nw, const char *name, bool status_sub)
{
	mu__mgr_t m;
	mu__mgr_controller(&m, t, name, status_sub);
	mu__mf_record(old, nw, &m);
}

/* --- the controllers' memo ---------------------------------------------- */

/* muster up's simulated kubelets write the same change to every pod they
 * start and every node they renew: only names, uids and times differ, and
 * a record costs a quarter of a million instructions (two field sets, the
 * changed part, every entry copied).  The memo keeps, per shape of write,
 * the managedFields that the record made.  A shape is the record's whole
 * input but for the values of string fields that are no list's key: the
 * old and new tracked parts (status), the entries but for their times,
 * and the manager.  Such a string only ever matters through equality (a
 * leaf changed or not), so it is written into the key as a number given
 * in order of first appearance, equal strings the same number: two writes
 * with the same key get the same field sets and the same entries, but for
 * the times of the entries.  Those are kept per entry as where they come
 * from: the time of the input entry at index j, the time of the write, or
 * none.  A key that cannot be told apart that way (a real number, an
 * entry time equal to the write's second, a manager with two entries) is
 * not kept, and the record runs in full.
 *
 * Of an input entry's set only "f:status" is in the key as it is; its
 * other members are in it by name alone.  A status write's record reads
 * and changes only the status part of the sets (tracked() keeps only the
 * status, so every set it adds, subtracts or compares is under
 * "f:status"), and whether a set is left empty depends on the other
 * members' presence, not on what they hold: so two writes with the same
 * key change the same entries the same way, and an entry the write left
 * as it was is moved from the input (memo_use).  A slot is kept only when
 * every output entry made from such an input entry is that entry
 * unchanged; else the other members would be the first pod's.  Without
 * this, the creator's entry of every pod that ServiceAccount admission
 * gave a volume (kube-api-access-XXXXX, a list key in its spec part) made
 * a key of its own, and every kubelet start was recorded in full. */

#define MEMO_SLOTS 32
#define MEMO_KEY_MAX (64 * 1024)
#define MEMO_STRS 512 /* a power of two; three quarters may be used */
#define MEMO_ENTRIES 64 /* input entries a kept key may have */
#define SRC_NOW (-1)
#define SRC_NONE (-2)

struct memo_slot {
	char *key;          /* NULL: empty */
	size_t len;
	json_t *entries;    /* the managedFields made (times of that write) */
	int *src;           /* per entry: SRC_NOW, SRC_NONE or an input index */
	bool *same;         /* per entry: the input entry src, unchanged (shared) */
};

struct mu__mf_memo {
	struct memo_slot slot[MEMO_SLOTS];
	size_t hits, misses;
	/* the key being built, and the numbers of its strings */
	char *k;
	size_t n, cap;
	bool bad;
	struct {
		const char *s;
		size_t len;
		int id;     /* order of first appearance */
	} strs[MEMO_STRS];
	int nstrs;
	int used[MEMO_STRS]; /* the slots of strs in use, to clear */
	/* per input entry of the key: its set has members other than
	 * "f:status", in the key by name only */
	bool named[MEMO_ENTRIES];
};

mu__mf_memo_t *mu__mf_memo_new(void)
{
	return calloc(1, sizeof(mu__mf_memo_t));
}

static void slot_clear(struct memo_slot *sl)
{
	free(sl->key);
	free(sl->src);
	free(sl->same);
	json_decref(sl->entries);
	memset(sl, 0, sizeof *sl);
}

void mu__mf_memo_free(mu__mf_memo_t *mm)
{
	if (!mm)
		return;
	for (int i = 0; i < MEMO_SLOTS; i++)
		slot_clear(&mm->slot[i]);
	free(mm->k);
	free(mm);
}

void mu__mf_memo_stats(const mu__mf_memo_t *mm, size_t *hits, size_t *misses)
{
	*hits = mm ? mm->hits : 0;
	*misses = mm ? mm->misses : 0;
}

static void kb_put(mu__mf_memo_t *mm, const char *s, size_t n)
{
	if (mm->bad)
		return;
	if (mm->n + n > mm->cap) {
		size_t c = mm->cap ? mm->cap : 8192;
		while (c < mm->n + n)
			c *= 2;
		char *p = c <= MEMO_KEY_MAX ? realloc(mm->k, c) : NULL;
		if (!p) {
			mm->bad = true;
			return;
		}
		mm->k = p;
		mm->cap = c;
	}
	memcpy(mm->k + mm->n, s, n);
	mm->n += n;
}

/* Writes tag, the decimal digits of x and end (no snprintf: it cost more
 * than the rest of the key). */
static void kb_uint(mu__mf_memo_t *mm, char tag, unsigned long long x, char end)
{
	char h[24];
	int i = (int)sizeof h;
	h[--i] = end;
	do
		h[--i] = (char)('0' + x % 10);
	while ((x /= 10) != 0);
	h[--i] = tag;
	kb_put(mm, h + i, sizeof h - (size_t)i);
}

/* Writes n bytes as "LEN:BYTES" (so that no two texts write the same). */
static void kb_text(mu__mf_memo_t *mm, char tag, const char *s, size_t n)
{
	kb_uint(mm, tag, n, ':');
	kb_put(mm, s, n);
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* Writes string s as its number: the same for equal strings. */
static void kb_num(mu__mf_memo_t *mm, const char *s, size_t n)
{
	size_t i = fnv(s, n) & (MEMO_STRS - 1);
	while (mm->strs[i].s && (mm->strs[i].len != n || memcmp(mm->strs[i].s, s, n)))
		i = (i + 1) & (MEMO_STRS - 1);
	if (!mm->strs[i].s) {
		if (mm->nstrs >= MEMO_STRS * 3 / 4) {
			mm->bad = true;
			return;
		}
		mm->strs[i].s = s;
		mm->strs[i].len = n;
		mm->used[mm->nstrs] = (int)i;
		mm->strs[i].id = mm->nstrs++;
	}
	kb_uint(mm, '$', (unsigned long long)mm->strs[i].id, ';');
}

/* Writes v into the key: structure, keys, numbers and list keys as they
 * are, other strings as numbers (verbatim: every string as it is).
 * field is v's member name, NULL for a list element; elem: v is a member
 * of a list element (only those can be a list's key).  Bounded by v's
 * size and MAX_DEPTH. */
static void kb_walk(mu__mf_memo_t *mm, const json_t *v, const char *field, bool elem, bool verbatim, int depth)
{
	if (mm->bad || depth > MAX_DEPTH) {
		mm->bad = true;
		return;
	}
	const char *k;
	json_t *x;
	size_t i;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		kb_put(mm, "{", 1);
		json_object_foreach((json_t *)v, k, x) {
			kb_text(mm, 'k', k, strlen(k));
			kb_walk(mm, x, k, !field, verbatim, depth + 1);
		}
		kb_put(mm, "}", 1);
		break;
	case JSON_ARRAY:
		kb_put(mm, "[", 1);
		json_array_foreach(v, i, x)
			kb_walk(mm, x, NULL, false, verbatim, depth + 1);
		kb_put(mm, "]", 1);
		break;
	case JSON_STRING:
		if (verbatim || !field || (elem && mu__merge_key_field(field)))
			kb_text(mm, 's', json_string_value(v), json_string_length(v));
		else
			kb_num(mm, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER: {
		long long x0 = (long long)json_integer_value(v);
		kb_uint(mm, x0 < 0 ? 'j' : 'i', x0 < 0 ? 0ULL - (unsigned long long)x0 : (unsigned long long)x0, ';');
		break;
	}
	case JSON_TRUE:
		kb_put(mm, "t", 1);
		break;
	case JSON_FALSE:
		kb_put(mm, "f", 1);
		break;
	case JSON_NULL:
		kb_put(mm, "n", 1);
		break;
	default: /* a real: its text is jansson's, not kept here */
		mm->bad = true;
	}
}

/* Writes an input entry's set into the key: "f:status" as it is, every
 * other member by its name and "A" (what a status write neither reads
 * nor changes; see above), and notes in *named whether there was one.
 * Bounded by the status part's size. */
static void kb_set(mu__mf_memo_t *mm, const json_t *set, bool *named)
{
	const char *k;
	json_t *x;
	kb_put(mm, "{", 1);
	json_object_foreach((json_t *)set, k, x) {
		kb_text(mm, 'k', k, strlen(k));
		if (!strcmp(k, "f:status")) {
			kb_walk(mm, x, k, false, true, 3);
		} else {
			kb_put(mm, "A", 1);
			*named = true;
		}
	}
	kb_put(mm, "}", 1);
}

/* Builds the key of a status write by m from old to nw whose input
 * entries are in (NULL: none); false when it cannot be kept. */
static bool key_build(mu__mf_memo_t *mm, const mu__mgr_t *m, const json_t *old, const json_t *nw,
		      const json_t *in)
{
	mm->n = 0;
	mm->bad = false;
	for (int i = 0; i < mm->nstrs; i++)
		mm->strs[mm->used[i]].s = NULL;
	mm->nstrs = 0;
	kb_text(mm, 'm', m->name, strlen(m->name));
	kb_text(mm, 'a', m->api_version, strlen(m->api_version));
	kb_text(mm, 'u', m->sub, strlen(m->sub));
	kb_uint(mm, 'f', (unsigned)m->status_sub * 4u + (unsigned)m->status_meta * 2u + (unsigned)m->reset_status, ';');
	kb_uint(mm, 'd', (unsigned long long)(m->model + 1), ';');
	/* what tracked() keeps of a status write: the status */
	const json_t *os = json_is_object(old) ? json_object_get(old, "status") : NULL;
	const json_t *ns = json_is_object(nw) ? json_object_get(nw, "status") : NULL;
	kb_put(mm, os ? "O" : "o", 1);
	if (os)
		kb_walk(mm, os, "status", false, false, 0);
	kb_put(mm, ns ? "N" : "n", 1);
	if (ns)
		kb_walk(mm, ns, "status", false, false, 0);
	kb_put(mm, in ? "E" : "e", 1);
	if (json_is_array(in)) {
		size_t i;
		json_t *e;
		kb_put(mm, "[", 1);
		json_array_foreach(in, i, e) {
			if (i >= MEMO_ENTRIES) {
				mm->bad = true;
				break;
			}
			mm->named[i] = false;
			if (!json_is_object(e)) {
				kb_walk(mm, e, NULL, false, true, 1);
				continue;
			}
			const char *k;
			json_t *x;
			kb_put(mm, "{", 1);
			json_object_foreach(e, k, x) {
				kb_text(mm, 'k', k, strlen(k));
				if (!strcmp(k, "time") && json_is_string(x))
					kb_put(mm, "T", 1); /* kept as a source, not in the key */
				else if (!strcmp(k, "fieldsV1") && json_is_object(x))
					kb_set(mm, x, &mm->named[i]);
				else
					kb_walk(mm, x, k, false, true, 2);
			}
			kb_put(mm, "}", 1);
		}
		kb_put(mm, "]", 1);
	} else if (in) {
		kb_walk(mm, in, NULL, false, true, 0);
	}
	return !mm->bad;
}

/* Who an entry is: manager, operation, subresource. */
static bool same_entry(const json_t *a, const json_t *b)
{
	const char *f[] = {"manager", "operation", "subresource"};
	for (int i = 0; i < 3; i++) {
		const char *x = json_string_value(json_object_get(a, f[i]));
		const char *y = json_string_value(json_object_get(b, f[i]));
		if (strcmp(x ? x : "", y ? y : ""))
			return false;
	}
	return true;
}

/* Keeps in sl what the record made (out: the entries, NULL when none)
 * from the input entries in, the key being mm's; nothing when a time
 * cannot be told (see above).  now0 and now1: the second before and after
 * the record.  O(entries squared). */
static void memo_keep(mu__mf_memo_t *mm, struct memo_slot *sl, const json_t *in, const json_t *out,
		      const char *now0, const char *now1)
{
	size_t nin = json_array_size(in), nout = json_array_size(out);
	if ((out && !json_is_array(out)) || (in && !json_is_array(in)))
		return;
	for (size_t i = 0; i < nin; i++) /* one entry per manager, operation and subresource */
		for (size_t j = i + 1; j < nin; j++)
			if (same_entry(json_array_get(in, i), json_array_get(in, j)))
				return;
	int *src = malloc((nout ? nout : 1) * sizeof *src);
	bool *same = calloc(nout ? nout : 1, sizeof *same);
	if (!src || !same) {
		free(src);
		free(same);
		return;
	}
	for (size_t i = 0; i < nout; i++) {
		const json_t *e = json_array_get(out, i);
		const json_t *ot = json_object_get(e, "time");
		long from = -1;
		for (size_t j = 0; j < nin && from < 0; j++)
			if (same_entry(e, json_array_get(in, j)))
				from = (long)j;
		const char *it = from >= 0 ? json_string_value(json_object_get(json_array_get(in, (size_t)from), "time"))
					   : NULL;
		if (!ot) {
			src[i] = SRC_NONE;
		} else if (!json_is_string(ot)) {
			from = -2;
		} else if (it && !strcmp(it, json_string_value(ot))) {
			/* kept, unless the write's own second could have made it */
			if (strcmp(it, now0) >= 0)
				from = -2;
			src[i] = (int)from;
		} else if (strcmp(json_string_value(ot), now0) >= 0 && strcmp(json_string_value(ot), now1) <= 0) {
			src[i] = SRC_NOW;
		} else {
			from = -2;
		}
		if (from == -2) {
			free(src);
			free(same);
			return;
		}
		same[i] = src[i] >= 0 && json_equal(e, json_array_get(in, (size_t)src[i]));
		/* made from an input entry whose other members are in the key
		 * by name only, and changed: another pod's would be wrong */
		long made = -1;
		for (size_t j = 0; j < nin && made < 0; j++)
			if (same_entry(e, json_array_get(in, j)))
				made = (long)j;
		if (made >= 0 && (made >= MEMO_ENTRIES || mm->named[made]) && !same[i]) {
			free(src);
			free(same);
			return;
		}
	}
	json_t *keep = out ? copy(out) : json_array();
	char *key = malloc(mm->n);
	if (!keep || !key) {
		json_decref(keep);
		free(key);
		free(src);
		free(same);
		return;
	}
	memcpy(key, mm->k, mm->n);
	slot_clear(sl);
	sl->key = key;
	sl->len = mm->n;
	sl->entries = keep;
	sl->src = src;
	sl->same = same;
}

/* Sets nw's managedFields (in md) from slot sl, with the times of the
 * input entries in and of now.  An entry the write left as it was is the
 * input's own, moved into the new list (the old list goes with it): the
 * creator's entry names every field of the spec, and copying it was a
 * fifth of the record. */
static void memo_use(const struct memo_slot *sl, json_t *md, const json_t *in)
{
	json_t *mf = json_array();
	char ts[40] = "";
	size_t i;
	json_t *e;
	json_array_foreach(sl->entries, i, e) {
		if (sl->same[i]) { /* the input's entry as it was: moved, not copied */
			json_array_append(mf, json_array_get(in, (size_t)sl->src[i]));
			continue;
		}
		json_t *c = copy(e);
		if (sl->src[i] == SRC_NOW) {
			if (!*ts)
				mu__timestamp(ts, sizeof ts, false);
			json_object_set_new(c, "time", json_string(ts));
		} else if (sl->src[i] >= 0) {
			const char *it = json_string_value(json_object_get(json_array_get(in, (size_t)sl->src[i]), "time"));
			json_object_set_new(c, "time", json_string(it ? it : ""));
		}
		json_array_append_new(mf, c);
	}
	if (json_array_size(mf) == 0)
		json_object_del(md, "managedFields");
	else
		json_object_set(md, "managedFields", mf);
	json_decref(mf);
}

void mu__mf_memo_record(mu__mf_memo_t *mm, const mu__rtype_t *t, const json_t *old, json_t *nw,
			const char *name, bool status_sub)
{
	mu__mgr_t m;
	mu__mgr_controller(&m, t, name, status_sub);
	json_t *md = json_object_get(nw, "metadata");
	json_t *in = json_object_get(md, "managedFields");
	if (!mm || !old || !m.status_sub || m.status_meta || !json_is_object(md) || !key_build(mm, &m, old, nw, in)) {
		mu__mf_record(old, nw, &m);
		return;
	}
	struct memo_slot *sl = &mm->slot[fnv(mm->k, mm->n) % MEMO_SLOTS];
	if (sl->key && sl->len == mm->n && !memcmp(sl->key, mm->k, mm->n)) {
		mm->hits++;
		memo_use(sl, md, in);
		return;
	}
	mm->misses++;
	char now0[40], now1[40];
	json_incref(in); /* the record replaces it: its times are read after */
	mu__timestamp(now0, sizeof now0, false);
	mu__mf_record(old, nw, &m);
	mu__timestamp(now1, sizeof now1, false);
	memo_keep(mm, sl, in, json_object_get(md, "managedFields"), now0, now1);
	json_decref(in);
}
