/*
 * gc.c - the garbage collector of muster up, after kube-controller-manager's
 * (pkg/controller/garbagecollector): dependents name their owners in
 * metadata.ownerReferences (kind, name and uid; the owner is in the
 * dependent's namespace or cluster-scoped), and
 *   - when an owner is deleted, every dependent whose owners are now all
 *     gone (absent, or present with another uid) is deleted in the
 *     background, and a dependent that still has another owner loses the
 *     dangling reference;
 *   - an owner deleted with propagationPolicy Orphan carries the `orphan`
 *     finalizer: its dependents lose their reference to it, then the
 *     finalizer goes and with it the owner;
 *   - an owner deleted with Foreground carries `foregroundDeletion`: its
 *     dependents are deleted, and the finalizer goes once no dependent with
 *     blockOwnerDeletion=true is left.
 * It learns about owners from the changes it sees while running, and at
 * each start (mu__gc_resync) from a scan of the store, as kube's builds its
 * graph from its informers after a restart: a dependent whose owner (by
 * uid) no longer exists, deleted while muster up was down, is collected
 * then, and owners left with the orphan or foregroundDeletion finalizer
 * are finalized.  While it runs, a reference to an owner uid it has not
 * seen named before is checked at once with a lookup of the owner (kube's
 * "virtual" owner nodes, which attemptToDelete confirms with a live GET):
 * a dependent naming an owner that never existed, or that is not in the
 * dependent's namespace, is collected as if that owner had just been
 * deleted.
 *
 * It runs on the controller thread (server.c): mu__gc_event() notes work
 * from store changes, mu__gc_sync() does it.  Work per sync is bounded by
 * MAX_WORK owners and a store scan per owner; what is left waits for the
 * next sync.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

#define MAX_PENDING 4096
#define MAX_WORK 16
#define MAX_REFERENCED 1000000

struct mu__gc {
	mu_apiserver_t *s;
	json_t *referenced;  /* uid -> true: uids some ownerReference names */
	json_t *gone;        /* [[uid, ns], ...]: deleted owners with dependents */
	json_t *finalizing;  /* {"rt/ns/name": true}: owners with orphan or foregroundDeletion */
};

int mu__gc_new(mu_apiserver_t *s, mu__gc_t **out)
{
	mu__gc_t *g = calloc(1, sizeof *g);
	if (!g)
		return MU_ENOMEM;
	g->s = s;
	g->referenced = json_object();
	g->gone = json_array();
	g->finalizing = json_object();
	if (!g->referenced || !g->gone || !g->finalizing) {
		mu__gc_free(g);
		return MU_ENOMEM;
	}
	*out = g;
	return MU_OK;
}

void mu__gc_free(mu__gc_t *g)
{
	if (!g)
		return;
	json_decref(g->referenced);
	json_decref(g->gone);
	json_decref(g->finalizing);
	free(g);
}

static bool has_finalizer(const json_t *o, const char *f)
{
	size_t i;
	json_t *x;
	json_array_foreach(mu__jget(o, "metadata.finalizers"), i, x)
		if (json_is_string(x) && !strcmp(json_string_value(x), f))
			return true;
	return false;
}

static int owner_lookup(mu_apiserver_t *s, const json_t *r, const char *ns);
enum { OWNER_PRESENT, OWNER_ABSENT, OWNER_UNKNOWN };

/* The end of the JSON array that starts at t (a '['): the character after
 * its ']', or NULL when the text ends first.  Strings are skipped.
 * O(the array's text). */
static const char *array_end(const char *t)
{
	int depth = 0;
	for (; *t; t++) {
		if (*t == '"') {
			for (t++; *t && *t != '"'; t++)
				if (*t == '\\' && t[1])
					t++;
			if (!*t)
				return NULL;
		} else if (*t == '[' || *t == '{') {
			depth++;
		} else if ((*t == ']' || *t == '}') && --depth == 0) {
			return t + 1;
		}
	}
	return NULL;
}

/* Whether two versions' texts hold the same ownerReferences: every
 * "ownerReferences" array of one equal, in order, to the other's (a key
 * inside a string is escaped, so only keys match).  O(the texts). */
