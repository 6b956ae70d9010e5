/*
 * events.c - events.k8s.io/v1 Events, served alongside core/v1 Events from
 * the same storage, as kube-apiserver does: an Event written through
 * either group is the same object, read through either.  The two versions
 * differ in field names only (kube's pkg/apis/events/v1 conversion):
 * core involvedObject, message, source, firstTimestamp, lastTimestamp, count
 * and reportingComponent are events.k8s.io regarding, note,
 * deprecatedSource, deprecatedFirstTimestamp, deprecatedLastTimestamp,
 * deprecatedCount and reportingController.
 *
 * A request to /apis/events.k8s.io/v1/.../events is rewritten into the
 * core request (its body converted to core/v1, field selectors renamed),
 * handled as one, and its answer converted back: objects, lists, and every
 * watch event.  A merge, strategic merge or JSON patch is applied to the
 * events.k8s.io form of the stored Event and written back as an update
 * with the read resourceVersion as precondition (409 on a race).  Not
 * done: server-side apply through this group (415, named), and the
 * stricter create rules kube adds for this group (eventTime,
 * reportingController and reportingInstance required).
 *
 * Ownership: the request is borrowed; converted bodies are owned here and
 * freed before return; the answer stays the response's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"

static const char *const names[][2] = {
	{"involvedObject", "regarding"}, {"message", "note"}, {"source", "deprecatedSource"},
	{"firstTimestamp", "deprecatedFirstTimestamp"}, {"lastTimestamp", "deprecatedLastTimestamp"},
	{"count", "deprecatedCount"}, {"reportingComponent", "reportingController"},
};

/* Renames fields of Event o from one version's names to the other's. */
static void rename_fields(json_t *o, bool to_v1)
{
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *from = names[i][!to_v1], *to = names[i][to_v1];
		json_t *v = json_incref(json_object_get(o, from));
		json_object_del(o, from);
		if (v)
			json_object_set_new(o, to, v);
	}
	json_object_set_new(o, "apiVersion", json_string(to_v1 ? "events.k8s.io/v1" : "v1"));
}

/* Converts a core answer body (an Event or an EventList) to events.k8s.io;
 * returns a new malloc'd text or NULL to keep the body. */
static char *answer_to_v1(const char *body, size_t len, size_t *outlen)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *kind = mu__jstr(j, "kind");
	char *out = NULL;
	if (kind && !strcmp(kind, "Event")) {
		rename_fields(j, true);
	} else if (kind && !strcmp(kind, "EventList")) {
		json_object_set_new(j, "apiVersion", json_string("events.k8s.io/v1"));
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(j, "items"), i, x)
			rename_fields(x, true);
	} else {
		json_decref(j);
		return NULL;
	}
	out = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (out)
		*outlen = strlen(out);
	return out;
}

char *mu__event_json_to_v1(const char *json, size_t len, size_t *outlen)
{
	return answer_to_v1(json, len, outlen);
}

/* Renames events.k8s.io field selector paths to the core ones. */
static void rename_selector(char *sel, size_t cap)
{
	char out[sizeof ((mu__query_t *)0)->field_sel] = "";
	size_t n = 0;
	for (const char *p = sel; *p && n + 1 < sizeof out;) {
		bool done = false;
		for (size_t i = 0; i < sizeof names / sizeof *names && !done; i++) {
			size_t l = strlen(names[i][1]);
			if (!strncmp(p, names[i][1], l) && (p[l] == '.' || p[l] == '=' || p[l] == '!') &&
			    (p == sel || p[-1] == ',')) {
				n += (size_t)snprintf(out + n, sizeof out - n, "%s", names[i][0]);
				p += l;
				done = true;
			}
		}
		if (!done && n + 1 < sizeof out)
			out[n++] = *p++;
		out[n < sizeof out ? n : sizeof out - 1] = '\0';
	}
	snprintf(sel, cap, "%s", out);
}

/* The core/v1 text of an events.k8s.io body (NULL when answered: 400). */
static char *body_to_core(const mu__req_t *rq, mu__resp_t *rs, json_t *(*patch)(const mu__req_t *, mu__resp_t *,
									       json_t *), json_t *cur)
{
	char err[512];
	json_t *j;
	if (patch) {
		j = patch(rq, rs, cur);
	} else {
		j = mu__json_body(rq->body, rq->body_len, 3 << 20, err, sizeof err);
		if (!j || !json_is_object(j)) {
			mu__resp_status(rs, 400, "BadRequest", "%s", j ? "the request body must be a JSON object" : err);
			json_decref(j);
			return NULL;
		}
	}
	if (!j)
		return NULL;
	const char *av = mu__jstr(j, "apiVersion"), *kind = mu__jstr(j, "kind");
	if ((av && *av && strcmp(av, "events.k8s.io/v1")) || (kind && *kind && strcmp(kind, "Event"))) {
		mu__resp_status(rs, 400, "BadRequest", "the body is a %s %s, but the endpoint serves events.k8s.io/v1 "
				"Event", av ? av : "", kind ? kind : "");
		json_decref(j);
		return NULL;
	}
	rename_fields(j, false);
	json_object_set_new(j, "kind", json_string("Event"));
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!text)
		mu__resp_status(rs, 500, "InternalError", "out of memory");
	return text;
}

