/*
 * crdreg.c - the registry of the types a server serves: the built-in ones
 * of resources.c (rt < MU__RT_COUNT) and one slot per custom type a
 * CustomResourceDefinition made (rt = MU__RT_COUNT + slot).
 *
 * Readers (every request, the store) look types up without a lock: a slot
 * pointer is published with a release store once the type behind it is
 * complete, and a type is never changed or freed while the registry lives.
 * Writers (CRD create, update, delete, and the store's load) hold the
 * registry's mutex.  Memory: one mu__crdtype_t per distinct CRD spec
 * registered, kept until mu__types_free().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/crd.h"

struct mu__types {
	pthread_mutex_t mu;
	_Atomic(mu__crdtype_t *) slot[MU__CRD_MAX];
	atomic_int n; /* slots in use */
	unsigned long seq; /* registrations so far (under mu) */
};

int mu__types_new(mu__types_t **out)
{
	mu__types_t *r = calloc(1, sizeof *r);
	if (!r)
		return MU_ENOMEM;
	pthread_mutex_init(&r->mu, NULL);
	*out = r;
	return MU_OK;
}

static void crdtype_free(mu__crdtype_t *c)
{
	while (c) {
		mu__crdtype_t *next = c->retired;
		json_decref(c->crd);
		mu__crd_conv_pool_free(c->conv_pool);
		free(c);
		c = next;
	}
}

void mu__types_free(mu__types_t *r)
{
	if (!r)
		return;
	for (int i = 0; i < atomic_load(&r->n); i++)
		crdtype_free(atomic_load(&r->slot[i]));
	pthread_mutex_destroy(&r->mu);
	free(r);
}

const mu__rtype_t *mu__type(const mu__types_t *r, int rt)
{
	int n;
	const mu__rtype_t *b = mu__rtypes(&n);
	if (rt >= 0 && rt < n)
		return &b[rt];
	if (!r || rt < n || rt - n >= atomic_load_explicit(&r->n, memory_order_acquire))
		return NULL;
	mu__crdtype_t *c = atomic_load_explicit(&((mu__types_t *)r)->slot[rt - n], memory_order_acquire);
	return c ? &c->t : NULL;
}

int mu__types_end(const mu__types_t *r)
{
	return MU__RT_COUNT + (r ? atomic_load_explicit(&r->n, memory_order_acquire) : 0);
}

const mu__crdtype_t *mu__crdtype(const mu__rtype_t *t)
{
	return t && !mu__rtype_builtin(t) ? (const mu__crdtype_t *)(const void *)t : NULL;
}

bool mu__type_served(const mu__types_t *r, int rt)
{
	const mu__rtype_t *t = mu__type(r, rt);
	const mu__crdtype_t *c = mu__crdtype(t);
	return t && (!c || atomic_load(&((mu__crdtype_t *)c)->served));
}

int mu__crd_version(const mu__crdtype_t *c, const char *v)
{
	for (int i = 0; i < c->nver; i++)
		if (c->v[i].served && !strcmp(c->v[i].name, v))
			return i;
	return -1;
}

int mu__type_find(const mu__types_t *r, const char *group, const char *version, const char *plural)
{
	int rt = mu__rtype_find(group, version, plural);
	if (rt >= 0)
		return rt;
	for (int i = MU__RT_COUNT; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (t && !strcmp(t->group, group) && !strcmp(t->plural, plural) && mu__type_served(r, i) &&
		    mu__crd_version(mu__crdtype(t), version) >= 0)
			return i;
	}
	return -1;
}

int mu__type_by_res(const mu__types_t *r, const char *res)
{
	char buf[400];
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t)
			continue;
		snprintf(buf, sizeof buf, "%s/%s", t->group, t->plural);
		if (!strcmp(buf, res))
			return i;
	}
	return -1;
}

/* Fills the printer columns (Name, additionalPrinterColumns, Age) and the
 * selectable fields of the storage version. */
