/*
 * apiserver.h - `muster up`: a small control plane that speaks the subset of
 * the Kubernetes API that schedulers and kubectl use, with simulated nodes.
 *
 * A mu_apiserver_t is one server: an HTTP listener (libmicrohttpd, one thread
 * per connection), a durable object store (SQLite in WAL mode under the data
 * directory, one global monotonic resourceVersion), a watch cache of recent
 * changes, and a controller thread that runs the simulated kubelets of the
 * cluster file's nodes and a minimal batch/v1 Job controller.  Everything it
 * owns is freed by mu_apiserver_stop().  See docs/apiserver.md.
 *
 * A small blocking HTTP/1.1 client (mu_apiclient_*) talks to such a server
 * over plain HTTP on loopback; `muster node` and the benchmark use it.
 */
#ifndef MUSTER_APISERVER_H
#define MUSTER_APISERVER_H

#include <stddef.h>
#include <stdint.h>

#include "muster/error.h"

typedef struct mu_apiserver mu_apiserver_t;

typedef struct mu_apiserver_opts {
	const char *listen;       /* "127.0.0.1:PORT"; port 0 picks a free one */
	const char *data_dir;     /* created if missing; holds muster.db */
	const char *cluster_file; /* nodes to simulate; NULL = none */
	const char *tls_cert;     /* PEM files; both or neither (plain HTTP) */
	const char *tls_key;
	const char *token;        /* bearer token every request must carry; NULL = none */
	const char *client_ca;    /* PEM CA whose client certificates name users (CN) and
				     groups (O), as kube-apiserver's --client-ca-file; NULL = none */
	const char *ca_key;       /* PEM key of client_ca: approved CertificateSigningRequests for
				     kube's signers are signed with it (kube-controller-manager's
				     --cluster-signing-key-file); NULL = they stay unsigned */
	const char *ca_cert;      /* PEM CA the kubeconfig trusts; NULL = tls_cert */
	const char *client_cert;  /* PEM client certificate and key for the kubeconfig's */
	const char *client_key;   /* user; NULL = the token */
	const char *sa_key;       /* PEM RSA or EC key service account tokens are signed with (kube's
				     --service-account-signing-key-file); NULL = one made in memory */
	const char *const *sa_verify_keys; /* PEM files whose keys verify service account tokens
				     (kube's repeatable --service-account-key-file); none = sa_key's own */
	int n_sa_verify_keys;
	int64_t sa_max_exp_s;     /* kube's --service-account-max-token-expiration: a TokenRequest's
				     expirationSeconds above it is shortened to it; 0 = none */
	size_t max_body;          /* bytes of a request body; larger is 413 */
	int max_watchers;         /* concurrent watches; more get 429 */
	int max_connections;      /* concurrent connections */
	int watch_cache;          /* recent changes kept for watches from a version */
	int64_t list_limit;       /* items of one list answer when no limit is asked */
	int heartbeat_s;          /* simulated node status heartbeat period */
	int event_ttl_s;          /* Events go this long after their last write, as
				     kube-apiserver's --event-ttl (3600); 0 keeps them */
	int fsync;                /* 1: fsync every commit (power-loss safe); 0: survive process crashes only */
	int quiet;                /* no request log on stderr */
	const char *audit_policy; /* kube's --audit-policy-file (audit.k8s.io/v1 Policy); NULL = no audit */
	const char *audit_log;    /* kube's --audit-log-path: a file, or "-" for stdout; NULL = no audit */
} mu_apiserver_opts_t;

/* Fills o with the defaults: 127.0.0.1:6443... see docs/apiserver.md. */
void mu_apiserver_opts_defaults(mu_apiserver_opts_t *o);

/* Opens the store, loads the cluster file, starts listening and the
 * controllers.  On error returns a negative mu_err_t and writes a message to
 * err.  The caller owns *out and must pass it to mu_apiserver_stop(). */
int mu_apiserver_start(const mu_apiserver_opts_t *o, mu_apiserver_t **out,
		       char *err, size_t errlen);

/* The TCP port it listens on. */
int mu_apiserver_port(const mu_apiserver_t *s);

/* Writes a kubeconfig for kubectl that points at the server (with the CA
 * certificate, and the client certificate or else the token, when TLS is
 * on).  Returns MU_OK or MU_EIO. */
int mu_apiserver_write_kubeconfig(const mu_apiserver_t *s, const char *path);

/* Stops listening, ends every watch, waits for the threads, closes the
 * store and frees s.  NULL is a no-op. */
/* The TLS sessions whose first authenticated request came so far: after a
 * full handshake (*full) or resumed from a session ticket (*resumed). */
void mu_apiserver_tls_counts(mu_apiserver_t *s, uint64_t *full, uint64_t *resumed);
void mu_apiserver_stop(mu_apiserver_t *s);

/* --- a minimal client (plain HTTP, loopback) ---------------------------- */

typedef struct mu_apiclient_resp {
	int status;    /* HTTP status code */
	char *body;    /* NUL-terminated, owned by the caller (free()) */
	size_t len;
} mu_apiclient_resp_t;

/* Parses "http://HOST:PORT" (HOST a dotted IPv4 address or "localhost") into
 * a host and port.  Returns MU_OK or MU_EINVAL. */
int mu_apiclient_parse_url(const char *url, char *host, size_t hostlen, int *port);

/* Sends one request (body may be NULL) with Content-Type ctype and reads the
 * whole answer, de-chunking it.  Connect and read time out after timeout_ms.
 * Answers larger than 256 MiB are an error (MU_ELIMIT). */
int mu_apiclient_do(const char *host, int port, const char *method,
		    const char *path, const char *ctype, const char *body,
		    const char *token, int timeout_ms, mu_apiclient_resp_t *out);

#endif
