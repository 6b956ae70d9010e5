/*
 * server.c - the life of a mu_apiserver_t: options, start (store, default
 * namespaces, simulated nodes, controllers, listener), the controller
 * thread, the kubeconfig, and an orderly stop.
 *
 * The controller thread follows the store's change stream like any watch
 * and feeds each change to the Job controller and the simulated kubelets;
 * between changes it runs their timers.  The kube-controller-manager
 * loops that need no state of their own run here too: the CSR cleaner
 * (hourly), the serviceaccounts controller's `default` ServiceAccount
 * of each namespace (sactl.c), the root-ca-cert-publisher's
 * kube-root-ca.crt ConfigMap of each namespace (rootca.c), the bootstrap token cleaner (tokenclean.c: at start, after a
 * kube-system Secret write, and when the next token expires) and the
 * ClusterRole aggregation (rbacagg.c: after any ClusterRole change).  If it
 * ever falls behind the watch ring it re-reads everything (the controllers
 * are level-triggered and idempotent).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/api_int.h"
#include "apiserver/audit.h"
#include "apiserver/auth.h"
#include "apiserver/crd.h"

void mu_apiserver_opts_defaults(mu_apiserver_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->listen = "127.0.0.1:6443";
	o->data_dir = "muster-data";
	o->max_body = 3 * 1024 * 1024;
	o->max_watchers = 256;
	o->max_connections = 512;
	o->watch_cache = 100000;
	o->list_limit = 100000;
	o->heartbeat_s = 60;
	o->event_ttl_s = 3600;
	o->fsync = 1;
}

/* Reads a whole (small) file; NULL with a message on error. */
static char *slurp(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = malloc(1 << 20);
	size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	if (!buf || n == 0) {
		free(buf);
		snprintf(err, errlen, "cannot read %s (empty or too large)", path);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* "HOST:PORT" into addr; HOST an IPv4 literal or localhost. */
static int parse_listen(const char *l, struct sockaddr_in *addr, char *host, size_t hostlen)
{
	const char *colon = strrchr(l, ':');
	if (!colon || (size_t)(colon - l) >= hostlen)
		return MU_EINVAL;
	memcpy(host, l, (size_t)(colon - l));
	host[colon - l] = '\0';
	if (!strcmp(host, "localhost"))
		snprintf(host, hostlen, "127.0.0.1");
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || colon[1] == '\0' || port < 0 || port > 65535)
		return MU_EINVAL;
	memset(addr, 0, sizeof *addr);
	addr->sin_family = AF_INET;
	addr->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &addr->sin_addr) == 1 ? MU_OK : MU_EINVAL;
}

static void seed(mu_apiserver_t *s)
{
	int fd = open("/dev/urandom", O_RDONLY);
	uint64_t v = 0;
	if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
	}
	if (fd >= 0)
		close(fd);
	s->rnd = v | 1;
}

/* Creates default, kube-system, kube-public and kube-node-lease. */
static int default_namespaces(mu_apiserver_t *s)
{
	static const char *const names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
	mu__wtx_t *tx;
	mu__store_begin(s->store, &tx);
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		mu__obj_t *o = mu__store_get(s->store, MU__RT_NAMESPACES, NULL, names[i]);
		if (o) {
			mu__obj_unref(o);
			continue;
		}
		json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				       "metadata", "name", names[i]);
		mu__create(s, tx, MU__RT_NAMESPACES, ns, NULL);
		json_decref(ns);
	}
	return mu__store_commit(tx);
}

/* Writes the Events the disruption controller recorded, as
 * kube-controller-manager's recorder does: through its correlator, one
 * transaction.  Controller thread. */
static void pdb_events(mu_apiserver_t *s)
{
	json_t *evs = mu__pdbc_take_events(s->pdbc);
	mu__wtx_t *tx;
	if (json_array_size(evs) > 0 && mu__store_begin(s->store, &tx) == MU_OK) {
		size_t i;
		json_t *e;
		json_array_foreach(evs, i, e)
			mu__evcorr_record(s->pdbev, s, tx, e, "kube-controller-manager", mu__mono_ms());
		mu__store_commit(tx);
	}
	json_decref(evs);
}

/* Every controller reads the store again from scratch: at the loop's
 * start, and when the store's event ring passed the loop's cursor
 * (MU_ERANGE).  O(each controller's resync: its objects). */
