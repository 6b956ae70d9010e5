/*
 * store.c - durable object storage for the control plane.
 *
 * The truth is a SQLite database in WAL mode (DIR/muster.db): one row per
 * object (resource, namespace, name, resourceVersion, JSON body) and the
 * global resourceVersion counter, written in the same transaction as every
 * change.  Writes are committed in groups: a writer stages its transaction
 * under the writer lock and appends it to the open batch, then waits
 * without the lock while one committer thread writes the batch in one
 * SQLite transaction (one COMMIT, one fsync for every writer in it).  A
 * write is acknowledged, and published to readers and watchers, only after
 * its batch's COMMIT returned, so a `kill -9` loses nothing acknowledged
 * (with fsync on, neither does a power cut); when a COMMIT fails, its batch
 * and the one staged behind it (which may build on it) fail whole, and
 * nothing of them is published.  The database is opened in exclusive
 * locking mode: one server per data directory.
 *
 * A version's text is the compact JSON that mu__json_text writes, and it
 * is read back by mu__json_parse: util's one-pass parser (jparse.c), which
 * builds json_loadb's tree and leaves what it does not take to jansson.
 *
 * Reads never touch SQLite: every object is also held in memory as an
 * immutable, reference-counted version (mu__obj_t) in a hash table per
 * resource type, with a key-sorted view rebuilt lazily for lists.  Recent
 * changes sit in a ring indexed by resourceVersion (versions are dense: one
 * per change), from which watches resume; a watch from before the ring is
 * answered 410 Expired.  As kube-apiserver's watch cache (cacher's
 * eventFreshDuration, 75 s), the ring keeps a change only while it is
 * fresh or among the last ring_min: its size is a cap, not a target, so
 * memory follows the rate of change rather than filling the cap (100,000
 * versions of 2-3 KiB pods held some hundreds of MiB after an hour).  The ring starts empty at each open, but the
 * version of each type's last change is kept durably (a row
 * "rv:GROUP/PLURAL" in meta, written in the same transaction), so that a
 * watch from before the open, when nothing of its type changed between its
 * version and the open, resumes after a restart (as kube-apiserver serves
 * it from etcd's history) instead of listing again and missing what was
 * deleted while it was away.
 *
 * Locks: `wmu` serializes writers and guards the batches and the pending
 * versions (`over`: what staged batches wrote, by key, so that a writer
 * sees its predecessors' writes before they are durable); `mu` guards the
 * tables, the ring and the published version for readers.  Writers read the
 * tables without `mu`, since only the committer changes them and it holds
 * `wmu` to publish (wmu, then mu).  Readers see only published (durable)
 * versions, except the writer itself: mu__store_get inside a transaction
 * sees the pending versions, and mu__store_list inside one first waits
 * until every staged batch is published (other writers held off), so that
 * a transaction that counts objects (an eviction against a budget) counts
 * what will be there.  A commit wakes the waiters for any change and those
 * for the types it changed, so a watch of one type sleeps through the
 * others' changes (with a dozen watches open, waking all of them on every
 * change made two thirds of bench_kube's context switches).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/crd.h"
#include "muster/jpath.h"

/* --- object versions ---------------------------------------------------- */

/* Appends "k\0v\0" to kv at *off. */
static void kv_put(char *kv, size_t *off, const char *k, const char *v)
{
	size_t lk = strlen(k) + 1, lv = strlen(v) + 1;
	memcpy(kv + *off, k, lk);
	memcpy(kv + *off + lk, v, lv);
	*off += lk + lv;
}

/* Text of a scalar JSON value for field selectors, into buf; NULL if the
 * value is not a scalar. */
static const char *scalar_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_true(v))
		return "true";
	if (json_is_false(v))
		return "false";
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return NULL;
}

/* Builds a version around text (owned, taken even on failure). */
static mu__obj_t *obj_build(int rt, const mu__rtype_t *t, const json_t *o, int64_t rv, char *text)
{
	mu__obj_t *ob = calloc(1, sizeof *ob);
	if (!ob || !text) {
		free(ob);
		free(text);
		return NULL;
	}
	ob->json = text;
	ob->len = strlen(text);
	ob->rt = rt;
	ob->type = t;
	ob->rv = rv;
	atomic_init(&ob->refs, 1);
	const char *name = mu__jstr(o, "metadata.name");
	const char *ns = t->namespaced ? mu__jstr(o, "metadata.namespace") : NULL;
	ob->name = strdup(name ? name : "");
	ob->ns = strdup(ns ? ns : "");
	ob->deleting = mu__jget(o, "metadata.deletionTimestamp") != NULL &&
		       !json_is_null(mu__jget(o, "metadata.deletionTimestamp"));
	/* the key, then the uid after its NUL (read by the simulated kubelet
	 * and the controllers on every change, without parsing the object) */
	const char *uid = mu__jstr(o, "metadata.uid");
	size_t kl = strlen(ob->ns) + strlen(ob->name) + 2, ul = uid ? strlen(uid) + 1 : 1;
	ob->key = malloc(kl + ul);
	if (ob->key) {
		int n = snprintf(ob->key, kl, "%s%s%s", ob->ns, *ob->ns ? "/" : "", ob->name);
		memcpy(ob->key + n + 1, uid ? uid : "", ul);
		ob->uid = ob->key + n + 1;
	}
	/* labels and fields, measured then copied; each field's path is
	 * looked up once (the first FIELDS_MAX; a type with more looks the
	 * rest up twice) */
	enum { FIELDS_MAX = 32 };
	const char *fv[FIELDS_MAX];
	char nb[FIELDS_MAX][24], nb1[24];
	const json_t *labels = mu__jget(o, "metadata.labels");
	size_t need = 1;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)labels, k, v)
		if (json_is_string(v))
			need += strlen(k) + strlen(json_string_value(v)) + 2;
	for (int i = 0; t->fields && t->fields[i]; i++) {
		const char *s = i < FIELDS_MAX ? (fv[i] = scalar_text(mu__jget(o, t->fields[i]), nb[i], sizeof nb[i]))
					       : scalar_text(mu__jget(o, t->fields[i]), nb1, sizeof nb1);
		if (s)
			need += strlen(t->fields[i]) + strlen(s) + 2;
	}
	ob->kv = malloc(need);
	if (!ob->name || !ob->ns || !ob->key || !ob->kv) {
		mu__obj_unref(ob);
		return NULL;
	}
	size_t off = 0;
	json_object_foreach((json_t *)labels, k, v)
		if (json_is_string(v)) {
			kv_put(ob->kv, &off, k, json_string_value(v));
			ob->nlabels++;
		}
	for (int i = 0; t->fields && t->fields[i]; i++) {
		const char *s = i < FIELDS_MAX ? fv[i] : scalar_text(mu__jget(o, t->fields[i]), nb1, sizeof nb1);
		if (s) {
			kv_put(ob->kv, &off, t->fields[i], s);
			ob->nfields++;
		}
	}
	ob->kv[off] = '\0';
	return ob;
}

/* The text being built by mu__json_text: in `stack` until it outgrows it,
 * then on the heap.  `bad` is set on OOM or a value text() leaves to
 * jansson that jansson refuses. */
typedef struct tbuf {
	char *p;
	size_t n, cap;
	bool bad;
	char stack[8192];
} tbuf_t;

/* Makes room for n more bytes (doubling); false (and bad) on OOM. */
static bool tb_grow(tbuf_t *b, size_t n)
{
	if (b->bad)
		return false;
	size_t nc = b->cap * 2;
	while (nc < b->n + n)
		nc *= 2;
	char *np = b->p == b->stack ? malloc(nc) : realloc(b->p, nc);
	if (!np) {
		b->bad = true;
		return false;
	}
	if (b->p == b->stack)
		memcpy(np, b->stack, b->n);
	b->p = np;
	b->cap = nc;
	return true;
}

/* Room for n more bytes: the common case inline, without a call. */
static inline bool tb_room(tbuf_t *b, size_t n)
{
	return (b->n + n <= b->cap && !b->bad) || tb_grow(b, n);
}

