/*
 * http.c - libmicrohttpd glue: one thread per connection, request bodies
 * gathered up to the size limit (413 beyond, decided from Content-Length
 * before reading when it is given), bearer-token authentication, the
 * request target parsed by request.c from the raw URI (libmicrohttpd's URI
 * log callback hands it over before decoding), and answers: a buffer, or a
 * watch streamed with chunked encoding through mu__watch_read().
 *
 * Per-request state (conn_t) is allocated in the URI callback and freed in
 * the completion callback; a watch is owned by its MHD response and freed
 * with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "apiserver/api_int.h"
#include "apiserver/audit.h"
#include "apiserver/auth.h"

/* --- idle connections --------------------------------------------------
 *
 * Every TCP connection has a slot from accept to close.  A connection is
 * busy from its first complete request head until that request is answered
 * (a watch stays busy while it streams), idle otherwise: before its first
 * request (a TLS handshake or headers still coming, as slowloris sends
 * them) and between kept-alive requests.  When a new connection would make
 * more than max_connections, the longest-idle ones are shut down (a batch,
 * so that a burst does not outrun the threads that close them), so idle
 * connections, however many, never keep a new request out; only busy ones
 * count against the hard limit (max_connections plus HEADROOM).
 */
#define HEADROOM 256   /* connections being shut still count for libmicrohttpd */
#define EVICT_BATCH 16 /* shut at once past the limit, ahead of a burst */

struct mu__conntab {
	pthread_mutex_t mu;
	/* TLS session tickets (TLS 1.3, as Go's crypto/tls server sends them,
	 * which kube-apiserver uses): the master key, made at start and kept
	 * in memory only (GnuTLS derives the ticket keys from it and rotates
	 * them); empty without TLS */
	gnutls_datum_t ticket_key;
	/* TLS sessions whose first authenticated request came: after a full
	 * handshake, or resumed from a ticket (mu_apiserver_tls_counts) */
	uint64_t tls_full, tls_resumed;
	int n, cap, live;
	struct mu__cslot {
		int fd;
		bool live, busy;
		int64_t idle_since;   /* ms, monotonic */
		const void *cert_ses; /* the TLS session whose client certificate ... */
		mu__user_t cert;      /* ... names this user (checked once per connection) */
	} *slot;
};

static void conn_notify(void *cls, struct MHD_Connection *con, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	mu_apiserver_t *s = cls;
	mu__conntab_t *t = s->conns;
	pthread_mutex_lock(&t->mu);
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct mu__cslot *sl = *socket_context;
		if (sl && sl->live) {
			sl->live = false;
			t->live--;
		}
		*socket_context = NULL;
		pthread_mutex_unlock(&t->mu);
		return;
	}
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
	int fd = ci ? ci->connect_fd : -1;
	struct mu__cslot *free_sl = NULL;
	for (int i = 0; i < t->cap; i++) {
		struct mu__cslot *sl = &t->slot[i];
		if (sl->live && sl->fd == fd) { /* closed before we heard of it */
			sl->live = false;
			t->live--;
		}
		if (!sl->live && !free_sl)
			free_sl = sl;
	}
	if (t->live >= s->o.max_connections) {
		for (int k = 0; k < EVICT_BATCH; k++) {
			struct mu__cslot *oldest = NULL;
			for (int i = 0; i < t->cap; i++) {
				struct mu__cslot *sl = &t->slot[i];
				if (sl->live && !sl->busy && (!oldest || sl->idle_since < oldest->idle_since))
					oldest = sl;
			}
			if (!oldest)
				break;
			/* its thread sees the end of the stream and closes it */
			shutdown(oldest->fd, SHUT_RDWR);
			oldest->busy = true; /* not chosen twice */
		}
	}
	if (free_sl) {
		*free_sl = (struct mu__cslot){.fd = fd, .live = true, .idle_since = mu__mono_ms()};
		t->live++;
	}
	*socket_context = free_sl;
	pthread_mutex_unlock(&t->mu);
	/* before its handshake: the session may send tickets and resume
	 * from one (the client certificate of a resumed session is the one
	 * its full handshake verified, kept in the ticket, and verified
	 * again per connection by x509.c) */
	const union MHD_ConnectionInfo *ti = MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ti && ti->tls_session && t->ticket_key.data)
		gnutls_session_ticket_enable_server((gnutls_session_t)ti->tls_session, &t->ticket_key);
}