static void ctl_resync(mu_apiserver_t *s)
{
	mu__jobctl_resync(s->jc);
	mu__claimctl_resync(s->cc);
	mu__devtaint_resync(s->dt);
	mu__sim_resync(s->sim, mu__mono_ms());
	mu__evttl_resync(s->evttl, mu__mono_ms());
	mu__gc_resync(s->gc);
	mu__pdbc_resync(s->pdbc);
	mu__csr_resync(s, mu__authz_sub);
	mu__sactl_resync(s);
	mu__rootca_resync(s);
}

static void *ctl_main(void *arg)
{
	mu_apiserver_t *s = arg;
	int64_t cursor = mu__store_rv(s->store);
	ctl_resync(s);
	mu__csr_clean(s);
	int64_t clean_at = mu__mono_ms() + 3600 * 1000; /* csrcleaner's pollingInterval */
	int64_t token_at = mu__tokenclean(s, mu__now_s()); /* the next bootstrap token to expire */
	bool agg = true; /* a ClusterRole changed: aggregate again */
	bool sign = true; /* a bootstrap token or cluster-info changed: sign again (bootsign.c) */
	int64_t jobs_next = -1; /* ms until the Job controller's next batched job */
	mu__wev_t evs[128];
	for (;;) {
		if (mu__mono_ms() >= clean_at) {
			mu__csr_clean(s);
			clean_at = mu__mono_ms() + 3600 * 1000;
		}
		if (mu__now_s() >= token_at)
			token_at = mu__tokenclean(s, mu__now_s());
		int64_t next = mu__sim_tick(s->sim, mu__mono_ms());
		int wait = next < 5 ? 5 : next > 500 ? 500 : (int)next;
		if (wait > 100 && (mu__gc_busy(s->gc) || mu__pdbc_busy(s->pdbc)))
			wait = 100;
		if (jobs_next >= 0 && jobs_next < wait)
			wait = jobs_next < 5 ? 5 : (int)jobs_next;
		int n = mu__store_wait(s->store, &cursor, evs, 128, wait);
		if (n == MU_ESTATE)
			break;
		if (n == MU_ERANGE) {
			cursor = mu__store_rv(s->store);
			ctl_resync(s);
			token_at = 0;
			agg = true;
			sign = true;
			continue;
		}
		for (int i = 0; i < n; i++) {
			mu__jobctl_event(s->jc, &evs[i], mu__mono_ms());
			mu__claimctl_event(s->cc, &evs[i]);
			mu__devtaint_event(s->dt, &evs[i]);
			mu__sim_event(s->sim, &evs[i], mu__mono_ms());
			mu__gc_event(s->gc, &evs[i]);
			mu__evttl_event(s->evttl, &evs[i], mu__mono_ms());
			mu__pdbc_event(s->pdbc, &evs[i]);
			mu__sactl_event(s, &evs[i]);
			mu__rootca_event(s, &evs[i]);
			if (evs[i].type != MU__EV_DELETED)
				mu__csr_sign(s, evs[i].obj, mu__authz_sub);
			if (mu__tokenclean_event(&evs[i]))
				token_at = 0;
			agg = agg || mu__rbacagg_event(&evs[i]);
			sign = sign || mu__bootsign_event(&evs[i]);
		}
		mu__wev_release(evs, n > 0 ? n : 0);
		jobs_next = mu__jobctl_sync(s->jc, mu__mono_ms());
		mu__claimctl_sync(s->cc);
		mu__devtaint_sync(s->dt);
		mu__gc_sync(s->gc);
		mu__evttl_sync(s->evttl, mu__mono_ms());
		mu__pdbc_sync(s->pdbc);
		pdb_events(s);
		if (agg)
			(void)mu__rbacagg_sync(s);
		agg = false;
		if (sign)
			mu__bootsign_sync(s);
		sign = false;
	}
	return NULL;
}

