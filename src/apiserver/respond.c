/*
 * respond.c - the answers every handler gives: JSON bodies, Kubernetes
 * Status objects (with details and causes), store errors mapped to HTTP
 * codes, server timestamps, list filters (namespace, label and field
 * selectors), and the Table rendering of kubectl's get.
 *
 * The REST handlers (api.c), the pod subresources (podsub.c), watches
 * (watch.c) and discovery (discovery.c) all answer through these; this
 * file calls none of them back, so the handlers form no loop.  Ownership:
 * an answer body is malloc'd and owned by the response until http.c hands
 * it to libmicrohttpd; a json_t passed in is consumed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

void mu__resp_json(mu__resp_t *rs, int code, json_t *v)
{
	rs->code = code;
	rs->ctype = "application/json";
	rs->body = v ? mu__json_text(v) : NULL;
	rs->len = rs->body ? strlen(rs->body) : 0;
	json_decref(v);
	if (!rs->body) {
		rs->code = 500;
		rs->body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
				  "\"message\":\"out of memory\",\"reason\":\"InternalError\",\"code\":500}");
		rs->len = rs->body ? strlen(rs->body) : 0;
	}
}

/* A Status with details (name, kind, group, causes from e). */
void mu__resp_err(mu__resp_t *rs, int code, const char *reason, const mu__rtype_t *t,
		  const char *name, const mu__verr_t *e, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
			       "metadata", "status", "Failure", "message", msg, "reason", reason, "code", code);
	if (st && (t || name || e)) {
		json_t *d = json_object();
		if (name)
			json_object_set_new(d, "name", json_string(name));
		if (t) {
			json_object_set_new(d, "group", json_string(t->group));
			json_object_set_new(d, "kind", json_string(e ? t->kind : t->plural));
		}
		if (e && e->n) {
			json_t *causes = json_array();
			for (int i = 0; i < e->n; i++)
				json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", e->c[i].reason,
									"message", e->c[i].msg, "field", e->c[i].field));
			json_object_set_new(d, "causes", causes);
		}
		json_object_set_new(st, "details", d);
	}
	mu__resp_json(rs, code, st);
}

void mu__resp_status(mu__resp_t *rs, int code, const char *reason, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	mu__resp_err(rs, code, reason, NULL, NULL, NULL, "%s", msg);
}

/* 201/200 Status Success (binding, eviction): the text jansson makes of
 * {kind, apiVersion, metadata: {}, status, code}, printed directly (one
 * answer per bind). */
void mu__resp_success(mu__resp_t *rs, int code)
{
	char text[128];
	int n = snprintf(text, sizeof text, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
			 "\"status\":\"Success\",\"code\":%d}", code);
	rs->code = code;
	rs->ctype = "application/json";
	rs->body = strdup(text);
	rs->len = rs->body ? (size_t)n : 0;
	if (!rs->body)
		mu__resp_status(rs, 500, "InternalError", "out of memory");
}

void mu__resp_invalid(mu__resp_t *rs, const mu__rtype_t *t, const char *name, const mu__verr_t *e)
{
	char msg[1536] = "";
	for (int i = 0; i < e->n; i++) {
		size_t l = strlen(msg);
		snprintf(msg + l, sizeof msg - l, "%s%s: %s", i ? ", " : "", e->c[i].field, e->c[i].msg);
	}
	/* kube's NewInvalid names the GroupKind: "Deployment.apps", "Pod" */
	char gk[200];
	snprintf(gk, sizeof gk, "%s%s%s", t->kind, *t->group ? "." : "", t->group);
	if (e->n > 1)
		mu__resp_err(rs, 422, "Invalid", t, name, e, "%s \"%s\" is invalid: [%s]", gk, name, msg);
	else
		mu__resp_err(rs, 422, "Invalid", t, name, e, "%s \"%s\" is invalid: %s", gk, name, msg);
}

/* The answer for an object version: the object, or a one-row Table. */
void mu__resp_obj(mu__resp_t *rs, const mu__req_t *rq, int code, mu__obj_t *o)
{
	if (mu__accept_table(rq->accept)) {
		mu__resp_json(rs, code, mu__table(o->type, &o, 1, rq->q.include_object, true));
		return;
	}
	rs->code = code;
	rs->ctype = "application/json";
	rs->body = malloc(o->len + 1);
	if (!rs->body) {
		mu__resp_status(rs, 500, "InternalError", "out of memory");
		return;
	}
	memcpy(rs->body, o->json, o->len + 1);
	rs->len = o->len;
}

