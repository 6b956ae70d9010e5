/*
 * client.c - the Kubernetes API client over libcurl.
 *
 * A mu__kc_t is one libcurl easy handle, used by one thread at a time and
 * kept for the thread's life, so its connection stays alive between
 * requests (HTTP/1.1 keep-alive, TLS session reuse).  Credentials come from
 * a shared mu__kauth_t: the bearer token (re-read from its file at most
 * once a minute, for rotating service-account tokens), and TLS material as
 * files or in-memory PEM blobs.  mu__kc_do() reads a whole answer (bounded
 * at 512 MiB); mu__kc_stream() hands a streamed answer (a watch) to a
 * callback line by line, and stops within a second of being asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "kube/kube_int.h"
#include "muster/jpath.h"

#define MAX_BODY ((size_t)512 << 20)
#define MAX_LINE ((size_t)64 << 20)  /* one watch event */

struct mu__kc {
	CURL *h;
	mu__kauth_t *auth;
	char errbuf[CURL_ERROR_SIZE];
	void (*answered)(void *arg, long status); /* mu__kc_on_answer */
	void *answered_arg;
};

int mu__kauth_init(mu__kauth_t *a, const mu_kube_config_t *cfg)
{
	memset(a, 0, sizeof *a);
	a->cfg = cfg;
	a->read_ms = INT64_MIN / 2;
	return pthread_mutex_init(&a->mu, NULL) ? MU_ENOMEM : MU_OK;
}

void mu__kauth_release(mu__kauth_t *a)
{
	free(a->token);
	a->token = NULL;
	pthread_mutex_destroy(&a->mu);
}

/* The "Authorization: Bearer ..." header into buf, or "" with no token;
 * re-reads the token file when it is a minute old. */
static void auth_header(mu__kauth_t *a, char *buf, size_t len)
{
	buf[0] = '\0';
	pthread_mutex_lock(&a->mu);
	if (a->cfg->token_file && mu__k_mono_ms() - a->read_ms >= 60000) {
		char *t = mu__k_readfile(a->cfg->token_file, NULL);
		if (t) {
			t[strcspn(t, "\r\n")] = '\0';
			free(a->token);
			a->token = t;
		}
		a->read_ms = mu__k_mono_ms();
	}
	const char *tok = a->token ? a->token : a->cfg->token;
	if (tok && *tok)
		snprintf(buf, len, "Authorization: Bearer %s", tok);
	pthread_mutex_unlock(&a->mu);
}

/* libcurl's SSL_CTX callback: ktls.c's, typed as libcurl wants it. */
static CURLcode ssl_ctx_fn(CURL *h, void *sslctx, void *arg)
{
	return (CURLcode)mu__ktls_ctx_fn(h, sslctx, arg);
}