static bool same_refs(const char *a, const char *b)
{
	static const char key[] = "\"ownerReferences\":[";
	for (;;) {
		a = strstr(a, key);
		b = strstr(b, key);
		if (!a || !b)
			return !a && !b;
		a += sizeof key - 2; /* at the '[' */
		b += sizeof key - 2;
		const char *ea = array_end(a), *eb = array_end(b);
		if (!ea || !eb || ea - a != eb - b || memcmp(a, b, (size_t)(ea - a)))
			return false;
		a = ea;
		b = eb;
	}
}

/* The parsed value of metadata.KEY in an object's stored text (caller
 * owns), NULL when absent: the member alone, not the object (a pod's
 * parse was most of the collector's cost per pod created, most of it the
 * spec, the status and managedFields it does not read).  O(the text
 * before the value, and the value). */
static json_t *meta_value(const mu__obj_t *o, const char *key)
{
	const char *v;
	size_t n;
	return mu__text_at(o->json, o->len, "metadata", key, &v, &n) ? mu__json_parse(v, n) : NULL;
}

/* Whether the array of strings a (NULL: none) holds f. */
static bool holds(const json_t *a, const char *f)
{
	size_t i;
	json_t *x;
	json_array_foreach(a, i, x)
		if (json_is_string(x) && !strcmp(json_string_value(x), f))
			return true;
	return false;
}

/* Whether o's text names one of the two finalizers the collector acts
 * on (a prefilter of their parse: only when it does can metadata hold
 * them).  O(the text). */
static bool names_finalizer(const mu__obj_t *o)
{
	return strstr(o->json, "\"orphan\"") || strstr(o->json, "\"foregroundDeletion\"");
}

/* Notes a change: the owner uids it names (with check, a uid not named
 * before whose owner is absent is queued as gone, kube's virtual owner),
 * a deleted owner's dependents, an owner's finalizers.  A change that
 * keeps the version before's references and is no deletion with
 * finalizers has nothing new to note and is not parsed (kube's graph
 * builder acts on the references' differences, referencesDiffs): a pod
 * bound or its status written, most of a worker's changes in a dispatch
 * (docs/dispatch.md, round 9).  Otherwise only metadata.ownerReferences,
 * and metadata.finalizers when the text names one of the two, are
 * parsed; the uid is the version's own. */
static void note(mu__gc_t *g, const mu__wev_t *ev, bool check)
{
	const mu__obj_t *o = ev->obj;
	bool refs = strstr(o->json, "\"ownerReferences\"") != NULL;
	bool fin = o->deleting && names_finalizer(o);
	if (!refs && !fin && ev->type != MU__EV_DELETED)
		return;
	if (ev->type == MU__EV_MODIFIED && ev->prev && !fin && same_refs(o->json, ev->prev->json))
		return;
	json_t *rs = refs ? meta_value(o, "ownerReferences") : NULL;
	size_t i;
	json_t *r;
	json_array_foreach(rs, i, r) {
		const char *u = mu__jstr(r, "uid");
		if (!u || !*u || json_object_size(g->referenced) >= MAX_REFERENCED)
			continue;
		if (check && ev->type != MU__EV_DELETED && !json_object_get(g->referenced, u) &&
		    owner_lookup(g->s, r, o->ns) == OWNER_ABSENT && json_array_size(g->gone) < MAX_PENDING)
			json_array_append_new(g->gone, json_pack("[s, s]", u, o->ns));
		json_object_set_new(g->referenced, u, json_true());
	}
	json_decref(rs);
	const char *uid = o->uid && *o->uid ? o->uid : NULL;
	if (ev->type == MU__EV_DELETED && uid && json_object_get(g->referenced, uid)) {
		if (json_array_size(g->gone) < MAX_PENDING)
			json_array_append_new(g->gone, json_pack("[s, s]", uid, o->ns));
		json_object_del(g->referenced, uid);
	}
	if (ev->type == MU__EV_DELETED || !(o->deleting ? fin : names_finalizer(o)))
		return;
	json_t *fs = meta_value(o, "finalizers");
	if ((holds(fs, "orphan") || holds(fs, "foregroundDeletion")) && json_object_size(g->finalizing) < MAX_PENDING) {
		char key[400];
		snprintf(key, sizeof key, "%d/%s/%s", o->rt, o->ns, o->name);
		json_object_set_new(g->finalizing, key, json_true());
	}
	json_decref(fs);
}

