/*
 * crd_conv.c - the versions of a custom resource and their conversion, as
 * kube-apiserver's apiextensions serves them.  An object is stored in the
 * version that was the CRD's storage version when it was last written
 * (its stored apiVersion says which), and every request names a served
 * version: with spec.conversion.strategy None, converting is rewriting
 * apiVersion, so an answer (an object, a list and its items, a Table's
 * full objects, each watch event) carries the version the request named.
 *
 * With strategy Webhook, kube-apiserver posts a ConversionReview to the
 * CRD's webhook whenever an object is in another version than the one
 * wanted.  muster up does not call webhooks: such a request gets a 500
 * whose message names the gap (any request at a version other than the
 * storage version is refused before anything is read or stored, since its
 * objects, a Table's rows among them, would need converting; a read at the
 * storage version is refused when one of the objects it returns is stored
 * in an older version).  Work is bounded by the size of the answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/crd.h"

/* The message of a conversion muster up cannot do: kube-apiserver's
 * "conversion webhook for G/V, Kind=K failed: ..." with the reason. */
static void webhook_gap(const mu__crdtype_t *c, const char *version, mu__resp_t *rs)
{
	free(rs->body);
	rs->body = NULL;
	mu__resp_status(rs, 500, "InternalError",
			"conversion webhook for %s/%s, Kind=%s failed: muster up does not call conversion webhooks "
			"(spec.conversion.strategy Webhook); read and write this resource at its storage version "
			"%s, or use strategy None",
			c->t.group, version, c->t.kind, c->v[c->storage].name);
}

bool mu__crd_conv_before(const mu__crdtype_t *c, const mu__req_t *rq, mu__resp_t *rs)
{
	if (!c || !c->conv_webhook || !strcmp(rq->route.version, c->v[c->storage].name))
		return true;
	webhook_gap(c, rq->route.version, rs);
	return false;
}

/* Rewrites the apiVersion of o (an object of c) to av; false when that
 * needs a webhook. */
static bool convert(const mu__crdtype_t *c, json_t *o, const char *av)
{
	const char *have = json_string_value(json_object_get(o, "apiVersion"));
	const char *kind = json_string_value(json_object_get(o, "kind"));
	if (!have || !kind || strcmp(kind, c->t.kind) || !strcmp(have, av))
		return true;
	if (c->conv_webhook)
		return false;
	json_object_set_new(o, "apiVersion", json_string(av));
	return true;
}

/* Converts every object of c in the answer v; false when one needs a
 * webhook. */
static bool convert_answer(const mu__crdtype_t *c, json_t *v, const char *av)
{
	const char *kind = json_string_value(json_object_get(v, "kind"));
	if (!kind)
		return true;
	bool ok = true;
	size_t i;
	json_t *it;
	if (!strcmp(kind, c->t.kind)) {
		ok = convert(c, v, av);
	} else if (!strcmp(kind, "Table")) {
		json_array_foreach(json_object_get(v, "rows"), i, it)
			ok = convert(c, json_object_get(it, "object"), av) && ok;
	} else if (json_is_array(json_object_get(v, "items"))) {
		json_object_set_new(v, "apiVersion", json_string(av));
		json_array_foreach(json_object_get(v, "items"), i, it)
			ok = convert(c, it, av) && ok;
	}
	return ok;
}

void mu__crd_conv_after(const mu__crdtype_t *c, const mu__req_t *rq, mu__resp_t *rs)
{
	if (!c || c->nver < 2)
		return;
	char av[300];
	snprintf(av, sizeof av, "%s/%s", c->t.group, rq->route.version);
	if (rs->watch) {
		if (!c->conv_webhook) /* (a webhook's watch is at the storage version) */
			mu__watch_set_apiversion(rs->watch, av);
		return;
	}
	if (c->conv_webhook && !strcmp(rq->method, "DELETE"))
		return; /* the object is gone: answered as it was stored */
	if (!rs->body || rs->code >= 300 || !rs->ctype || strcmp(rs->ctype, "application/json"))
		return;
	json_t *v = json_loadb(rs->body, rs->len, 0, NULL);
	if (!v)
		return;
	if (!convert_answer(c, v, av)) {
		webhook_gap(c, rq->route.version, rs);
	} else {
		char *text = json_dumps(v, JSON_COMPACT);
		if (text) {
			free(rs->body);
			rs->body = text;
			rs->len = strlen(text);
		}
	}
	json_decref(v);
}
