/*
 * audit.c - kube-apiserver's audit log in `muster up`: the audit.k8s.io/v1
 * Policy of --audit-policy-file, its rules' matching, and the Events of
 * --audit-log-path.
 *
 * The policy (YAML or JSON, decoded strictly as kube's reader does) becomes
 * a list of rules; a request's level is that of the first rule whose every
 * non-empty list matches it (users, userGroups, verbs, namespaces,
 * resources in kube's forms - a resource, "resource/subresource", a star,
 * a star and a subresource, a resource and a star - and resourceNames,
 * or nonResourceURLs with a trailing "*"); no match is None.  A request at Metadata or above gives one JSON Event per
 * stage (RequestReceived, then ResponseComplete, or ResponseStarted and at
 * its end ResponseComplete for a watch) unless the stage is omitted.
 *
 * Request threads only format their event and append its line to a
 * buffer bounded at QUEUE_MAX bytes; a writer thread writes the buffer out.
 * When the disk is slower than the requests and the buffer is full, the
 * event is dropped and counted (kube's batch backend drops as well), so a
 * request never waits on the disk.  Everything here is owned by the
 * mu__audit_t, which the server holds only when a policy is given.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <yaml.h>

#include "apiserver/audit.h"
#include "apiserver/auth.h"
#include "muster/jpath.h"

#define QUEUE_MAX (8u << 20) /* bytes of events waiting for the disk */
#define MAX_DEPTH 32         /* nesting of a policy document */
#define MAX_POLICY (4u << 20)

/* --- the policy ----------------------------------------------------------- */

typedef struct strs {
	char **v;
	int n;
} strs_t;

typedef struct gres {
	char *group;
	strs_t res, names;
} gres_t;

typedef struct rule {
	int level;
	strs_t users, groups, verbs, ns, urls;
	gres_t *gr;
	int ngr;
	unsigned omit;
	int omit_mf; /* -1: the policy's */
} rule_t;

struct mu__audit_policy {
	rule_t *r;
	int n;
	unsigned omit;
	bool omit_mf;
};

static const char *const LEVELS[] = {"None", "Metadata", "Request", "RequestResponse"};
static const char *const STAGES[] = {"RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"};

static void strs_free(strs_t *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

void mu__audit_policy_free(mu__audit_policy_t *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		rule_t *r = &p->r[i];
		strs_free(&r->users);
		strs_free(&r->groups);
		strs_free(&r->verbs);
		strs_free(&r->ns);
		strs_free(&r->urls);
		for (int j = 0; j < r->ngr; j++) {
			free(r->gr[j].group);
			strs_free(&r->gr[j].res);
			strs_free(&r->gr[j].names);
		}
		free(r->gr);
	}
	free(p->r);
	free(p);
}

/* Adds YAML value v (stolen) to the open container of stack, or makes it
 * *root.  keys[d]: the pending key of mapping level d. */
static int yadd(json_t **stack, char **keys, int depth, json_t **root, json_t *v)
{
	if (!v)
		return MU_ENOMEM;
	if (depth == 0) {
		json_decref(*root);
		*root = v;
		return MU_OK;
	}
	json_t *c = stack[depth - 1];
	if (json_is_array(c))
		return json_array_append_new(c, v) ? MU_ENOMEM : MU_OK;
	if (!keys[depth - 1]) { /* a key: only scalars */
		if (!json_is_string(v)) {
			json_decref(v);
			return MU_EPARSE;
		}
		keys[depth - 1] = strdup(json_string_value(v));
		json_decref(v);
		return keys[depth - 1] ? MU_OK : MU_ENOMEM;
	}
	if (json_object_get(c, keys[depth - 1])) { /* kube's strict decoding: no duplicate keys */
		json_decref(v);
		return MU_EINVAL;
	}
	int rc = json_object_set_new(c, keys[depth - 1], v) ? MU_ENOMEM : MU_OK;
	free(keys[depth - 1]);
	keys[depth - 1] = NULL;
	return rc;
}

/* A plain YAML scalar as JSON: true/false and null typed, the rest strings
 * (numbers are never wanted in a Policy). */
