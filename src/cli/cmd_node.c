/*
 * cmd_node.c - `muster node fail|recover NAME [--server URL]`: injects a
 * failure into (or recovers) a simulated node of `muster up`, over HTTP.
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
#include "muster/apiserver.h"

static void node_usage(FILE *f)
{
	fputs("usage: muster node fail|recover NAME [--server URL] [--token TOKEN]\n"
	      "\n"
	      "Fails or recovers a simulated node of `muster up`: a failed node turns\n"
	      "NotReady, gets the node.kubernetes.io/unreachable taints, and its pods fail.\n"
	      "\n"
	      "  --server URL   the server (default $MUSTER_SERVER or http://127.0.0.1:6443)\n"
	      "  --token TOKEN  a bearer token, if the server wants one\n",
	      f);
}

int mu_cmd_node(int argc, char **argv)
{
	const char *verb = NULL, *name = NULL, *token = NULL;
	const char *server = getenv("MUSTER_SERVER");
	if (!server)
		server = "http://127.0.0.1:6443";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			node_usage(stdout);
			return MU_EXIT_OK;
		} else if ((!strcmp(argv[i], "--server") || !strcmp(argv[i], "--token")) && i + 1 < argc) {
			*(argv[i][2] == 's' ? &server : &token) = argv[i + 1];
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
	char host[64];
	int port;
	if (mu_apiclient_parse_url(server, host, sizeof host, &port) != MU_OK) {
		fprintf(stderr, "muster node: --server %s: expected http://IPV4:PORT (for HTTPS use "
				"kubectl annotate node %s muster.io/node-state=failed)\n", server, name);
		return MU_EXIT_USAGE;
	}
	bool fail = !strcmp(verb, "fail");
	char path[300];
	snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
	const char *body = fail ? "{\"metadata\":{\"annotations\":{\"muster.io/node-state\":\"failed\"}}}"
				: "{\"metadata\":{\"annotations\":{\"muster.io/node-state\":null}}}";
	mu_apiclient_resp_t r;
	int rc = mu_apiclient_do(host, port, "PATCH", path, "application/merge-patch+json", body, token, 10000, &r);
	if (rc != MU_OK) {
		fprintf(stderr, "muster node: cannot reach %s: %s\n", server, mu_strerror(rc));
		return MU_EXIT_FAIL;
	}
	int code = r.status;
	if (code != 200)
		fprintf(stderr, "muster node: %s answered %d: %s\n", server, code, r.body);
	else
		printf("node/%s %s\n", name, fail ? "failed" : "recovered");
	free(r.body);
	return code == 200 ? MU_EXIT_OK : MU_EXIT_FAIL;
}