void mu__gc_event(mu__gc_t *g, const mu__wev_t *ev)
{
	note(g, ev, true);
}

/* --- owners and dependents ---------------------------------------------- */

/* What reference r of a dependent in namespace ns ("" when the dependent
 * is cluster-scoped) finds: its owner with the uid it gives (PRESENT), no
 * such owner (ABSENT: none of that name, or one with another uid), or
 * nothing it can resolve (UNKNOWN: a reference without kind, name or uid,
 * a kind muster up does not serve, or a namespaced owner named by a
 * cluster-scoped dependent, which kube's collector reports as
 * OwnerRefInvalidNamespace and leaves alone). */
static int owner_lookup(mu_apiserver_t *s, const json_t *r, const char *ns)
{
	const char *av = mu__jstr(r, "apiVersion"), *kind = mu__jstr(r, "kind"), *name = mu__jstr(r, "name");
	const char *uid = mu__jstr(r, "uid");
	if (!av || !kind || !name || !uid)
		return OWNER_UNKNOWN;
	const char *slash = strchr(av, '/');
	size_t gl = slash ? (size_t)(slash - av) : 0;
	for (int rt = 0; rt < mu__types_end(s->types); rt++) {
		const mu__rtype_t *t = mu__type(s->types, rt);
		if (!t || strcmp(t->kind, kind) || strlen(t->group) != gl || strncmp(t->group, av, gl))
			continue;
		if (t->namespaced && !*ns)
			return OWNER_UNKNOWN;
		mu__obj_t *o = mu__store_get(s->store, rt, t->namespaced ? ns : NULL, name);
		bool yes = o && o->uid && *o->uid && !strcmp(o->uid, uid); /* the version's uid: no parse */
		mu__obj_unref(o);
		return yes ? OWNER_PRESENT : OWNER_ABSENT;
	}
	return OWNER_UNKNOWN;
}

/* Whether that owner counts as existing (an unresolvable one does: kube
 * cannot resolve it either and leaves the dependent alone). */
static bool owner_exists(mu_apiserver_t *s, const json_t *r, const char *ns)
{
	return owner_lookup(s, r, ns) != OWNER_ABSENT;
}

typedef struct dep_filter {
	char needle[128];
} dep_filter_t;

static bool may_depend(void *ctx, const mu__obj_t *o)
{
	return strstr(o->json, ((dep_filter_t *)ctx)->needle) != NULL;
}

/* The reference to uid in dependent j, or NULL. */
static json_t *ref_to(const json_t *j, const char *uid)
{
	size_t i;
	json_t *r;
	json_array_foreach(mu__jget(j, "metadata.ownerReferences"), i, r) {
		const char *u = mu__jstr(r, "uid");
		if (u && !strcmp(u, uid))
			return r;
	}
	return NULL;
}

/* Drops the owner reference to uid (ctx) from a dependent. */
static int unref_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU_ENOENT;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	json_t *refs = mu__jget(o, "metadata.ownerReferences");
	bool changed = false;
	for (size_t i = json_array_size(refs); i-- > 0;) {
		const char *u = mu__jstr(json_array_get(refs, i), "uid");
		if (u && !strcmp(u, ctx)) {
			json_array_remove(refs, i);
			changed = true;
		}
	}
	if (!changed) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	if (json_array_size(refs) == 0)
		json_object_del(json_object_get(o, "metadata"), "ownerReferences");
	*out = o;
	return MU__MUT_PUT;
}

enum { ACT_COLLECT, ACT_ORPHAN, ACT_FOREGROUND };

/* Acts on the dependents of owner uid (namespace ns, "" when the owner is
 * cluster-scoped): collect (owner gone), orphan, or delete (foreground).
 * Returns how many dependents with blockOwnerDeletion are still there. */
/* Acts on dependent d of owner uid in tx; 1 when it blocks a foreground
 * deletion (blockOwnerDeletion), else 0. */
