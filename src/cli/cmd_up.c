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

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "cli/cli.h"
#include "muster/apiserver.h"

static void up_usage(FILE *f)
{
	fputs("usage: muster up [--cluster FILE] [--listen 127.0.0.1:PORT] [--data DIR] [options]\n"
	      "\n"
	      "Serves the subset of the Kubernetes API that schedulers and kubectl use, with\n"
	      "simulated nodes from the cluster file, until interrupted.  Objects are kept in\n"
	      "DIR/muster.db (SQLite); a kubeconfig for kubectl is written to DIR/kubeconfig.\n"
	      "It always serves HTTPS and asks every client for its token (both kept in DIR\n"
	      "and written into the kubeconfig): that token is the administrator's; more\n"
	      "users can be listed in DIR/tokens.csv (token,user,uid,\"group1,group2\"), and\n"
	      "`kubectl create token SA` makes service account tokens.  Other users may do\n"
	      "what the RBAC Roles and ClusterRoles bound to them grant.\n"
	      "\n"
	      "  --cluster FILE       nodes (and queues) to simulate, in any cluster format\n"
	      "  --listen HOST:PORT   address to listen on (default 127.0.0.1:6443; port 0 = any)\n"
	      "  --data DIR           data directory (default ./muster-data)\n"
	      "  --kubeconfig FILE    where to write the kubeconfig (default DIR/kubeconfig)\n"
	      "  --tls-cert FILE      the PEM certificate to serve (default: DIR/tls.crt, made\n"
	      "                       at the first start, valid from an hour before) ...\n"
	      "  --tls-key FILE       ... and its key (default DIR/tls.key)\n"
	      "  --token TOKEN        the bearer token every request but /healthz, /readyz,\n"
	      "                       /livez and /version must carry (default: DIR/token,\n"
	      "                       made at the first start; it goes into the kubeconfig)\n"
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

/* Writes PEM text through fn to path, made 0600; false on failure. */
static bool pem_write(const char *path, int (*fn)(BIO *, void *), void *x)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return false;
	FILE *f = fdopen(fd, "w");
	BIO *b = f ? BIO_new_fp(f, BIO_NOCLOSE) : NULL;
	bool ok = b && fn(b, x) == 1;
	BIO_free(b);
	if (f)
		ok = fclose(f) == 0 && ok;
	else
		close(fd);
	return ok;
}

static int pem_key(BIO *b, void *k)
{
	return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

static int pem_crt(BIO *b, void *x)
{
	return PEM_write_bio_X509(b, x);
}

/* A self-signed P-256 certificate for san, valid from an hour ago (as
 * client-go's self-signed certificates are, so that a client whose clock
 * is a little behind still accepts it) for ten years.  Writes crt and key
 * (0600); true on success.  Owns and frees everything it makes. */
static bool make_cert(const char *san, const char *crt, const char *key)
{
	EVP_PKEY *pk = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_EXTENSION *ext = NULL;
	bool ok = pk && x && X509_set_version(x, 2) &&
		  ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(time(NULL) & 0x7fffffff)) &&
		  X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
		  X509_gmtime_adj(X509_getm_notAfter(x), 3650L * 86400) && X509_set_pubkey(x, pk);
	X509_NAME *nm = ok ? X509_get_subject_name(x) : NULL;
	ok = ok && nm &&
	     X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)"muster-up", -1, -1, 0) &&
	     X509_set_issuer_name(x, nm);
	if (ok) {
		X509V3_CTX ctx;
		X509V3_set_ctx_nodb(&ctx);
		X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
		ok = ext && X509_add_ext(x, ext, -1);
	}
	ok = ok && X509_sign(x, pk, EVP_sha256()) > 0 && pem_write(key, pem_key, pk) &&
	     pem_write(crt, pem_crt, x);
	X509_EXTENSION_free(ext);
	X509_free(x);
	EVP_PKEY_free(pk);
	return ok;
}

/* The server's own certificate when none is given: DIR/tls.crt and
 * DIR/tls.key, made once (a self-signed P-256 certificate for 127.0.0.1,
 * localhost and the --listen address, valid from an hour ago for ten
 * years) and reused after.  The kubeconfig carries the certificate as its
 * CA.  Sets the paths (static buffers of the caller) or fails with a
 * message. */
static int data_cert(const char *dir, const char *listen, char *crt, char *key, size_t len)
{
	snprintf(crt, len, "%s/tls.crt", dir);
	snprintf(key, len, "%s/tls.key", dir);
	if (access(crt, R_OK) == 0 && access(key, R_OK) == 0)
		return MU_EXIT_OK;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "muster up: cannot create %s: %s\n", dir, strerror(errno));
		return MU_EXIT_FAIL;
	}
	char host[64] = "127.0.0.1", san[160];
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	if (colon && (size_t)(colon - listen) < sizeof host && colon > listen)
		snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
	snprintf(san, sizeof san, "IP:127.0.0.1,DNS:localhost%s%s",
		 strcmp(host, "127.0.0.1") && strcmp(host, "0.0.0.0") ? ",IP:" : "",
		 strcmp(host, "127.0.0.1") && strcmp(host, "0.0.0.0") ? host : "");
	if (!make_cert(san, crt, key)) {
		unlink(crt);
		unlink(key);
		fprintf(stderr, "muster up: cannot make a TLS certificate for %s in %s "
				"(pass --tls-cert and --tls-key)\n", san, dir);
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
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
	/* every listener uses TLS: without --tls-cert, the server's own
	 * certificate in DIR */
	char crt[4096], key[4096];
	if (!o.tls_cert && !o.tls_key) {
		int crc = data_cert(o.data_dir, o.listen, crt, key, sizeof crt);
		if (crc)
			return crc;
		o.tls_cert = crt;
		o.tls_key = key;
	}
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
