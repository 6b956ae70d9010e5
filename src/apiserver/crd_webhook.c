/*
 * crd_webhook.c - conversion webhooks of CustomResourceDefinitions, called
 * as kube-apiserver's apiextensions webhook converter calls them
 * (pkg/apiserver/conversion/webhook_converter.go and converter.go).  The
 * objects that are not in the wanted version go to the CRD's
 * spec.conversion.webhook in one ConversionReview (the first of
 * conversionReviewVersions kube knows, v1 or v1beta1) with a fresh uid and
 * desiredAPIVersion, POSTed over HTTPS to clientConfig.url with
 * "?timeout=30s" (a 30 s limit, kube's default), the server's certificate
 * verified against clientConfig.caBundle (or the system's roots without
 * one), over connections kept alive per type (at most 4 idle).  The
 * answer is checked as kube checks it: the ConversionReview
 * group/version/kind (v1), a response, the uid echoed, result.status
 * Success (else its message), as many converted objects as were sent, each
 * in the wanted group/version with the same kind, name, namespace and uid;
 * the converted objects keep the originals' metadata except labels and
 * annotations, which the webhook may change (string maps).
 *
 * clientConfig.service is not resolved: muster up serves no Services or
 * endpoints, so a conversion through a service fails with a message that
 * says so.  The checks of an answer (mu__crd_conv_response, mu__crd_conv_merge)
 * are pure and bounded by the answer's size; the call itself by the 30 s
 * timeout and MU__CONV_MAX_RESP bytes.  No state outlives a call.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "apiserver/crd.h"

#define MU__CONV_TIMEOUT_S 30
#define MU__CONV_MAX_RESP (32u << 20) /* bytes of a webhook's answer */
#define MU__CONV_MAX_CA (1u << 20)    /* bytes of a decoded caBundle */

const char *mu__crd_conv_review_version(const json_t *crd)
{
	size_t i;
	json_t *v;
	json_array_foreach(mu__jget(crd, "spec.conversion.webhook.conversionReviewVersions"), i, v) {
		const char *s = json_string_value(v);
		if (s && !strcmp(s, "v1"))
			return "v1";
		if (s && !strcmp(s, "v1beta1"))
			return "v1beta1";
	}
	return NULL;
}

/* "G/V, Kind=K" of an apiVersion and kind, as Go prints a GroupVersionKind
 * (a core apiVersion has no group: "/V"). */
static void gvk_text(const char *av, const char *kind, char *buf, size_t len)
{
	av = av ? av : "";
	snprintf(buf, len, "%s%s, Kind=%s", strchr(av, '/') || !*av ? "" : "/", av, kind ? kind : "");
}

int mu__crd_conv_response(const char *body, size_t len, const char *review_ver, const char *uid, json_t **out,
			  char *err, size_t errlen)
{
	*out = NULL;
	json_error_t je;
	json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(v)) {
		snprintf(err, errlen, "%s", v ? "the response is not a JSON object" : je.text);
		json_decref(v);
		return MU_EPARSE;
	}
	const char *av = json_string_value(json_object_get(v, "apiVersion"));
	const char *kind = json_string_value(json_object_get(v, "kind"));
	int rc = MU_EPARSE;
	const json_t *r = json_object_get(v, "response");
	/* v1 answers are checked for their group/version/kind and uid; kube
	 * keeps v1beta1 unchecked there, for compatibility */
	bool v1 = !strcmp(review_ver, "v1");
	if (v1 && (!av || !kind || strcmp(av, "apiextensions.k8s.io/v1") || strcmp(kind, "ConversionReview"))) {
		char got[300];
		gvk_text(av, kind, got, sizeof got);
		snprintf(err, errlen, "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got %s",
			 got);
	} else if (!json_is_object(r)) {
		snprintf(err, errlen, "no response provided");
	} else if (v1 && strcmp(json_string_value(json_object_get(r, "uid")) ? json_string_value(json_object_get(r, "uid")) : "",
				uid)) {
		const char *got = json_string_value(json_object_get(r, "uid"));
		snprintf(err, errlen, "expected response.uid=\"%s\", got \"%.200s\"", uid, got ? got : "");
	} else {
		const json_t *res = json_object_get(r, "result");
		const char *st = json_string_value(json_object_get(res, "status"));
		const char *msg = json_string_value(json_object_get(res, "message"));
		const json_t *objs = json_object_get(r, "convertedObjects");
		if (!st || strcmp(st, "Success")) {
			if (msg && *msg)
				snprintf(err, errlen, "%.900s", msg);
			else
				snprintf(err, errlen, "response.result.status was '%.100s', not 'Success'", st ? st : "");
		} else if (objs && !json_is_null(objs) && !json_is_array(objs)) {
			snprintf(err, errlen, "response.convertedObjects is not a list");
		} else {
			*out = json_is_array(objs) ? json_incref((json_t *)objs) : json_array();
			rc = *out ? MU_OK : MU_ENOMEM;
		}
	}
	json_decref(v);
	return rc;
}

