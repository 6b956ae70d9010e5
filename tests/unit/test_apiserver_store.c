/*
 * test_apiserver_store.c - the control plane's store: create, get, list
 * order with limit and continue keys, updates and deletes through mutation
 * callbacks, transactions, the watch ring (events, expiry, waits for one
 * type) and durability
 * across close and reopen; group commit: concurrent writers are all
 * acknowledged, their changes reach a watch once each, in dense version
 * order, and survive a reopen; a data directory whose objects table was
 * made WITHOUT ROWID (before 2026-11-27) is rewritten as a rowid table
 * with every object kept; the trees kept by mu__store_mutate_keep are
 * taken once, equal the stored text, and the 128 latest are kept; a
 * change rewrites its row in place; mu__json_text writes what json_dumps
 * writes, and RFC 3339 stamps keep their text.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "apiserver/apiserver_int.h"
#include "check.h"

static char dir[64];

static int put_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (cur && ctx == NULL)
		return MU_EEXIST;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind", "Pod",
			 "metadata", "name", (const char *)(ctx ? ctx : "x"), "namespace", "default", "labels",
			 "app", "web", "spec", "nodeName", "n1");
	return MU__MUT_PUT;
}

static int del_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	(void)out;
	return cur ? MU__MUT_DEL : MU_ENOENT;
}

static mu__store_t *open_store(int ring)
{
	mu__store_opts_t o = {.dir = dir, .ring = ring};
	mu__store_t *st = NULL;
	char err[256];
	if (mu__store_open(&o, &st, err, sizeof err) != MU_OK)
		fprintf(stderr, "open: %s\n", err);
	return st;
}

/* Creates pod `name` in default (the callback names it "x"... so use ctx). */
static int create(mu__store_t *st, const char *name)
{
	return mu__store_mutate(st, MU__RT_PODS, "default", name, put_fn, (void *)name, false, NULL);
}

static void test_crud(mu_t_t *t)
{
	mu__store_t *st = open_store(100);
	CHECK(t, st != NULL);
	if (!st)
		return;
	CHECK_EQ_INT(t, mu__store_rv(st), 0);
	CHECK_EQ_INT(t, create(st, "b"), MU__MUT_PUT);
	CHECK_EQ_INT(t, create(st, "a"), MU__MUT_PUT);
	CHECK_EQ_INT(t, create(st, "c"), MU__MUT_PUT);
	CHECK_EQ_INT(t, mu__store_rv(st), 3);
	mu__obj_t *o = mu__store_get(st, MU__RT_PODS, "default", "a");
	CHECK(t, o != NULL);
	if (o) {
		CHECK_EQ_INT(t, o->rv, 2);
		CHECK_STR(t, o->key, "default/a");
		CHECK_STR(t, mu__obj_label(o, "app"), "web");
		CHECK_STR(t, mu__obj_field(o, "spec.nodeName"), "n1");
		CHECK(t, strstr(o->json, "\"resourceVersion\":\"2\"") != NULL);
		mu__obj_unref(o);
	}
	CHECK(t, mu__store_get(st, MU__RT_PODS, "other", "a") == NULL);
	/* pages in key order */
	mu__page_t pg;
	CHECK_EQ_INT(t, mu__store_list(st, MU__RT_PODS, "default", NULL, 2, NULL, NULL, &pg), MU_OK);
	CHECK_EQ_INT(t, pg.n, 2);
	CHECK_STR(t, pg.objs[0]->name, "a");
	CHECK_STR(t, pg.objs[1]->name, "b");
	CHECK_STR(t, pg.next, "default/b");
	CHECK_EQ_INT(t, pg.remaining, 1);
	char next[64];
	snprintf(next, sizeof next, "%s", pg.next);
	mu__page_release(&pg);
	CHECK_EQ_INT(t, mu__store_list(st, MU__RT_PODS, NULL, next, 2, NULL, NULL, &pg), MU_OK);
	CHECK_EQ_INT(t, pg.n, 1);
	CHECK(t, pg.n == 1 && !strcmp(pg.objs[0]->name, "c"));
	CHECK(t, pg.next == NULL);
	mu__page_release(&pg);
	/* delete */
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "b", del_fn, NULL, false, NULL), MU__MUT_DEL);
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "b", del_fn, NULL, false, NULL), MU_ENOENT);
	CHECK_EQ_INT(t, mu__store_count(st, MU__RT_PODS), 2);
	/* create twice */
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "x", put_fn, NULL, false, NULL), MU__MUT_PUT);
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "x", put_fn, NULL, false, NULL), MU_EEXIST);
	/* dry run writes nothing */
	int64_t rv = mu__store_rv(st);
	mu__obj_t *res = NULL;
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "d", put_fn, "d", true, &res), MU__MUT_PUT);
	CHECK(t, res != NULL);
	mu__obj_unref(res);
	CHECK_EQ_INT(t, mu__store_rv(st), rv);
	CHECK(t, mu__store_get(st, MU__RT_PODS, "default", "d") == NULL);
	/* the last change of each type is kept: pods at podrv, a ConfigMap after */
	int64_t podrv = rv;
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_CONFIGMAPS, "default", "cm", put_fn, "cm", false, NULL),
		     MU__MUT_PUT);
	rv = mu__store_rv(st);
	mu__store_close(st);
	/* reopen: everything and the version are back */
	st = open_store(100);
	CHECK(t, st != NULL);
	if (!st)
		return;
	CHECK_EQ_INT(t, mu__store_rv(st), rv);
	CHECK_EQ_INT(t, mu__store_count(st, MU__RT_PODS), 3);
	o = mu__store_get(st, MU__RT_PODS, "default", "c");
	CHECK(t, o && o->rv == 3);
	mu__obj_unref(o);
	CHECK(t, mu__store_get(st, MU__RT_PODS, "default", "b") == NULL);
	/* watches from before the reopen are expired */
	int64_t cur = 1;
	mu__wev_t ev[4];
	CHECK_EQ_INT(t, mu__store_wait(st, &cur, ev, 4, 10), MU_ERANGE);
	/* ... unless nothing of their type changed between them and the reopen */
	CHECK_EQ_INT(t, mu__store_resume(st, MU__RT_PODS, podrv), rv);
	CHECK_EQ_INT(t, mu__store_resume(st, MU__RT_PODS, podrv - 1), podrv - 1);
	CHECK_EQ_INT(t, mu__store_resume(st, MU__RT_CONFIGMAPS, podrv), podrv);
	CHECK_EQ_INT(t, mu__store_resume(st, MU__RT_PODS, rv + 5), rv + 5);
	cur = mu__store_resume(st, MU__RT_PODS, podrv);
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "e", put_fn, "e", false, NULL), MU__MUT_PUT);
	int n = mu__store_wait(st, &cur, ev, 4, 10);
	CHECK_EQ_INT(t, n, 1);
	if (n == 1) {
		CHECK(t, ev[0].type == MU__EV_ADDED && ev[0].obj && !strcmp(ev[0].obj->name, "e"));
		mu__wev_release(ev, 1);
	}
	/* what changed after the reopen is in the ring: a resume still starts at the reopen */
	CHECK_EQ_INT(t, mu__store_resume(st, MU__RT_PODS, podrv), rv);
	mu__store_close(st);
}