static inline void tb_put(tbuf_t *b, const char *s, size_t n)
{
	if (!tb_room(b, n))
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static inline void tb_ch(tbuf_t *b, char c)
{
	if (!tb_room(b, 1))
		return;
	b->p[b->n++] = c;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether the 8 bytes at s hold one that a JSON string escapes: below
 * 0x20, '"' or '\\' (exact, as the classic has-zero and has-less tests
 * are for "any byte"). */
static inline bool word_escapes(const char *s)
{
	uint64_t x;
	memcpy(&x, s, 8);
	uint64_t q = x ^ (ONES * '"'), bs = x ^ (ONES * '\\');
	return (((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((bs - ONES) & ~bs)) & HIGHS;
}

/* The length of s's first run (of at most n bytes) that needs no escape:
 * eight bytes at a time, then byte by byte.  O(n). */
static size_t plain_run(const char *s, size_t n)
{
	size_t i = 0;
	while (i + 8 <= n && !word_escapes(s + i))
		i += 8;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == '"' || c == '\\')
			break;
	}
	return i;
}

/* A JSON string as jansson writes it without flags: '"' and '\\' and the
 * control characters escaped (\b \f \n \r \t, else \u00XX in capitals),
 * everything else (UTF-8 included) as it is.  A string with nothing to
 * escape (nearly all) is one copy. */
static void tb_str(tbuf_t *b, const char *s, size_t n)
{
	size_t run = plain_run(s, n);
	if (run == n) {
		if (!tb_room(b, n + 2))
			return;
		char *d = b->p + b->n;
		d[0] = '"';
		memcpy(d + 1, s, n);
		d[n + 1] = '"';
		b->n += n + 2;
		return;
	}
	tb_ch(b, '"');
	size_t from = 0;
	for (size_t i = run; i < n; i += 1 + plain_run(s + i + 1, n - i - 1)) {
		unsigned char c = (unsigned char)s[i];
		tb_put(b, s + from, i - from);
		from = i + 1;
		char esc[8];
		const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
			: c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
		if (!e) {
			snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c);
			e = esc;
		}
		tb_put(b, e, strlen(e));
	}
	tb_put(b, s + from, n - from);
	tb_ch(b, '"');
}

/* An integer in decimal, as "%" JSON_INTEGER_FORMAT prints it. */
static void tb_int(tbuf_t *b, json_int_t v)
{
	char h[24];
	int i = (int)sizeof h;
	unsigned long long x = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do
		h[--i] = (char)('0' + x % 10);
	while ((x /= 10) != 0);
	if (v < 0)
		h[--i] = '-';
	tb_put(b, h + i, sizeof h - (size_t)i);
}

/* Appends the compact text of v (depth levels down). */
static void tb_json(tbuf_t *b, const json_t *v, int depth)
{
	if (b->bad)
		return;
	if (depth > MU__MAX_DEPTH + 64) { /* deeper than any stored object: jansson's */
		b->bad = true;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		tb_ch(b, '{');
		bool first = true;
		for (void *it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
			if (!first)
				tb_ch(b, ',');
			first = false;
			tb_str(b, json_object_iter_key(it), json_object_iter_key_len(it));
			tb_ch(b, ':');
			tb_json(b, json_object_iter_value(it), depth + 1);
		}
		tb_ch(b, '}');
		return;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		tb_ch(b, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				tb_ch(b, ',');
			tb_json(b, json_array_get(v, i), depth + 1);
		}
		tb_ch(b, ']');
		return;
	}
	case JSON_STRING:
		tb_str(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		tb_int(b, json_integer_value(v));
		return;
	case JSON_TRUE:
		tb_put(b, "true", 4);
		return;
	case JSON_FALSE:
		tb_put(b, "false", 5);
		return;
	case JSON_NULL:
		tb_put(b, "null", 4);
		return;
	default: { /* a real: jansson's own format */
		char num[64];
		size_t l = json_dumpb(v, num, sizeof num, JSON_COMPACT | JSON_ENCODE_ANY);
		if (l == 0 || l > sizeof num)
			b->bad = true;
		else
			tb_put(b, num, l);
		return;
	}
	}
}

/* Written directly, with jansson's text for every value (tb_str, tb_json;
 * test_json_text compares the two): jansson's dump guards every object
 * and array against cycles by printing its address into a hash table, and
 * checks each string's UTF-8 again.  A tree too deep or with a value
 * jansson refuses goes to json_dumps, which answers as before. */
char *mu__json_text(const json_t *o)
{
	if (!json_is_object(o) && !json_is_array(o))
		return json_dumps(o, JSON_COMPACT); /* NULL, as jansson without JSON_ENCODE_ANY */
	tbuf_t tb, *b = &tb;
	b->p = b->stack;
	b->n = 0;
	b->cap = sizeof b->stack;
	b->bad = false;
	tb_json(b, o, 0);
	char *text = NULL;
	if (!b->bad) {
		text = b->p == b->stack ? malloc(b->n + 1) : realloc(b->p, b->n + 1);
		if (text && b->p == b->stack)
			memcpy(text, b->stack, b->n);
		if (text)
			text[b->n] = '\0';
		else if (b->p != b->stack)
			free(b->p);
	} else {
		if (b->p != b->stack)
			free(b->p);
		text = json_dumps(o, JSON_COMPACT);
	}
	return text;
}

mu__obj_t *mu__obj_new(int rt, const mu__rtype_t *t, const json_t *o, int64_t rv)
{
	return obj_build(rt, t, o, rv, mu__json_text(o));
}

mu__obj_t *mu__obj_ref(mu__obj_t *o)
{
	if (o)
		atomic_fetch_add(&o->refs, 1);
	return o;
}

void mu__obj_unref(mu__obj_t *o)
{
	if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
		return;
	free(o->json);
	free(o->name);
	free(o->ns);
	free(o->key);
	free(o->kv);
	free(o);
}

/* --- reading the store's own text -------------------------------------- */

json_t *mu__json_parse(const char *text, size_t len)
{
	return mu__json_loadb(text, len);
}

json_t *mu__obj_parse(const mu__obj_t *o)
{
	return mu__json_parse(o->json, o->len);
}

/* Walks the kv pairs from pair `from`, count pairs, for key. */
static const char *kv_find(const mu__obj_t *o, int from, int count, const char *key)
{
	const char *p = o->kv;
	for (int i = 0; i < from + count; i++) {
		const char *val = p + strlen(p) + 1;
		if (i >= from && !strcmp(p, key))
			return val;
		p = val + strlen(val) + 1;
	}
	return NULL;
}

const char *mu__obj_label(const mu__obj_t *o, const char *key)
{
	return kv_find(o, 0, o->nlabels, key);
}

const char *mu__obj_field(const mu__obj_t *o, const char *key)
{
	if (!strcmp(key, "metadata.name"))
		return o->name;
	if (!strcmp(key, "metadata.namespace"))
		return o->ns;
	return kv_find(o, o->nlabels, o->nfields, key);
}

/* --- per-type tables ---------------------------------------------------- */

typedef struct cell {
	char *key;
	mu__obj_t *cur;
	bool gone;   /* pending versions only: the latest staged write deletes */
} cell_t;

typedef struct table {
	cell_t **slots;      /* open addressing, linear probing */
	size_t cap, n;
	cell_t **sorted;     /* every cell, by key, valid unless dirty */
	size_t nsorted;
	bool dirty;
	cell_t **grave;      /* removed cells the sorted view may still hold */
	size_t ngrave, grave_cap;
} table_t;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static cell_t *table_find(const table_t *t, const char *key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash_str(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slots[i])
			return NULL;
		if (!strcmp(t->slots[i]->key, key))
			return t->slots[i];
	}
}

static int table_grow(table_t *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	cell_t **ns = calloc(ncap, sizeof *ns);
	if (!ns)
		return MU_ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i])
			continue;
		size_t j = hash_str(t->slots[i]->key) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return MU_OK;
}

static int table_insert(table_t *t, cell_t *c)
{
	if ((t->n + 1) * 4 > t->cap * 3 && table_grow(t) != MU_OK)
		return MU_ENOMEM;
	size_t i = hash_str(c->key) & (t->cap - 1);
	while (t->slots[i])
		i = (i + 1) & (t->cap - 1);
	t->slots[i] = c;
	t->n++;
	t->dirty = true;
	return MU_OK;
}