/* Sets the TLS options of the handle from the config. */
static void tls_setup(CURL *h, const mu_kube_config_t *cfg)
{
	struct curl_blob b;
	/* the config's PEM data decoded once (ktls.c) and set on each new
	 * connection's SSL_CTX; libcurl loads no CA file of its own then */
	bool pre = cfg->tls && !cfg->insecure &&
		curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_fn) == CURLE_OK &&
		curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, cfg->tls) == CURLE_OK;
	bool cas = pre && mu__ktls_has_cas(cfg->tls), pair = pre && mu__ktls_has_cert(cfg->tls);
	/* the config's TLS sessions, resumed by any of its connections */
	if (pre && mu__ktls_share(cfg->tls))
		curl_easy_setopt(h, CURLOPT_SHARE, mu__ktls_share(cfg->tls));
	if (cas) {
		curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	} else if (cfg->ca_pem) {
		b = (struct curl_blob){cfg->ca_pem, strlen(cfg->ca_pem), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	} else if (cfg->ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
	}
	if (pair)
		return; /* set by mu__ktls_ctx_fn (pre: the config is not insecure) */
	if (cfg->cert_pem) {
		b = (struct curl_blob){cfg->cert_pem, strlen(cfg->cert_pem), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (cfg->cert_file) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, cfg->cert_file);
	}
	if (cfg->key_pem) {
		b = (struct curl_blob){cfg->key_pem, strlen(cfg->key_pem), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (cfg->key_file) {
		curl_easy_setopt(h, CURLOPT_SSLKEY, cfg->key_file);
	}
	if (cfg->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
}

int mu__kc_new(mu__kauth_t *a, mu__kc_t **out)
{
	mu__kc_t *c = calloc(1, sizeof *c);
	if (!c)
		return MU_ENOMEM;
	c->h = curl_easy_init();
	if (!c->h) {
		free(c);
		return MU_ENOMEM;
	}
	c->auth = a;
	*out = c;
	return MU_OK;
}

void mu__kc_on_answer(mu__kc_t *c, void (*fn)(void *arg, long status), void *arg)
{
	c->answered = fn;
	c->answered_arg = arg;
}

const char *mu__kc_error(const mu__kc_t *c)
{
	return c->errbuf;
}

void mu__kc_free(mu__kc_t *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->h);
	free(c);
}

void mu__kresp_release(mu__kresp_t *r)
{
	free(r->body);
	memset(r, 0, sizeof *r);
}

/* A growing answer buffer; with `h`, a 2xx answer's bytes are dropped
 * (mu__kc_send).  Its first allocation took 4 KiB, which glibc serves from
 * its large bins after consolidating the arena's fast bins: a tenth of the
 * writers' time, for answers (a bind's Status) that were then freed. */
typedef struct sink {
	char *b;
	size_t n, cap;
	bool over;
	CURL *h;
} sink_t;

static size_t sink_write(char *p, size_t sz, size_t nm, void *arg)
{
	sink_t *s = arg;
	size_t n = sz * nm;
	long code = 0;
	if (s->h && curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code >= 200 &&
	    code < 300)
		return n;
	if (s->n + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->n + n + 1)
			cap *= 2;
		char *nb = cap <= MAX_BODY ? realloc(s->b, cap) : NULL;
		if (!nb) {
			s->over = true;
			return 0;
		}
		s->b = nb;
		s->cap = cap;
	}
	memcpy(s->b + s->n, p, n);
	s->n += n;
	s->b[s->n] = '\0';
	return n;
}

/* Prepares the handle for one request: URL, method, headers, body.  The
 * caller frees *hdrs after the transfer. */
static void prepare(mu__kc_t *c, const char *method, const char *path,
		    const char *ctype, const char *body, long timeout_ms,
		    struct curl_slist **hdrs)
{
	CURL *h = c->h;
	char url[8192], auth[8192], ct[256];
	curl_easy_reset(h);
	snprintf(url, sizeof url, "%s%s", c->auth->cfg->server, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "muster-scheduler");
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	tls_setup(h, c->auth->cfg);
	*hdrs = curl_slist_append(NULL, "Accept: application/json");
	auth_header(c->auth, auth, sizeof auth);
	if (*auth)
		*hdrs = curl_slist_append(*hdrs, auth);
	if (body) {
		snprintf(ct, sizeof ct, "Content-Type: %s", ctype ? ctype : "application/json");
		*hdrs = curl_slist_append(*hdrs, ct);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	*hdrs = curl_slist_append(*hdrs, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
	if (strcmp(method, body ? "POST" : "GET"))
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	c->errbuf[0] = '\0';
}

/* mu__kc_do and mu__kc_send: errors_only drops a 2xx answer's body. */
static int request(mu__kc_t *c, const char *method, const char *path, const char *ctype, const char *body,
		   long timeout_ms, bool errors_only, mu__kresp_t *out)
{
	struct curl_slist *hdrs = NULL;
	sink_t s = {NULL, 0, 0, false, errors_only ? c->h : NULL};
	memset(out, 0, sizeof *out);
	prepare(c, method, path, ctype, body, timeout_ms, &hdrs);
	if (errors_only)
		/* the writers' answers are small (a Status, an Event), and
		 * libcurl mallocs its receive buffer for every transfer: at
		 * its least (1 KiB) glibc's thread cache serves it again,
		 * while the default 16 KiB is a large-bin request that made
		 * glibc consolidate its fast bins at every bind */
		curl_easy_setopt(c->h, CURLOPT_BUFFERSIZE, 1024L);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &s);
	CURLcode cc = curl_easy_perform(c->h);
	curl_slist_free_all(hdrs);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &out->status);
	if (cc != CURLE_OK || s.over) {
		free(s.b);
		out->status = 0;
		out->body = strdup(s.over ? "answer too large" :
				   *c->errbuf ? c->errbuf : curl_easy_strerror(cc));
		out->len = out->body ? strlen(out->body) : 0;
		return s.over ? MU_ELIMIT : MU_EIO;
	}
	out->body = s.b ? s.b : strdup("");
	out->len = s.n;
	return out->body ? MU_OK : MU_ENOMEM;
}

int mu__kc_do(mu__kc_t *c, const char *method, const char *path,
	      const char *ctype, const char *body, long timeout_ms,
	      mu__kresp_t *out)
{
	return request(c, method, path, ctype, body, timeout_ms, false, out);
}

int mu__kc_send(mu__kc_t *c, const char *method, const char *path,
		const char *ctype, const char *body, long timeout_ms,
		mu__kresp_t *out)
{
	return request(c, method, path, ctype, body, timeout_ms, true, out);
}

int mu__kc_json(mu__kc_t *c, const char *method, const char *path,
		const char *ctype, const char *body, long timeout_ms,
		long *status, json_t **obj)
{
	mu__kresp_t r;
	*obj = NULL;
	int rc = mu__kc_do(c, method, path, ctype, body, timeout_ms, &r);
	*status = r.status;
	if (rc == MU_OK && r.len) /* the tree json_loadb gives, in one pass */
		*obj = mu__json_loadb(r.body, r.len);
	mu__kresp_release(&r);
	return rc;
}

/* --- streams ---------------------------------------------------------------- */

typedef struct stream {
	sink_t buf;             /* a partial line */
	mu__kline_fn fn;
	void *arg;
	atomic_int *stop;
	bool stopped;
	long status;
	CURL *h;
	void (*answered)(void *arg, long status);
	void *answered_arg;
} stream_t;

/* Header callback of a stream with mu__kc_on_answer: at the blank line
 * that ends the headers, the status goes to the hook (once per answer). */
static size_t stream_header(char *p, size_t sz, size_t nm, void *arg)
{
	stream_t *st = arg;
	size_t n = sz * nm;
	if ((n == 2 && p[0] == '\r' && p[1] == '\n') || (n == 1 && p[0] == '\n')) {
		long code = 0;
		curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &code);
		st->answered(st->answered_arg, code);
	}
	return n;
}