static void test_watch_ring(mu_t_t *t)
{
	mu__store_t *st = open_store(4);
	if (!st) {
		CHECK(t, 0);
		return;
	}
	int64_t base = mu__store_rv(st);
	int64_t cur = base;
	mu__wev_t ev[8];
	CHECK_EQ_INT(t, mu__store_wait(st, &cur, ev, 8, 10), 0); /* timeout */
	create(st, "w1");
	create(st, "w2");
	CHECK_EQ_INT(t, mu__store_wait(st, &cur, ev, 8, 10), 2);
	CHECK_EQ_INT(t, ev[0].type, MU__EV_ADDED);
	CHECK_STR(t, ev[1].obj->name, "w2");
	CHECK_EQ_INT(t, cur, base + 2);
	mu__wev_release(ev, 2);
	mu__store_mutate(st, MU__RT_PODS, "default", "w1", del_fn, NULL, false, NULL);
	CHECK_EQ_INT(t, mu__store_wait(st, &cur, ev, 8, 10), 1);
	CHECK_EQ_INT(t, ev[0].type, MU__EV_DELETED);
	CHECK(t, ev[0].prev != NULL);
	CHECK_EQ_INT(t, ev[0].obj->rv, base + 3);
	mu__wev_release(ev, 1);
	/* a watcher that falls 4 changes behind is expired */
	int64_t old = cur;
	for (int i = 0; i < 5; i++) {
		char n[16];
		snprintf(n, sizeof n, "z%d", i);
		create(st, n);
	}
	CHECK_EQ_INT(t, mu__store_wait(st, &old, ev, 8, 10), MU_ERANGE);
	mu__store_shutdown(st);
	int64_t now = mu__store_rv(st);
	CHECK_EQ_INT(t, mu__store_wait(st, &now, ev, 8, 10), MU_ESTATE);
	mu__store_close(st);
}

/* The ring keeps old changes only among the last ring_min: beyond them, a
 * change older than fresh_ms is released and a watch from before it is
 * expired, however large the ring (as kube's watch cache keeps 75 s), so
 * that memory follows the rate of change instead of filling the cap. */
