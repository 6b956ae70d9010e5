/*
 * schema.c - field validation of the built-in kinds against the generated
 * schema registry (schema_gen.c).  kube-apiserver decodes a body into Go
 * structs, so a field no struct has is never stored: with
 * fieldValidation=Strict (kubectl's default) the request fails with
 * `strict decoding error: unknown field "spec.schedulername"`, with Warn
 * (the server's default) it is dropped with a Warning header, with Ignore
 * dropped silently.  mu__schema_check() finds and prunes those fields the
 * same way; values are not type-checked here (validate.c checks the fields
 * muster reads).
 *
 * Field paths are written as kube-apiserver writes them: dotted, with
 * [i] for list items.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/schema.h"

int mu__schema_model(const char *group, const char *kind)
{
	for (int i = 0; i < mu__nsroots; i++)
		if (!strcmp(mu__sroots[i].group, group) && !strcmp(mu__sroots[i].kind, kind))
			return mu__sroots[i].model;
	return -1;
}

static const mu__sfield_t *find_field(int model, const char *name)
{
	const mu__smodel_t *m = &mu__smodels[model];
	int lo = 0, hi = m->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(name, mu__sfields[m->first + mid].name);
		if (!c)
			return &mu__sfields[m->first + mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void note(mu__unknown_t *u, const char *path)
{
	size_t l = strlen(u->text);
	if (l + 40 < sizeof u->text)
		snprintf(u->text + l, sizeof u->text - l, "%sunknown field \"%s\"", u->n ? ", " : "", path);
	u->n++;
}

static void walk(json_t *obj, int model, bool prune, char *path, size_t plen, size_t cap, mu__unknown_t *u,
		 int depth);

/* Checks one value of field f at path. */
static void walk_value(json_t *v, const mu__sfield_t *f, bool prune, char *path, size_t plen, size_t cap,
		       mu__unknown_t *u, int depth)
{
	if (f->elem != MU__ST_OBJECT || f->model < 0)
		return;
	if (f->shape == MU__SS_SCALAR) {
		if (json_is_object(v))
			walk(v, f->model, prune, path, plen, cap, u, depth + 1);
	} else if (f->shape == MU__SS_ARRAY) {
		size_t i;
		json_t *it;
		json_array_foreach(v, i, it) {
			if (!json_is_object(it))
				continue;
			int w = snprintf(path + plen, cap - plen, "[%zu]", i);
			size_t nl = w > 0 && (size_t)w < cap - plen ? plen + (size_t)w : plen;
			walk(it, f->model, prune, path, nl, cap, u, depth + 1);
			path[plen] = '\0';
		}
	} else if (json_is_object(v)) {
		const char *k;
		json_t *it;
		json_object_foreach(v, k, it) {
			if (!json_is_object(it))
				continue;
			int w = snprintf(path + plen, cap - plen, "[%s]", k);
			size_t nl = w > 0 && (size_t)w < cap - plen ? plen + (size_t)w : plen;
			walk(it, f->model, prune, path, nl, cap, u, depth + 1);
			path[plen] = '\0';
		}
	}
}

static void walk(json_t *obj, int model, bool prune, char *path, size_t plen, size_t cap, mu__unknown_t *u,
		 int depth)
{
	if (depth > MU__MAX_DEPTH)
		return;
	const char *k;
	json_t *v, *tmp;
	json_object_foreach_safe(obj, tmp, k, v) {
		int w = snprintf(path + plen, cap - plen, "%s%s", plen ? "." : "", k);
		size_t nl = w > 0 && (size_t)w < cap - plen ? plen + (size_t)w : plen;
		const mu__sfield_t *f = find_field(model, k);
		if (!f) {
			note(u, path);
			path[plen] = '\0';
			if (prune)
				json_object_del(obj, k);
			continue;
		}
		walk_value(v, f, prune, path, nl, cap, u, depth);
		path[plen] = '\0';
	}
}

void mu__schema_check(json_t *obj, int model, bool prune, mu__unknown_t *u)
{
	mu__schema_check_changed(obj, NULL, model, prune, u);
}

/* walk of obj (at path) against model, a known member json_equal to
 * old's of that name passed over, and a changed object member of one
 * object value walked the same way (levels deep more). */
static void walk_changed(json_t *obj, const json_t *old, int model, bool prune, char *path, size_t plen,
			 size_t cap, mu__unknown_t *u, int levels)
{
	const char *k;
	json_t *v, *tmp;
	json_object_foreach_safe(obj, tmp, k, v) {
		const mu__sfield_t *f = find_field(model, k);
		const json_t *ov = json_object_get(old, k);
		if (f && json_equal(v, ov))
			continue;
		int w = snprintf(path + plen, cap - plen, "%s%s", plen ? "." : "", k);
		size_t nl = w > 0 && (size_t)w < cap - plen ? plen + (size_t)w : plen;
		if (!f) {
			note(u, path);
			path[plen] = '\0';
			if (prune)
				json_object_del(obj, k);
			continue;
		}
		if (levels > 0 && f->elem == MU__ST_OBJECT && f->model >= 0 && f->shape == MU__SS_SCALAR &&
		    json_is_object(v) && json_is_object(ov))
			walk_changed(v, ov, f->model, prune, path, nl, cap, u, levels - 1);
		else
			walk_value(v, f, prune, path, nl, cap, u, 0);
		path[plen] = '\0';
	}
}

void mu__schema_check_changed(json_t *obj, const json_t *old, int model, bool prune, mu__unknown_t *u)
{
	memset(u, 0, sizeof *u);
	if (model < 0 || model >= mu__nsmodels || !json_is_object(obj))
		return;
	char path[512] = "";
	/* the top level and its objects' members (metadata's managedFields
	 * and labels, status's conditions), a known member the same as
	 * stored passed over: it was checked (and pruned) when it was stored */
	if (json_is_object(old))
		walk_changed(obj, old, model, prune, path, 0, sizeof path, u, 1);
	else
		walk(obj, model, prune, path, 0, sizeof path, u, 0);
}
