/*
 * test_kube_watch.c - the watched list of src/kube/watchcache.c against an
 * in-process `muster up` API server on loopback (plain HTTP, no token):
 * what changed since a change count (mu_kube_watch_changes: changed
 * objects, deleted keys as null, NULL before the list or after a list
 * came between) and one object by key (mu_kube_watch_get), which the hub
 * daemon's passes read instead of a whole snapshot (docs/dispatch.md,
 * round 10); a listed object and a watched one both without their
 * managedFields (round 13: the list's items were kept with them); an
 * object changed five times between two reads is parsed once, when read
 * (round 17).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "muster/apiserver.h"
#include "muster/kube.h"

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Waits up to 10 s for w's change count to reach at least want. */
static uint64_t wait_seq(mu_kube_watch_t *w, uint64_t want)
{
	uint64_t seq = 0;
	for (int i = 0; i < 500; i++) {
		if (mu_kube_watch_items(w, NULL, &seq) && seq >= want)
			break;
		nap_ms(20);
	}
	return seq;
}

/* Creates (body) or deletes (NULL) ConfigMap name in default; the status. */
static long cm(mu_kube_client_t *c, const char *name, const char *value)
{
	char path[200], body[300];
	long st = 0;
	char *ans = NULL;
	if (value) {
		snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
			 "{\"name\":\"%s\"},\"data\":{\"v\":\"%s\"}}", name, value);
		mu_kube_client_do(c, "POST", "/api/v1/namespaces/default/configmaps",
				  "application/json", body, 5000, &st, &ans);
	} else {
		snprintf(path, sizeof path, "/api/v1/namespaces/default/configmaps/%s", name);
		mu_kube_client_do(c, "DELETE", path, NULL, NULL, 5000, &st, &ans);
	}
	free(ans);
	return st;
}