static void test_ring_fresh(mu_t_t *t)
{
	mu__store_opts_t o = {.dir = dir, .ring = 1000, .ring_min = 3, .fresh_ms = 1000};
	mu__store_t *st = NULL;
	char err[256];
	CHECK_EQ_INT(t, mu__store_open(&o, &st, err, sizeof err), MU_OK);
	if (!st)
		return;
	int64_t base = mu__store_rv(st), from = base;
	for (int i = 0; i < 10; i++) {
		char n[16];
		snprintf(n, sizeof n, "f%d", i);
		create(st, n);
	}
	/* all fresh: everything since the open is kept */
	CHECK_EQ_INT(t, mu__store_oldest(st), base);
	mu__wev_t ev[16];
	int64_t cur = from;
	int n = mu__store_wait(st, &cur, ev, 16, 10);
	CHECK_EQ_INT(t, n, 10);
	mu__wev_release(ev, n > 0 ? n : 0);
	struct timespec nap = {1, 200 * 1000000L};
	nanosleep(&nap, NULL);
	create(st, "g0"); /* a commit after they aged: the old ones go */
	CHECK_EQ_INT(t, mu__store_oldest(st), mu__store_rv(st) - 3);
	cur = from;
	CHECK_EQ_INT(t, mu__store_wait(st, &cur, ev, 16, 10), MU_ERANGE);
	cur = mu__store_rv(st) - 3;
	n = mu__store_wait(st, &cur, ev, 16, 10);
	CHECK_EQ_INT(t, n, 3);
	mu__wev_release(ev, n > 0 ? n : 0);
	mu__store_close(st);
}

static int node_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name",
			 (const char *)ctx);
	return MU__MUT_PUT;
}

/* A wait for one type returns only its changes, steps over the others'
 * (and times out on them rather than waking), and never moves a cursor
 * from the future back. */
static void test_wait_type(mu_t_t *t)
{
	mu__store_t *st = open_store(100);
	if (!st) {
		CHECK(t, 0);
		return;
	}
	int64_t base = mu__store_rv(st), cur = base;
	mu__wev_t ev[8];
	mu__store_mutate(st, MU__RT_NODES, NULL, "n1", node_fn, "n1", false, NULL);
	create(st, "p1");
	mu__store_mutate(st, MU__RT_NODES, NULL, "n2", node_fn, "n2", false, NULL);
	create(st, "p2");
	CHECK_EQ_INT(t, mu__store_wait_rt(st, MU__RT_PODS, &cur, ev, 8, 10), 2);
	CHECK_STR(t, ev[0].obj->name, "p1");
	CHECK_STR(t, ev[1].obj->name, "p2");
	CHECK_EQ_INT(t, cur, base + 4);
	mu__wev_release(ev, 2);
	mu__store_mutate(st, MU__RT_NODES, NULL, "n3", node_fn, "n3", false, NULL);
	CHECK_EQ_INT(t, mu__store_wait_rt(st, MU__RT_PODS, &cur, ev, 8, 10), 0);
	CHECK_EQ_INT(t, cur, base + 5); /* past the node */
	int64_t nodes = base;
	CHECK_EQ_INT(t, mu__store_wait_rt(st, MU__RT_NODES, &nodes, ev, 2, 10), 2);
	CHECK_STR(t, ev[1].obj->name, "n2");
	CHECK_EQ_INT(t, nodes, base + 3);
	mu__wev_release(ev, 2);
	CHECK_EQ_INT(t, mu__store_wait_rt(st, MU__RT_NODES, &nodes, ev, 8, 10), 1);
	CHECK_STR(t, ev[0].obj->name, "n3");
	mu__wev_release(ev, 1);
	int64_t future = base + 50;
	CHECK_EQ_INT(t, mu__store_wait_rt(st, MU__RT_PODS, &future, ev, 8, 10), 0);
	CHECK_EQ_INT(t, future, base + 50);
	mu__store_close(st);
}

static void test_tx(mu_t_t *t)
{
	mu__store_t *st = open_store(1000);
	if (!st) {
		CHECK(t, 0);
		return;
	}
	int64_t rv = mu__store_rv(st);
	mu__wtx_t *tx;
	mu__store_begin(st, &tx);
	int rc = MU_OK;
	char name[32];
	for (int i = 0; i <= MU__TX_MAX && rc >= 0; i++) {
		snprintf(name, sizeof name, "t%03d", i);
		rc = mu__store_apply(tx, MU__RT_PODS, "default", name, put_fn, name, false, NULL);
	}
	CHECK_EQ_INT(t, rc, MU_ELIMIT);
	/* staged writes are invisible until the commit */
	CHECK(t, mu__store_get(st, MU__RT_PODS, "default", "t000") == NULL);
	/* the same key twice in one transaction sees the staged version */
	CHECK_EQ_INT(t, mu__store_commit(tx), MU_OK);
	CHECK_EQ_INT(t, mu__store_rv(st), rv + MU__TX_MAX);
	mu__obj_t *o = mu__store_get(st, MU__RT_PODS, "default", "t000");
	CHECK(t, o != NULL);
	mu__obj_unref(o);
	mu__store_begin(st, &tx);
	CHECK_EQ_INT(t, mu__store_apply(tx, MU__RT_PODS, "default", "t000", del_fn, NULL, false, NULL), MU__MUT_DEL);
	CHECK_EQ_INT(t, mu__store_apply(tx, MU__RT_PODS, "default", "t000", del_fn, NULL, false, NULL), MU_ENOENT);
	CHECK_EQ_INT(t, mu__store_commit(tx), MU_OK);
	mu__store_close(st);
}

typedef struct writer {
	mu__store_t *st;
	int id, failed;
} writer_t;

/* Adds one to the pod's spec.priority: a read-modify-write that loses
 * counts unless each writer sees the writes staged before it. */
