/*
 * fuzz_web_query.c - the live UI's request entry point (mu_web_get) with
 * untrusted paths, query arguments and Authorization headers, over a small
 * fixed snapshot.  Input: "PATH\nAUTH\nk=v&k=v..." (missing parts are
 * empty).  The UI is built per input so nothing carries over.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/web.h"

static int snap(void *ctx, mu_web_snap_t *s)
{
	(void)ctx;
	mu_web_queue_t q = {.name = "a", .parent = NULL, .deserved = {8, 1, 2}, .limit = {-1, -1, -1}};
	mu_web_snap_add_queue(s, &q);
	for (int i = 0; i < 5; i++) {
		char key[24];
		snprintf(key, sizeof key, "j:ns/%d", i);
		mu_web_job_t j = {.key = key, .name = key + 5, .ns = "ns", .queue = "a", .type = "train",
				  .kind = "job", .state = (mu_web_jstate_t)(i % 3), .pods = 1};
		mu_web_snap_add_job(s, &j);
		mu_web_pod_t p = {.job_key = key, .name = key, .node = "n", .phase = "Running", .gpus = 1};
		mu_web_snap_add_pod(s, &p);
	}
	mu_web_node_t n = {.name = "n", .rack = "r", .ngpu = 8};
	return mu_web_snap_add_node(s, &n);
}

typedef struct kv {
	char *k[16], *v[16];
	int n;
} kv_t;

static const char *arg(void *ctx, const char *key)
{
	const kv_t *a = ctx;
	for (int i = 0; i < a->n; i++)
		if (!strcmp(a->k[i], key))
			return a->v[i];
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *path = buf, *auth = strchr(path, '\n'), *query = NULL;
	if (auth) {
		*auth++ = '\0';
		if ((query = strchr(auth, '\n')))
			*query++ = '\0';
	}
	kv_t a = {.n = 0};
	for (char *p = query, *save = NULL; p && a.n < 16; p = NULL) {
		char *tok;
		while (a.n < 16 && (tok = strtok_r(p, "&", &save))) {
			p = NULL;
			char *eq = strchr(tok, '=');
			if (eq)
				*eq++ = '\0';
			a.k[a.n] = tok;
			a.v[a.n++] = eq ? eq : (char *)"";
		}
		break;
	}
	mu_web_provider_t pr = {NULL, snap, NULL};
	mu_web_opts_t o;
	mu_web_opts_defaults(&o);
	o.token = (size & 1) ? "tok" : NULL;
	mu_web_t *w = NULL;
	if (mu_web_new(&pr, &o, &w) == MU_OK) {
		mu_web_tick(w, 1000);
		mu_web_resp_t r;
		mu_web_get(w, path, arg, &a, auth, &r);
		if (r.status == 200 && !r.stream && !r.body)
			abort();
		mu_web_resp_release(&r);
		mu_web_free(w);
	}
	free(buf);
	return 0;
}