static json_t *yscalar(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if ((n == 4 && !strncmp(v, "true", 4)) || (n == 4 && !strncmp(v, "True", 4)))
			return json_true();
		if ((n == 5 && !strncmp(v, "false", 5)) || (n == 5 && !strncmp(v, "False", 5)))
			return json_false();
		if ((n == 4 && !strncmp(v, "null", 4)) || (n == 1 && v[0] == '~'))
			return json_null();
	}
	return json_stringn(v, n);
}

/* The first YAML document of buf as JSON; NULL with a message. */
static json_t *yaml_doc(const char *buf, size_t len, char *err, size_t errlen)
{
	yaml_parser_t p;
	json_t *stack[MAX_DEPTH], *root = NULL;
	char *keys[MAX_DEPTH] = {0};
	int depth = 0, rc = MU_OK;
	if (!yaml_parser_initialize(&p)) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	for (bool done = false; !done && rc == MU_OK;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			snprintf(err, errlen, "error converting YAML to JSON: yaml: line %lu: %s",
				 (unsigned long)p.problem_mark.line + 1, p.problem ? p.problem : "?");
			rc = MU_EPARSE;
			break;
		}
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
			rc = yadd(stack, keys, depth, &root, yscalar(&ev));
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth == MAX_DEPTH) {
				rc = MU_ELIMIT;
				break;
			}
			stack[depth] = ev.type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
			keys[depth] = NULL;
			rc = stack[depth] ? MU_OK : MU_ENOMEM;
			depth += rc == MU_OK;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			free(keys[depth]);
			keys[depth] = NULL;
			rc = yadd(stack, keys, depth, &root, stack[depth]);
			break;
		case YAML_ALIAS_EVENT:
			rc = MU_EPARSE;
			break;
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (rc != MU_OK && !*err)
			snprintf(err, errlen, rc == MU_EINVAL ? "strict decoding error: duplicate field"
				 : "unsupported YAML (an alias, a non-scalar key or more than %d levels)", MAX_DEPTH);
	}
	yaml_parser_delete(&p);
	while (depth > 0) {
		depth--;
		json_decref(stack[depth]);
		free(keys[depth]);
	}
	if (rc != MU_OK) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Reads string list at key of o into out; false with a message. */
static bool get_strs(const json_t *o, const char *key, const char *at, strs_t *out, char *err, size_t errlen)
{
	const json_t *a = json_object_get(o, key);
	if (!a || json_is_null(a))
		return true;
	if (!json_is_array(a)) {
		snprintf(err, errlen, "%s.%s: Invalid value: expected a list of strings", at, key);
		return false;
	}
	size_t n = json_array_size(a);
	out->v = calloc(n ? n : 1, sizeof *out->v);
	if (!out->v) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (!s) {
			snprintf(err, errlen, "%s.%s[%zu]: Invalid value: expected a string", at, key, i);
			return false;
		}
		if (!(out->v[out->n] = strdup(s))) {
			snprintf(err, errlen, "out of memory");
			return false;
		}
		out->n++;
	}
	return true;
}

/* Whether every key of o is one of the names (kube's strict decoding). */
static bool known_keys(const json_t *o, const char *at, const char *const *names, char *err, size_t errlen)
{
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		bool ok = false;
		for (int i = 0; names[i] && !ok; i++)
			ok = !strcmp(k, names[i]);
		if (!ok) {
			snprintf(err, errlen, "strict decoding error: unknown field \"%s%s%s\"", at, *at ? "." : "", k);
			return false;
		}
	}
	(void)v;
	return true;
}

/* omitStages at key of o as MU__STAGE_* bits; false with a message. */
static bool get_stages(const json_t *o, const char *at, unsigned *out, char *err, size_t errlen)
{
	strs_t s = {0};
	bool ok = get_strs(o, "omitStages", at, &s, err, errlen);
	for (int i = 0; ok && i < s.n; i++) {
		int k = 0;
		while (k < 4 && strcmp(s.v[i], STAGES[k]))
			k++;
		if (k == 4) {
			snprintf(err, errlen, "%s%somitStages[%d]: Unsupported value: \"%s\": supported values: "
				 "\"Panic\", \"RequestReceived\", \"ResponseComplete\", \"ResponseStarted\"",
				 at, *at ? "." : "", i, s.v[i]);
			ok = false;
		} else {
			*out |= 1u << k;
		}
	}
	strs_free(&s);
	return ok;
}

