/*
 * cmd_node.c - `muster node fail|recover NAME [--kubeconfig FILE]`: injects
 * a failure into (or recovers) a simulated node of `muster up`, over HTTPS
 * with the kubeconfig's CA and client certificate or token (libcurl).
 *
 * It PATCHes the node's muster.io/node-state annotation; the simulated
 * kubelet then marks the node NotReady with the unreachable taints and
 * fails its pods, as a real cluster does when a node is lost.  The same can
 * be done with `kubectl annotate node NAME muster.io/node-state=failed`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include <curl/curl.h>

#include "muster/kube.h"

static void node_usage(FILE *f)
{
	fputs("usage: muster node fail|recover NAME [--kubeconfig FILE] [--server URL] [--token TOKEN]\n"
	      "\n"
	      "Fails or recovers a simulated node of `muster up`: a failed node turns\n"
	      "NotReady, gets the node.kubernetes.io/unreachable taints, and its pods fail.\n"
	      "\n"
	      "  --kubeconfig FILE  the server, its CA, client certificate or token (default $KUBECONFIG, else\n"
	      "                     ./muster-data/kubeconfig, which `muster up` writes)\n"
	      "  --server URL       another server address than the kubeconfig's\n"
	      "  --token TOKEN      another bearer token than the kubeconfig's\n",
	      f);
}

static size_t sink(char *p, size_t sz, size_t n, void *ctx)
{
	char *buf = ctx;
	size_t have = strlen(buf), add = sz * n;
	if (have + add < 1024) {
		memcpy(buf + have, p, add);
		buf[have + add] = '\0';
	}
	return sz * n;
}

/* PATCHes path with body (merge patch) on the configured server; returns
 * the HTTP status or -1 with a message in err. */
static long patch(const mu_kube_config_t *c, const char *path, const char *body, char *ans, char *err)
{
	CURL *h = curl_easy_init();
	if (!h)
		return -1;
	char url[1024], auth[600];
	snprintf(url, sizeof url, "%s%s", c->server, path);
	struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
	if (c->token) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %.500s", c->token);
		hd = curl_slist_append(hd, auth);
	}
	struct curl_blob ca = {c->ca_pem, c->ca_pem ? strlen(c->ca_pem) : 0, CURL_BLOB_COPY};
	if (c->ca_pem)
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
	else if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	/* the client certificate of the kubeconfig, as muster up writes it */
	struct curl_blob cert = {c->cert_pem, c->cert_pem ? strlen(c->cert_pem) : 0, CURL_BLOB_COPY};
	struct curl_blob key = {c->key_pem, c->key_pem ? strlen(c->key_pem) : 0, CURL_BLOB_COPY};
	if (c->cert_pem) {
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (c->cert_file) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
	}
	if (c->key_pem) {
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (c->key_file) {
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
	}
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PATCH");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, ans);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	long code = -1;
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	return code;
}

int mu_cmd_node(int argc, char **argv)
{
	const char *verb = NULL, *name = NULL, *token = getenv("MUSTER_TOKEN");
	const char *server = getenv("MUSTER_SERVER"), *kubeconfig = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			node_usage(stdout);
			return MU_EXIT_OK;
		} else if ((!strcmp(argv[i], "--server") || !strcmp(argv[i], "--token") ||
			    !strcmp(argv[i], "--kubeconfig")) && i + 1 < argc) {
			*(argv[i][2] == 's' ? &server : argv[i][2] == 't' ? &token : &kubeconfig) = argv[i + 1];
			i++;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "muster node: unknown option '%s'\n", argv[i]);
			return MU_EXIT_USAGE;
		} else if (!verb) {
			verb = argv[i];
		} else if (!name) {
			name = argv[i];
		} else {
			node_usage(stderr);
			return MU_EXIT_USAGE;
		}
	}
	if (!verb || !name || (strcmp(verb, "fail") && strcmp(verb, "recover")) || strlen(name) > 253 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(name)) {
		node_usage(stderr);
		return MU_EXIT_USAGE;
	}
	if (!kubeconfig && !getenv("KUBECONFIG"))
		kubeconfig = "muster-data/kubeconfig";
	mu_kube_config_t cfg;
	char err[CURL_ERROR_SIZE + 512] = "";
	if (mu_kube_config_resolve(kubeconfig, NULL, false, &cfg, err, sizeof err) != MU_OK) {
		fprintf(stderr, "muster node: %s\n", err);
		return MU_EXIT_USAGE;
	}
	if (server) {
		free(cfg.server);
		cfg.server = strdup(server);
	}
	if (token) {
		free(cfg.token);
		cfg.token = strdup(token);
	}
	bool fail = !strcmp(verb, "fail");
	char path[300], ans[1024] = "";
	snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
	const char *body = fail ? "{\"metadata\":{\"annotations\":{\"muster.io/node-state\":\"failed\"}}}"
				: "{\"metadata\":{\"annotations\":{\"muster.io/node-state\":null}}}";
	long code = patch(&cfg, path, body, ans, err);
	int rc = MU_EXIT_OK;
	if (code < 0) {
		fprintf(stderr, "muster node: cannot reach %s: %s\n", cfg.server, err);
		rc = MU_EXIT_FAIL;
	} else if (code != 200) {
		fprintf(stderr, "muster node: %s answered %ld: %s\n", cfg.server, code, ans);
		rc = MU_EXIT_FAIL;
	} else {
		printf("node/%s %s\n", name, fail ? "failed" : "recovered");
	}
	mu_kube_config_release(&cfg);
	return rc;
}