static int incr_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	if (!o)
		return MU_ENOENT;
	json_int_t n = json_integer_value(mu__jget(o, "spec.priority"));
	json_object_set_new(json_object_get(o, "spec"), "priority", json_integer(n + 1));
	*out = o;
	return MU__MUT_PUT;
}

static void *writer_main(void *arg)
{
	writer_t *w = arg;
	char name[32];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof name, "g%d-%03d", w->id, i);
		if (create(w->st, name) != MU__MUT_PUT)
			w->failed++;
		if (i % 4 == 0 &&
		    mu__store_mutate(w->st, MU__RT_PODS, "default", "counter", incr_fn, NULL, false, NULL) != MU__MUT_PUT)
			w->failed++;
	}
	return NULL;
}

/* Four writers at once: every write is acknowledged, a watch sees each
 * change once in dense version order, and everything is there after a
 * reopen. */
static void test_group_commit(mu_t_t *t)
{
	mu__store_t *st = open_store(2000);
	if (!st) {
		CHECK(t, 0);
		return;
	}
	create(st, "counter");
	int64_t base = mu__store_rv(st), cur = base;
	writer_t w[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (writer_t){st, i, 0};
		pthread_create(&th[i], NULL, writer_main, &w[i]);
	}
	int seen = 0, order_ok = 1;
	mu__wev_t ev[64];
	while (seen < 1000) { /* 800 creates, 200 increments */
		int n = mu__store_wait(st, &cur, ev, 64, 5000);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			if (ev[i].obj->rv != base + seen + i + 1)
				order_ok = 0;
		seen += n;
		mu__wev_release(ev, n);
	}
	int failed = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		failed += w[i].failed;
	}
	CHECK_EQ_INT(t, failed, 0);
	CHECK_EQ_INT(t, seen, 1000);
	CHECK(t, order_ok);
	CHECK_EQ_INT(t, mu__store_rv(st), base + 1000);
	mu__obj_t *c = mu__store_get(st, MU__RT_PODS, "default", "counter");
	json_t *cj = c ? mu__obj_parse(c) : NULL;
	CHECK_EQ_INT(t, json_integer_value(mu__jget(cj, "spec.priority")), 200); /* no increment lost */
	json_decref(cj);
	mu__obj_unref(c);
	mu__store_close(st);
	st = open_store(10);
	CHECK(t, st != NULL);
	if (!st)
		return;
	CHECK_EQ_INT(t, mu__store_rv(st), base + 1000);
	mu__obj_t *o = mu__store_get(st, MU__RT_PODS, "default", "g3-199");
	CHECK(t, o != NULL);
	mu__obj_unref(o);
	mu__store_close(st);
}

static void *waker_main(void *arg)
{
	writer_t *w = arg;
	char name[32];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof name, "w%d-%03d", w->id, i);
		if (create(w->st, name) != MU__MUT_PUT)
			w->failed++;
	}
	return NULL;
}

/* Eight writers at once with fsync, so that a batch is open behind the
 * flying one most of the time: a writer sleeps until its own batch is
 * done, and is not woken when the batch ahead of it ends (that wake-up
 * costs two context switches and was once the rule: one condition for
 * every batch).  The bound leaves room for the rare spurious wake-up. */
static void test_commit_wakes(mu_t_t *t)
{
	mu__store_opts_t o = {.dir = dir, .ring = 2000, .fsync = 1};
	mu__store_t *st = NULL;
	char err[256];
	CHECK_EQ_INT(t, mu__store_open(&o, &st, err, sizeof err), MU_OK);
	if (!st)
		return;
	writer_t w[8];
	pthread_t th[8];
	for (int i = 0; i < 8; i++) {
		w[i] = (writer_t){st, i, 0};
		pthread_create(&th[i], NULL, waker_main, &w[i]);
	}
	int failed = 0;
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		failed += w[i].failed;
	}
	int64_t waits = 0, early = 0;
	mu__store_wait_stats(st, &waits, &early);
	CHECK_EQ_INT(t, failed, 0);
	CHECK(t, waits >= 800);
	CHECK(t, early * 20 <= waits);
	if (early * 20 > waits)
		fprintf(stderr, "waits %lld, woken early %lld\n", (long long)waits, (long long)early);
	mu__store_close(st);
}

static void test_second_server(mu_t_t *t)
{
	mu__store_t *a = open_store(10);
	mu__store_opts_t o = {.dir = dir, .ring = 10};
	mu__store_t *b = NULL;
	char err[256] = "";
	int rc = mu__store_open(&o, &b, err, sizeof err);
	CHECK(t, rc != MU_OK);
	CHECK(t, strstr(err, "in use") != NULL);
	mu__store_close(b);
	mu__store_close(a);
}

/* The schema of objects in DIR's muster.db (malloc'd), or NULL. */
static char *objects_sql(const char *d)
{
	char path[128];
	snprintf(path, sizeof path, "%s/muster.db", d);
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	char *sql = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE name = 'objects'", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		sql = strdup((const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	sqlite3_close(db);
	return sql;
}

/* An old data directory (objects WITHOUT ROWID, as muster made it before
 * 2026-11-27) opens: the table becomes a rowid table, its objects and the
 * version counter stay, and writes and a reopen work. */