/* Reads rule i (o) into r; false with a message naming the field. */
static bool parse_rule(const json_t *o, int i, rule_t *r, char *err, size_t errlen)
{
	static const char *const keys[] = {"level", "users", "userGroups", "verbs", "resources", "namespaces",
					   "nonResourceURLs", "omitStages", "omitManagedFields", NULL};
	char at[32];
	snprintf(at, sizeof at, "rules[%d]", i);
	r->omit_mf = -1;
	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s: Invalid value: expected an object", at);
		return false;
	}
	if (!known_keys(o, at, keys, err, errlen))
		return false;
	const char *lv = json_string_value(json_object_get(o, "level"));
	r->level = -1;
	for (int k = 0; lv && k < 4; k++)
		if (!strcmp(lv, LEVELS[k]))
			r->level = k;
	if (r->level < 0) {
		if (!lv || !*lv)
			snprintf(err, errlen, "%s.level: Required value", at);
		else
			snprintf(err, errlen, "%s.level: Unsupported value: \"%s\": supported values: \"Metadata\", "
				 "\"None\", \"Request\", \"RequestResponse\"", at, lv);
		return false;
	}
	if (!get_strs(o, "users", at, &r->users, err, errlen) || !get_strs(o, "userGroups", at, &r->groups, err, errlen) ||
	    !get_strs(o, "verbs", at, &r->verbs, err, errlen) || !get_strs(o, "namespaces", at, &r->ns, err, errlen) ||
	    !get_strs(o, "nonResourceURLs", at, &r->urls, err, errlen) || !get_stages(o, at, &r->omit, err, errlen))
		return false;
	const json_t *mf = json_object_get(o, "omitManagedFields");
	if (mf && !json_is_null(mf)) {
		if (!json_is_boolean(mf)) {
			snprintf(err, errlen, "%s.omitManagedFields: Invalid value: expected true or false", at);
			return false;
		}
		r->omit_mf = json_is_true(mf);
	}
	for (int k = 0; k < r->urls.n; k++) {
		const char *u = r->urls.v[k];
		size_t n = strlen(u);
		if (strcmp(u, "*") && u[0] != '/') {
			snprintf(err, errlen, "%s.nonResourceURLs[%d]: Invalid value: \"%s\": non-resource URL rules must "
				 "begin with a '/' character", at, k, u);
			return false;
		}
		if (n > 1 && memchr(u, '*', n - 1)) {
			snprintf(err, errlen, "%s.nonResourceURLs[%d]: Invalid value: \"%s\": non-resource URL wildcards "
				 "'*' must be the final character of the rule", at, k, u);
			return false;
		}
	}
	const json_t *res = json_object_get(o, "resources");
	if (res && !json_is_null(res) && !json_is_array(res)) {
		snprintf(err, errlen, "%s.resources: Invalid value: expected a list", at);
		return false;
	}
	size_t ng = json_array_size(res);
	if (r->urls.n && (ng || r->ns.n)) {
		snprintf(err, errlen, "%s: Invalid value: rules cannot apply to both regular resources and "
			 "non-resource URLs", at);
		return false;
	}
	r->gr = calloc(ng ? ng : 1, sizeof *r->gr);
	if (!r->gr) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	for (size_t j = 0; j < ng; j++) {
		static const char *const gkeys[] = {"group", "resources", "resourceNames", NULL};
		const json_t *g = json_array_get(res, j);
		char gat[64];
		snprintf(gat, sizeof gat, "%s.resources[%zu]", at, j);
		if (!json_is_object(g)) {
			snprintf(err, errlen, "%s: Invalid value: expected an object", gat);
			return false;
		}
		gres_t *gr = &r->gr[r->ngr++];
		const json_t *gv = json_object_get(g, "group");
		if (gv && !json_is_string(gv)) {
			snprintf(err, errlen, "%s.group: Invalid value: expected a string", gat);
			return false;
		}
		if (!known_keys(g, gat, gkeys, err, errlen) ||
		    !(gr->group = strdup(gv ? json_string_value(gv) : "")) ||
		    !get_strs(g, "resources", gat, &gr->res, err, errlen) ||
		    !get_strs(g, "resourceNames", gat, &gr->names, err, errlen)) {
			if (!*err)
				snprintf(err, errlen, "out of memory");
			return false;
		}
		if (gr->names.n && !gr->res.n) {
			snprintf(err, errlen, "%s.resourceNames: Invalid value: using resourceNames requires at least "
				 "one resource", gat);
			return false;
		}
		for (int k = 0; k < gr->res.n; k++) {
			const char *x = gr->res.v[k];
			const char *sl = strchr(x, '/');
			if (!*x || (sl && strchr(sl + 1, '/')) || (strchr(x, '*') && strcmp(x, "*") &&
			    strncmp(x, "*/", 2) && !(sl && !strcmp(sl, "/*")))) {
				snprintf(err, errlen, "%s.resources[%d]: Invalid value: \"%s\": a resource, "
					 "\"resource/subresource\", \"*\", \"*/subresource\" or \"resource/*\"",
					 gat, k, x);
				return false;
			}
		}
	}
	return true;
}