/* Copies the options and reads the TLS files. */
static int setup(mu_apiserver_t *s, const mu_apiserver_opts_t *o, struct sockaddr_in *addr, char *err,
		 size_t errlen)
{
	s->o = *o;
	char host[64];
	if (parse_listen(o->listen, addr, host, sizeof host) != MU_OK) {
		snprintf(err, errlen, "--listen %s: expected IPV4:PORT, for example 127.0.0.1:6443", o->listen);
		return MU_EINVAL;
	}
	bool loopback = (ntohl(addr->sin_addr.s_addr) >> 24) == 127;
	if ((o->tls_cert != NULL) != (o->tls_key != NULL)) {
		snprintf(err, errlen, "TLS needs both a certificate and a key");
		return MU_EINVAL;
	}
	if (!loopback && (!o->tls_cert || !o->token)) {
		snprintf(err, errlen, "listening on %s (not loopback) needs TLS and a token", host);
		return MU_EINVAL;
	}
	s->listen_host = strdup(host);
	if (o->tls_cert) {
		if (!(s->tls_cert_pem = slurp(o->tls_cert, err, errlen)) ||
		    !(s->tls_key_pem = slurp(o->tls_key, err, errlen)))
			return MU_EIO;
		if (o->client_ca && !(s->client_ca_pem = slurp(o->client_ca, err, errlen)))
			return MU_EIO;
		if (s->client_ca_pem && mu__certcache_new(s->client_ca_pem, &s->certs) != MU_OK)
			return MU_ENOMEM;
		if (o->client_ca && o->ca_key && !(s->ca_key_pem = slurp(o->ca_key, err, errlen)))
			return MU_EIO;
		/* the root CA kube-controller-manager publishes: the one its
		 * kubeconfig trusts (mu_apiserver_write_kubeconfig's) */
		if (!(s->root_ca_pem = o->ca_cert ? slurp(o->ca_cert, err, errlen) : strdup(s->tls_cert_pem)))
			return MU_EIO;
	}
	if ((o->client_cert != NULL) != (o->client_key != NULL)) {
		snprintf(err, errlen, "a client certificate needs both a certificate and a key");
		return MU_EINVAL;
	}
	if (s->o.max_body == 0)
		s->o.max_body = 3 * 1024 * 1024;
	if (s->o.max_watchers <= 0)
		s->o.max_watchers = 256;
	if (s->o.max_connections <= 0)
		s->o.max_connections = 512;
	if (s->o.list_limit <= 0)
		s->o.list_limit = 100000;
	if (s->o.heartbeat_s <= 0)
		s->o.heartbeat_s = 60;
	return s->listen_host ? MU_OK : MU_ENOMEM;
}

int mu_apiserver_start(const mu_apiserver_opts_t *o, mu_apiserver_t **out, char *err, size_t errlen)
{
	*out = NULL;
	err[0] = '\0';
	mu_apiserver_t *s = calloc(1, sizeof *s);
	if (!s)
		return MU_ENOMEM;
	pthread_mutex_init(&s->rnd_mu, NULL);
	atomic_init(&s->watchers, 0);
	atomic_init(&s->stopping, false);
	seed(s);
	struct sockaddr_in addr;
	int rc = setup(s, o, &addr, err, errlen);
	if (rc == MU_OK)
		rc = mu__types_new(&s->types);
	mu__store_opts_t so = {.dir = o->data_dir, .ring = o->watch_cache, .fsync = o->fsync, .types = s->types};
	if (rc == MU_OK)
		rc = mu__store_open(&so, &s->store, err, errlen);
	bool said = false; /* err holds the key's message */
	if (rc == MU_OK && !(s->sakey = mu__sakey_load(o->sa_key))) {
		snprintf(err, errlen, "cannot read the service account signing key %s (a PEM private key: RSA of 2048-8192 bits, "
			 "P-256, P-384 or P-521)",
			 o->sa_key ? o->sa_key : "(in memory)");
		rc = MU_EIO;
		said = true;
	}
	for (int i = 0; rc == MU_OK && i < o->n_sa_verify_keys; i++)
		said = (rc = mu__sakey_verify_with(s->sakey, o->sa_verify_keys[i], err, errlen)) != MU_OK;
	if (rc == MU_OK && o->audit_policy && o->audit_log) /* kube: both or no audit log */
		said = (rc = mu__audit_open(o->audit_policy, o->audit_log, &s->audit, err, errlen)) != MU_OK;
	if (rc == MU_OK && (rc = default_namespaces(s)) == MU_OK)
		rc = mu__rbac_bootstrap(s);
	if (rc != MU_OK && s->store && !said)
		snprintf(err, errlen, "cannot write to the store: %s", mu_strerror(rc));
	if (rc == MU_OK)
		rc = mu__jobctl_new(s, &s->jc);
	if (rc == MU_OK)
		rc = mu__claimctl_new(s, &s->cc);
	if (rc == MU_OK)
		rc = mu__devtaint_new(s, &s->dt);
	if (rc == MU_OK)
		rc = mu__gc_new(s, &s->gc);
	if (rc == MU_OK)
		rc = mu__evttl_new(s, (int64_t)s->o.event_ttl_s * 1000, &s->evttl);
	if (rc == MU_OK)
		rc = mu__pdbc_new(s, &s->pdbc);
	if (rc == MU_OK)
		s->pdbev = mu__evcorr_new(); /* NULL: every Event new */
	if (rc == MU_OK)
		rc = mu__sim_new(s, o->cluster_file, &s->sim, err, errlen);
	if (rc == MU_OK && pthread_create(&s->ctl, NULL, ctl_main, s) != 0) {
		snprintf(err, errlen, "cannot start the controller thread");
		rc = MU_ENOMEM;
	}
	s->ctl_started = rc == MU_OK;
	if (rc == MU_OK)
		rc = mu__http_start(s, &addr, err, errlen);
	if (rc != MU_OK) {
		if (!err[0])
			snprintf(err, errlen, "%s", mu_strerror(rc));
		mu_apiserver_stop(s);
		return rc;
	}
	*out = s;
	return MU_OK;
}

