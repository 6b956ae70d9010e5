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
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/apiserver.h"
#include "muster/util.h"

static void up_usage(FILE *f)
{
	fputs("usage: muster up [--cluster FILE] [--listen 127.0.0.1:PORT] [--data DIR] [options]\n"
	      "\n"
	      "Serves the subset of the Kubernetes API that schedulers and kubectl use, with\n"
	      "simulated nodes from the cluster file, until interrupted.  Objects are kept in\n"
	      "DIR/muster.db (SQLite); a kubeconfig for kubectl is written to DIR/kubeconfig.\n"
	      "It always serves HTTPS and authenticates every client.  At the first start it\n"
	      "makes its own CA (DIR/ca.crt), which signs its serving certificate (DIR/tls.crt)\n"
	      "and the kubeconfig's client certificate (DIR/admin.crt: user admin, group\n"
	      "system:masters); a client certificate the CA signed names its user (CN) and\n"
	      "groups (O).  Bearer tokens work too: DIR/token is the administrator's; more\n"
	      "users can be listed in DIR/tokens.csv (token,user,uid,\"group1,group2\"), and\n"
	      "`kubectl create token SA` makes service account tokens (JWTs signed with\n"
	      "DIR/sa.key).  Other users may do what the RBAC Roles and ClusterRoles bound to\n"
	      "them grant, and may grant others no more than that.\n"
	      "\n"
	      "  --cluster FILE       nodes (and queues) to simulate, in any cluster format\n"
	      "  --listen HOST:PORT   address to listen on (default 127.0.0.1:6443; port 0 = any)\n"
	      "  --data DIR           data directory (default ./muster-data)\n"
	      "  --kubeconfig FILE    where to write the kubeconfig (default DIR/kubeconfig)\n"
	      "  --tls-cert FILE      the PEM certificate to serve (default: DIR/tls.crt, made\n"
	      "                       at the first start, signed by DIR/ca.crt) ...\n"
	      "  --tls-key FILE       ... and its key (default DIR/tls.key)\n"
	      "  --token TOKEN        the administrator's bearer token (default: DIR/token,\n"
	      "                       made at the first start)\n"
	      "  --service-account-signing-key-file FILE\n"
	      "                       the PEM private key service account tokens are signed\n"
	      "                       with: RSA of 2048-8192 bits (RS256), P-256 (ES256),\n"
	      "                       P-384 (ES384) or P-521 (ES512) (default DIR/sa.key,\n"
	      "                       a P-256 key made at the first start)\n"
	      "  --service-account-key-file FILE\n"
	      "                       PEM keys (public, private or certificates; RSA or\n"
	      "                       EC as above) that verify service\n"
	      "                       account tokens; repeat it to accept several, as when\n"
	      "                       rotating (default: the signing key); the JWKS lists them\n"
	      "  --service-account-max-token-expiration DUR\n"
	      "                       a TokenRequest asking longer is shortened to DUR\n"
	      "                       (1h to 2^32 s, as kube-apiserver; default: no limit)\n"
	      "  --no-fsync           do not fsync commits (still safe against kill -9,\n"
	      "                       not against power loss)\n"
	      "  --audit-policy-file FILE\n"
	      "                       an audit.k8s.io/v1 Policy (YAML or JSON): which requests\n"
	      "                       are logged, at which level (kube-apiserver's flag)\n"
	      "  --audit-log-path FILE\n"
	      "                       where audit Events go, one JSON line each; - is stdout\n"
	      "                       (appended, made 0600; both flags or no audit log)\n"
	      "  --heartbeat SECONDS  node status heartbeat period (default 60)\n"
	      "  --event-ttl DUR      Events go this long after their last write\n"
	      "                       (default 1h, as kube-apiserver; 0 keeps them)\n"
	      "  --watch-cache N      at most this many recent changes kept for watches\n"
	      "                       (those of the last 75 s, or the last 1000;\n"
	      "                       default 100000)\n"
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

/* The server's bearer token: DIR/token when it holds one (so a restart keeps
 * the kubeconfigs that were handed out working), else a new random one
 * written there with mode 0600.  Returns a malloc'd token or NULL. */
static char *data_token(const char *dir)
{
	char path[4096], buf[128];
	snprintf(path, sizeof path, "%s/token", dir);
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n >= 16) {
			buf[n] = '\0';
			buf[strcspn(buf, "\r\n")] = '\0';
			if (strlen(buf) >= 16)
				return strdup(buf);
		}
	}
	char *t = random_token();
	if (!t)
		return NULL;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return t;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		if (write(fd, t, strlen(t)) != (ssize_t)strlen(t) || write(fd, "\n", 1) != 1)
			fprintf(stderr, "muster up: cannot write %s\n", path);
		close(fd);
	}
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