/* Marks the connection of a request busy (true) or idle again. */
static void conn_busy(mu_apiserver_t *s, struct MHD_Connection *con, bool busy)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct mu__cslot *sl = ci ? ci->socket_context : NULL;
	if (!sl)
		return;
	pthread_mutex_lock(&s->conns->mu);
	if (sl->live) {
		sl->busy = busy;
		sl->idle_since = mu__mono_ms();
	}
	pthread_mutex_unlock(&s->conns->mu);
}

typedef struct conn {
	char *target;      /* raw request target, with the query */
	char *body;
	size_t len, cap;
	size_t hint;       /* Content-Length + 1 when given (within max_body), else 0 */
	bool started, too_big;
	mu__audit_rec_t *audit; /* a watch's audit record, completed with it */
} conn_t;

static void *uri_cb(void *cls, const char *uri, struct MHD_Connection *con)
{
	(void)cls;
	(void)con;
	conn_t *c = calloc(1, sizeof *c);
	if (c)
		c->target = strdup(uri ? uri : "/");
	return c;
}

static void completed_cb(void *cls, struct MHD_Connection *con, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	conn_t *c = *con_cls;
	if (!c)
		return;
	if (c->started)
		conn_busy(cls, con, false);
	mu__audit_complete(cls, c->audit);
	free(c->target);
	free(c->body);
	free(c);
	*con_cls = NULL;
}

static ssize_t watch_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	ssize_t n = mu__watch_read(cls, buf, max);
	return n > 0 ? n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void watch_free_cb(void *cls)
{
	mu__watch_free(cls);
}

/* Queues rs on con; takes ownership of rs's body or watch. */
static enum MHD_Result send_resp(mu_apiserver_t *s, struct MHD_Connection *con, mu__resp_t *rs,
				 const char *method, const char *audit_id)
{
	struct MHD_Response *r;
	if (rs->watch) {
		if (!s->tls_cert_pem) {
			const union MHD_ConnectionInfo *ci =
				MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
			if (ci)
				mu__watch_set_conn(rs->watch, ci->connect_fd);
		}
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, watch_cb, rs->watch,
						      watch_free_cb);
		if (!r)
			mu__watch_free(rs->watch);
	} else {
		if (!strcmp(method, "HEAD")) {
			free(rs->body);
			rs->body = NULL;
			rs->len = 0;
		}
		r = MHD_create_response_from_buffer(rs->len, rs->body ? rs->body : (void *)"",
						    rs->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
		if (!r)
			free(rs->body);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", rs->ctype ? rs->ctype : "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	if (audit_id)
		MHD_add_response_header(r, "Audit-Id", audit_id);
	if (rs->warning[0]) {
		/* RFC 7234 warn-code 299 as kube-apiserver sends: one value per
		 * unknown field, comma-separated */
		char w[sizeof rs->warning * 2 + 64];
		size_t o = 0;
		const char *p = rs->warning;
		while (*p && o + 16 < sizeof w) {
			const char *end = strstr(p, ", unknown field");
			size_t n = end ? (size_t)(end - p) : strlen(p);
			o += (size_t)snprintf(w + o, sizeof w - o, "%s299 - \"", o ? ", " : "");
			for (size_t i = 0; i < n && o + 4 < sizeof w; i++) {
				if (p[i] == '"' || p[i] == '\\')
					w[o++] = '\\';
				w[o++] = p[i];
			}
			o += (size_t)snprintf(w + o, sizeof w - o, "\"");
			p += n;
			if (*p)
				p += 2;
		}
		MHD_add_response_header(r, "Warning", w);
	}
	enum MHD_Result ret = MHD_queue_response(con, (unsigned)rs->code, r);
	MHD_destroy_response(r);
	return ret;
}

/* The user of the connection's client certificate (x509.c), verified once
 * per connection: a TLS session's certificate does not change, and its
 * check cost milliseconds per request.  The cache is keyed by the session,
 * so a slot handed to a new connection never answers for an old one. */
static void x509_cached(mu_apiserver_t *s, struct MHD_Connection *con, mu__user_t *u)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const union MHD_ConnectionInfo *ti = MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct mu__cslot *sl = ci ? ci->socket_context : NULL;
	const void *ses = ti ? ti->tls_session : NULL;
	if (sl && ses) {
		pthread_mutex_lock(&s->conns->mu);
		bool hit = sl->cert_ses == ses;
		if (hit)
			*u = sl->cert;
		pthread_mutex_unlock(&s->conns->mu);
		if (hit)
			return;
	}
	mu__x509_user(s, con, u);
	if (sl && ses) {
		bool resumed = gnutls_session_is_resumed((gnutls_session_t)ses) != 0;
		pthread_mutex_lock(&s->conns->mu);
		sl->cert_ses = ses;
		sl->cert = *u;
		*(resumed ? &s->conns->tls_resumed : &s->conns->tls_full) += 1;
		pthread_mutex_unlock(&s->conns->mu);
	}
}