static void test_migrate_rowid(mu_t_t *t)
{
	char old[64], path[128];
	snprintf(old, sizeof old, "/tmp/mu-store-old-XXXXXX");
	CHECK(t, mkdtemp(old) != NULL);
	snprintf(path, sizeof path, "%s/muster.db", old);
	sqlite3 *db = NULL;
	CHECK_EQ_INT(t, sqlite3_open(path, &db), SQLITE_OK);
	CHECK_EQ_INT(t, sqlite3_exec(db,
				     "CREATE TABLE objects(res TEXT NOT NULL, ns TEXT NOT NULL,"
				     " name TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL,"
				     " PRIMARY KEY(res, ns, name)) WITHOUT ROWID;"
				     "CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
				     "INSERT INTO meta(k, v) VALUES('rv', 7);"
				     "INSERT INTO objects VALUES('/pods', 'default', 'old', 5,"
				     " '{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"old\","
				     "\"namespace\":\"default\",\"resourceVersion\":\"5\",\"labels\":{\"app\":\"db\"}}}');",
				     NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	char *sql = objects_sql(old);
	CHECK(t, sql && strstr(sql, "WITHOUT ROWID"));
	free(sql);
	for (int round = 0; round < 2; round++) {
		mu__store_opts_t o = {.dir = old, .ring = 10};
		mu__store_t *st = NULL;
		char err[256] = "";
		CHECK_EQ_INT(t, mu__store_open(&o, &st, err, sizeof err), MU_OK);
		if (!st) {
			fprintf(stderr, "open: %s\n", err);
			break;
		}
		CHECK_EQ_INT(t, mu__store_rv(st), 7 + round);
		mu__obj_t *ob = mu__store_get(st, MU__RT_PODS, "default", "old");
		CHECK(t, ob != NULL);
		if (ob) {
			CHECK_EQ_INT(t, ob->rv, 5);
			CHECK_STR(t, mu__obj_label(ob, "app"), "db");
			mu__obj_unref(ob);
		}
		if (round == 0)
			CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "new", put_fn, "new", false, NULL),
				     MU__MUT_PUT);
		ob = mu__store_get(st, MU__RT_PODS, "default", "new");
		CHECK(t, ob != NULL && ob->rv == 8);
		mu__obj_unref(ob);
		mu__store_close(st);
		sql = objects_sql(old);
		CHECK(t, sql && !strstr(sql, "WITHOUT ROWID") && strstr(sql, "PRIMARY KEY(res, ns, name)"));
		free(sql);
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", old);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", old);
}

/* The rowid and the body of pod default/NAME in d's database ("" and -1
 * when there is no such row); *rows: how many rows the key has. */
static int64_t pod_row(const char *d, const char *name, char *body, size_t len, int *rows)
{
	char path[128];
	snprintf(path, sizeof path, "%s/muster.db", d);
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	int64_t id = -1;
	*rows = 0;
	body[0] = '\0';
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT rowid, body FROM objects WHERE res = '/pods' AND ns = 'default' AND name = ?",
			       -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
		while (sqlite3_step(q) == SQLITE_ROW) {
			id = sqlite3_column_int64(q, 0);
			snprintf(body, len, "%s", (const char *)sqlite3_column_text(q, 1));
			(*rows)++;
		}
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	return id;
}

static int relabel_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur)
		return MU_ENOENT;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	json_object_set_new(json_object_get(json_object_get(o, "metadata"), "labels"), "app", json_string(ctx));
	*out = o;
	return MU__MUT_PUT;
}

/* A change rewrites its object's row in place (an UPDATE keeps the rowid;
 * INSERT OR REPLACE, which it replaced, deleted the row and made a new
 * one), one row per key, and a reopen reads what the last change wrote. */
static void test_update_in_place(mu_t_t *t)
{
	mu__store_t *st = open_store(100);
	CHECK(t, st != NULL);
	if (!st)
		return;
	CHECK_EQ_INT(t, create(st, "u1"), MU__MUT_PUT);
	CHECK_EQ_INT(t, create(st, "u2"), MU__MUT_PUT);
	mu__store_close(st);
	char body[4096];
	int rows = 0;
	int64_t id = pod_row(dir, "u1", body, sizeof body, &rows);
	CHECK(t, id > 0 && rows == 1);
	st = open_store(100);
	CHECK(t, st != NULL);
	if (!st)
		return;
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "u1", relabel_fn, "v1", false, NULL), MU__MUT_PUT);
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "u1", relabel_fn, "v2", false, NULL), MU__MUT_PUT);
	int64_t rv = mu__store_rv(st);
	mu__store_close(st);
	CHECK_EQ_INT(t, pod_row(dir, "u1", body, sizeof body, &rows), id);
	CHECK_EQ_INT(t, rows, 1);
	CHECK(t, strstr(body, "\"app\":\"v2\"") != NULL);
	st = open_store(100);
	CHECK(t, st != NULL);
	if (!st)
		return;
	mu__obj_t *o = mu__store_get(st, MU__RT_PODS, "default", "u1");
	CHECK(t, o && o->rv == rv && !strcmp(mu__obj_label(o, "app"), "v2"));
	mu__obj_unref(o);
	mu__store_close(st);
}