static void test_changes(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-watch-XXXXXX", err[256] = "";
	CHECK(t, mkdtemp(dir) != NULL);
	mu_apiserver_opts_t o;
	mu_apiserver_opts_defaults(&o);
	o.listen = "127.0.0.1:0";
	o.data_dir = dir;
	o.fsync = 0;
	o.quiet = 1;
	mu_apiserver_t *s = NULL;
	int rc = mu_apiserver_start(&o, &s, err, sizeof err);
	CHECK_EQ_INT(t, rc, MU_OK);
	if (rc != MU_OK) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	char server[64];
	snprintf(server, sizeof server, "http://127.0.0.1:%d", mu_apiserver_port(s));
	mu_kube_config_t cfg = {0};
	cfg.server = strdup(server);
	cfg.ns = strdup("default");
	mu_kube_client_t *c = NULL;
	mu_kube_watch_t *w = NULL;
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &c), MU_OK);
	CHECK_EQ_INT(t, cm(c, "a", "1"), 201);
	CHECK_EQ_INT(t, mu_kube_watch_start(&cfg, "/api/v1/namespaces/default/configmaps", NULL, &w),
		     MU_OK);
	uint64_t s0 = wait_seq(w, 1), seq = 0;
	CHECK(t, s0 >= 1);
	json_t *ch = NULL;
	/* from before the list: not known, a snapshot is needed */
	CHECK(t, mu_kube_watch_changes(w, 0, &ch, &seq));
	CHECK(t, ch == NULL);
	CHECK_EQ_INT(t, seq, s0);
	/* nothing since the list */
	CHECK(t, mu_kube_watch_changes(w, s0, &ch, &seq));
	CHECK(t, json_is_object(ch) && json_object_size(ch) == 0);
	json_decref(ch);
	/* the listed object as a watch event gives it: its managedFields cut
	 * out (the server's has them), the rest whole */
	char *raw = NULL;
	long rst = 0;
	mu_kube_client_do(c, "GET", "/api/v1/namespaces/default/configmaps/a", NULL, NULL, 5000,
			  &rst, &raw);
	CHECK_EQ_INT(t, rst, 200);
	CHECK(t, raw && strstr(raw, "\"managedFields\""));
	free(raw);
	json_t *a = mu_kube_watch_get(w, "default/a");
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(a, "data"), "v")), "1");
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(a, "metadata"), "name")), "a");
	CHECK(t, json_is_object(json_object_get(a, "metadata")) &&
	      !json_object_get(json_object_get(a, "metadata"), "managedFields"));
	json_decref(a);
	/* two made, one deleted (the one listed): three changes, by key */
	CHECK_EQ_INT(t, cm(c, "b", "2"), 201);
	CHECK_EQ_INT(t, cm(c, "c", "3"), 201);
	CHECK_EQ_INT(t, cm(c, "a", NULL), 200);
	uint64_t s1 = wait_seq(w, s0 + 3);
	CHECK_EQ_INT(t, s1, s0 + 3);
	CHECK(t, mu_kube_watch_changes(w, s0, &ch, &seq));
	CHECK_EQ_INT(t, seq, s1);
	CHECK_EQ_INT(t, json_object_size(ch), 3);
	CHECK(t, json_is_null(json_object_get(ch, "default/a")));
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(json_object_get(ch,
		  "default/b"), "data"), "v")), "2");
	CHECK(t, json_is_object(json_object_get(ch, "default/c")));
	json_decref(ch);
	/* from the middle: only what came after */
	CHECK(t, mu_kube_watch_changes(w, s0 + 2, &ch, &seq));
	CHECK_EQ_INT(t, json_object_size(ch), 1);
	CHECK(t, json_is_null(json_object_get(ch, "default/a")));
	json_decref(ch);
	/* a count not reached yet is not known either */
	CHECK(t, mu_kube_watch_changes(w, s1 + 5, &ch, &seq));
	CHECK(t, ch == NULL);
	/* one object by key */
	json_t *b = mu_kube_watch_get(w, "default/b");
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(b, "data"), "v")), "2");
	CHECK(t, !json_object_get(json_object_get(b, "metadata"), "managedFields"));
	json_decref(b);
	CHECK(t, mu_kube_watch_get(w, "default/a") == NULL);
	/* b changed five times between two reads (round 17): five changes
	 * counted, but only the last event's object parsed, when read */
	uint64_t p0 = mu_kube_watch_parsed(w);
	for (int i = 1; i <= 5; i++) {
		char body[100], *ans = NULL;
		long st = 0;
		snprintf(body, sizeof body, "{\"data\":{\"v\":\"b%d\"}}", i);
		mu_kube_client_do(c, "PATCH", "/api/v1/namespaces/default/configmaps/b",
				  "application/merge-patch+json", body, 5000, &st, &ans);
		free(ans);
		CHECK_EQ_INT(t, st, 200);
	}
	CHECK_EQ_INT(t, wait_seq(w, s1 + 5), s1 + 5);
	CHECK_EQ_INT(t, mu_kube_watch_parsed(w), p0);
	CHECK(t, mu_kube_watch_changes(w, s1, &ch, &seq));
	CHECK_EQ_INT(t, seq, s1 + 5);
	CHECK_EQ_INT(t, json_object_size(ch), 1);
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(json_object_get(ch,
		  "default/b"), "data"), "v")), "b5");
	json_decref(ch);
	CHECK_EQ_INT(t, mu_kube_watch_parsed(w), p0 + 1);
	b = mu_kube_watch_get(w, "default/b");
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(b, "data"), "v")), "b5");
	CHECK(t, !json_object_get(json_object_get(b, "metadata"), "managedFields"));
	json_decref(b);
	CHECK_EQ_INT(t, mu_kube_watch_parsed(w), p0 + 1);
	mu_kube_watch_stop(w);
	mu_kube_client_free(c);
	mu_kube_config_release(&cfg);
	mu_apiserver_stop(s);
	char cmd[sizeof dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK_EQ_INT(t, system(cmd), 0);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_changes);
	return mu_t_done(&t);
}