int mu__audit_policy_parse(const char *file, const char *buf, size_t len, mu__audit_policy_t **out,
			   char *err, size_t errlen)
{
	*out = NULL;
	char msg[512] = "";
	json_t *doc = NULL;
	size_t k = 0;
	while (k < len && isspace((unsigned char)buf[k]))
		k++;
	if (k < len && buf[k] == '{') {
		json_error_t je;
		doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
		if (!doc)
			snprintf(msg, sizeof msg, "line %d: %s", je.line, je.text);
	} else {
		doc = yaml_doc(buf, len, msg, sizeof msg);
	}
	mu__audit_policy_t *p = calloc(1, sizeof *p);
	static const char *const keys[] = {"apiVersion", "kind", "metadata", "rules", "omitStages",
					   "omitManagedFields", NULL};
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	const json_t *rules = json_object_get(doc, "rules");
	int rc = MU_EINVAL;
	if (!p)
		snprintf(msg, sizeof msg, "out of memory");
	else if (!doc && !*msg)
		snprintf(msg, sizeof msg, "empty document");
	else if (!doc)
		rc = MU_EPARSE;
	else if (!json_is_object(doc))
		snprintf(msg, sizeof msg, "not an object: expected an audit.k8s.io/v1 Policy");
	else if (!kind || strcmp(kind, "Policy"))
		snprintf(msg, sizeof msg, "kind: Unsupported value: \"%s\": supported values: \"Policy\"",
			 kind ? kind : "");
	else if (!av || strcmp(av, "audit.k8s.io/v1"))
		snprintf(msg, sizeof msg, "apiVersion: Unsupported value: \"%s\": supported values: \"audit.k8s.io/v1\"",
			 av ? av : "");
	else if (!known_keys(doc, "", keys, msg, sizeof msg))
		;
	else if (rules && !json_is_null(rules) && !json_is_array(rules))
		snprintf(msg, sizeof msg, "rules: Invalid value: expected a list");
	else if (json_array_size(rules) == 0) /* kube refuses a policy that logs nothing */
		snprintf(msg, sizeof msg, "loaded illegal policy with 0 rules");
	else if (!get_stages(doc, "", &p->omit, msg, sizeof msg))
		;
	else if (json_object_get(doc, "omitManagedFields") && !json_is_boolean(json_object_get(doc, "omitManagedFields")))
		snprintf(msg, sizeof msg, "omitManagedFields: Invalid value: expected true or false");
	else if (!(p->r = calloc(json_array_size(rules), sizeof *p->r)))
		snprintf(msg, sizeof msg, "out of memory");
	else {
		p->omit_mf = json_is_true(json_object_get(doc, "omitManagedFields"));
		rc = MU_OK;
		for (size_t i = 0; rc == MU_OK && i < json_array_size(rules); i++) {
			p->n++;
			if (!parse_rule(json_array_get(rules, i), (int)i, &p->r[i], msg, sizeof msg))
				rc = MU_EINVAL;
		}
	}
	json_decref(doc);
	if (rc != MU_OK) {
		snprintf(err, errlen, "%s: %s", file, msg);
		mu__audit_policy_free(p);
		return rc;
	}
	*out = p;
	return MU_OK;
}

