/*
 * kubeconfig.c - where the API server is and how to authenticate.
 *
 * A kubeconfig (YAML, so JSON too) is read into a JSON tree with libyaml's
 * event parser (every scalar a string; anchors and aliases unsupported),
 * then current-context (or the named context) is followed to its cluster
 * (server, certificate-authority[-data], insecure-skip-tls-verify) and user
 * (token, tokenFile, client-certificate[-data], client-key[-data]).  File
 * names are relative to the kubeconfig's directory.  In a pod, the service
 * account's token, CA and namespace are used with KUBERNETES_SERVICE_HOST.
 * Everything read is copied into the caller's mu_kube_config_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kube/kube_int.h"

#define MAX_DEPTH 32

/* Builds a JSON tree from YAML events: a stack of open containers. */
typedef struct ybuild {
	json_t *stack[MAX_DEPTH];
	char *key[MAX_DEPTH];   /* pending mapping key per level */
	int depth;
	json_t *root;
} ybuild_t;

/* Adds v (stolen) to the open container, or makes it the root. */
static int yb_add(ybuild_t *b, json_t *v)
{
	if (!v)
		return MU_ENOMEM;
	if (b->depth == 0) {
		json_decref(b->root);
		b->root = v;
		return MU_OK;
	}
	json_t *top = b->stack[b->depth - 1];
	if (json_is_array(top))
		return json_array_append_new(top, v) ? MU_ENOMEM : MU_OK;
	char **k = &b->key[b->depth - 1];
	if (!*k) { /* a mapping key: scalars only */
		if (!json_is_string(v)) {
			json_decref(v);
			return MU_EPARSE;
		}
		*k = strdup(json_string_value(v));
		json_decref(v);
		return *k ? MU_OK : MU_ENOMEM;
	}
	int rc = json_object_set_new(top, *k, v) ? MU_ENOMEM : MU_OK;
	free(*k);
	*k = NULL;
	return rc;
}

/* Handles one event; *done at the end of the first document. */
static int yb_event(ybuild_t *b, const yaml_event_t *ev, bool *done)
{
	json_t *c;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return yb_add(b, json_stringn((const char *)ev->data.scalar.value,
					      ev->data.scalar.length));
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth == MAX_DEPTH)
			return MU_ELIMIT;
		c = ev->type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
		if (!c)
			return MU_ENOMEM;
		b->stack[b->depth] = c;
		b->key[b->depth++] = NULL;
		return MU_OK;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		c = b->stack[--b->depth];
		free(b->key[b->depth]);
		b->key[b->depth] = NULL;
		return yb_add(b, c);
	case YAML_ALIAS_EVENT:
		return MU_EPARSE;
	case YAML_DOCUMENT_END_EVENT:
	case YAML_STREAM_END_EVENT:
		*done = true;
		return MU_OK;
	default:
		return MU_OK;
	}
}

/* Parses the first YAML document of buf into a JSON tree; NULL on error
 * (with a message). */
static json_t *yaml_to_json(const char *buf, size_t len, char *err, size_t errlen)
{
	yaml_parser_t p;
	ybuild_t b;
	memset(&b, 0, sizeof b);
	if (!yaml_parser_initialize(&p))
		return NULL;
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	int rc = MU_OK;
	for (bool done = false; !done && rc == MU_OK;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			snprintf(err, errlen, "YAML error at line %lu: %s",
				 (unsigned long)p.problem_mark.line + 1,
				 p.problem ? p.problem : "?");
			rc = MU_EPARSE;
			break;
		}
		rc = yb_event(&b, &ev, &done);
		yaml_event_delete(&ev);
		if (rc != MU_OK && !*err)
			snprintf(err, errlen, "unsupported YAML (aliases, non-scalar keys or deep nesting)");
	}
	yaml_parser_delete(&p);
	while (b.depth > 0) {
		b.depth--;
		json_decref(b.stack[b.depth]);
		free(b.key[b.depth]);
	}
	if (rc != MU_OK) {
		json_decref(b.root);
		return NULL;
	}
	return b.root;
}