/* Puts the pod "big" with ctx (a string) as an annotation. */
static int labelled_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)cur;
	*out = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Pod", "metadata", "name",
			 "big", "namespace", "default", "annotations", "example.com/big", (const char *)ctx);
	return MU__MUT_PUT;
}

/* mu__store_mutate_keep keeps the tree of the version it puts: the first
 * take gets it (equal to the stored text), the next parses; a dry run and
 * plain mutations keep nothing, nor a put of more than MU__HOT_OBJ_MAX
 * bytes; after MU__HOT_MAX more kept puts the oldest is gone. */
static void test_hot_tree(mu_t_t *t)
{
	mu__store_t *st = open_store(1000);
	CHECK(t, st != NULL);
	if (!st)
		return;
	mu__obj_t *ob = NULL;
	bool kept = false;
	CHECK_EQ_INT(t, mu__store_mutate_keep(st, MU__RT_PODS, "default", "hot", put_fn, "hot", false, &ob),
		     MU__MUT_PUT);
	json_t *tree = ob ? mu__store_take_tree(st, ob, &kept) : NULL;
	CHECK(t, kept);
	char *text = tree ? json_dumps(tree, JSON_COMPACT) : NULL;
	CHECK(t, text && ob && !strcmp(text, ob->json));
	free(text);
	json_decref(tree);
	tree = ob ? mu__store_take_tree(st, ob, &kept) : NULL;
	CHECK(t, !kept && tree != NULL); /* taken once: now parsed */
	json_t *parsed = ob ? mu__obj_parse(ob) : NULL;
	CHECK(t, json_equal(tree, parsed));
	json_decref(parsed);
	json_decref(tree);
	mu__obj_unref(ob);
	/* plain and dry writes keep nothing */
	ob = NULL;
	CHECK_EQ_INT(t, mu__store_mutate(st, MU__RT_PODS, "default", "cold", put_fn, "cold", false, &ob),
		     MU__MUT_PUT);
	json_decref(ob ? mu__store_take_tree(st, ob, &kept) : NULL);
	CHECK(t, !kept);
	mu__obj_unref(ob);
	ob = NULL;
	CHECK_EQ_INT(t, mu__store_mutate_keep(st, MU__RT_PODS, "default", "dry", put_fn, "dry", true, &ob),
		     MU__MUT_PUT);
	json_decref(ob ? mu__store_take_tree(st, ob, &kept) : NULL);
	CHECK(t, !kept);
	mu__obj_unref(ob);
	/* too large a version keeps none (its text over MU__HOT_OBJ_MAX) */
	char big[MU__HOT_OBJ_MAX + 16];
	memset(big, 'b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ob = NULL;
	CHECK_EQ_INT(t, mu__store_mutate_keep(st, MU__RT_PODS, "default", "big", labelled_fn, big, false, &ob),
		     MU__MUT_PUT);
	CHECK(t, ob && ob->len > MU__HOT_OBJ_MAX);
	json_decref(ob ? mu__store_take_tree(st, ob, &kept) : NULL);
	CHECK(t, !kept);
	mu__obj_unref(ob);
	/* the ring: the first of MU__HOT_MAX + 1 kept puts is dropped, the
	 * last stays */
	mu__obj_t *first = NULL, *last = NULL;
	for (int i = 0; i < MU__HOT_MAX + 1; i++) {
		char name[32];
		snprintf(name, sizeof name, "ring-%d", i);
		mu__obj_t *o = NULL;
		CHECK_EQ_INT(t, mu__store_mutate_keep(st, MU__RT_PODS, "default", name, put_fn, name, false, &o),
			     MU__MUT_PUT);
		if (i == 0)
			first = o;
		else if (i == MU__HOT_MAX)
			last = o;
		else
			mu__obj_unref(o);
	}
	json_decref(first ? mu__store_take_tree(st, first, &kept) : NULL);
	CHECK(t, !kept);
	json_decref(last ? mu__store_take_tree(st, last, &kept) : NULL);
	CHECK(t, kept);
	mu__obj_unref(first);
	mu__obj_unref(last);
	mu__store_close(st); /* frees the trees still kept (ASan: no leak) */
}

/* mu__json_text's text is json_dumps(JSON_COMPACT)'s, for every escape,
 * UTF-8, numbers, nesting and the bodies of the fuzz corpora. */
static void same_text(mu_t_t *t, const json_t *v)
{
	char *a = mu__json_text(v), *b = json_dumps(v, JSON_COMPACT);
	CHECK(t, (a == NULL) == (b == NULL));
	if (a && b && strcmp(a, b)) {
		fprintf(stderr, "mu__json_text: %.200s\njson_dumps:   %.200s\n", a, b);
		CHECK(t, false);
	}
	free(a);
	free(b);
}

static void test_json_text(mu_t_t *t)
{
	char all[160];
	for (int i = 0; i < 127; i++)
		all[i] = (char)(i + 1);
	memcpy(all + 127, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10);
	json_t *v = json_pack("{s:s%, s:[i, I, f, f, f, b, b, n, s, {}, []], s:{s:{s:[[{}]]}}, s:s}", "all", all,
			      (size_t)137, "nums", 0, (json_int_t)-9223372036854775807LL, 0.1, 1e300, -2.5,
			      1, 0, "", "nest", "a", "b", "\n\"key\\", "v/\u2028");
	json_object_set_new(v, "\x01\x1f", json_stringn("a\0b", 3)); /* a NUL inside a value */
	same_text(t, v);
	same_text(t, json_object_get(v, "nums"));
	char *big = malloc(20000); /* past the stack buffer */
	memset(big, 'x', 19999);
	big[19999] = '\0';
	json_object_set_new(v, "big", json_string(big));
	same_text(t, v);
	free(big);
	json_decref(v);
	/* every escaped byte at every place of an eight-byte word, beside
	 * bytes of 0x80 and more (UTF-8 pairs: the writer tests eight bytes
	 * at a time), and the integers at the ends of the range */
	const char esc[] = {'"', '\\', '\n', '\x01', '\x1f', '\x7f', ' '};
	json_t *arr = json_array();
	for (size_t e = 0; e < sizeof esc; e++)
		for (int at = 0; at < 24; at++)
			for (int tail = 0; tail < 10; tail++) {
				char str[64];
				int n = 0;
				for (int k = 0; k + 1 < at; k += 2)
					n += snprintf(str + n, sizeof str - (size_t)n, "\xc3\xa9");
				if (at % 2)
					str[n++] = 'a';
				str[n++] = esc[e];
				for (int k = 0; k < tail; k++)
					str[n++] = k % 3 ? 'b' : '\x7e';
				json_array_append_new(arr, json_stringn(str, (size_t)n));
			}
	json_array_append_new(arr, json_integer(INT64_MIN));
	json_array_append_new(arr, json_integer(INT64_MAX));
	json_array_append_new(arr, json_integer(-1));
	same_text(t, arr);
	json_decref(arr);
	json_t *s = json_string("scalar"); /* not an object: NULL, as json_dumps */
	same_text(t, s);
	json_decref(s);
	/* every JSON body of the fuzz corpora that parses */
	const char *dirs[] = {"fuzz/corpus/fuzz_json_body", "fuzz/corpus/fuzz_ssa", "fuzz/corpus/fuzz_strategic_patch",
			      "fuzz/corpus/fuzz_json_patch", "fuzz/corpus/fuzz_kinds"};
	int seen = 0;
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
		char cmd[200];
		snprintf(cmd, sizeof cmd, "ls %s 2>/dev/null", dirs[d]);
		FILE *ls = popen(cmd, "r");
		char name[256];
		while (ls && fgets(name, sizeof name, ls)) {
			name[strcspn(name, "\n")] = '\0';
			char path[512];
			snprintf(path, sizeof path, "%s/%s", dirs[d], name);
			json_t *j = json_load_file(path, JSON_DECODE_ANY, NULL);
			if (j) {
				same_text(t, j);
				seen++;
			}
			json_decref(j);
		}
		if (ls)
			pclose(ls);
	}
	CHECK(t, seen > 50);
}