/* Options that outlive parse_args: the service account keys given. */
typedef struct up_keys {
	const char *sign;
	const char *verify[16];
	int nverify;
} up_keys_t;

static int parse_args(int argc, char **argv, mu_apiserver_opts_t *o, const char **kubeconfig, up_keys_t *keys)
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
		} else if (!strcmp(a, "--service-account-signing-key-file")) {
			keys->sign = v;
		} else if (!strcmp(a, "--service-account-max-token-expiration")) {
			int64_t ms = 0;
			if (!v || mu__parse_duration(v, &ms) || ms < 3600 * 1000 || ms > ((int64_t)1 << 32) * 1000) {
				fprintf(stderr, "muster up: --service-account-max-token-expiration %s: the "
						"service-account-max-token-expiration must be between 1 hour and 2^32 seconds\n",
					v ? v : "");
				return MU_EXIT_USAGE;
			}
			o->sa_max_exp_s = ms / 1000;
		} else if (!strcmp(a, "--service-account-key-file")) {
			if (keys->nverify >= (int)(sizeof keys->verify / sizeof *keys->verify)) {
				fprintf(stderr, "muster up: at most 16 --service-account-key-file\n");
				return MU_EXIT_USAGE;
			}
			keys->verify[keys->nverify++] = v;
		} else if (!strcmp(a, "--audit-log-path")) {
			o->audit_log = v;
		} else if (!strcmp(a, "--audit-policy-file")) {
			o->audit_policy = v;
		} else if (!strcmp(a, "--heartbeat")) {
			if (int_arg(a, v, 86400, &x))
				return MU_EXIT_USAGE;
			o->heartbeat_s = (int)x;
		} else if (!strcmp(a, "--event-ttl")) {
			int64_t ms;
			if (!v || mu__parse_duration(v, &ms) || ms < 0 || ms > (int64_t)365 * 86400000) {
				fprintf(stderr, "muster up: --event-ttl %s: expected a duration (30m, 1h, 0 keeps Events)\n",
					v ? v : "(missing)");
				return MU_EXIT_USAGE;
			}
			o->event_ttl_s = (int)((ms + 999) / 1000);
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
	up_keys_t keys = {0};
	int rc = parse_args(argc, argv, &o, &kubeconfig, &keys);
	if (rc)
		return rc < 0 ? MU_EXIT_OK : rc;
	/* every listener uses TLS: without --tls-cert, the server's own
	 * certificate in DIR, signed by its own CA (up_certs.c), which also
	 * signs the kubeconfig's client certificate */
	mu__up_certs_t certs;
	int crc = mu__cli_up_certs(o.data_dir, o.listen, !o.tls_cert && !o.tls_key, &certs);
	if (crc)
		return crc;
	if (!o.tls_cert && !o.tls_key) {
		o.tls_cert = certs.tls_crt;
		o.tls_key = certs.tls_key;
		o.ca_cert = certs.ca;
	}
	o.client_ca = certs.ca;
	o.ca_key = certs.ca_key;
	o.client_cert = certs.admin_crt;
	o.client_key = certs.admin_key;
	o.sa_key = keys.sign ? keys.sign : certs.sa_key;
	o.sa_verify_keys = keys.verify;
	o.n_sa_verify_keys = keys.nverify;
	/* authentication is always on, loopback included: without --token the
	 * server's token lives in DIR/token and goes into the kubeconfig */
	char *token = NULL;
	if (!o.token) {
		token = data_token(o.data_dir);
		if (!token) {
			fprintf(stderr, "muster up: cannot make a token (/dev/urandom)\n");
			return MU_EXIT_FAIL;
		}
		o.token = token;
	}
	volatile sig_atomic_t *up_stop = mu__cli_stop_on_signals();
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
	while (!*up_stop) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "muster up: stopping\n");
	mu_apiserver_stop(s);
	free(token);
	return MU_EXIT_OK;
}