/* Applies the request's patch to the events.k8s.io form of cur (stolen):
 * the patched object, with cur's resourceVersion as precondition. */
static json_t *patched(const mu__req_t *rq, mu__resp_t *rs, json_t *cur)
{
	char err[512] = "";
	int ct = mu__content_type(rq->ctype);
	json_t *p = mu__json_body(rq->body, rq->body_len, 3 << 20, err, sizeof err);
	if (!p) {
		mu__resp_status(rs, 400, "BadRequest", "%s", err);
		json_decref(cur);
		return NULL;
	}
	char rv[32];
	snprintf(rv, sizeof rv, "%s", mu__jstr(cur, "metadata.resourceVersion") ? mu__jstr(cur, "metadata.resourceVersion")
										 : "");
	rename_fields(cur, true);
	int rc;
	if (ct == MU__CT_JSONPATCH && json_is_array(p))
		rc = mu__json_patch(&cur, p, err, sizeof err);
	else if (ct == MU__CT_STRATEGIC && json_is_object(p))
		rc = mu__strategic_patch(cur, p);
	else if (ct == MU__CT_MERGE && json_is_object(p))
		rc = mu__merge_patch(cur, p);
	else
		rc = MU_EPARSE;
	json_decref(p);
	if (rc != MU_OK || !json_is_object(cur)) {
		mu__resp_status(rs, rc == MU_EINVAL ? 422 : 400, rc == MU_EINVAL ? "Invalid" : "BadRequest",
				"the patch could not be applied: %s", err[0] ? err : mu_strerror(rc ? rc : MU_EPARSE));
		json_decref(cur);
		return NULL;
	}
	if (!mu__jget(cur, "metadata.resourceVersion") || !json_is_object(json_object_get(cur, "metadata")))
		mu__jset(cur, "metadata.resourceVersion", json_string(rv));
	return cur;
}

int mu__events_v1_in(mu_apiserver_t *s, const mu__req_t *rq, mu__req_t *q, char **text, mu__resp_t *rs)
{
	const mu__route_t *r = &rq->route;
	*text = NULL;
	if (r->kind != MU__R_RESOURCE || r->core || strcmp(r->group, "events.k8s.io") || strcmp(r->version, "v1") ||
	    strcmp(r->plural, "events"))
		return 0;
	*q = *rq;
	q->route.core = true;
	q->route.group[0] = '\0';
	rename_selector(q->q.field_sel, sizeof q->q.field_sel);
	bool write = !strcmp(rq->method, "POST") || !strcmp(rq->method, "PUT") || !strcmp(rq->method, "PATCH");
	if (write && !strcmp(rq->method, "PATCH")) {
		int ct = mu__content_type(rq->ctype);
		if (ct == MU__CT_APPLY) {
			mu__resp_status(rs, 415, "UnsupportedMediaType", "muster up does not serve server-side apply of "
					"events.k8s.io/v1 Events: apply them as core/v1 Events, or use a merge patch");
			return -1;
		}
		if (ct != MU__CT_MERGE && ct != MU__CT_STRATEGIC && ct != MU__CT_JSONPATCH) {
			mu__resp_status(rs, 415, "UnsupportedMediaType", "the patch type %s is not supported",
					rq->ctype ? rq->ctype : "(none)");
			return -1;
		}
		mu__obj_t *o = mu__store_get(s->store, MU__RT_EVENTS, r->ns, r->name);
		if (!o) {
			mu__resp_status(rs, 404, "NotFound", "events.events.k8s.io \"%s\" not found", r->name);
			return -1;
		}
		json_t *cur = mu__obj_parse(o);
		mu__obj_unref(o);
		*text = cur ? body_to_core(rq, rs, patched, cur) : NULL;
		q->method = "PUT";
		q->ctype = "application/json";
	} else if (write && rq->body_len) {
		*text = body_to_core(rq, rs, NULL, NULL);
	}
	if (write && !*text && rs->code)
		return -1;
	if (*text) {
		q->body = *text;
		q->body_len = strlen(*text);
	}
	return 1;
}

void mu__events_v1_out(mu__resp_t *rs)
{
	if (rs->watch || !rs->body || !rs->ctype || strcmp(rs->ctype, "application/json"))
		return;
	size_t n;
	char *b = answer_to_v1(rs->body, rs->len, &n);
	if (b) {
		free(rs->body);
		rs->body = b;
		rs->len = n;
	}
}