/* RFC 3339 stamps (util's mu__rfc3339_format, written by hand for years
 * 0-9999 and through snprintf otherwise): the same text either way. */
static void test_rfc3339(mu_t_t *t)
{
	char buf[64];
	mu__rfc3339_format(1700000000123456LL, true, buf, sizeof buf);
	CHECK_STR(t, buf, "2023-11-14T22:13:20.123456Z");
	mu__rfc3339_format(1700000000123456LL, false, buf, sizeof buf);
	CHECK_STR(t, buf, "2023-11-14T22:13:20Z");
	mu__rfc3339_format(-500000, true, buf, sizeof buf); /* before the epoch */
	CHECK_STR(t, buf, "1969-12-31T23:59:59.500000Z");
	mu__rfc3339_format(0, false, buf, sizeof buf);
	CHECK_STR(t, buf, "1970-01-01T00:00:00Z");
	mu__rfc3339_format(253402300800LL * 1000000, false, buf, sizeof buf); /* year 10000 */
	CHECK_STR(t, buf, "10000-01-01T00:00:00Z");
	mu__rfc3339_format(1700000000000000LL, false, buf, 10); /* cut short, as snprintf */
	CHECK_STR(t, buf, "2023-11-1");
}

/* mu__json_parse(text) against json_loadb: both NULL, or the same tree
 * (the same compact text, so the same key order and number kinds). */
static void same_parse(mu_t_t *t, const char *text, size_t len)
{
	json_t *a = mu__json_parse(text, len), *b = json_loadb(text, len, 0, NULL);
	char *x = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	char *y = b ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	bool same = (!a && !b) || (a && b && x && y && !strcmp(x, y) && json_equal(a, b));
	CHECK(t, same);
	if (!same)
		fprintf(stderr, "  differs on %.*s\n", (int)(len < 300 ? len : 300), text);
	free(x);
	free(y);
	json_decref(a);
	json_decref(b);
}