/* Removes c by backward-shift deletion; c goes to the graveyard (freed at
 * the next rebuild of the sorted view), or is freed at once when the grave
 * cannot grow (the view is then rebuilt before any use, see table_sorted). */
static void table_remove(table_t *t, cell_t *c)
{
	size_t i = hash_str(c->key) & (t->cap - 1);
	while (t->slots[i] != c)
		i = (i + 1) & (t->cap - 1);
	t->slots[i] = NULL;
	for (size_t j = (i + 1) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
		size_t h = hash_str(t->slots[j]->key) & (t->cap - 1);
		/* move slots[j] into the hole when its home is not in (i, j] */
		bool between = i <= j ? (h > i && h <= j) : (h > i || h <= j);
		if (!between) {
			t->slots[i] = t->slots[j];
			t->slots[j] = NULL;
			i = j;
		}
	}
	t->n--;
	t->dirty = true;
	if (t->ngrave == t->grave_cap) {
		size_t nc = t->grave_cap ? t->grave_cap * 2 : 64;
		cell_t **ng = realloc(t->grave, nc * sizeof *ng);
		if (ng) {
			t->grave = ng;
			t->grave_cap = nc;
		}
	}
	if (t->ngrave < t->grave_cap) {
		t->grave[t->ngrave++] = c;
	} else {
		free(t->sorted);
		t->sorted = NULL;
		t->nsorted = 0;
		free(c->key);
		free(c);
	}
}

static int cell_cmp(const void *a, const void *b)
{
	return strcmp((*(cell_t *const *)a)->key, (*(cell_t *const *)b)->key);
}

/* Brings the sorted view up to date: O(n log n) after a create or delete. */
static int table_sorted(table_t *t)
{
	if (!t->dirty && (t->sorted || !t->n))
		return MU_OK;
	cell_t **s = malloc((t->n ? t->n : 1) * sizeof *s);
	if (!s)
		return MU_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			s[k++] = t->slots[i];
	qsort(s, k, sizeof *s, cell_cmp);
	free(t->sorted);
	t->sorted = s;
	t->nsorted = k;
	for (size_t i = 0; i < t->ngrave; i++) {
		free(t->grave[i]->key);
		free(t->grave[i]);
	}
	t->ngrave = 0;
	t->dirty = false;
	return MU_OK;
}

static void table_free(table_t *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i]) {
			mu__obj_unref(t->slots[i]->cur);
			free(t->slots[i]->key);
			free(t->slots[i]);
		}
	for (size_t i = 0; i < t->ngrave; i++) {
		free(t->grave[i]->key);
		free(t->grave[i]);
	}
	free(t->grave);
	free(t->slots);
	free(t->sorted);
}

/* --- the store ---------------------------------------------------------- */

/* Parsed trees kept for the versions that mu__store_mutate_keep puts: the
 * simulated kubelet's status write after a bind takes the bound pod's tree
 * instead of parsing its text again.  MU__HOT_MAX of them (round 20: 128
 * held less than one batch of the hub's Jobs, whose next PATCH then parsed),
 * each of an object of at most MU__HOT_OBJ_MAX bytes of text, which bounds
 * what they hold. */
#define HOT_MAX MU__HOT_MAX

typedef struct staged {
	int rt, type;
	mu__obj_t *obj, *prev;
} staged_t;

/* Transactions staged for one COMMIT.  Writers append under wmu; the
 * committer takes the batch whole.  `refs` counts the writers waiting for
 * it (under mu); the last one to leave after `done` frees it.  Its writers
 * wait on its own condition: the end of the flying batch wakes only its
 * writers, not those of the batch staged behind it (a shared condition
 * woke them all, to sleep again: two context switches each). */
typedef struct batch {
	staged_t *w;
	int n, cap;
	int refs;
	bool done;
	int rc;
	pthread_cond_t done_cv; /* with mu: done was set */
} batch_t;

struct mu__wtx {
	mu__store_t *st;
	staged_t w[MU__TX_MAX];
	int n;
	bool failed;
	bool read_pending; /* it read a version not yet durable */
	bool keep_tree;    /* a put keeps its tree (mu__store_mutate_keep) */
	int64_t fails; /* st->fails when it began */
};

struct mu__store {
	sqlite3 *db;
	sqlite3_stmt *ins, *upd, *del, *setrv, *setlast;
	sqlite3_stmt *begin, *commit, *rollback; /* prepared once: sqlite3_exec
						  * parses its text on every call */
	pthread_mutex_t wmu, mu;
	pthread_cond_t cond;                /* any change */
	pthread_cond_t rtcond[MU__RT_MAX];  /* a change of that type */
	int64_t rtlast[MU__RT_MAX];         /* version of the type's last change */
	table_t tab[MU__RT_MAX];
	mu__types_t *types;
	int64_t rv;          /* last published version */
	int64_t base;        /* the version at open: the ring starts after it */
	int64_t last[MU__RT_MAX]; /* each type's last change up to base (from the rv: rows) */
	mu__wev_t *ring;
	int64_t *ring_ms;    /* monotonic ms of each slot's commit */
	int64_t ring_cap;
	int64_t ring_min;    /* changes kept whatever their age */
	int64_t fresh_ms;    /* older changes beyond ring_min are released */
	int64_t trimmed;     /* versions up to this one were released */
	bool stopping;
	mu__wtx_t tx;
	/* group commit (under wmu unless said) */
	pthread_t committer;
	bool has_committer, cstop;
	pthread_cond_t kick;     /* with wmu: a batch is open, or stop */
	pthread_cond_t flushed;  /* with wmu: a batch was published or failed */
	batch_t *open;           /* staged, waiting for the committer */
	batch_t *flying;         /* being committed */
	table_t over[MU__RT_MAX]; /* pending versions by key */
	int64_t wrv;             /* last version given to a staged write */
	int64_t fails;           /* failed COMMITs so far */
	int64_t waits, early;    /* under mu: writers' waits for a batch, and
				  * their wake-ups before it was done */
	int draining;            /* writers waiting for every batch to be published */
	bool must_flush;         /* a staged version is missing from `over` */
	pthread_t writer;        /* under mu: the thread inside a transaction */
	bool writing;
	/* the trees of the last HOT_MAX versions put by mu__store_mutate_keep
	 * or mu__store_apply_keep (under hmu), for mu__store_take_tree */
	pthread_mutex_t hmu;
	struct hot { mu__obj_t *obj; json_t *tree; } hot[HOT_MAX];
	int hot_next;
};

static void *committer_main(void *arg);
static void over_forget(mu__store_t *st, const struct batch *b, bool all);

static void res_key(const mu__store_t *st, int rt, char *buf, size_t len)
{
	const mu__rtype_t *t = mu__type(st->types, rt);
	snprintf(buf, len, "%s/%s", t->group, t->plural);
}

static int exec_sql(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *m = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &m) == SQLITE_OK)
		return MU_OK;
	snprintf(err, errlen, "%s: %s", sql, m ? m : sqlite3_errmsg(db));
	sqlite3_free(m);
	return MU_EIO;
}

/* Puts a loaded object into its table (open time: no locks needed). */
static int load_one(mu__store_t *st, int rt, json_t *o, int64_t rv, const char *text)
{
	char *copy = strdup(text);
	mu__obj_t *ob = obj_build(rt, mu__type(st->types, rt), o, rv, copy);
	cell_t *c = ob ? calloc(1, sizeof *c) : NULL;
	if (!c || !(c->key = strdup(ob->key))) {
		free(c);
		mu__obj_unref(ob);
		return MU_ENOMEM;
	}
	c->cur = ob;
	if (table_insert(&st->tab[rt], c) != MU_OK) {
		free(c->key);
		free(c);
		mu__obj_unref(ob);
		return MU_ENOMEM;
	}
	return MU_OK;
}

/* Registers the custom types of the stored CRDs, so that their objects
 * load.  A CRD that no longer registers (a limit) leaves its objects
 * unloaded but stored. */