/* The entry named name of the list at key ("clusters"), its `inner` map. */
static json_t *named(const json_t *root, const char *key, const char *name,
		     const char *inner)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(root, key), i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));
		if (n && !strcmp(n, name))
			return json_object_get(v, inner);
	}
	return NULL;
}

/* A copy of the string field key of m, or NULL. */
static char *sdup(const json_t *m, const char *key)
{
	const char *s = json_string_value(json_object_get(m, key));
	return s && *s ? strdup(s) : NULL;
}

/* A file name of the kubeconfig, made absolute against its directory. */
static char *path_field(const json_t *m, const char *key, const char *dir)
{
	const char *s = json_string_value(json_object_get(m, key));
	if (!s || !*s)
		return NULL;
	if (s[0] == '/' || !*dir)
		return strdup(s);
	size_t n = strlen(dir) + strlen(s) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, s);
	return p;
}

/* A -data field: base64 PEM, decoded. */
static int data_field(const json_t *m, const char *key, char **out)
{
	const char *s = json_string_value(json_object_get(m, key));
	*out = NULL;
	if (!s || !*s)
		return MU_OK;
	size_t cap = strlen(s) / 4 * 3 + 4, n;
	if (!(*out = malloc(cap)))
		return MU_ENOMEM;
	if (mu__b64dec(s, *out, cap, &n) == MU_OK)
		return MU_OK;
	free(*out);
	*out = NULL;
	return MU_EPARSE;
}

void mu_kube_config_release(mu_kube_config_t *c)
{
	if (!c)
		return;
	char **f[] = {&c->server, &c->ns, &c->token, &c->token_file, &c->ca_file,
		      &c->ca_pem, &c->cert_file, &c->cert_pem, &c->key_file,
		      &c->key_pem};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
		free(*f[i]);
		*f[i] = NULL;
	}
	mu__ktls_free(c->tls);
	c->tls = NULL;
}

/* Fills out from the chosen context's cluster and user maps. */
static int fill(mu_kube_config_t *out, const json_t *cl, const json_t *us,
		const json_t *ctx, const char *dir, char *err, size_t errlen)
{
	const char *ins = json_string_value(json_object_get(cl, "insecure-skip-tls-verify"));
	out->server = sdup(cl, "server");
	out->ns = sdup(ctx, "namespace");
	out->insecure = ins && !strcmp(ins, "true");
	out->ca_file = path_field(cl, "certificate-authority", dir);
	out->token = sdup(us, "token");
	out->token_file = path_field(us, "tokenFile", dir);
	out->cert_file = path_field(us, "client-certificate", dir);
	out->key_file = path_field(us, "client-key", dir);
	if (data_field(cl, "certificate-authority-data", &out->ca_pem) ||
	    data_field(us, "client-certificate-data", &out->cert_pem) ||
	    data_field(us, "client-key-data", &out->key_pem)) {
		snprintf(err, errlen, "a -data field is not valid base64");
		return MU_EPARSE;
	}
	if (!out->ns)
		out->ns = strdup("default");
	if (!out->server) {
		snprintf(err, errlen, "the cluster has no server");
		return MU_EPARSE;
	}
	out->tls = mu__ktls_new(out); /* NULL: libcurl decodes per connection */
	return out->ns ? MU_OK : MU_ENOMEM;
}

int mu_kube_config_load(const char *path, const char *context,
			mu_kube_config_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	*err = '\0';
	size_t len;
	char *buf = mu__k_readfile(path, &len);
	if (!buf) {
		snprintf(err, errlen, "cannot read %s", path);
		return MU_EIO;
	}
	int rc = mu_kube_config_parse(path, buf, len, context, out, err, errlen);
	free(buf);
	return rc;
}