static void columns(mu__crdtype_t *c, const json_t *ver)
{
	int k = 0;
	c->cols[k++] = (mu__col_t){"Name", "string", "name", "Name must be unique within a namespace.", 0};
	size_t i;
	json_t *pc;
	bool age = false;
	json_array_foreach(json_object_get(ver, "additionalPrinterColumns"), i, pc) {
		if (k >= MU__CRD_COLS + 1)
			break;
		const char *nm = json_string_value(json_object_get(pc, "name"));
		const char *jp = json_string_value(json_object_get(pc, "jsonPath"));
		const char *ty = json_string_value(json_object_get(pc, "type"));
		if (!nm || !jp || !ty)
			continue;
		if (!strcmp(jp, ".metadata.creationTimestamp"))
			age = true;
		const char *fmt = json_string_value(json_object_get(pc, "format"));
		const char *desc = json_string_value(json_object_get(pc, "description"));
		c->colpath[k] = jp;
		c->cols[k++] = (mu__col_t){nm, ty, fmt ? fmt : "", desc ? desc : "",
					   (int)json_integer_value(json_object_get(pc, "priority"))};
	}
	if (!age && k < MU__CRD_COLS + 2) {
		c->colpath[k] = NULL;
		c->cols[k++] = (mu__col_t){"Age", "date", "", "Time since creation.", 0};
	}
	c->t.cols = c->cols;
	c->t.ncols = k;
	int nf = 0;
	json_t *sf;
	json_array_foreach(json_object_get(ver, "selectableFields"), i, sf) {
		const char *jp = json_string_value(json_object_get(sf, "jsonPath"));
		if (!jp || nf >= MU__CRD_FIELDS)
			continue;
		snprintf(c->fieldbuf[nf], sizeof c->fieldbuf[nf], "%s", jp + (*jp == '.'));
		c->fields[nf] = c->fieldbuf[nf];
		nf++;
	}
	c->fields[nf] = NULL;
	c->t.fields = c->fields;
}