static int load_crds(mu__store_t *st, char *err, size_t errlen)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, "SELECT body FROM objects WHERE res = 'apiextensions.k8s.io/"
			       "customresourcedefinitions'", -1, &q, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "store: %s", sqlite3_errmsg(st->db));
		return MU_EIO;
	}
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *body = (const char *)sqlite3_column_text(q, 0);
		json_t *o = body ? json_loads(body, 0, NULL) : NULL; /* NULL: a damaged row */
		char e2[200];
		if (o && !mu__jget(o, "metadata.deletionTimestamp"))
			mu__types_put(st->types, o, e2, sizeof e2);
		json_decref(o);
	}
	sqlite3_finalize(q);
	return MU_OK;
}

/* Reads the version of each type's last change ("rv:GROUP/PLURAL" rows);
 * a type without one (a database from before them) counts as changed at
 * the version at open, so that a watch from before it is 410 as ever. */
static int load_last(mu__store_t *st)
{
	for (int i = 0; i < MU__RT_MAX; i++)
		st->last[i] = st->base;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db, "SELECT k, v FROM meta WHERE k LIKE 'rv:%'", -1, &q, NULL) != SQLITE_OK)
		return MU_EIO;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(q, 0);
		int rt = k && strlen(k) >= 3 ? mu__type_by_res(st->types, k + 3) : -1;
		int64_t v = sqlite3_column_int64(q, 1);
		if (rt >= 0 && rt < MU__RT_MAX && v <= st->base)
			st->last[rt] = v;
	}
	sqlite3_finalize(q);
	return MU_OK;
}

/* Reads every object and the version counter into memory. */
static int load_all(mu__store_t *st, char *err, size_t errlen)
{
	sqlite3_stmt *q;
	if (st->types && load_crds(st, err, errlen) != MU_OK)
		return MU_EIO;
	if (sqlite3_prepare_v2(st->db, "SELECT res, rv, body FROM objects", -1, &q, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "store: %s", sqlite3_errmsg(st->db));
		return MU_EIO;
	}
	int rc = MU_OK, step;
	int64_t maxrv = 0;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		const char *res = (const char *)sqlite3_column_text(q, 0);
		int rt = res ? mu__type_by_res(st->types, res) : -1; /* NULL: a damaged row */
		int64_t rv = sqlite3_column_int64(q, 1);
		const char *body = (const char *)sqlite3_column_text(q, 2);
		if (rt < 0 || !body)
			continue; /* a type this build does not serve */
		json_t *o = json_loads(body, 0, NULL);
		if (!o) {
			snprintf(err, errlen, "store: a stored object is not JSON");
			rc = MU_EIO;
			break;
		}
		rc = load_one(st, rt, o, rv, body);
		json_decref(o);
		if (rc != MU_OK)
			break;
		if (rv > maxrv)
			maxrv = rv;
	}
	if (rc == MU_OK && step != SQLITE_DONE) {
		snprintf(err, errlen, "store: %s", sqlite3_errmsg(st->db));
		rc = MU_EIO;
	}
	sqlite3_finalize(q);
	if (rc != MU_OK)
		return rc;
	if (sqlite3_prepare_v2(st->db, "SELECT v FROM meta WHERE k = 'rv'", -1, &q, NULL) != SQLITE_OK)
		return MU_EIO;
	int64_t rv = 0;
	if (sqlite3_step(q) == SQLITE_ROW)
		rv = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	st->rv = st->base = rv > maxrv ? rv : maxrv;
	return load_last(st);
}

/* Rewrites an objects table made WITHOUT ROWID (data directories of muster
 * before 2026-11-27) as the rowid table that open_db creates, in one
 * transaction: a WITHOUT ROWID table keeps each whole row in its B-tree,
 * which SQLite advises only for rows under a twentieth of a page, and
 * objects are 1-4 KiB (pods with managedFields), so every write moved
 * other rows' bodies between pages.  Work: one copy of every row, once. */
static int migrate_rowid(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'objects'", -1,
			       &q, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "store: %s", sqlite3_errmsg(db));
		return MU_EIO;
	}
	bool old = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0) &&
		   strstr((const char *)sqlite3_column_text(q, 0), "WITHOUT ROWID");
	sqlite3_finalize(q);
	if (!old)
		return MU_OK;
	int rc = exec_sql(db,
			  "BEGIN IMMEDIATE;"
			  "CREATE TABLE objects_rowid(res TEXT NOT NULL, ns TEXT NOT NULL,"
			  " name TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL,"
			  " PRIMARY KEY(res, ns, name));"
			  "INSERT INTO objects_rowid(res, ns, name, rv, body) SELECT res, ns, name, rv, body FROM objects;"
			  "DROP TABLE objects;"
			  "ALTER TABLE objects_rowid RENAME TO objects;"
			  "COMMIT", err, errlen);
	if (rc != MU_OK && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* Opens the database and applies the schema and pragmas. */
static int open_db(mu__store_t *st, const mu__store_opts_t *o, char *err, size_t errlen)
{
	if (mkdir(o->dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", o->dir, strerror(errno));
		return MU_EIO;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/muster.db", o->dir);
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		return MU_EIO;
	}
	sqlite3_busy_timeout(st->db, 100);
	char sync[64];
	snprintf(sync, sizeof sync, "PRAGMA synchronous=%s", o->fsync ? "FULL" : "NORMAL");
	int rc = exec_sql(st->db, "PRAGMA locking_mode=EXCLUSIVE", err, errlen);
	if (rc == MU_OK)
		rc = exec_sql(st->db, "PRAGMA journal_mode=WAL", err, errlen);
	if (rc == MU_OK)
		rc = exec_sql(st->db, sync, err, errlen);
	if (rc == MU_OK)
		rc = exec_sql(st->db,
			      "BEGIN IMMEDIATE;"
			      "CREATE TABLE IF NOT EXISTS objects(res TEXT NOT NULL, ns TEXT NOT NULL,"
			      " name TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL,"
			      " PRIMARY KEY(res, ns, name));"
			      "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
			      "INSERT OR IGNORE INTO meta(k, v) VALUES('rv', 0);"
			      "COMMIT", err, errlen);
	if (rc != MU_OK && strstr(err, "locked")) {
		snprintf(err, errlen, "%s is in use by another server", path);
		return MU_ESTATE;
	}
	if (rc == MU_OK)
		rc = migrate_rowid(st->db, err, errlen);
	if (rc != MU_OK)
		return rc;
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO objects(res, ns, name, rv, body) VALUES(?,?,?,?,?)",
			       -1, &st->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "UPDATE objects SET rv = ?4, body = ?5 WHERE res = ?1 AND ns = ?2 AND name = ?3",
			       -1, &st->upd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "DELETE FROM objects WHERE res = ? AND ns = ? AND name = ?",
			       -1, &st->del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "UPDATE meta SET v = ? WHERE k = 'rv'", -1, &st->setrv, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO meta(k, v) VALUES(?, ?)", -1, &st->setlast,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "BEGIN IMMEDIATE", -1, &st->begin, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "COMMIT", -1, &st->commit, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, "ROLLBACK", -1, &st->rollback, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "store: %s", sqlite3_errmsg(st->db));
		return MU_EIO;
	}
	return MU_OK;
}

int mu__store_open(const mu__store_opts_t *o, mu__store_t **out, char *err, size_t errlen)
{
	*out = NULL;
	mu__store_t *st = calloc(1, sizeof *st);
	if (!st)
		return MU_ENOMEM;
	st->ring_cap = o->ring > 0 ? o->ring : 10000;
	st->ring_min = o->ring_min > 0 && o->ring_min < st->ring_cap ? o->ring_min
		       : st->ring_cap < 1000 ? st->ring_cap : 1000;
	st->fresh_ms = o->fresh_ms > 0 ? o->fresh_ms : 75000;
	st->ring = calloc((size_t)st->ring_cap, sizeof *st->ring);
	st->ring_ms = calloc((size_t)st->ring_cap, sizeof *st->ring_ms);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cond, &ca);
	for (int i = 0; i < MU__RT_MAX; i++)
		pthread_cond_init(&st->rtcond[i], &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&st->wmu, NULL);
	pthread_mutex_init(&st->mu, NULL);
	pthread_mutex_init(&st->hmu, NULL);
	pthread_cond_init(&st->kick, NULL);
	pthread_cond_init(&st->flushed, NULL);
	st->tx.st = st;
	st->types = o->types;
	int rc = st->ring && st->ring_ms ? open_db(st, o, err, errlen) : MU_ENOMEM;
	if (rc == MU_OK)
		rc = load_all(st, err, errlen);
	st->wrv = st->rv;
	if (rc == MU_OK) {
		if (pthread_create(&st->committer, NULL, committer_main, st) == 0) {
			st->has_committer = true;
		} else {
			snprintf(err, errlen, "store: cannot start the committer thread");
			rc = MU_ENOMEM;
		}
	}
	if (rc != MU_OK) {
		mu__store_close(st);
		return rc;
	}
	*out = st;
	return MU_OK;
}