/* --- matching (kube's policy checker) ------------------------------------ */

static bool has(const strs_t *s, const char *x)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return true;
	return false;
}

/* Whether one of r's group resources names the request's resource. */
static bool match_resource(const rule_t *r, const mu__audit_attrs_t *a)
{
	char comb[160];
	snprintf(comb, sizeof comb, "%s%s%s", a->resource_name, *a->sub ? "/" : "", a->sub);
	for (int i = 0; i < r->ngr; i++) {
		const gres_t *g = &r->gr[i];
		if (strcmp(g->group, a->group))
			continue;
		if (!g->res.n)
			return true;
		if (g->names.n && !has(&g->names, a->name))
			continue;
		for (int k = 0; k < g->res.n; k++) {
			const char *x = g->res.v[k];
			size_t n = strlen(x);
			if (!strcmp(x, comb) || !strcmp(x, "*"))
				return true;
			if (*a->sub && !strncmp(x, "*/", 2) && !strcmp(x + 2, a->sub))
				return true;
			if (n > 2 && !strcmp(x + n - 2, "/*") && strlen(a->resource_name) == n - 2 &&
			    !strncmp(x, a->resource_name, n - 2))
				return true;
		}
	}
	return false;
}

static bool match_url(const rule_t *r, const char *path)
{
	for (int i = 0; i < r->urls.n; i++) {
		const char *u = r->urls.v[i];
		size_t n = strlen(u);
		if (!strcmp(u, "*") || !strcmp(u, path) || (n && u[n - 1] == '*' && !strncmp(u, path, n - 1)))
			return true;
	}
	return false;
}

static bool rule_matches(const rule_t *r, const mu__audit_attrs_t *a)
{
	static const mu__user_t nobody;
	const mu__user_t *u = a->user ? a->user : &nobody;
	if (r->users.n && !has(&r->users, u->name))
		return false;
	if (r->groups.n) {
		bool any = false;
		for (int i = 0; i < u->ngroups && !any; i++)
			any = has(&r->groups, u->groups[i]);
		if (!any)
			return false;
	}
	if (r->verbs.n && !has(&r->verbs, a->verb))
		return false;
	if (a->resource) {
		if (r->urls.n || (r->ns.n && !has(&r->ns, a->ns)))
			return false;
		return !r->ngr || match_resource(r, a);
	}
	if (r->ns.n || r->ngr)
		return false;
	return !r->urls.n || match_url(r, a->path);
}

int mu__audit_level(const mu__audit_policy_t *p, const mu__audit_attrs_t *a, unsigned *omit_stages, bool *omit_mf)
{
	for (int i = 0; i < p->n; i++) {
		const rule_t *r = &p->r[i];
		if (!rule_matches(r, a))
			continue;
		*omit_stages = r->omit | p->omit;
		*omit_mf = r->omit_mf < 0 ? p->omit_mf : r->omit_mf;
		return r->level;
	}
	*omit_stages = p->omit;
	*omit_mf = p->omit_mf;
	return MU__AUDIT_NONE;
}

/* --- the log and its writer ------------------------------------------------ */

struct mu__audit {
	mu__audit_policy_t *policy;
	int fd;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf;        /* lines waiting, at most QUEUE_MAX bytes */
	size_t len, cap;
	unsigned long long dropped;
	bool stop;
};

/* Writes all of p to fd; false on an error. */
static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* The writer: takes the whole buffer and writes it out, until stopped and
 * drained. */