/* The labels or annotations (fld) of converted metadata cm onto result
 * metadata rm, as kube's restoreObjectMeta: absent or null removes them,
 * else a map of strings; false with err otherwise. */
static bool restore_map(json_t *rm, const json_t *cm, const char *fld, char *err, size_t errlen)
{
	const json_t *m = json_object_get(cm, fld);
	if (!m || json_is_null(m)) {
		json_object_del(rm, fld);
		return true;
	}
	if (!json_is_object(m)) {
		snprintf(err, errlen, "invalid metadata.%s of type %s in converted object", fld,
			 json_is_array(m) ? "[]interface {}" : json_is_string(m) ? "string" : "float64");
		return false;
	}
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)m, k, x)
		if (!json_is_string(x)) {
			snprintf(err, errlen, "metadata.%s[%.200s] must be a string, but is %s in converted object", fld, k,
				 json_is_object(x) ? "map[string]interface {}" : json_is_array(x) ? "[]interface {}"
				 : json_is_boolean(x) ? "bool" : json_is_null(x) ? "<nil>" : "float64");
			return false;
		}
	json_object_set_new(rm, fld, json_deep_copy(m));
	return true;
}

/* Whether the string at key of a and b (absent as "") are the same; their
 * texts for a message in ea/eb. */
static bool same_str(const json_t *a, const json_t *b, const char *key, const char **ea, const char **eb)
{
	*ea = mu__jstr(a, key) ? mu__jstr(a, key) : "";
	*eb = mu__jstr(b, key) ? mu__jstr(b, key) : "";
	return !strcmp(*ea, *eb);
}

int mu__crd_conv_merge(json_t *objs, const json_t *converted, const char *desired, char *err, size_t errlen)
{
	size_t want = 0, i, k = 0;
	json_t *o;
	json_array_foreach(objs, i, o)
		want += !mu__jstr(o, "apiVersion") || strcmp(mu__jstr(o, "apiVersion"), desired);
	if (json_array_size(converted) != want) {
		snprintf(err, errlen, "returned %zu objects, expected %zu", json_array_size(converted), want);
		return MU_EINVAL;
	}
	json_array_foreach(objs, i, o) {
		if (mu__jstr(o, "apiVersion") && !strcmp(mu__jstr(o, "apiVersion"), desired))
			continue;
		const json_t *cv = json_array_get(converted, k++);
		const char *a, *b;
		/* kube counts the index after taking the object: the first is 1 */
		if (!json_is_object(cv)) {
			snprintf(err, errlen, "returned invalid converted object at index %zu: the object is not a JSON "
				 "object", k);
			return MU_EINVAL;
		}
		const char *got = mu__jstr(cv, "apiVersion") ? mu__jstr(cv, "apiVersion") : "";
		if (strcmp(got, desired)) {
			snprintf(err, errlen, "returned invalid converted object at index %zu: invalid groupVersion "
				 "(expected %s, received %.200s)", k, desired, got);
			return MU_EINVAL;
		}
		if (!same_str(o, cv, "kind", &a, &b)) {
			snprintf(err, errlen, "returned invalid converted object at index %zu: invalid kind (expected "
				 "%.200s, received %.200s)", k, a, b);
			return MU_EINVAL;
		}
		static const char *const keys[][2] = {{"metadata.name", "name"},
						      {"metadata.namespace", "namespace"},
						      {"metadata.uid", "UID"}};
		for (size_t j = 0; j < 3; j++)
			if (!same_str(o, cv, keys[j][0], &a, &b)) {
				snprintf(err, errlen, "returned invalid converted object at index %zu: must have the same "
					 "%s: %.200s != %.200s", k, keys[j][1], a, b);
				return MU_EINVAL;
			}
		const json_t *cm = json_object_get(cv, "metadata"), *om = json_object_get(o, "metadata");
		const char *why = NULL;
		if (!cm && om)
			why = "missing metadata in converted object";
		else if (cm && !json_is_object(cm))
			why = "invalid metadata of type non-object in converted object";
		if (why) {
			snprintf(err, errlen, "returned invalid metadata in object at index %zu: %s", k, why);
			return MU_EINVAL;
		}
		json_t *res = json_deep_copy(cv);
		json_t *rm = om ? json_deep_copy(om) : json_object();
		char why2[400];
		if (!res || !rm || !restore_map(rm, cm, "labels", why2, sizeof why2) ||
		    !restore_map(rm, cm, "annotations", why2, sizeof why2)) {
			if (res && rm)
				snprintf(err, errlen, "returned invalid metadata in object at index %zu: %s", k, why2);
			else
				snprintf(err, errlen, "out of memory");
			json_decref(res);
			json_decref(rm);
			return res && rm ? MU_EINVAL : MU_ENOMEM;
		}
		if (cm || om)
			json_object_set_new(res, "metadata", rm);
		else
			json_decref(rm);
		json_array_set_new(objs, i, res);
	}
	return MU_OK;
}