void mu__store_shutdown(mu__store_t *st)
{
	pthread_mutex_lock(&st->mu);
	st->stopping = true;
	pthread_cond_broadcast(&st->cond);
	for (int i = 0; i < MU__RT_MAX; i++)
		pthread_cond_broadcast(&st->rtcond[i]);
	pthread_mutex_unlock(&st->mu);
}

void mu__store_close(mu__store_t *st)
{
	if (!st)
		return;
	if (st->has_committer) { /* it commits what is staged, then ends */
		pthread_mutex_lock(&st->wmu);
		st->cstop = true;
		pthread_cond_signal(&st->kick);
		pthread_mutex_unlock(&st->wmu);
		pthread_join(st->committer, NULL);
	}
	over_forget(st, NULL, true);
	sqlite3_finalize(st->ins);
	sqlite3_finalize(st->upd);
	sqlite3_finalize(st->del);
	sqlite3_finalize(st->setrv);
	sqlite3_finalize(st->setlast);
	sqlite3_finalize(st->begin);
	sqlite3_finalize(st->commit);
	sqlite3_finalize(st->rollback);
	sqlite3_close(st->db);
	for (int i = 0; i < MU__RT_MAX; i++) {
		table_free(&st->tab[i]);
		table_free(&st->over[i]);
	}
	if (st->ring) {
		for (int64_t i = 0; i < st->ring_cap; i++)
			mu__wev_release(&st->ring[i], 1);
		free(st->ring);
	}
	free(st->ring_ms);
	pthread_cond_destroy(&st->cond);
	for (int i = 0; i < MU__RT_MAX; i++)
		pthread_cond_destroy(&st->rtcond[i]);
	pthread_cond_destroy(&st->kick);
	pthread_cond_destroy(&st->flushed);
	pthread_mutex_destroy(&st->wmu);
	pthread_mutex_destroy(&st->mu);
	for (int i = 0; i < HOT_MAX; i++) {
		mu__obj_unref(st->hot[i].obj);
		json_decref(st->hot[i].tree);
	}
	pthread_mutex_destroy(&st->hmu);
	free(st);
}

int64_t mu__store_rv(mu__store_t *st)
{
	pthread_mutex_lock(&st->mu);
	int64_t rv = st->rv;
	pthread_mutex_unlock(&st->mu);
	return rv;
}