static int one_dependent(mu_apiserver_t *s, mu__wtx_t *tx, int rt, const mu__obj_t *d, const char *uid, int act)
{
	json_t *j = mu__obj_parse(d);
	json_t *r = ref_to(j, uid);
	int blocking = 0;
	if (!r) {
		json_decref(j);
		return 0;
	}
	if (act == ACT_ORPHAN) {
		mu__store_apply(tx, rt, d->ns, d->name, unref_fn, (void *)uid, false, NULL);
	} else if (act == ACT_FOREGROUND) {
		blocking = json_is_true(json_object_get(r, "blockOwnerDeletion"));
		if (!d->deleting)
			mu__delete_in(tx, rt, d->ns, d->name, -1, NULL, NULL, false, NULL);
	} else {
		size_t k;
		json_t *o;
		bool other = false;
		json_array_foreach(mu__jget(j, "metadata.ownerReferences"), k, o)
			if (o != r && owner_exists(s, o, d->ns))
				other = true;
		if (other)
			mu__store_apply(tx, rt, d->ns, d->name, unref_fn, (void *)uid, false, NULL);
		else if (!d->deleting)
			mu__delete_in(tx, rt, d->ns, d->name, -1, NULL, NULL, false, NULL);
	}
	json_decref(j);
	return blocking;
}

typedef struct {
	mu_apiserver_t *s;
	int rt;
	const char *uid;
	int act;
	int blocking; /* dependents that block their owner's deletion */
} dep_walk_t;

/* Acts on one page of dependents in one write transaction. */
static int dep_page(void *ctx, mu__page_t *pg)
{
	dep_walk_t *w = ctx;
	mu__wtx_t *tx;
	mu__store_begin(w->s->store, &tx);
	for (size_t i = 0; i < pg->n; i++)
		w->blocking += one_dependent(w->s, tx, w->rt, pg->objs[i], w->uid, w->act);
	mu__store_commit(tx);
	return 0;
}

static int dependents(mu__gc_t *g, const char *uid, const char *ns, int act)
{
	mu_apiserver_t *s = g->s;
	dep_filter_t f;
	snprintf(f.needle, sizeof f.needle, "\"uid\":\"%.80s\"", uid);
	int blocking = 0;
	for (int rt = 0; rt < mu__types_end(s->types); rt++) {
		const mu__rtype_t *t = mu__type(s->types, rt);
		if (!t || rt == MU__RT_SSARS || rt == MU__RT_SSRRS || (*ns && !t->namespaced))
			continue;
		dep_walk_t w = {s, rt, uid, act, 0};
		(void)mu__store_each(s->store, rt, *ns ? ns : NULL, MU__TX_MAX, may_depend, &f, dep_page, &w);
		blocking += w.blocking;
	}
	return blocking;
}

/* Removes finalizer ctx from an owner; deletes it when that was the last
 * one (it is being deleted). */
static int unfinalize_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU_ENOENT;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	json_t *fin = mu__jget(o, "metadata.finalizers");
	for (size_t i = json_array_size(fin); i-- > 0;)
		if (!strcmp(json_string_value(json_array_get(fin, i)) ? json_string_value(json_array_get(fin, i)) : "",
			    ctx))
			json_array_remove(fin, i);
	if (json_array_size(fin) == 0) {
		json_decref(o);
		return MU__MUT_DEL;
	}
	*out = o;
	return MU__MUT_PUT;
}

/* Works on one owner with orphan or foregroundDeletion; true when done. */
static bool finalize(mu__gc_t *g, const char *key)
{
	char ns[64], name[254];
	const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	if (!b || (size_t)(b - a - 1) >= sizeof ns || strlen(b + 1) >= sizeof name)
		return true;
	int rt = atoi(key);
	snprintf(ns, sizeof ns, "%.*s", (int)(b - a - 1), a + 1);
	snprintf(name, sizeof name, "%s", b + 1);
	mu__obj_t *o = mu__store_get(g->s->store, rt, *ns ? ns : NULL, name);
	json_t *j = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	const char *uid = mu__jstr(j, "metadata.uid");
	bool done = true;
	if (j && uid && mu__jget(j, "metadata.deletionTimestamp")) {
		const char *f = has_finalizer(j, "orphan") ? "orphan"
			      : has_finalizer(j, "foregroundDeletion") ? "foregroundDeletion" : NULL;
		if (f) {
			int left = dependents(g, uid, ns, !strcmp(f, "orphan") ? ACT_ORPHAN : ACT_FOREGROUND);
			if (left == 0)
				mu__store_mutate(g->s->store, rt, *ns ? ns : NULL, name, unfinalize_fn, (void *)f,
						 false, NULL);
			done = false; /* look again: the next finalizer, or the blockers */
		}
	}
	json_decref(j);
	return done;
}