static void *writer_main(void *arg)
{
	mu__audit_t *a = arg;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->len && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (!a->len && a->stop)
			break;
		char *b = a->buf;
		size_t n = a->len;
		unsigned long long dropped = a->dropped;
		a->buf = NULL;
		a->len = a->cap = 0;
		a->dropped = 0;
		pthread_mutex_unlock(&a->mu);
		if (!write_all(a->fd, b, n))
			fprintf(stderr, "muster up: audit log: write failed: %s\n", strerror(errno));
		if (dropped)
			fprintf(stderr, "muster up: audit log: %llu events dropped (the disk is slower than the "
				"requests; %u bytes queued at most)\n", dropped, QUEUE_MAX);
		free(b);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Appends line (n bytes, without its newline) to the queue, or drops it
 * when the queue is full.  O(n) under the lock. */
static void enqueue(mu__audit_t *a, const char *line, size_t n)
{
	pthread_mutex_lock(&a->mu);
	if (a->len + n + 1 > QUEUE_MAX) {
		a->dropped++;
	} else {
		if (a->len + n + 1 > a->cap) {
			size_t nc = a->cap ? a->cap : 64 * 1024;
			while (nc < a->len + n + 1)
				nc *= 2;
			char *nb = realloc(a->buf, nc);
			if (!nb) {
				a->dropped++;
				pthread_mutex_unlock(&a->mu);
				return;
			}
			a->buf = nb;
			a->cap = nc;
		}
		memcpy(a->buf + a->len, line, n);
		a->buf[a->len + n] = '\n';
		a->len += n + 1;
		pthread_cond_signal(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
}

int mu__audit_open(const char *policy_file, const char *log_path, mu__audit_t **out, char *err, size_t errlen)
{
	*out = NULL;
	FILE *f = fopen(policy_file, "rb");
	if (!f) {
		snprintf(err, errlen, "--audit-policy-file %s: %s", policy_file, strerror(errno));
		return MU_EIO;
	}
	char *text = malloc(MAX_POLICY + 1);
	size_t n = text ? fread(text, 1, MAX_POLICY + 1, f) : 0;
	fclose(f);
	if (!text || n > MAX_POLICY) {
		free(text);
		snprintf(err, errlen, "--audit-policy-file %s: %s", policy_file,
			 text ? "larger than 4 MiB" : "out of memory");
		return text ? MU_ELIMIT : MU_ENOMEM;
	}
	mu__audit_policy_t *p;
	char msg[600];
	int rc = mu__audit_policy_parse(policy_file, text, n, &p, msg, sizeof msg);
	free(text);
	if (rc != MU_OK) {
		snprintf(err, errlen, "--audit-policy-file %s", msg);
		return rc;
	}
	mu__audit_t *a = calloc(1, sizeof *a);
	if (!a) {
		mu__audit_policy_free(p);
		snprintf(err, errlen, "out of memory");
		return MU_ENOMEM;
	}
	a->policy = p;
	a->fd = !strcmp(log_path, "-") ? dup(STDOUT_FILENO)
				       : open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (a->fd < 0) {
		snprintf(err, errlen, "--audit-log-path %s: %s", log_path, strerror(errno));
		mu__audit_policy_free(p);
		free(a);
		return MU_EIO;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->th, NULL, writer_main, a) != 0) {
		snprintf(err, errlen, "cannot start the audit log writer");
		close(a->fd);
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		mu__audit_policy_free(p);
		free(a);
		return MU_ENOMEM;
	}
	*out = a;
	return MU_OK;
}

void mu__audit_close(mu__audit_t *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	close(a->fd);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->buf);
	mu__audit_policy_free(a->policy);
	free(a);
}

/* --- one request's events --------------------------------------------------- */

struct mu__audit_rec {
	char id[64];
	struct timespec recv;
	bool has_user, has_imp;
	int decision;       /* -1: authorization not reached; 0 forbid; 1 allow */
	mu__user_t user, imp;
	json_t *ev;         /* a watch's event, for its ResponseComplete */
	unsigned omit;
};

/* t as metav1.MicroTime: RFC 3339 in UTC with microseconds. */
static void micro_time(const struct timespec *t, char out[40])
{
	struct tm tm;
	time_t sec = t->tv_sec;
	gmtime_r(&sec, &tm);
	size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 40 - n, ".%06ldZ", t->tv_nsec / 1000);
}

mu__audit_rec_t *mu__audit_begin(mu_apiserver_t *s, const char *client_id)
{
	mu__audit_rec_t *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &r->recv);
	r->decision = -1;
	if (client_id && *client_id) /* kube keeps the caller's Audit-ID */
		snprintf(r->id, sizeof r->id, "%.63s", client_id);
	else
		mu__uid(s, r->id);
	return r;
}

const char *mu__audit_id(const mu__audit_rec_t *r)
{
	return r->id;
}