int mu_apiserver_port(const mu_apiserver_t *s)
{
	return s->port;
}

void mu_apiserver_stop(mu_apiserver_t *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, true);
	if (s->store)
		mu__store_shutdown(s->store);
	mu__http_stop(s);
	if (s->ctl_started)
		pthread_join(s->ctl, NULL);
	mu__audit_close(s->audit); /* after the listener: every watch has completed */
	mu__sakey_free(s->sakey);
	mu__sim_free(s->sim);
	mu__jobctl_free(s->jc);
	mu__claimctl_free(s->cc);
	mu__devtaint_free(s->dt);
	mu__gc_free(s->gc);
	mu__evttl_free(s->evttl);
	mu__pdbc_free(s->pdbc);
	mu__evcorr_free(s->pdbev);
	mu__store_close(s->store);
	mu__types_free(s->types); /* after the store: its objects point at the types */
	free(s->listen_host);
	free(s->tls_cert_pem);
	free(s->tls_key_pem);
	free(s->client_ca_pem);
	mu__certcache_free(s->certs);
	free(s->ca_key_pem);
	free(s->root_ca_pem);
	pthread_mutex_destroy(&s->rnd_mu);
	free(s);
}

/* Writes "NAME: BASE64\n" to f: the PEM text of file path, or pem when
 * path is NULL.  False when the file cannot be read. */
static bool pem_field(FILE *f, const char *name, const char *path, const char *pem)
{
	char err[256];
	char *text = path ? slurp(path, err, sizeof err) : NULL;
	const char *p = path ? text : pem;
	char *b = p ? mu__b64enc(p, strlen(p)) : NULL;
	if (b)
		fprintf(f, "%s: %s\n", name, b);
	free(b);
	free(text);
	return b != NULL;
}

int mu_apiserver_write_kubeconfig(const mu_apiserver_t *s, const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return MU_EIO;
	}
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: muster\n  cluster:\n"
		   "    server: %s://%s:%d\n", s->tls_cert_pem ? "https" : "http", s->listen_host, s->port);
	bool ok = true;
	if (s->tls_cert_pem)
		ok = pem_field(f, "    certificate-authority-data", s->o.ca_cert, s->tls_cert_pem);
	fprintf(f, "contexts:\n- name: muster\n  context:\n    cluster: muster\n    user: muster\n"
		   "    namespace: default\ncurrent-context: muster\nusers:\n- name: muster\n  user:");
	if (s->tls_cert_pem && s->o.client_cert) {
		fputc('\n', f);
		ok = ok && pem_field(f, "    client-certificate-data", s->o.client_cert, NULL) &&
		     pem_field(f, "    client-key-data", s->o.client_key, NULL);
	} else if (s->o.token) {
		fprintf(f, "\n    token: %s\n", s->o.token);
	} else {
		fprintf(f, " {}\n");
	}
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return MU_EIO;
	}
	return MU_OK;
}
