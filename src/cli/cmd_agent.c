/*
 * cmd_agent.c - `muster agent discover`: reads this host's NUMA nodes, GPUs
 * and NICs from sysfs (or a recorded tree, --sysfs) and prints them as a
 * topology.node.k8s.io/v1alpha2 NodeResourceTopology in JSON or YAML.
 *
 * Exit status: 0 printed, 1 the output could not be written, 2 bad usage
 * or a tree that could not be read (the message names the path).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/agent.h"

static void agent_usage(FILE *f)
{
	fputs("usage: muster agent discover [--sysfs ROOT] [--format json|yaml]\n"
	      "                             [--node-name NAME]\n"
	      "\n"
	      "Reads the NUMA nodes (CPUs, memory, distances), GPUs and NICs of this\n"
	      "host from sysfs and prints a topology.node.k8s.io/v1alpha2\n"
	      "NodeResourceTopology with muster.io/ attributes for GPU and NIC\n"
	      "placement and GPU link groups (docs/agent.md).\n"
	      "\n"
	      "  --sysfs ROOT      the sysfs tree to read (default /sys), e.g. a\n"
	      "                    recorded one: tests/data/sysfs/dgx8\n"
	      "  --format FMT      json (default) or yaml\n"
	      "  --node-name NAME  metadata.name (default: the hostname, lowercased)\n"
	      "  -h, --help        print this help\n"
	      "\n"
	      "Exit status: 0 printed, 1 output failed, 2 bad usage or unreadable tree.\n",
	      f);
}

/* True when s is a DNS-1123 subdomain, as Kubernetes wants node names. */
static bool valid_node_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
		if (!alnum && !(c == '-' && !edge) && !(c == '.' && !edge))
			return false;
	}
	return true;
}

/* The hostname, lowercased, into buf; false when there is none. */
static bool host_name(char *buf, size_t len)
{
	if (gethostname(buf, len - 1) != 0)
		return false;
	buf[len - 1] = '\0';
	for (char *p = buf; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return buf[0] != '\0';
}

typedef struct agent_opts {
	const char *sysfs, *format, *node;
} agent_opts_t;

/* Parses the options of `discover` (argv[0] is "discover").  Returns -1
 * when they are good, else the exit code (0 for --help). */
static int agent_parse(int argc, char **argv, agent_opts_t *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t klen = eq && a[0] == '-' ? (size_t)(eq - a) : strlen(a);
		const char **dst = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			agent_usage(stdout);
			return MU_EXIT_OK;
		}
		if (klen == 7 && !strncmp(a, "--sysfs", klen))
			dst = &o->sysfs;
		else if (klen == 8 && !strncmp(a, "--format", klen))
			dst = &o->format;
		else if (klen == 11 && !strncmp(a, "--node-name", klen))
			dst = &o->node;
		if (!dst) {
			fprintf(stderr, "muster agent: %s '%s' (see --help)\n",
				a[0] == '-' ? "unknown option" : "unexpected argument", a);
			return MU_EXIT_USAGE;
		}
		if (eq) {
			*dst = eq + 1;
		} else if (i + 1 < argc) {
			*dst = argv[++i];
		} else {
			fprintf(stderr, "muster agent: %s needs a value (see --help)\n", a);
			return MU_EXIT_USAGE;
		}
	}
	return -1;
}

/* `muster agent discover ...`. */
static int agent_discover(int argc, char **argv)
{
	agent_opts_t o = {"/sys", "json", NULL};
	int rc = agent_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	mu_topo_format_t fmt;
	if (!strcmp(o.format, "json")) {
		fmt = MU_TOPO_JSON;
	} else if (!strcmp(o.format, "yaml")) {
		fmt = MU_TOPO_YAML;
	} else {
		fprintf(stderr, "muster agent: bad value for --format: '%s' (json or yaml)\n",
			o.format);
		return MU_EXIT_USAGE;
	}
	char host[256];
	if (!o.node) {
		if (!host_name(host, sizeof host)) {
			fprintf(stderr, "muster agent: no hostname; pass --node-name NAME\n");
			return MU_EXIT_USAGE;
		}
		o.node = host;
	}
	if (!valid_node_name(o.node)) {
		fprintf(stderr, "muster agent: '%.300s' is not a valid node name "
			"(lowercase DNS-1123 subdomain); pass --node-name NAME\n", o.node);
		return MU_EXIT_USAGE;
	}
	mu_topo_t t;
	mu_diag_t diag;
	mu_topo_init(&t);
	rc = mu_topo_discover(o.sysfs, &t, &diag);
	if (rc != MU_OK) {
		fprintf(stderr, "muster agent: %s\n", diag.msg[0] ? diag.msg : mu_strerror(rc));
		return MU_EXIT_USAGE;
	}
	if (t.notes[0])
		fprintf(stderr, "muster agent: note: %s\n", t.notes);
	rc = mu_topo_write(&t, o.node, fmt, stdout);
	mu_topo_release(&t);
	if (rc == MU_OK && fflush(stdout) != 0)
		rc = MU_EIO;
	if (rc != MU_OK) {
		fprintf(stderr, "muster agent: cannot write the output: %s\n", mu_strerror(rc));
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

int mu_cmd_agent(int argc, char **argv)
{
	if (argc < 2) {
		agent_usage(stderr);
		return MU_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		agent_usage(stdout);
		return MU_EXIT_OK;
	}
	if (!strcmp(argv[1], "discover"))
		return agent_discover(argc - 1, argv + 1);
	fprintf(stderr, "muster agent: unknown subcommand '%s' (see --help)\n", argv[1]);
	return MU_EXIT_USAGE;
}
