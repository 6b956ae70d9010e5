/*
 * cmd_up.c - `muster up`: runs the standalone control plane (a Kubernetes
 * API subset with simulated nodes, include/muster/apiserver.h) until
 * SIGINT or SIGTERM, after writing a kubeconfig for kubectl and printing
 * how to use it.
 *
 * The signal handler only sets the one flag below; the main thread polls
 * it every 100 ms and then stops the server in an orderly way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/apiserver.h"

static volatile sig_atomic_t up_stop;

static void on_signal(int sig)
{
	(void)sig;
	up_stop = 1;
}

static void up_usage(FILE *f)
{
	fputs("usage: muster up [--cluster FILE] [--listen 127.0.0.1:PORT] [--data DIR] [options]\n"
	      "\n"
	      "Serves the subset of the Kubernetes API that schedulers and kubectl use, with\n"
	      "simulated nodes from the cluster file, until interrupted.  Objects are kept in\n"
	      "DIR/muster.db (SQLite); a kubeconfig for kubectl is written to DIR/kubeconfig.\n"
	      "\n"
	      "  --cluster FILE       nodes (and queues) to simulate, in any cluster format\n"
	      "  --listen HOST:PORT   address to listen on (default 127.0.0.1:6443; port 0 = any)\n"
	      "  --data DIR           data directory (default ./muster-data)\n"
	      "  --kubeconfig FILE    where to write the kubeconfig (default DIR/kubeconfig)\n"
	      "  --tls-cert FILE      serve HTTPS with this PEM certificate ...\n"
	      "  --tls-key FILE       ... and key; a bearer token is then required\n"
	      "  --token TOKEN        the bearer token (default with TLS: a random one)\n"
	      "  --no-fsync           do not fsync commits (still safe against kill -9,\n"
	      "                       not against power loss)\n"
	      "  --heartbeat SECONDS  node status heartbeat period (default 60)\n"
	      "  --watch-cache N      recent changes kept for watches (default 100000)\n"
	      "  --max-watchers N     concurrent watches (default 256)\n"
	      "  --quiet              do not log requests\n"
	      "  -h, --help           print this help\n",
	      f);
}

/* A random 32-hex-digit token. */
static char *random_token(void)
{
	unsigned char r[16];
	int fd = open("/dev/urandom", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, r, sizeof r) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof r)
		return NULL;
	char *t = malloc(33);
	for (int i = 0; t && i < 16; i++)
		snprintf(t + 2 * i, 3, "%02x", r[i]);
	return t;
}

/* Parses a positive integer option value. */
static int int_arg(const char *opt, const char *v, long max, long *out)
{
	char *end;
	errno = 0;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || errno || *end || end == v || x <= 0 || x > max) {
		fprintf(stderr, "muster up: %s: expected an integer from 1 to %ld\n", opt, max);
		return MU_EXIT_USAGE;
	}
	*out = x;
	return MU_EXIT_OK;
}

static int parse_args(int argc, char **argv, mu_apiserver_opts_t *o, const char **kubeconfig)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long x;
		bool takes = true;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			up_usage(stdout);
			return -1;
		} else if (!strcmp(a, "--cluster")) {
			o->cluster_file = v;
		} else if (!strcmp(a, "--listen")) {
			o->listen = v;
		} else if (!strcmp(a, "--data")) {
			o->data_dir = v;
		} else if (!strcmp(a, "--kubeconfig")) {
			*kubeconfig = v;
		} else if (!strcmp(a, "--tls-cert")) {
			o->tls_cert = v;
		} else if (!strcmp(a, "--tls-key")) {
			o->tls_key = v;
		} else if (!strcmp(a, "--token")) {
			o->token = v;
		} else if (!strcmp(a, "--heartbeat")) {
			if (int_arg(a, v, 86400, &x))
				return MU_EXIT_USAGE;
			o->heartbeat_s = (int)x;
		} else if (!strcmp(a, "--watch-cache")) {
			if (int_arg(a, v, 10000000, &x))
				return MU_EXIT_USAGE;
			o->watch_cache = (int)x;
		} else if (!strcmp(a, "--max-watchers")) {
			if (int_arg(a, v, 100000, &x))
				return MU_EXIT_USAGE;
			o->max_watchers = (int)x;
		} else if (!strcmp(a, "--no-fsync")) {
			o->fsync = 0;
			takes = false;
		} else if (!strcmp(a, "--quiet")) {
			o->quiet = 1;
			takes = false;
		} else {
			fprintf(stderr, "muster up: unknown option '%s'\n", a);
			up_usage(stderr);
			return MU_EXIT_USAGE;
		}
		if (takes && !v) {
			fprintf(stderr, "muster up: %s needs a value\n", a);
			return MU_EXIT_USAGE;
		}
		i += takes;
	}
	return MU_EXIT_OK;
}

int mu_cmd_up(int argc, char **argv)
{
	mu_apiserver_opts_t o;
	mu_apiserver_opts_defaults(&o);
	const char *kubeconfig = NULL;
	int rc = parse_args(argc, argv, &o, &kubeconfig);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	char *token = NULL;
	if (o.tls_cert && !o.token) {
		token = random_token();
		o.token = token;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	mu_apiserver_t *s;
	char err[1024];
	if (mu_apiserver_start(&o, &s, err, sizeof err) != MU_OK) {
		fprintf(stderr, "muster up: %s\n", err);
		free(token);
		return MU_EXIT_USAGE;
	}
	char kc[4096];
	snprintf(kc, sizeof kc, "%s/kubeconfig", o.data_dir);
	if (!kubeconfig)
		kubeconfig = kc;
	if (mu_apiserver_write_kubeconfig(s, kubeconfig) != MU_OK) {
		fprintf(stderr, "muster up: cannot write %s\n", kubeconfig);
		mu_apiserver_stop(s);
		free(token);
		return MU_EXIT_FAIL;
	}
	printf("muster up: serving the Kubernetes API on %s://%.*s:%d (data in %s)\n",
	       o.tls_cert ? "https" : "http", (int)(strrchr(o.listen, ':') - o.listen), o.listen,
	       mu_apiserver_port(s), o.data_dir);
	printf("  export KUBECONFIG=%s\n  kubectl get nodes\nStop with Ctrl-C.\n", kubeconfig);
	fflush(stdout);
	while (!up_stop) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "muster up: stopping\n");
	mu_apiserver_stop(s);
	free(token);
	return MU_EXIT_OK;
}