static void same_parse_s(mu_t_t *t, const char *text)
{
	same_parse(t, text, strlen(text));
}

/* The store's parse of its own text (mu__json_parse): the tree jansson
 * reads, on hand-made texts (escapes, numbers at the limits, reals,
 * duplicate keys, white space, UTF-8, what jansson refuses) and on every
 * fuzz corpus body, as it is and as the store writes it. */
static void test_json_parse(mu_t_t *t)
{
	const char *texts[] = {
		"{}", "[]", "{\"a\":1}", "[1,2,3]", "{\"a\":{\"b\":[{\"c\":null},true,false]}}",
		"{\"k\":\"q\\\"b\\\\s\\/n\\nr\\rt\\tb\\bf\\f\"}", "{\"e\\\"k\":\"v\"}", "{\"u\":\"\\u00e9\\u0041\"}",
		"{\"nul\":\"a\\u0000b\"}", "{\"sur\":\"\\ud83d\\ude00\"}", "{\"lone\":\"\\ud83d\"}",
		"{\"i\":123456789012345678}", "{\"i\":-123456789012345678}", "{\"i\":1234567890123456789}",
		"{\"i\":9223372036854775807}", "{\"i\":-9223372036854775808}", "{\"i\":9223372036854775808}",
		"{\"i\":0}", "{\"i\":-0}", "{\"i\":01}", "{\"i\":-}", "{\"r\":1.5}", "{\"r\":1e3}", "{\"r\":-0.0}",
		"{\"r\":1E+2}", "{\"d\":1,\"d\":2,\"e\":3}", " { \"a\" : [ 1 , 2 ] , \"b\" : { } } \n",
		"{\"a\":1} x", "{\"a\":1,}", "[1,]", "{\"a\"}", "{\"a\":}", "{a:1}", "{\"a\":tru}", "{\"a\":nul}",
		"\"scalar\"", "1", "", "   ", "{\"raw\":\"a\tb\"}", "{\"utf\":\"\xc3\xa9\xe2\x82\xac\"}",
		"{\"bad\":\"\xc3\"}", "{\"bad\":\"\xed\xa0\x80\"}", "{\"a\":[[[[[[]]]]]]}", "{\"a\":1}}", "[{}]]",
		"{\"x\":\"\\q\"}", "{\"t\":true,\"f\":false,\"n\":null}",
	};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
		same_parse_s(t, texts[i]);
	/* NUL inside the text, long keys and long escaped strings, deep lists */
	same_parse(t, "{\"a\":\"x\0y\"}", 11);
	char big[3000];
	snprintf(big, sizeof big, "{\"%0300d\":1,\"s\":\"%01500d\\n\"}", 7, 8);
	same_parse_s(t, big);
	snprintf(big, sizeof big, "{\"s\":\"%0900d\\n\\t\"}", 8);
	same_parse_s(t, big);
	char deep[1200];
	for (int i = 0; i < 500; i++)
		deep[i] = '[', deep[1000 - i - 1] = ']';
	same_parse(t, deep, 1000);
	const char *dirs[] = {"fuzz/corpus/fuzz_json_body", "fuzz/corpus/fuzz_ssa", "fuzz/corpus/fuzz_strategic_patch",
			      "fuzz/corpus/fuzz_json_patch", "fuzz/corpus/fuzz_kinds"};
	int seen = 0;
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
		char cmd[200];
		snprintf(cmd, sizeof cmd, "ls %s 2>/dev/null", dirs[d]);
		FILE *ls = popen(cmd, "r");
		char name[256];
		while (ls && fgets(name, sizeof name, ls)) {
			name[strcspn(name, "\n")] = '\0';
			char path[512];
			snprintf(path, sizeof path, "%s/%s", dirs[d], name);
			FILE *f = fopen(path, "rb");
			char *buf = malloc(1 << 20);
			size_t n = f && buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
			if (f)
				fclose(f);
			if (buf) {
				same_parse(t, buf, n);
				json_t *j = json_loadb(buf, n, 0, NULL);
				char *text = j ? mu__json_text(j) : NULL;
				if (text) {
					same_parse_s(t, text);
					seen++;
				}
				free(text);
				json_decref(j);
			}
			free(buf);
		}
		if (ls)
			pclose(ls);
	}
	CHECK(t, seen > 50);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	snprintf(dir, sizeof dir, "/tmp/mu-store-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	MU_RUN(&t, test_crud);
	MU_RUN(&t, test_watch_ring);
	MU_RUN(&t, test_ring_fresh);
	MU_RUN(&t, test_wait_type);
	MU_RUN(&t, test_tx);
	MU_RUN(&t, test_group_commit);
	MU_RUN(&t, test_commit_wakes);
	MU_RUN(&t, test_second_server);
	MU_RUN(&t, test_migrate_rowid);
	MU_RUN(&t, test_hot_tree);
	MU_RUN(&t, test_update_in_place);
	MU_RUN(&t, test_json_text);
	MU_RUN(&t, test_rfc3339);
	MU_RUN(&t, test_json_parse);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return mu_t_done(&t);
}