/* Splits what arrived into lines (memchr finds each end: a byte-by-byte
 * look was 3% of the daemon's instructions in a backlog's drain); the
 * last, partial one waits in buf. */
static size_t stream_write(char *p, size_t sz, size_t nm, void *arg)
{
	stream_t *st = arg;
	size_t n = sz * nm;
	if (!st->status)
		curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &st->status);
	if ((st->stop && atomic_load(st->stop)) || st->stopped)
		return 0;
	size_t start = 0;
	for (const char *nl; start < n && (nl = memchr(p + start, '\n', n - start));) {
		size_t i = (size_t)(nl - p);
		if (st->buf.n) {
			if (sink_write(p + start, 1, i - start, &st->buf) != i - start)
				return 0;
			if (st->fn(st->arg, st->buf.b, st->buf.n)) {
				st->stopped = true;
				return 0;
			}
			st->buf.n = 0;
		} else if (i > start) {
			char save = p[i];
			p[i] = '\0';
			int r = st->fn(st->arg, p + start, i - start);
			p[i] = save;
			if (r) {
				st->stopped = true;
				return 0;
			}
		}
		start = i + 1;
	}
	if (start < n && (st->buf.n + n - start > MAX_LINE ||
			  sink_write(p + start, 1, n - start, &st->buf) != n - start))
		return 0;
	return n;
}

/* Progress callback: aborts the transfer once asked to stop. */
static int stream_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
			   curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	stream_t *st = arg;
	return st->stop && atomic_load(st->stop);
}

int mu__kc_stream(mu__kc_t *c, const char *path, long timeout_ms,
		  mu__kline_fn fn, void *arg, atomic_int *stop, long *status)
{
	struct curl_slist *hdrs = NULL;
	stream_t st = {{NULL, 0, 0, false, NULL}, fn, arg, stop, false, 0, c->h, c->answered, c->answered_arg};
	prepare(c, "GET", path, NULL, NULL, timeout_ms < 0 ? 0 : timeout_ms, &hdrs);
	if (c->answered) {
		curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, stream_header);
		curl_easy_setopt(c->h, CURLOPT_HEADERDATA, &st);
	}
	if (timeout_ms < 0) { /* no total limit: -timeout_ms of silence ends it */
		curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, (-timeout_ms + 999) / 1000);
	}
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &st);
	curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, stream_progress);
	curl_easy_setopt(c->h, CURLOPT_XFERINFODATA, &st);
	CURLcode cc = curl_easy_perform(c->h);
	curl_slist_free_all(hdrs);
	curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT, 0L); /* the handle is reused */
	curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, 0L);
	if (!st.status)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st.status);
	*status = st.status;
	if (cc == CURLE_OK && st.buf.n && !st.stopped)
		fn(arg, st.buf.b, st.buf.n); /* a last line without newline */
	free(st.buf.b);
	if (cc == CURLE_OK || st.stopped || (stop && atomic_load(stop)))
		return MU_OK;
	return MU_EIO;
}
