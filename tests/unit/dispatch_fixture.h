/*
 * dispatch_fixture.h - what the dispatcher's unit tests against an
 * in-process `muster up` share (test_dispatch_served.c, _wdra.c, _hdra.c):
 * a server on a loopback port and a data directory of its own, stopped and
 * removed after; a dispatcher's state with quiet defaults; a worker cluster of it; one
 * request and its answer; a short sleep
 * for their polls.  Header-only (static functions), included after
 * check.h.
 */
#ifndef MUSTER_TEST_DISPATCH_FIXTURE_H
#define MUSTER_TEST_DISPATCH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/apiserver.h"

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Starts `muster up` on 127.0.0.1, port chosen by the kernel, in a new
 * directory made from template dir (modified in place); its URL into
 * server (len bytes); with token (NULL: none), every request must carry
 * it or another the server knows (its DIR/tokens.csv, RBAC-checked).
 * The server, or NULL (checked failed, the reason printed). */
static mu_apiserver_t *fx_server_tok(mu_t_t *t, char *dir, char *server, size_t len,
				     const char *token)
{
	char err[256] = "";
	mu_apiserver_opts_t ao;
	mu_apiserver_t *s = NULL;
	CHECK(t, mkdtemp(dir) != NULL);
	mu_apiserver_opts_defaults(&ao);
	ao.listen = "127.0.0.1:0";
	ao.data_dir = dir;
	ao.fsync = 0;
	ao.quiet = 1;
	ao.token = token;
	int rc = mu_apiserver_start(&ao, &s, err, sizeof err);
	CHECK_EQ_INT(t, rc, MU_OK);
	if (rc != MU_OK) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	snprintf(server, len, "http://127.0.0.1:%d", mu_apiserver_port(s));
	return s;
}

/* fx_server_tok without a token: every request is the admin's. */
static mu_apiserver_t *fx_server(mu_t_t *t, char *dir, char *server, size_t len)
{
	return fx_server_tok(t, dir, server, len, NULL);
}

/* Stops s and removes its directory dir. */
static void fx_server_stop(mu_t_t *t, mu_apiserver_t *s, const char *dir)
{
	char cmd[512];
	mu_apiserver_stop(s);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK_EQ_INT(t, system(cmd), 0);
}

/* cfg (zeroed by the caller) for server in namespace default; its
 * strings are released with mu_kube_config_release. */
static void fx_config(mu_kube_config_t *cfg, const char *server)
{
	cfg->server = strdup(server);
	cfg->ns = strdup("default");
}

/* One request: method on path with body (JSON; NULL: none), within 5 s;
 * the answer's object into out when out is not NULL (NULL: no object).
 * The HTTP status, 0 when there was none. */
static inline long fx_req(mu_kube_client_t *c, const char *method, const char *path,
			  const char *body, json_t **out)
{
	long st = 0;
	char *ans = NULL;
	mu_kube_client_do(c, method, path, body ? "application/json" : NULL, body, 5000, &st, &ans);
	if (out)
		*out = ans ? json_loads(ans, 0, NULL) : NULL;
	free(ans);
	return st;
}

/* Cluster c zeroed, named "w", with a config of its own for server
 * (c->cfg: freed with c; its bearer token token, NULL: none), added to
 * d's fleet when d has one (c->fid), and connected (mu__dcl_connect). */
static inline void fx_cluster_tok(mu_t_t *t, mu__dd_t *d, mu__dcl_t *c, const char *server,
				  const char *token)
{
	memset(c, 0, sizeof *c);
	c->name = "w";
	c->cfg = calloc(1, sizeof *c->cfg);
	if (!c->cfg) {
		CHECK(t, c->cfg != NULL);
		return;
	}
	fx_config(c->cfg, server);
	c->cfg->token = token ? strdup(token) : NULL;
	if (d->fleet) {
		mu_cluster_spec_t cs = {.name = "w", .tier = MU_TIER_PRIVATE};
		CHECK_EQ_INT(t, mu_fleet_cluster_add(d->fleet, &cs, &c->fid), MU_OK);
	}
	CHECK_EQ_INT(t, mu__dcl_connect(c, false), MU_OK);
}

/* fx_cluster_tok without a token. */
static inline void fx_cluster(mu_t_t *t, mu__dd_t *d, mu__dcl_t *c, const char *server)
{
	fx_cluster_tok(t, d, c, server, NULL);
}

/* d zeroed, with options o: mu_dispatch_opts_defaults, quiet. */
static void fx_dd(mu__dd_t *d, mu_dispatch_opts_t *o)
{
	mu_dispatch_opts_defaults(o);
	o->quiet = true;
	memset(d, 0, sizeof *d);
	d->o = o;
	d->nreq = &d->reqs;
}

/* The hub's side of an in-process dispatcher test: cfg for server, d
 * zeroed with options o (fx_dd), o->hub = cfg (the copies read the hub's
 * objects again with a client of their own) and d->hub a client of it.
 * cfg must outlive d; the caller frees d->hub. */
static inline void fx_hub(mu_t_t *t, mu__dd_t *d, mu_dispatch_opts_t *o, mu_kube_config_t *cfg,
			  const char *server)
{
	fx_config(cfg, server);
	fx_dd(d, o);
	o->hub = cfg;
	CHECK_EQ_INT(t, mu_kube_client_new(cfg, &d->hub), MU_OK);
}

#endif