/* Builds the type a validated CRD defines; NULL with a message. */
static mu__crdtype_t *build(const json_t *crd, char *err, size_t errlen)
{
	mu__crdtype_t *c = calloc(1, sizeof *c);
	if (!c || !(c->crd = json_deep_copy(crd))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	const json_t *spec = json_object_get(c->crd, "spec"), *names = json_object_get(spec, "names");
	c->t.group = json_string_value(json_object_get(spec, "group"));
	c->t.plural = json_string_value(json_object_get(names, "plural"));
	c->t.kind = json_string_value(json_object_get(names, "kind"));
	c->t.singular = json_string_value(json_object_get(names, "singular"));
	snprintf(c->singular, sizeof c->singular, "%s", c->t.singular && *c->t.singular ? c->t.singular
						: c->t.kind ? c->t.kind : "");
	for (char *q = c->singular; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	c->t.singular = c->singular;
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	c->t.namespaced = scope && !strcmp(scope, "Namespaced");
	c->t.has_spec = true;
	c->t.name_rule = MU__NAME_SUBDOMAIN;
	size_t i;
	json_t *sn;
	int k = 0;
	json_array_foreach(json_object_get(names, "shortNames"), i, sn)
		if (k < 2 && json_is_string(sn))
			c->shortnames[k++] = json_string_value(sn);
	memcpy(c->t.shortnames, c->shortnames, sizeof c->t.shortnames);
	k = 0;
	json_array_foreach(json_object_get(names, "categories"), i, sn)
		if (k < 3 && json_is_string(sn))
			c->categories[k++] = json_string_value(sn);
	const char *lk = json_string_value(json_object_get(names, "listKind"));
	snprintf(c->listkind, sizeof c->listkind, "%s", lk ? lk : "");
	json_t *v;
	c->storage = -1;
	json_array_foreach(json_object_get(spec, "versions"), i, v) {
		if (c->nver >= MU__CRD_VERSIONS)
			break;
		c->v[c->nver].name = json_string_value(json_object_get(v, "name"));
		c->v[c->nver].served = json_is_true(json_object_get(v, "served"));
		c->v[c->nver].schema = mu__jget(v, "schema.openAPIV3Schema");
		if (json_is_true(json_object_get(v, "storage")))
			c->storage = c->nver;
		c->nver++;
	}
	if (!c->t.group || !c->t.plural || !c->t.kind || c->storage < 0 || !c->v[c->storage].name) {
		snprintf(err, errlen, "the CustomResourceDefinition lacks a group, names or a storage version");
		crdtype_free(c);
		return NULL;
	}
	const json_t *sv = json_array_get(json_object_get(spec, "versions"), (size_t)c->storage);
	c->t.version = c->v[c->storage].name;
	c->t.subs = json_object_get(mu__jget(sv, "subresources"), "status") ? MU__SUB_STATUS : 0;
	const json_t *scale = mu__jget(sv, "subresources.scale");
	const char *sp = mu__jstr(scale, "specReplicasPath"), *stp = mu__jstr(scale, "statusReplicasPath");
	const char *lp = mu__jstr(scale, "labelSelectorPath");
	if (sp && stp && sp[0] == '.' && stp[0] == '.') { /* checked by mu__validate_crd */
		c->t.subs |= MU__SUB_SCALE;
		c->scale_spec = sp + 1;
		c->scale_status = stp + 1;
		c->scale_selector = lp && lp[0] == '.' ? lp + 1 : NULL;
	}
	columns(c, sv);
	const char *strategy = mu__jstr(spec, "conversion.strategy");
	c->conv_webhook = strategy && !strcmp(strategy, "Webhook");
	c->conv_pool = c->conv_webhook ? mu__crd_conv_pool_new() : NULL; /* NULL: a connection per call */
	atomic_init(&c->served, true);
	return c;
}

int mu__types_put(mu__types_t *r, const json_t *crd, char *err, size_t errlen)
{
	const char *g = mu__jstr(crd, "spec.group"), *p = mu__jstr(crd, "spec.names.plural");
	if (!g || !p) {
		snprintf(err, errlen, "the CustomResourceDefinition lacks spec.group or spec.names.plural");
		return MU_EINVAL;
	}
	char res[400];
	snprintf(res, sizeof res, "%s/%s", g, p);
	pthread_mutex_lock(&r->mu);
	int rt = mu__type_by_res(r, res);
	if (rt >= 0 && rt < MU__RT_COUNT) {
		pthread_mutex_unlock(&r->mu);
		return rt; /* served by muster itself */
	}
	mu__crdtype_t *old = rt >= 0 ? atomic_load(&r->slot[rt - MU__RT_COUNT]) : NULL;
	if (old && json_equal(json_object_get(old->crd, "spec"), json_object_get(crd, "spec")) &&
	    atomic_load(&old->served)) {
		pthread_mutex_unlock(&r->mu);
		return rt;
	}
	if (rt < 0 && atomic_load(&r->n) >= MU__CRD_MAX) {
		pthread_mutex_unlock(&r->mu);
		snprintf(err, errlen, "muster up serves at most %d custom resource types", MU__CRD_MAX);
		return MU_ELIMIT;
	}
	mu__crdtype_t *c = build(crd, err, errlen);
	if (!c) {
		pthread_mutex_unlock(&r->mu);
		return MU_EINVAL;
	}
	c->retired = old;
	c->seq = ++r->seq;
	if (rt < 0) {
		int slot = atomic_load(&r->n);
		atomic_store_explicit(&r->slot[slot], c, memory_order_release);
		atomic_store_explicit(&r->n, slot + 1, memory_order_release);
		rt = MU__RT_COUNT + slot;
	} else {
		atomic_store_explicit(&r->slot[rt - MU__RT_COUNT], c, memory_order_release);
	}
	pthread_mutex_unlock(&r->mu);
	return rt;
}

void mu__types_unserve(mu__types_t *r, int rt)
{
	pthread_mutex_lock(&r->mu);
	const mu__crdtype_t *c = mu__crdtype(mu__type(r, rt));
	if (c)
		atomic_store(&((mu__crdtype_t *)c)->served, false);
	pthread_mutex_unlock(&r->mu);
}