/* --- the call ----------------------------------------------------------- */

#define POOL_IDLE 4

struct mu__conv_pool {
	pthread_mutex_t mu;
	CURL *idle[POOL_IDLE]; /* handles whose connections stay open */
	int n;
};

struct mu__conv_pool *mu__crd_conv_pool_new(void)
{
	struct mu__conv_pool *p = calloc(1, sizeof *p);
	if (p)
		pthread_mutex_init(&p->mu, NULL);
	return p;
}

void mu__crd_conv_pool_free(struct mu__conv_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		curl_easy_cleanup(p->idle[i]);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* A handle for one call: an idle one of p (its options reset, its
 * connections kept), else a new one. */
static CURL *take(struct mu__conv_pool *p)
{
	CURL *h = NULL;
	if (p) {
		pthread_mutex_lock(&p->mu);
		h = p->n ? p->idle[--p->n] : NULL;
		pthread_mutex_unlock(&p->mu);
	}
	if (h)
		curl_easy_reset(h);
	return h ? h : curl_easy_init();
}

/* Gives h back to p after a call (closed when p is full or absent). */
static void give(struct mu__conv_pool *p, CURL *h)
{
	if (p) {
		pthread_mutex_lock(&p->mu);
		if (p->n < POOL_IDLE) {
			p->idle[p->n++] = h;
			h = NULL;
		}
		pthread_mutex_unlock(&p->mu);
	}
	if (h)
		curl_easy_cleanup(h);
}

typedef struct sink {
	char *buf;
	size_t len, cap;
	bool over;
} sink_t;

static size_t on_data(char *p, size_t sz, size_t n, void *ctx)
{
	sink_t *k = ctx;
	size_t add = sz * n;
	if (k->len + add + 1 > MU__CONV_MAX_RESP) {
		k->over = true;
		return 0;
	}
	if (k->len + add + 1 > k->cap) {
		size_t nc = k->cap ? k->cap : 8192;
		while (nc < k->len + add + 1)
			nc *= 2;
		char *nb = realloc(k->buf, nc);
		if (!nb)
			return 0;
		k->buf = nb;
		k->cap = nc;
	}
	memcpy(k->buf + k->len, p, add);
	k->len += add;
	k->buf[k->len] = '\0';
	return add;
}

/* POSTs body to the webhook of cc (a clientConfig with a url); the answer
 * in *k (caller frees k->buf).  A message in err as Go's client words a
 * failed request ("Post \"URL\": ..."), or for an answer that is not 2xx. */
static int post(struct mu__conv_pool *pool, const json_t *cc, const char *body, sink_t *k, char *err,
		size_t errlen)
{
	const char *url = mu__jstr(cc, "url");
	char full[1100];
	snprintf(full, sizeof full, "%.1000s%stimeout=%ds", url, strchr(url, '?') ? "&" : "?", MU__CONV_TIMEOUT_S);
	if (strncmp(url, "https://", 8)) {
		snprintf(err, errlen, "Post \"%s\": muster up calls conversion webhooks over https only", full);
		return MU_EINVAL;
	}
	char *ca = NULL;
	size_t calen = 0;
	const char *cab = mu__jstr(cc, "caBundle");
	if (cab && *cab) {
		ca = malloc(MU__CONV_MAX_CA);
		if (!ca || mu__b64dec(cab, ca, MU__CONV_MAX_CA, &calen) != MU_OK) {
			snprintf(err, errlen, "%s", ca ? "clientConfig.caBundle is not base64" : "out of memory");
			free(ca);
			return ca ? MU_EPARSE : MU_ENOMEM;
		}
	}
	CURL *h = take(pool);
	if (!h) {
		free(ca);
		snprintf(err, errlen, "out of memory");
		return MU_ENOMEM;
	}
	struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
	hd = hd ? curl_slist_append(hd, "Accept: application/json, */*") : NULL;
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, full);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)MU__CONV_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "muster-apiserver");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca) {
		struct curl_blob blob = {.data = ca, .len = calen, .flags = CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
	CURLcode cc_rc = hd ? curl_easy_perform(h) : CURLE_OUT_OF_MEMORY;
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL); /* cerr ends with this call */
	give(cc_rc == CURLE_OK ? pool : NULL, h);
	curl_slist_free_all(hd);
	free(ca);
	if (k->over) {
		snprintf(err, errlen, "Post \"%s\": the answer is larger than %u bytes", full, MU__CONV_MAX_RESP);
		return MU_ELIMIT;
	}
	if (cc_rc != CURLE_OK) {
		snprintf(err, errlen, "Post \"%s\": %s", full, cerr[0] ? cerr : curl_easy_strerror(cc_rc));
		return cc_rc == CURLE_OPERATION_TIMEDOUT ? MU_ESTATE : MU_EIO;
	}
	if (code < 200 || code > 299) {
		/* client-go's words for an answer that is not a Status */
		if (code >= 500)
			snprintf(err, errlen, "an error on the server (\"%.200s\") has prevented the request from succeeding",
				 k->buf ? k->buf : "");
		else
			snprintf(err, errlen, "the server rejected our request for an unknown reason (post %d)", (int)code);
		return MU_EIO;
	}
	return MU_OK;
}