/* Authenticates the request (rbac.c); health and version are open to
 * anyone, as kube-apiserver's system:public-info-viewer allows. */
static bool authenticated(mu_apiserver_t *s, struct MHD_Connection *con, const mu__route_t *r, mu__user_t *u)
{
	mu__user_t cert;
	x509_cached(s, con, &cert);
	if (mu__authn(s, MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Authorization"), &cert, u))
		return true;
	if (r->kind != MU__R_VERSION && r->kind != MU__R_HEALTH)
		return false;
	memset(u, 0, sizeof *u);
	snprintf(u->name, sizeof u->name, "system:anonymous");
	u->admin = true; /* only these open endpoints */
	return true;
}

/* The client's IP address as text ("" when unknown). */
static void peer_addr(struct MHD_Connection *con, char *out, size_t len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, (socklen_t)len);
}

/* Runs a complete request. */
static enum MHD_Result dispatch(mu_apiserver_t *s, struct MHD_Connection *con, conn_t *c,
				const char *method)
{
	mu__req_t rq;
	mu__resp_t rs;
	mu__user_t user;
	memset(&rq, 0, sizeof rq);
	memset(&rs, 0, sizeof rs);
	char err[256], imsg[1200];
	int imp;
	rq.method = method;
	mu__audit_rec_t *au = s->audit ? mu__audit_begin(s, MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Audit-ID"))
				      : NULL;
	if (c->too_big) {
		mu__resp_status(&rs, 413, "RequestEntityTooLarge", "the request body is larger than %zu bytes",
				s->o.max_body);
	} else if (mu__parse_target(c->target, &rq.route, &rq.q, err, sizeof err) != MU_OK) {
		mu__resp_status(&rs, 400, "BadRequest", "%s", err);
	} else if (!authenticated(s, con, &rq.route, &user)) {
		mu__resp_status(&rs, 401, "Unauthorized", "Unauthorized");
	} else if (au && (mu__audit_user(au, &user), false)) { /* before impersonation changes it */
	} else if ((imp = mu__impersonate_con(s, con, &user, imsg, sizeof imsg)) != 0) {
		mu__resp_status(&rs, imp, imp == 403 ? "Forbidden" : "InternalError", "%s", imsg); /* impersonate.c */
	} else {
		char path[1024], msg[1200];
		snprintf(path, sizeof path, "%.*s", (int)strcspn(c->target, "?"), c->target);
		rq.path = path;
		rq.user = &user;
		rq.may = mu__authz_attrs;
		rq.accept = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Accept");
		rq.ctype = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Type");
		rq.user_agent = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "User-Agent");
		rq.body = c->body ? c->body : "";
		rq.body_len = c->len;
		bool ok = mu__authz(s, &user, &rq, msg, sizeof msg);
		if (au)
			mu__audit_authz(au, &user, ok, msg);
		if (!ok)
			mu__resp_status(&rs, 403, "Forbidden", "%s", msg);
		else if (!mu__rbac_route(s, &rq, &rs))
			mu__handle(s, &rq, &rs);
	}
	if (!s->o.quiet)
		fprintf(stderr, "muster up: %s %.200s %d\n", method, c->target, rs.code);
	if (!au)
		return send_resp(s, con, &rs, method, NULL);
	char id[64], peer[64] = "";
	snprintf(id, sizeof id, "%s", mu__audit_id(au));
	peer_addr(con, peer, sizeof peer);
	if (mu__audit_end(s, au, method, c->target, &rq, &rs, peer,
			  MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-Forwarded-For")))
		c->audit = au; /* a watch: completed when it ends */
	return send_resp(s, con, &rs, method, id);
}

static enum MHD_Result request_cb(void *cls, struct MHD_Connection *con, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)url;
	(void)version;
	mu_apiserver_t *s = cls;
	conn_t *c = *con_cls;
	if (!c)
		return MHD_NO;
	if (!c->started) {
		c->started = true;
		conn_busy(s, con, true);
		const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Length");
		unsigned long long want = cl ? strtoull(cl, NULL, 10) : 0;
		if (want > 0 && want <= s->o.max_body)
			c->hint = (size_t)want + 1;
		if (cl && want > s->o.max_body) {
			/* answered before the body is read; libmicrohttpd then
			 * closes the connection */
			c->too_big = true;
			return dispatch(s, con, c, method);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (c->too_big)
			return MHD_YES;
		if (c->len + n > s->o.max_body) {
			c->too_big = true;
			free(c->body);
			c->body = NULL;
			c->len = c->cap = 0;
			return MHD_YES;
		}
		if (c->len + n + 1 > c->cap) {
			/* sized by Content-Length when it is given: a body of a
			 * few hundred bytes (a Binding, an Event) then takes a
			 * small chunk, not 4 KiB, whose large-bin request makes
			 * glibc consolidate its fast bins at every request */
			size_t nc = c->cap ? c->cap : c->hint >= c->len + n + 1 ? c->hint : 4096;
			while (nc < c->len + n + 1)
				nc *= 2;
			char *nb = realloc(c->body, nc);
			if (!nb)
				return MHD_NO;
			c->body = nb;
			c->cap = nc;
		}
		memcpy(c->body + c->len, upload, n);
		c->len += n;
		c->body[c->len] = '\0';
		return MHD_YES;
	}
	return dispatch(s, con, c, method);
}

int mu__http_start(mu_apiserver_t *s, const struct sockaddr_in *addr, char *err, size_t errlen)
{
	mu__conntab_t *t = calloc(1, sizeof *t);
	int cap = s->o.max_connections + HEADROOM;
	if (!t || !(t->slot = calloc((size_t)cap, sizeof *t->slot))) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return MU_ENOMEM;
	}
	t->cap = cap;
	if (s->tls_cert_pem && gnutls_session_ticket_key_generate(&t->ticket_key) < 0)
		t->ticket_key = (gnutls_datum_t){NULL, 0}; /* no tickets: full handshakes */
	pthread_mutex_init(&t->mu, NULL);
	s->conns = t;
	/* poll, not select: more than FD_SETSIZE descriptors may be open */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD;
	if (s->tls_cert_pem)
		flags |= MHD_USE_TLS;
	if (!s->o.quiet)
		flags |= MHD_USE_ERROR_LOG;
	/* idle connections end after 90 s, as kube-apiserver's IdleTimeout */
	struct MHD_OptionItem tls[] = {
		{MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key_pem},
		{MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert_pem},
		{s->client_ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, s->client_ca_pem},
		{MHD_OPTION_END, 0, NULL},
	};
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, request_cb, s,
				  MHD_OPTION_SOCK_ADDR, addr,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)cap,
				  MHD_OPTION_CONNECTION_TIMEOUT, 90u,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024,
				  MHD_OPTION_THREAD_STACK_SIZE, (size_t)1024 * 1024,
				  MHD_OPTION_URI_LOG_CALLBACK, uri_cb, NULL,
				  MHD_OPTION_NOTIFY_COMPLETED, completed_cb, s,
				  MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
				  MHD_OPTION_ARRAY, s->tls_cert_pem ? tls : tls + 3,
				  MHD_OPTION_END);
	if (!s->mhd) {
		snprintf(err, errlen, "cannot listen on %s (address in use, or bad TLS files?)", s->o.listen);
		return MU_EIO;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : ntohs(addr->sin_port);
	return MU_OK;
}

void mu_apiserver_tls_counts(mu_apiserver_t *s, uint64_t *full, uint64_t *resumed)
{
	*full = *resumed = 0;
	if (!s->conns)
		return;
	pthread_mutex_lock(&s->conns->mu);
	*full = s->conns->tls_full;
	*resumed = s->conns->tls_resumed;
	pthread_mutex_unlock(&s->conns->mu);
}

void mu__http_stop(mu_apiserver_t *s)
{
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	s->mhd = NULL;
	if (s->conns && s->tls_cert_pem && !s->o.quiet)
		fprintf(stderr, "muster up: TLS sessions: %llu full handshakes, %llu resumed from "
			"session tickets\n", (unsigned long long)s->conns->tls_full,
			(unsigned long long)s->conns->tls_resumed);
	if (s->certs && !s->o.quiet) {
		uint64_t checked, reused;
		mu__certcache_counts(s->certs, &checked, &reused);
		fprintf(stderr, "muster up: client certificates: %llu chains checked in full, %llu answered "
			"from the cache of verified chains\n", (unsigned long long)checked, (unsigned long long)reused);
	}
	if (s->conns) {
		if (s->conns->ticket_key.data) { /* never kept beyond the server */
			gnutls_memset(s->conns->ticket_key.data, 0, s->conns->ticket_key.size);
			gnutls_free(s->conns->ticket_key.data);
		}
		pthread_mutex_destroy(&s->conns->mu);
		free(s->conns->slot);
		free(s->conns);
		s->conns = NULL;
	}
}
