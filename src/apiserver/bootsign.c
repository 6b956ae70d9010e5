/*
 * bootsign.c - kube-controller-manager's bootstrapsigner
 * (pkg/controller/bootstrap/bootstrapsigner.go): the ConfigMap
 * kube-public/cluster-info, whose `kubeconfig` a joining node reads before
 * it trusts the cluster (kubeadm's token discovery), gets a detached JWS
 * `jws-kubeconfig-ID` of that text for each bootstrap token Secret
 * (kube-system/bootstrap-token-ID, type bootstrap.kubernetes.io/token,
 * token-id ID) with usage-bootstrap-signing "true" that is not being
 * deleted and has not expired; signatures of other tokens are removed.
 * The JWS is k8s.io/cluster-bootstrap's: HS256 keyed by the whole token
 * "ID.SECRET", protected header {"alg":"HS256","kid":"ID"}, the payload
 * left out (header..signature).  Nothing is written when nothing changed
 * or the ConfigMap (kubeadm makes it; muster up does not) or its
 * kubeconfig key is missing.
 *
 * Driven by the controller loop (server.c) on changes of kube-system's
 * Secrets and of cluster-info, and at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"

#define PREFIX "jws-kubeconfig-"
#define MAX_TOKENS 256

char *mu__jws_detached(const char *content, const char *id, const char *secret)
{
	char hdr[64], key[64];
	snprintf(hdr, sizeof hdr, "{\"alg\":\"HS256\",\"kid\":\"%.6s\"}", id);
	snprintf(key, sizeof key, "%.6s.%.16s", id, secret);
	char *h = mu__b64url(hdr, strlen(hdr)), *p = mu__b64url(content, strlen(content));
	char *input = NULL, *sig = NULL, *out = NULL;
	size_t ln = h && p ? strlen(h) + 1 + strlen(p) : 0;
	if (ln && (input = malloc(ln + 1)))
		snprintf(input, ln + 1, "%s.%s", h, p);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdl = 0;
	if (input && HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)input, ln, md, &mdl))
		sig = mu__b64url(md, mdl);
	size_t ol = sig ? strlen(h) + 2 + strlen(sig) + 1 : 0;
	if (ol && (out = malloc(ol)))
		snprintf(out, ol, "%s..%s", h, sig);
	free(h);
	free(p);
	free(input);
	free(sig);
	return out;
}

bool mu__bootsign_event(const mu__wev_t *ev)
{
	const mu__obj_t *o = ev->obj;
	return (o->rt == MU__RT_SECRETS && o->ns && !strcmp(o->ns, "kube-system")) ||
	       (o->rt == MU__RT_CONFIGMAPS && o->ns && !strcmp(o->ns, "kube-public") && !strcmp(o->name, "cluster-info"));
}

/* A Secret data field decoded into out; false when missing. */
static bool field(const json_t *j, const char *k, char *out, size_t cap)
{
	const char *v = json_string_value(json_object_get(json_object_get(j, "data"), k));
	size_t n;
	if (!v || mu__b64dec(v, out, cap - 1, &n) != MU_OK)
		return false;
	out[n] = '\0';
	return true;
}

typedef struct tokens {
	char id[MAX_TOKENS][7], secret[MAX_TOKENS][17];
	int n;
} tokens_t;

/* kube's validateSecretForSigning: the signing tokens among kube-system's
 * Secrets. */
static void signing_tokens(mu_apiserver_t *s, tokens_t *t)
{
	mu__page_t pg;
	t->n = 0;
	if (mu__store_list(s->store, MU__RT_SECRETS, "kube-system", NULL, 100000, NULL, NULL, &pg) != MU_OK)
		return;
	int64_t now = mu__now_s();
	for (size_t i = 0; i < pg.n && t->n < MAX_TOKENS; i++) {
		if (pg.objs[i]->deleting || strncmp(pg.objs[i]->name, "bootstrap-token-", 16))
			continue;
		json_t *j = mu__obj_parse(pg.objs[i]);
		const char *type = mu__jstr(j, "type");
		char id[64], sec[64], use[16], exp[128];
		bool ok = type && !strcmp(type, "bootstrap.kubernetes.io/token") && field(j, "token-id", id, sizeof id) &&
			  strlen(id) == 6 && !strcmp(pg.objs[i]->name + 16, id) &&
			  field(j, "token-secret", sec, sizeof sec) && strlen(sec) == 16 &&
			  field(j, "usage-bootstrap-signing", use, sizeof use) && !strcmp(use, "true");
		if (ok && field(j, "expiration", exp, sizeof exp) && exp[0]) {
			int64_t e = mu__parse_rfc3339(exp);
			ok = e >= 0 && e > now;
		}
		if (ok) {
			memcpy(t->id[t->n], id, 7);
			memcpy(t->secret[t->n], sec, 17);
			t->n++;
		}
		json_decref(j);
	}
	mu__page_release(&pg);
}

static int sign_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const tokens_t *t = ctx;
	if (!cur)
		return MU__MUT_KEEP;
	json_t *cm = mu__obj_parse(cur);
	json_t *data = json_object_get(cm, "data");
	const char *content = json_string_value(json_object_get(data, "kubeconfig"));
	if (!content) {
		json_decref(cm);
		return MU__MUT_KEEP;
	}
	json_t *old = json_object();
	const char *k;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(data, tmp, k, v) {
		if (!strncmp(k, PREFIX, sizeof PREFIX - 1)) {
			json_object_set(old, k, v);
			json_object_del(data, k);
		}
	}
	bool changed = false;
	for (int i = 0; i < t->n; i++) {
		char *sig = mu__jws_detached(content, t->id[i], t->secret[i]);
		if (!sig)
			continue;
		char key[32];
		snprintf(key, sizeof key, PREFIX "%s", t->id[i]);
		const char *was = json_string_value(json_object_get(old, key));
		changed = changed || !was || strcmp(was, sig);
		json_object_del(old, key);
		json_object_set_new(data, key, json_string(sig));
		free(sig);
	}
	changed = changed || json_object_size(old) > 0;
	json_decref(old);
	if (!changed) {
		json_decref(cm);
		return MU__MUT_KEEP;
	}
	*out = cm;
	return MU__MUT_PUT;
}

void mu__bootsign_sync(mu_apiserver_t *s)
{
	mu__obj_t *cm = mu__store_get(s->store, MU__RT_CONFIGMAPS, "kube-public", "cluster-info");
	if (!cm)
		return;
	mu__obj_unref(cm);
	tokens_t *t = malloc(sizeof *t);
	if (!t)
		return;
	signing_tokens(s, t);
	(void)mu__store_mutate(s->store, MU__RT_CONFIGMAPS, "kube-public", "cluster-info", sign_fn, t, false, NULL);
	free(t);
}