static int64_t oldest_locked(const mu__store_t *st)
{
	int64_t o = st->rv - st->ring_cap;
	if (o < st->trimmed)
		o = st->trimmed;
	return o > st->base ? o : st->base;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Releases the oldest changes of the ring that are older than fresh_ms
 * and beyond the last ring_min (under mu); at most max of them, so that a
 * commit after a quiet spell does not hold mu long (each commit releases
 * more than it adds, so the ring catches up). */
static void trim_locked(mu__store_t *st, int64_t now, int max)
{
	while (max-- > 0) {
		int64_t v = oldest_locked(st) + 1;
		if (v > st->rv - st->ring_min || st->ring_ms[v % st->ring_cap] > now - st->fresh_ms)
			break;
		mu__wev_release(&st->ring[v % st->ring_cap], 1);
		st->trimmed = v;
	}
}

int64_t mu__store_oldest(mu__store_t *st)
{
	pthread_mutex_lock(&st->mu);
	int64_t o = oldest_locked(st);
	pthread_mutex_unlock(&st->mu);
	return o;
}

static void make_key(const mu__store_t *st, int rt, const char *ns, const char *name, char *buf, size_t len)
{
	if (mu__type(st->types, rt)->namespaced)
		snprintf(buf, len, "%s/%s", ns ? ns : "", name);
	else
		snprintf(buf, len, "%s", name);
}

static bool in_tx(const mu__store_t *st);
static mu__obj_t *pending(mu__store_t *st, int rt, const char *key);
static void flush_in_tx(mu__store_t *st);

/* Inside a transaction the pending versions count (the caller holds wmu,
 * which guards them). */
mu__obj_t *mu__store_get(mu__store_t *st, int rt, const char *ns, const char *name)
{
	char key[600];
	make_key(st, rt, ns, name, key, sizeof key);
	pthread_mutex_lock(&st->mu);
	mu__obj_t *o;
	if (in_tx(st)) {
		o = mu__obj_ref(pending(st, rt, key));
	} else {
		cell_t *c = table_find(&st->tab[rt], key);
		o = c ? mu__obj_ref(c->cur) : NULL;
	}
	pthread_mutex_unlock(&st->mu);
	return o;
}

size_t mu__store_count(mu__store_t *st, int rt)
{
	pthread_mutex_lock(&st->mu);
	size_t n = st->tab[rt].n;
	pthread_mutex_unlock(&st->mu);
	return n;
}

/* First index of sorted whose key is > after (or >= from when after is
 * NULL), by binary search. */
static size_t lower(const table_t *t, const char *from, bool strict)
{
	size_t lo = 0, hi = t->nsorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->sorted[mid]->key, from);
		if (c < 0 || (strict && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int mu__store_list(mu__store_t *st, int rt, const char *ns, const char *after,
		   size_t limit, mu__filter_fn_t filter, void *fctx, mu__page_t *out)
{
	memset(out, 0, sizeof *out);
	char prefix[80] = "";
	if (ns && *ns)
		snprintf(prefix, sizeof prefix, "%s/", ns);
	size_t plen = strlen(prefix);
	pthread_mutex_lock(&st->mu);
	if (in_tx(st) && st->over[rt].n > 0) {
		/* a transaction lists what will be there: when writes of this
		 * type are pending, the staged batches are published first (mu
		 * is not held across the wait); with none, the table is the
		 * latest of this type */
		pthread_mutex_unlock(&st->mu);
		flush_in_tx(st);
		pthread_mutex_lock(&st->mu);
	}
	table_t *t = &st->tab[rt];
	int rc = table_sorted(t);
	size_t cap = limit < t->n ? limit : t->n;
	out->objs = malloc((cap ? cap : 1) * sizeof *out->objs);
	if (rc != MU_OK || !out->objs) {
		pthread_mutex_unlock(&st->mu);
		free(out->objs);
		out->objs = NULL;
		return MU_ENOMEM;
	}
	out->rv = st->rv;
	size_t i = lower(t, prefix, false);
	if (after && strcmp(after, prefix) >= 0)
		i = lower(t, after, true);
	for (; i < t->nsorted; i++) {
		cell_t *c = t->sorted[i];
		if (plen && strncmp(c->key, prefix, plen))
			break;
		if (filter && !filter(fctx, c->cur))
			continue;
		if (out->n == limit) {
			/* one more matches: the page is cut; count the rest */
			out->next = strdup(out->objs[out->n - 1]->key);
			for (; i < t->nsorted; i++) {
				if (plen && strncmp(t->sorted[i]->key, prefix, plen))
					break;
				if (!filter || filter(fctx, t->sorted[i]->cur))
					out->remaining++;
			}
			break;
		}
		out->objs[out->n++] = mu__obj_ref(c->cur);
	}
	pthread_mutex_unlock(&st->mu);
	return MU_OK;
}

void mu__page_release(mu__page_t *p)
{
	for (size_t i = 0; i < p->n; i++)
		mu__obj_unref(p->objs[i]);
	free(p->objs);
	free(p->next);
	memset(p, 0, sizeof *p);
}

int mu__store_each(mu__store_t *st, int rt, const char *ns, size_t limit, mu__filter_fn_t filter, void *fctx,
		   mu__page_fn_t fn, void *ctx)
{
	char *after = NULL; /* owned: the last page's continue key */
	for (;;) {
		mu__page_t pg;
		int rc = mu__store_list(st, rt, ns, after, limit, filter, fctx, &pg);
		free(after);
		after = NULL;
		if (rc != MU_OK)
			return rc;
		rc = fn(ctx, &pg);
		/* each page resumes strictly after the last key: the walk ends */
		if (rc == 0 && pg.next) {
			after = pg.next;
			pg.next = NULL;
		}
		mu__page_release(&pg);
		if (!after)
			return rc;
	}
}

/* --- writes ------------------------------------------------------------- */


int mu__store_begin(mu__store_t *st, mu__wtx_t **out)
{
	pthread_mutex_lock(&st->wmu);
	while (st->draining)
		pthread_cond_wait(&st->flushed, &st->wmu);
	st->tx.n = 0;
	if (st->must_flush) {
		flush_in_tx(st);
		st->must_flush = false;
	}
	st->tx.failed = false;
	st->tx.read_pending = false;
	st->tx.keep_tree = false;
	st->tx.fails = st->fails;
	pthread_mutex_lock(&st->mu);
	st->writer = pthread_self();
	st->writing = true;
	pthread_mutex_unlock(&st->mu);
	*out = &st->tx;
	return MU_OK;
}

/* Whether the calling thread is inside a transaction (under mu). */
static bool in_tx(const mu__store_t *st)
{
	return st->writing && pthread_equal(st->writer, pthread_self());
}

/* The latest pending version of key (a staged batch's), else the
 * table's; NULL when absent or pending deletion (under wmu). */
static mu__obj_t *pending(mu__store_t *st, int rt, const char *key)
{
	cell_t *c = table_find(&st->over[rt], key);
	if (c) {
		st->tx.read_pending = true; /* its answer waits for that batch */
		return c->gone ? NULL : c->cur;
	}
	c = table_find(&st->tab[rt], key);
	return c ? c->cur : NULL;
}

/* The latest version of key in this transaction, the staged batches or the
 * table. */
static mu__obj_t *tx_current(mu__wtx_t *tx, int rt, const char *key)
{
	for (int i = tx->n - 1; i >= 0; i--)
		if (tx->w[i].rt == rt && !strcmp(tx->w[i].obj->key, key))
			return tx->w[i].type == MU__EV_DELETED ? NULL : tx->w[i].obj;
	return pending(tx->st, rt, key);
}

/* Waits, inside a transaction (wmu held), until every staged batch is
 * published or failed, holding other writers off meanwhile.  A COMMIT that
 * failed meanwhile gave versions away again: the transaction then fails. */
static void flush_in_tx(mu__store_t *st)
{
	st->draining++;
	while (st->open || st->flying)
		pthread_cond_wait(&st->flushed, &st->wmu);
	st->draining--;
	if (st->fails != st->tx.fails)
		st->tx.failed = true;
	pthread_cond_broadcast(&st->flushed);
}

/* The version to publish for a deletion: cur with the deletion's rv. */
static mu__obj_t *tombstone(const mu__obj_t *cur, int64_t rv)
{
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return NULL;
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)rv);
	mu__jset(o, "metadata.resourceVersion", json_string(buf));
	mu__obj_t *t = mu__obj_new(cur->rt, cur->type, o, rv);
	json_decref(o);
	return t;
}

/* Keeps tree (taken) as the parsed form of version ob (a reference is
 * taken), in place of the oldest kept one.  O(1) under hmu. */
static void hot_put(mu__store_t *st, mu__obj_t *ob, json_t *tree)
{
	pthread_mutex_lock(&st->hmu);
	int slot = st->hot_next;
	struct hot was = st->hot[slot];
	if (was.obj && was.obj->hot == slot + 1)
		was.obj->hot = 0; /* (a version kept twice names its later slot) */
	st->hot[slot].obj = mu__obj_ref(ob);
	st->hot[slot].tree = tree;
	ob->hot = slot + 1;
	st->hot_next = (slot + 1) % HOT_MAX;
	pthread_mutex_unlock(&st->hmu);
	mu__obj_unref(was.obj);
	json_decref(was.tree);
}

json_t *mu__store_take_tree(mu__store_t *st, const mu__obj_t *o, bool *kept)
{
	struct hot h = {NULL, NULL};
	pthread_mutex_lock(&st->hmu);
	int i = o->hot - 1; /* its slot, which only hmu's holder changes */
	if (i >= 0 && i < HOT_MAX && st->hot[i].obj == o) {
		h = st->hot[i];
		st->hot[i].obj = NULL;
		st->hot[i].tree = NULL;
		h.obj->hot = 0;
	}
	pthread_mutex_unlock(&st->hmu);
	if (kept)
		*kept = h.tree != NULL;
	mu__obj_unref(h.obj);
	return h.tree ? h.tree : mu__obj_parse(o);
}

int mu__store_apply(mu__wtx_t *tx, int rt, const char *ns, const char *name,
		    mu__mut_fn_t fn, void *ctx, bool dry, mu__obj_t **res)
{
	if (res)
		*res = NULL;
	if (tx->failed)
		return MU_EIO;
	if (tx->n >= MU__TX_MAX)
		return MU_ELIMIT;
	char key[600];
	make_key(tx->st, rt, ns, name, key, sizeof key);
	/* a reference of our own: a list in fn publishes the pending
	 * versions, and cur stays the latest (other writers are held off),
	 * but the pending table's reference to it goes */
	mu__obj_t *cur = mu__obj_ref(tx_current(tx, rt, key));
	json_t *out = NULL;
	int rc = fn(ctx, cur, &out);
	if (tx->failed) { /* fn listed, and a COMMIT failed meanwhile */
		json_decref(out);
		mu__obj_unref(cur);
		return MU_EIO;
	}
	mu__obj_unref(cur); /* the table or the pending versions hold it */
	if (rc < 0 || rc == MU__MUT_KEEP) {
		json_decref(out);
		if (rc == MU__MUT_KEEP && res)
			*res = mu__obj_ref(cur);
		return rc;
	}
	int64_t rv = tx->st->wrv + tx->n + 1;
	mu__obj_t *ob;
	if (rc == MU__MUT_PUT) {
		char buf[32];
		snprintf(buf, sizeof buf, "%lld", (long long)rv);
		mu__jset(out, "metadata.resourceVersion", json_string(buf));
		ob = mu__obj_new(rt, mu__type(tx->st->types, rt), out, rv);
	} else {
		ob = cur ? tombstone(cur, rv) : NULL;
		if (!cur) {
			json_decref(out);
			return MU_ENOENT;
		}
	}
	if (!ob || ob->len > MU__MAX_OBJECT || strcmp(ob->key, key) != 0 || dry || !tx->keep_tree ||
	    rc != MU__MUT_PUT || ob->len > MU__HOT_OBJ_MAX) {
		json_decref(out);
		out = NULL;
	}
	if (!ob)
		return MU_ENOMEM;
	if (ob->len > MU__MAX_OBJECT) {
		mu__obj_unref(ob); /* as etcd refuses a value above its request limit */
		return MU_ERANGE;
	}
	if (strcmp(ob->key, key) != 0) {
		mu__obj_unref(ob); /* the callback renamed the object */
		return MU_EINVAL;
	}
	if (dry) {
		if (res)
			*res = ob;
		else
			mu__obj_unref(ob);
		return rc;
	}
	staged_t *w = &tx->w[tx->n++];
	w->rt = rt;
	w->type = rc == MU__MUT_DEL ? MU__EV_DELETED : cur ? MU__EV_MODIFIED : MU__EV_ADDED;
	w->obj = ob;
	w->prev = mu__obj_ref(cur);
	if (out)
		hot_put(tx->st, ob, out);
	if (res)
		*res = mu__obj_ref(ob);
	return rc;
}

int64_t mu__store_resume(mu__store_t *st, int rt, int64_t from)
{
	pthread_mutex_lock(&st->mu);
	int64_t o = oldest_locked(st);
	/* the ring still holds every change since the open, and nothing of
	 * this type changed between from and the open */
	if (from < o && o == st->base && rt >= 0 && rt < MU__RT_MAX && from >= st->last[rt])
		from = o;
	pthread_mutex_unlock(&st->mu);
	return from;
}

/* Writes (or deletes) one staged row.  Returns MU_OK or MU_EIO. */
static int sql_write(mu__store_t *st, const staged_t *w)
{
	char res[160];
	res_key(st, w->rt, res, sizeof res);
	bool del = w->type == MU__EV_DELETED;
	/* a change rewrites its row in place: INSERT OR REPLACE deleted the
	 * row and its key's index entry and inserted both again */
	bool upd = w->type == MU__EV_MODIFIED;
	for (;;) {
		sqlite3_stmt *q = del ? st->del : upd ? st->upd : st->ins;
		sqlite3_reset(q);
		sqlite3_bind_text(q, 1, res, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 2, w->obj->ns, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 3, w->obj->name, -1, SQLITE_STATIC);
		if (!del) {
			sqlite3_bind_int64(q, 4, w->obj->rv);
			sqlite3_bind_text(q, 5, w->obj->json, (int)w->obj->len, SQLITE_STATIC);
		}
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		sqlite3_clear_bindings(q);
		if (rc != SQLITE_DONE)
			return MU_EIO;
		if (!upd || sqlite3_changes(st->db) > 0)
			return MU_OK;
		upd = false; /* no row to change (never expected): insert it */
	}
}

/* Writes the "rv:GROUP/PLURAL" row of each type the batch changes (its
 * last version in it).  Work: the batch's writes times the types it
 * changes.  Returns MU_OK or MU_EIO. */
static int write_last(mu__store_t *st, const batch_t *b)
{
	for (int i = b->n - 1; i >= 0; i--) {
		bool later = false;
		for (int j = i + 1; j < b->n && !later; j++)
			later = b->w[j].rt == b->w[i].rt;
		if (later)
			continue;
		char k[170];
		snprintf(k, sizeof k, "rv:");
		res_key(st, b->w[i].rt, k + 3, sizeof k - 3);
		sqlite3_reset(st->setlast);
		sqlite3_bind_text(st->setlast, 1, k, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st->setlast, 2, b->w[i].obj->rv);
		int rc = sqlite3_step(st->setlast);
		sqlite3_reset(st->setlast);
		if (rc != SQLITE_DONE)
			return MU_EIO;
	}
	return MU_OK;
}

/* Runs a prepared statement without results once and resets it; returns
 * sqlite3_step's code. */
static int step_once(sqlite3_stmt *q)
{
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	return rc;
}

/* Writes batch b in one SQLite transaction (the committer, without wmu:
 * only it uses the connection).  MU_OK once COMMIT returned, else MU_EIO
 * with everything rolled back. */
static int sql_batch(mu__store_t *st, const batch_t *b)
{
	if (step_once(st->begin) != SQLITE_DONE)
		return MU_EIO;
	int rc = MU_OK;
	for (int i = 0; i < b->n && rc == MU_OK; i++)
		rc = sql_write(st, &b->w[i]);
	if (rc == MU_OK) {
		sqlite3_reset(st->setrv);
		sqlite3_bind_int64(st->setrv, 1, b->w[b->n - 1].obj->rv);
		if (sqlite3_step(st->setrv) != SQLITE_DONE || write_last(st, b) != MU_OK ||
		    step_once(st->commit) != SQLITE_DONE)
			rc = MU_EIO;
		sqlite3_reset(st->setrv);
	}
	if (rc != MU_OK && !sqlite3_get_autocommit(st->db))
		step_once(st->rollback);
	return rc;
}

/* Applies one committed change, made at monotonic ms now, to the table and
 * the ring (under wmu and mu); the ring takes the staged references. */
static void publish(mu__store_t *st, staged_t *w, int64_t now)
{
	table_t *t = &st->tab[w->rt];
	cell_t *c = table_find(t, w->obj->key);
	if (w->type == MU__EV_DELETED) {
		if (c) {
			mu__obj_unref(c->cur);
			c->cur = NULL;
			table_remove(t, c);
		}
	} else if (c) {
		mu__obj_unref(c->cur);
		c->cur = mu__obj_ref(w->obj);
	} else {
		c = calloc(1, sizeof *c);
		if (c && (c->key = strdup(w->obj->key)) != NULL &&
		    table_insert(t, c) == MU_OK) {
			c->cur = mu__obj_ref(w->obj);
		} else if (c) {
			/* out of memory: the object is durable and comes back at
			 * the next start; readers miss it until then */
			free(c->key);
			free(c);
		}
	}
	st->rv = w->obj->rv;
	st->rtlast[w->rt] = st->rv;
	mu__wev_t *slot = &st->ring[st->rv % st->ring_cap];
	mu__wev_release(slot, 1);
	slot->type = w->type;
	slot->obj = w->obj;
	slot->prev = w->prev;
	st->ring_ms[st->rv % st->ring_cap] = now;
}

/* Removes a pending cell (the overlay never builds a sorted view, so its
 * grave is emptied at once). */
static void over_remove(table_t *t, cell_t *c)
{
	mu__obj_unref(c->cur);
	c->cur = NULL;
	table_remove(t, c);
	for (size_t i = 0; i < t->ngrave; i++) {
		free(t->grave[i]->key);
		free(t->grave[i]);
	}
	t->ngrave = 0;
	free(t->sorted);
	t->sorted = NULL;
}

/* Notes the staged writes w[0..n) as the latest pending versions (under
 * wmu).  Returns MU_OK or MU_ENOMEM. */
static int over_note(mu__store_t *st, const staged_t *w, int n)
{
	for (int i = 0; i < n; i++) {
		table_t *t = &st->over[w[i].rt];
		cell_t *c = table_find(t, w[i].obj->key);
		if (!c) {
			c = calloc(1, sizeof *c);
			if (!c || !(c->key = strdup(w[i].obj->key)) || table_insert(t, c) != MU_OK) {
				if (c)
					free(c->key);
				free(c);
				return MU_ENOMEM;
			}
		}
		mu__obj_unref(c->cur);
		c->cur = mu__obj_ref(w[i].obj);
		c->gone = w[i].type == MU__EV_DELETED;
	}
	return MU_OK;
}

/* Forgets the pending versions that batch b published (those a later
 * batch replaced stay), or, with all, every one (under wmu). */
static void over_forget(mu__store_t *st, const batch_t *b, bool all)
{
	if (all) {
		for (int rt = 0; rt < MU__RT_MAX; rt++) {
			table_t *t = &st->over[rt];
			for (size_t i = 0; t->n && i < t->cap; i++)
				while (t->slots[i])
					over_remove(t, t->slots[i]);
		}
		return;
	}
	for (int i = 0; i < b->n; i++) {
		table_t *t = &st->over[b->w[i].rt];
		cell_t *c = table_find(t, b->w[i].obj->key);
		if (c && c->cur == b->w[i].obj)
			over_remove(t, c);
	}
}

/* Ends a batch's wait (under mu): the last of its writers frees it. */
static void batch_leave(batch_t *b)
{
	if (--b->refs > 0 || !b->done)
		return;
	pthread_cond_destroy(&b->done_cv);
	free(b->w);
	free(b);
}

/* Marks b done with rc (under mu); on failure its staged versions are
 * dropped. */
static void batch_done(batch_t *b, int rc)
{
	if (rc != MU_OK)
		for (int i = 0; i < b->n; i++) {
			mu__obj_unref(b->w[i].obj);
			mu__obj_unref(b->w[i].prev);
		}
	b->done = true;
	b->rc = rc;
	pthread_cond_broadcast(&b->done_cv);
	b->refs++;
	batch_leave(b); /* frees it when no writer waits */
}

/* Commits the open batch (wmu held, no batch flying; wmu is dropped
 * during the COMMIT), then publishes it, or fails it and the batch staged
 * behind it, and wakes its writers and the committer thread.  Run by the
 * committer thread, or by a writer that finds no batch flying (it leads:
 * no hand-off when writers do not overlap). */
static void run_batch(mu__store_t *st)
{
	batch_t *b = st->open, *behind = NULL;
	st->open = NULL;
	st->flying = b;
	pthread_mutex_unlock(&st->wmu);
	int rc = sql_batch(st, b);
	pthread_mutex_lock(&st->wmu);
	pthread_mutex_lock(&st->mu);
	if (rc == MU_OK) {
		int64_t now = mono_ms();
		for (int i = 0; i < b->n; i++)
			publish(st, &b->w[i], now);
		trim_locked(st, now, 2 * b->n + 16);
		pthread_cond_broadcast(&st->cond);
		for (int i = 0; i < b->n; i++) {
			int j = 0;
			while (j < i && b->w[j].rt != b->w[i].rt)
				j++;
			if (j == i) /* once per type */
				pthread_cond_broadcast(&st->rtcond[b->w[i].rt]);
		}
		over_forget(st, b, false);
	} else {
		/* the open batch may build on this one: it fails too */
		behind = st->open;
		st->open = NULL;
		over_forget(st, b, true);
		st->wrv = st->rv;
		st->fails++;
	}
	st->flying = NULL;
	batch_done(b, rc);
	if (behind)
		batch_done(behind, MU_EIO);
	pthread_mutex_unlock(&st->mu);
	pthread_cond_broadcast(&st->flushed);
	if (st->open)
		pthread_cond_signal(&st->kick);
}

/* The committer thread: commits the batches that writers staged while
 * another was flying.  Ends when the store closes, after the last batch. */
static void *committer_main(void *arg)
{
	mu__store_t *st = arg;
	pthread_mutex_lock(&st->wmu);
	for (;;) {
		while ((!st->open || st->flying) && !(st->cstop && !st->flying && !st->open))
			pthread_cond_wait(&st->kick, &st->wmu);
		if (!st->open)
			break;
		run_batch(st);
	}
	pthread_mutex_unlock(&st->wmu);
	return NULL;
}

/* Waits (with wmu dropped) for batch b, which the caller joined under
 * wmu; returns its result. */
static int wait_batch(mu__store_t *st, batch_t *b)
{
	pthread_mutex_lock(&st->mu);
	st->waits++;
	while (!b->done) {
		pthread_cond_wait(&b->done_cv, &st->mu);
		if (!b->done)
			st->early++;
	}
	int rc = b->rc;
	batch_leave(b);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

/* Drops the transaction's staged versions. */
static void tx_drop(mu__wtx_t *tx)
{
	for (int i = 0; i < tx->n; i++) {
		mu__obj_unref(tx->w[i].obj);
		mu__obj_unref(tx->w[i].prev);
	}
	tx->n = 0;
}

/* Appends the transaction to the open batch (under wmu).  Returns the
 * batch, joined, or NULL when out of memory. */
static batch_t *tx_stage(mu__wtx_t *tx)
{
	mu__store_t *st = tx->st;
	batch_t *b = st->open;
	if (!b) {
		if (!(b = calloc(1, sizeof *b)))
			return NULL;
		pthread_cond_init(&b->done_cv, NULL);
	}
	if (b->n + tx->n > b->cap) {
		int nc = b->cap ? b->cap * 2 : 64;
		while (nc < b->n + tx->n)
			nc *= 2;
		staged_t *nw = realloc(b->w, (size_t)nc * sizeof *nw);
		if (!nw) {
			if (b != st->open) {
				pthread_cond_destroy(&b->done_cv);
				free(b);
			}
			return NULL;
		}
		b->w = nw;
		b->cap = nc;
	}
	if (over_note(st, tx->w, tx->n) != MU_OK)
		st->must_flush = true; /* a pending version is not noted: the next
					* writer waits until it is published */
	memcpy(b->w + b->n, tx->w, (size_t)tx->n * sizeof *tx->w);
	b->n += tx->n;
	st->wrv += tx->n;
	tx->n = 0;
	st->open = b;
	pthread_mutex_lock(&st->mu);
	b->refs++;
	pthread_mutex_unlock(&st->mu);
	return b; /* the writer leads it, or the end of the flying one kicks */
}

int mu__store_commit(mu__wtx_t *tx)
{
	mu__store_t *st = tx->st;
	pthread_mutex_lock(&st->mu);
	st->writing = false;
	pthread_mutex_unlock(&st->mu);
	batch_t *b = NULL;
	int rc = MU_OK;
	if (tx->failed || st->fails != tx->fails) {
		tx_drop(tx);
		rc = MU_EIO;
	} else if (tx->n) {
		b = tx_stage(tx);
		if (!b) {
			tx_drop(tx);
			rc = MU_ENOMEM;
		} else if (!st->flying) {
			run_batch(st); /* no commit in flight: lead this one */
		}
	} else if (tx->read_pending && (b = st->open ? st->open : st->flying) != NULL) {
		/* nothing written, but what was read is pending: answer once
		 * it is durable (the open batch goes after the flying one) */
		pthread_mutex_lock(&st->mu);
		b->refs++;
		pthread_mutex_unlock(&st->mu);
	}
	pthread_mutex_unlock(&st->wmu);
	if (b)
		rc = wait_batch(st, b);
	return rc;
}

/* mu__store_mutate, and with keep, mu__store_mutate_keep. */
static int mutate(mu__store_t *st, int rt, const char *ns, const char *name, mu__mut_fn_t fn, void *ctx,
		  bool dry, mu__obj_t **res, bool keep)
{
	mu__wtx_t *tx;
	mu__store_begin(st, &tx);
	tx->keep_tree = keep;
	int rc = mu__store_apply(tx, rt, ns, name, fn, ctx, dry, res);
	tx->keep_tree = false;
	int crc = mu__store_commit(tx);
	if (rc >= 0 && crc != MU_OK) {
		if (res) {
			mu__obj_unref(*res);
			*res = NULL;
		}
		return crc;
	}
	return rc;
}

int mu__store_mutate(mu__store_t *st, int rt, const char *ns, const char *name,
		     mu__mut_fn_t fn, void *ctx, bool dry, mu__obj_t **res)
{
	return mutate(st, rt, ns, name, fn, ctx, dry, res, false);
}

int mu__store_mutate_keep(mu__store_t *st, int rt, const char *ns, const char *name,
			  mu__mut_fn_t fn, void *ctx, bool dry, mu__obj_t **res)
{
	return mutate(st, rt, ns, name, fn, ctx, dry, res, true);
}

int mu__store_apply_keep(mu__wtx_t *tx, int rt, const char *ns, const char *name, mu__mut_fn_t fn, void *ctx,
			 mu__obj_t **res)
{
	bool was = tx->keep_tree;
	tx->keep_tree = true;
	int rc = mu__store_apply(tx, rt, ns, name, fn, ctx, false, res);
	tx->keep_tree = was;
	return rc;
}

void mu__store_wait_stats(mu__store_t *st, int64_t *waits, int64_t *early)
{
	pthread_mutex_lock(&st->mu);
	*waits = st->waits;
	*early = st->early;
	pthread_mutex_unlock(&st->mu);
}

/* --- watch -------------------------------------------------------------- */

int mu__store_wait(mu__store_t *st, int64_t *cursor, mu__wev_t *evs, int max,
		   int timeout_ms)
{
	return mu__store_wait_rt(st, -1, cursor, evs, max, timeout_ms);
}

int mu__store_wait_rt(mu__store_t *st, int rt, int64_t *cursor, mu__wev_t *evs, int max,
		      int timeout_ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_cond_t *cv = rt >= 0 ? &st->rtcond[rt] : &st->cond;
	pthread_mutex_lock(&st->mu);
	int n = 0;
	for (;;) {
		if (st->stopping) {
			n = MU_ESTATE;
			break;
		}
		if (*cursor < oldest_locked(st)) {
			n = MU_ERANGE;
			break;
		}
		if (*cursor < st->rv && (rt < 0 || st->rtlast[rt] > *cursor)) {
			while (n < max && *cursor < st->rv) {
				mu__wev_t *e = &st->ring[(*cursor + 1) % st->ring_cap];
				(*cursor)++;
				if (rt >= 0 && e->obj->rt != rt)
					continue;
				evs[n].type = e->type;
				evs[n].obj = mu__obj_ref(e->obj);
				evs[n].prev = mu__obj_ref(e->prev);
				n++;
			}
			break;
		}
		if (*cursor < st->rv)
			*cursor = st->rv; /* only other types changed since */
		if (pthread_cond_timedwait(cv, &st->mu, &dl) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&st->mu);
	return n;
}

void mu__wev_release(mu__wev_t *evs, int n)
{
	for (int i = 0; i < n; i++) {
		mu__obj_unref(evs[i].obj);
		mu__obj_unref(evs[i].prev);
		evs[i].obj = evs[i].prev = NULL;
	}
}