/* Notes what a scanned object o asks of the collector: it is fed to
 * mu__gc_event as a change (its owners' uids, a finalizer to work on), and
 * each owner it names that is gone is queued as if its deletion had just
 * been seen, once per uid and namespace (seen). */
static void resync_one(mu__gc_t *g, const mu__obj_t *o, json_t *seen)
{
	mu__wev_t ev = {.type = MU__EV_MODIFIED, .obj = (mu__obj_t *)o};
	note(g, &ev, false); /* the owners are checked below, per namespace */
	if (!strstr(o->json, "\"ownerReferences\""))
		return;
	json_t *j = mu__obj_parse(o);
	size_t i;
	json_t *r;
	json_array_foreach(mu__jget(j, "metadata.ownerReferences"), i, r) {
		const char *u = mu__jstr(r, "uid");
		char key[400];
		snprintf(key, sizeof key, "%.120s/%s", u ? u : "", o->ns);
		if (!u || json_object_get(seen, key) || owner_lookup(g->s, r, o->ns) != OWNER_ABSENT)
			continue;
		json_object_set_new(seen, key, json_true());
		if (json_array_size(g->gone) < MAX_PENDING)
			json_array_append_new(g->gone, json_pack("[s, s]", u, o->ns));
	}
	json_decref(j);
}

static bool gc_relevant(void *ctx, const mu__obj_t *o)
{
	(void)ctx;
	return strstr(o->json, "\"ownerReferences\"") != NULL ||
	       (o->deleting && (strstr(o->json, "\"orphan\"") || strstr(o->json, "\"foregroundDeletion\"")));
}

typedef struct {
	mu__gc_t *g;
	json_t *seen;
} resync_walk_t;

static int resync_page(void *ctx, mu__page_t *pg)
{
	resync_walk_t *w = ctx;
	for (size_t i = 0; i < pg->n; i++)
		resync_one(w->g, pg->objs[i], w->seen);
	return 0;
}

int mu__gc_resync(mu__gc_t *g)
{
	mu_apiserver_t *s = g->s;
	json_t *seen = json_object();
	if (!seen)
		return MU_ENOMEM;
	int rc = MU_OK;
	for (int rt = 0; rt < mu__types_end(s->types) && rc == MU_OK; rt++) {
		if (!mu__type(s->types, rt) || rt == MU__RT_SSARS || rt == MU__RT_SSRRS)
			continue;
		resync_walk_t w = {g, seen};
		rc = mu__store_each(s->store, rt, NULL, 1024, gc_relevant, NULL, resync_page, &w);
	}
	json_decref(seen);
	return rc;
}

void mu__gc_sync(mu__gc_t *g)
{
	int work = 0;
	while (json_array_size(g->gone) > 0 && work++ < MAX_WORK) {
		json_t *e = json_incref(json_array_get(g->gone, 0));
		json_array_remove(g->gone, 0);
		const char *uid = json_string_value(json_array_get(e, 0)), *ns = json_string_value(json_array_get(e, 1));
		if (uid && ns && dependents(g, uid, ns, ACT_COLLECT) > 0 && json_array_size(g->gone) < MAX_PENDING)
			json_array_append(g->gone, e);
		json_decref(e);
	}
	const char *k;
	json_t *v, *tmp;
	json_object_foreach_safe(g->finalizing, tmp, k, v) {
		if (work++ >= MAX_WORK)
			break;
		if (finalize(g, k))
			json_object_del(g->finalizing, k);
	}
}

bool mu__gc_busy(const mu__gc_t *g)
{
	return json_array_size(g->gone) > 0 || json_object_size(g->finalizing) > 0;
}