int mu_kube_config_parse(const char *path, const char *buf, size_t len,
			 const char *context, mu_kube_config_t *out, char *err,
			 size_t errlen)
{
	memset(out, 0, sizeof *out);
	*err = '\0';
	json_t *root = yaml_to_json(buf, len, err, errlen);
	if (!root || !json_is_object(root)) {
		if (!*err)
			snprintf(err, errlen, "%s: not a kubeconfig", path);
		json_decref(root);
		return MU_EPARSE;
	}
	const char *cname = context ? context : json_string_value(json_object_get(root, "current-context"));
	const json_t *ctx = cname ? named(root, "contexts", cname, "context") : NULL;
	if (!ctx && !context && json_array_size(json_object_get(root, "contexts")) == 1)
		ctx = json_object_get(json_array_get(json_object_get(root, "contexts"), 0), "context");
	const char *cl_name = json_string_value(json_object_get(ctx, "cluster"));
	const char *us_name = json_string_value(json_object_get(ctx, "user"));
	const json_t *cl = cl_name ? named(root, "clusters", cl_name, "cluster") : NULL;
	const json_t *us = us_name ? named(root, "users", us_name, "user") : NULL;
	int rc;
	if (!ctx || !cl) {
		snprintf(err, errlen, "%s: no context %s with a cluster", path,
			 cname ? cname : "(current-context is not set)");
		rc = MU_ENOENT;
	} else {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			dir[0] = '\0';
		rc = fill(out, cl, us, ctx, dir, err, errlen);
	}
	json_decref(root);
	if (rc)
		mu_kube_config_release(out);
	return rc;
}

int mu_kube_config_in_cluster(const char *dir, mu_kube_config_t *out,
			      char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!dir)
		dir = "/var/run/secrets/kubernetes.io/serviceaccount";
	if (!host || !*host || !port || !*port) {
		snprintf(err, errlen, "not in a cluster: KUBERNETES_SERVICE_HOST and _PORT are not set");
		return MU_ENOENT;
	}
	char buf[4096];
	bool v6 = strchr(host, ':') != NULL;
	snprintf(buf, sizeof buf, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
	out->server = strdup(buf);
	snprintf(buf, sizeof buf, "%s/token", dir);
	out->token_file = strdup(buf);
	snprintf(buf, sizeof buf, "%s/ca.crt", dir);
	out->ca_file = strdup(buf);
	snprintf(buf, sizeof buf, "%s/namespace", dir);
	char *ns = mu__k_readfile(buf, NULL);
	if (ns)
		ns[strcspn(ns, " \r\n")] = '\0';
	out->ns = ns && *ns ? ns : strdup("default");
	if (ns && !*ns)
		free(ns);
	char *tok = mu__k_readfile(out->token_file, NULL);
	if (!tok) {
		snprintf(err, errlen, "cannot read the service account token %s", out->token_file);
		mu_kube_config_release(out);
		return MU_EIO;
	}
	free(tok);
	if (!out->server || !out->token_file || !out->ca_file || !out->ns) {
		mu_kube_config_release(out);
		return MU_ENOMEM;
	}
	return MU_OK;
}

int mu_kube_config_resolve(const char *kubeconfig, const char *context,
			   bool in_cluster, mu_kube_config_t *out, char *err,
			   size_t errlen)
{
	char def[4096];
	if (in_cluster)
		return mu_kube_config_in_cluster(NULL, out, err, errlen);
	if (!kubeconfig && getenv("KUBECONFIG") && *getenv("KUBECONFIG")) {
		snprintf(def, sizeof def, "%s", getenv("KUBECONFIG"));
		def[strcspn(def, ":")] = '\0';
		kubeconfig = def;
	} else if (!kubeconfig && getenv("HOME")) {
		snprintf(def, sizeof def, "%s/.kube/config", getenv("HOME"));
		kubeconfig = def;
	}
	if (!kubeconfig) {
		memset(out, 0, sizeof *out);
		snprintf(err, errlen, "no kubeconfig: give --kubeconfig FILE or --in-cluster");
		return MU_EINVAL;
	}
	return mu_kube_config_load(kubeconfig, context, out, err, errlen);
}