/* Maps a store error to an answer. */
void mu__resp_store_err(mu__resp_t *rs, int rc, const mu__rtype_t *t, const char *name)
{
	switch (rc) {
	case MU_ENOENT:
		mu__resp_err(rs, 404, "NotFound", t, name, NULL, "%s%s%s \"%s\" not found", t->plural,
			     *t->group ? "." : "", t->group, name);
		break;
	case MU_EEXIST:
		mu__resp_err(rs, 409, "AlreadyExists", t, name, NULL, "%s%s%s \"%s\" already exists",
			     t->plural, *t->group ? "." : "", t->group, name);
		break;
	case MU_ERANGE:
		mu__resp_status(rs, 413, "RequestEntityTooLarge",
				"etcdserver: request is too large: the object would be larger than %d bytes, "
				"the most etcd (and so muster) stores", MU__MAX_OBJECT);
		break;
	case MU_ELIMIT:
		mu__resp_status(rs, 500, "InternalError", "a limit of the server was exceeded");
		break;
	case MU_ENOMEM:
		mu__resp_status(rs, 500, "InternalError", "out of memory");
		break;
	default:
		mu__resp_status(rs, 500, "InternalError", "storage error: %s", mu_strerror(rc));
		break;
	}
}

void mu__timestamp(char *buf, size_t len, bool micro)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	mu__rfc3339_format((int64_t)tv.tv_sec * 1000000 + tv.tv_usec, micro, buf, len);
}

bool mu__filter_match(void *ctx, const mu__obj_t *o)
{
	mu__filter_t *f = ctx;
	if (f->ns && *f->ns && strcmp(f->ns, o->ns))
		return false;
	return mu__sel_match_labels(f->ls, o) && mu__sel_match_fields(f->fs, o);
}

int mu__filter_init(mu__filter_t *f, const mu__rtype_t *t, const mu__req_t *rq, mu__resp_t *rs)
{
	char err[256];
	memset(f, 0, sizeof *f);
	f->ns = rq->route.ns;
	if (mu__sel_parse(rq->q.label_sel, false, &f->ls, err, sizeof err) != MU_OK ||
	    mu__sel_parse(rq->q.field_sel, true, &f->fs, err, sizeof err) != MU_OK ||
	    mu__sel_check_fields(f->fs, t, err, sizeof err) != MU_OK) {
		mu__filter_release(f);
		mu__resp_status(rs, 400, "BadRequest", "unable to parse requirement: %s", err);
		return MU_EPARSE;
	}
	return MU_OK;
}

void mu__filter_release(mu__filter_t *f)
{
	mu__sel_free(f->ls);
	mu__sel_free(f->fs);
	f->ls = f->fs = NULL;
}

json_t *mu__table(const mu__rtype_t *t, mu__obj_t *const *objs, size_t n, int include_object, bool headers)
{
	json_t *cols = json_array(), *rows = json_array();
	for (int i = 0; headers && i < t->ncols; i++)
		json_array_append_new(cols, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", t->cols[i].name,
						       "type", t->cols[i].type, "format", t->cols[i].format,
						       "description", t->cols[i].desc, "priority", t->cols[i].priority));
	int64_t now = mu__now_s();
	char av[96];
	mu__rtype_apiversion(t, av, sizeof av);
	for (size_t i = 0; i < n; i++) {
		json_t *o = mu__obj_parse(objs[i]);
		if (!o)
			continue;
		json_t *cells = json_array();
		if (mu__crdtype(t))
			mu__crd_row(mu__crdtype(t), o, now, cells);
		else
			t->row(o, now, cells);
		json_t *row = json_pack("{s:o}", "cells", cells);
		if (include_object == 2) {
			json_object_set(row, "object", o);
		} else if (include_object == 0) {
			json_t *pm = json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata", "apiVersion",
					       "meta.k8s.io/v1", "metadata", json_object_get(o, "metadata"));
			json_object_set_new(row, "object", pm);
		}
		json_array_append_new(rows, row);
		json_decref(o);
	}
	return json_pack("{s:s, s:s, s:{}, s:o, s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
			 "metadata", "columnDefinitions", cols, "rows", rows);
}