/* A random (version 4) UUID. */
static void new_uid(char *out, size_t len)
{
	unsigned char b[16] = {0};
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		struct timespec ts; /* no entropy: the clock, still unique enough for an echo check */
		clock_gettime(CLOCK_REALTIME, &ts);
		memcpy(b, &ts, sizeof ts < sizeof b ? sizeof ts : sizeof b);
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

int mu__crd_webhook_convert(const mu__crdtype_t *c, json_t *objs, const char *desired, char *err, size_t errlen)
{
	json_t *send = json_array();
	size_t i;
	json_t *o;
	const char *from = NULL;
	json_array_foreach(objs, i, o)
		if (!mu__jstr(o, "apiVersion") || strcmp(mu__jstr(o, "apiVersion"), desired)) {
			json_array_append(send, o);
			from = from ? from : mu__jstr(o, "apiVersion");
		}
	if (!send || !json_array_size(send)) {
		json_decref(send);
		return send ? MU_OK : MU_ENOMEM;
	}
	char gvk[400], pre[900];
	gvk_text(from, c->t.kind, gvk, sizeof gvk);
	snprintf(pre, sizeof pre, "conversion for %s failed: conversion webhook for %s failed: ", gvk, gvk);
	const json_t *cc = mu__jget(c->crd, "spec.conversion.webhook.clientConfig");
	const char *rv = mu__crd_conv_review_version(c->crd);
	char uid[40], why[2000] = "";
	new_uid(uid, sizeof uid);
	int rc = MU_EINVAL;
	json_t *conv = NULL;
	if (!mu__jstr(cc, "url")) {
		snprintf(why, sizeof why, "muster up does not resolve clientConfig.service (it serves no Services or "
			 "endpoints); give the webhook a clientConfig.url");
	} else if (!rv) {
		snprintf(why, sizeof why, "no supported conversion review versions");
	} else {
		char av[64];
		snprintf(av, sizeof av, "apiextensions.k8s.io/%s", rv);
		json_t *rq = json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "kind", "ConversionReview", "apiVersion", av,
				       "request", "uid", uid, "desiredAPIVersion", desired, "objects", send);
		char *body = rq ? json_dumps(rq, JSON_COMPACT) : NULL;
		json_decref(rq);
		sink_t k = {0};
		rc = body ? post(c->conv_pool, cc, body, &k, why, sizeof why) : MU_ENOMEM;
		free(body);
		if (rc == MU_OK)
			rc = mu__crd_conv_response(k.buf ? k.buf : "", k.len, rv, uid, &conv, why, sizeof why);
		free(k.buf);
	}
	json_decref(send);
	if (rc == MU_OK) {
		rc = mu__crd_conv_merge(objs, conv, desired, why, sizeof why);
		if (rc != MU_OK)
			snprintf(err, errlen, "conversion for %s %s", gvk, why);
	} else {
		snprintf(err, errlen, "%s%s", pre, why);
	}
	json_decref(conv);
	return rc;
}

char *mu__crd_conv_event(const mu__crdtype_t *c, const char *json, size_t len, const char *av, size_t *outlen,
			 char *err, size_t errlen)
{
	json_t *v = json_loadb(json, len, 0, NULL);
	const char *kind = mu__jstr(v, "kind"), *have = mu__jstr(v, "apiVersion");
	char *text = NULL;
	*outlen = 0;
	err[0] = '\0';
	if (kind && have && !strcmp(kind, c->t.kind) && strcmp(have, av)) {
		json_t *a = json_array();
		if (a && !json_array_append(a, v) && mu__crd_webhook_convert(c, a, av, err, errlen) == MU_OK)
			text = json_dumps(json_array_get(a, 0), JSON_COMPACT);
		json_decref(a);
		*outlen = text ? strlen(text) : 0;
	}
	json_decref(v);
	return text;
}