void mu__audit_user(mu__audit_rec_t *r, const mu__user_t *u)
{
	r->user = *u;
	r->has_user = true;
}

void mu__audit_authz(mu__audit_rec_t *r, const mu__user_t *u, bool allow, const char *reason)
{
	(void)reason;
	r->decision = allow;
	if (r->has_user && (strcmp(u->name, r->user.name) || strcmp(u->uid, r->user.uid))) {
		r->imp = *u;
		r->has_imp = true;
	}
}

/* Removes metadata.managedFields from o and from each of its items. */
static void drop_mf(json_t *o)
{
	json_object_del(json_object_get(o, "metadata"), "managedFields");
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(o, "items"), i, it)
		json_object_del(json_object_get(it, "metadata"), "managedFields");
}

/* A JSON body as an object, or NULL (not JSON, or empty). */
static json_t *body_json(const char *body, size_t len, const char *ctype)
{
	if (!body || !len || (ctype && !strstr(ctype, "json")))
		return NULL;
	json_t *j = json_loadb(body, len, 0, NULL);
	if (j && !json_is_object(j) && !json_is_array(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Sets stage and stageTimestamp of ev and queues its line. */
static void emit(mu__audit_t *a, json_t *ev, int stage, const struct timespec *at)
{
	char ts[40];
	micro_time(at, ts);
	json_object_set_new(ev, "stage", json_string(STAGES[stage]));
	json_object_set_new(ev, "stageTimestamp", json_string(ts));
	json_t *an = json_incref(json_object_get(ev, "annotations")); /* last, as kube orders them */
	if (an) {
		json_object_del(ev, "annotations");
		json_object_set_new(ev, "annotations", an);
	}
	char *line = json_dumps(ev, JSON_COMPACT);
	if (line)
		enqueue(a, line, strlen(line));
	free(line);
}

/* kube's SourceIPs: the X-Forwarded-For addresses, then the peer's when
 * it is not the last of them. */
static json_t *source_ips(const char *xff, const char *peer)
{
	json_t *ips = json_array();
	const char *last = NULL;
	size_t lastn = 0;
	for (const char *p = xff; p && *p;) {
		p += strspn(p, " ,");
		size_t n = strcspn(p, ",");
		size_t m = n;
		while (m && p[m - 1] == ' ')
			m--;
		if (m) {
			json_array_append_new(ips, json_stringn(p, m));
			last = p;
			lastn = m;
		}
		p += n;
	}
	if (peer && *peer && !(last && strlen(peer) == lastn && !strncmp(peer, last, lastn)))
		json_array_append_new(ips, json_string(peer));
	return ips;
}

bool mu__audit_end(mu_apiserver_t *s, mu__audit_rec_t *r, const char *method, const char *target,
		   const mu__req_t *rq, const mu__resp_t *rs, const char *peer, const char *xff)
{
	mu__audit_t *a = s->audit;
	const mu__route_t *rt = &rq->route;
	bool res = rt->kind == MU__R_RESOURCE;
	char lverb[16];
	size_t k = 0;
	for (; method[k] && k + 1 < sizeof lverb; k++)
		lverb[k] = (char)tolower((unsigned char)method[k]);
	lverb[k] = '\0';
	const char *verb = res ? mu__req_verb(rq) : lverb;
	char path[1024];
	snprintf(path, sizeof path, "%.*s", (int)strcspn(target, "?"), target);
	mu__audit_attrs_t at = {r->has_user ? &r->user : NULL, verb, res, rt->core ? "" : rt->group, rt->plural,
				rt->sub, rt->ns, rt->name, path};
	unsigned omit;
	bool omit_mf;
	int level = mu__audit_level(a->policy, &at, &omit, &omit_mf);
	if (level == MU__AUDIT_NONE) {
		free(r);
		return false;
	}
	char ts[40];
	micro_time(&r->recv, ts);
	json_t *ev = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "kind", "Event", "apiVersion", "audit.k8s.io/v1",
			       "level", LEVELS[level], "auditID", r->id, "stage", STAGES[0], "requestURI", target,
			       "verb", verb);
	if (!ev) {
		free(r);
		return false;
	}
	json_object_set_new(ev, "user", r->has_user ? mu__user_info_json(&r->user) : json_object());
	if (r->has_imp)
		json_object_set_new(ev, "impersonatedUser", mu__user_info_json(&r->imp));
	json_object_set_new(ev, "sourceIPs", source_ips(xff, peer));
	if (rq->user_agent)
		json_object_set_new(ev, "userAgent", json_string(rq->user_agent));
	json_t *req_obj = level >= MU__AUDIT_REQUEST && res ? body_json(rq->body, rq->body_len, rq->ctype) : NULL;
	if (res) {
		json_t *ref = json_object();
		const char *name = rt->name;
		if (!*name && req_obj && !strcmp(verb, "create")) /* kube names a created object from its body */
			name = json_string_value(mu__jget(req_obj, "metadata.name"));
		const char *f[][2] = {{"resource", rt->plural}, {"namespace", rt->ns}, {"name", name},
				      {"apiGroup", rt->core ? "" : rt->group}, {"apiVersion", rt->version},
				      {"subresource", rt->sub}};
		for (int i = 0; i < 6; i++)
			if (f[i][1] && *f[i][1])
				json_object_set_new(ref, f[i][0], json_string(f[i][1]));
		json_object_set_new(ev, "objectRef", ref);
	}
	json_object_set_new(ev, "requestReceivedTimestamp", json_string(ts));
	if (!(omit & MU__STAGE_RECEIVED))
		emit(a, ev, 0, &r->recv);
	/* what the response adds */
	json_t *st = json_pack("{s:{},s:i}", "metadata", "code", rs->code);
	/* the answer is parsed only for a responseObject or a failure's Status */
	json_t *resp = rs->watch || (level < MU__AUDIT_RR && rs->code < 300) ? NULL
			: body_json(rs->body, rs->len, rs->ctype);
	const char *rkind = json_string_value(json_object_get(resp, "kind"));
	if (rs->code >= 300 && rkind && !strcmp(rkind, "Status")) {
		const char *keys[] = {"status", "message", "reason", "details"};
		for (int i = 0; i < 4; i++)
			if (json_object_get(resp, keys[i]))
				json_object_set(st, keys[i], json_object_get(resp, keys[i]));
	}
	/* keep kube's field order: responseStatus, then the objects, then the times */
	json_object_del(ev, "requestReceivedTimestamp");
	json_object_del(ev, "stageTimestamp");
	json_object_set_new(ev, "responseStatus", st);
	if (req_obj) {
		if (omit_mf)
			drop_mf(req_obj);
		json_object_set_new(ev, "requestObject", req_obj);
	}
	if (resp && level >= MU__AUDIT_RR) {
		if (omit_mf)
			drop_mf(resp);
		json_object_set(ev, "responseObject", resp);
	}
	json_decref(resp);
	json_object_set_new(ev, "requestReceivedTimestamp", json_string(ts));
	if (r->decision >= 0) {
		char reason[1200] = "";
		const mu__user_t *who = r->has_imp ? &r->imp : &r->user;
		mu__sar_attrs_t sa = {verb, at.group, rt->plural, rt->sub, rt->ns,
				      !strcmp(verb, "create") && !*rt->sub ? "" : rt->name, path, res};
		if (r->decision || !who->admin)
			mu__rbac_decide(s, who, &sa, reason, sizeof reason);
		json_object_set_new(ev, "annotations", json_pack("{s:s,s:s}", "authorization.k8s.io/decision",
								 r->decision ? "allow" : "forbid",
								 "authorization.k8s.io/reason", reason));
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (rs->watch) {
		if (!(omit & MU__STAGE_STARTED))
			emit(a, ev, 1, &now);
		r->ev = ev;
		r->omit = omit;
		return true;
	}
	if (!(omit & MU__STAGE_COMPLETE))
		emit(a, ev, 2, &now);
	json_decref(ev);
	free(r);
	return false;
}

void mu__audit_complete(mu_apiserver_t *s, mu__audit_rec_t *r)
{
	if (!r)
		return;
	if (r->ev && s->audit && !(r->omit & MU__STAGE_COMPLETE)) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		emit(s->audit, r->ev, 2, &now);
	}
	json_decref(r->ev);
	free(r);
}
