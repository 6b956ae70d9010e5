/*
 * test_kube_config.c - credentials: kubeconfig contexts, inline and file
 * tokens, -data and file certificates (relative names resolved against the
 * kubeconfig's directory), JSON kubeconfigs, errors, and the in-cluster
 * service account; and base64, which the -data fields use.  Files live in
 * a fresh temporary directory that is removed afterwards.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kube/kube_int.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int load(const char *name, const char *ctx, mu_kube_config_t *c, char *err)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return mu_kube_config_load(p, ctx, c, err, 256);
}

static void test_token_and_data(mu_t_t *t)
{
	/* "-----BEGIN CERTIFICATE-----\n" and "key" in base64 */
	put("kc1", "apiVersion: v1\nkind: Config\ncurrent-context: b\n"
		   "clusters:\n- name: ca\n  cluster:\n    server: https://10.0.0.1:6443\n"
		   "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
		   "- name: cb\n  cluster: {server: 'http://127.0.0.1:8080', insecure-skip-tls-verify: true}\n"
		   "contexts:\n- name: a\n  context: {cluster: ca, user: ua, namespace: ml}\n"
		   "- name: b\n  context: {cluster: cb, user: ub}\n"
		   "users:\n- name: ua\n  user:\n    client-certificate-data: a2V5\n    client-key-data: a2V5\n"
		   "- name: ub\n  user: {token: secret-token}\n");
	mu_kube_config_t c;
	char err[256];
	CHECK_EQ_INT(t, load("kc1", NULL, &c, err), MU_OK);
	CHECK_STR(t, c.server, "http://127.0.0.1:8080");
	CHECK_STR(t, c.token, "secret-token");
	CHECK_STR(t, c.ns, "default");
	CHECK(t, c.insecure && !c.ca_pem);
	mu_kube_config_release(&c);
	CHECK_EQ_INT(t, load("kc1", "a", &c, err), MU_OK);
	CHECK_STR(t, c.server, "https://10.0.0.1:6443");
	CHECK_STR(t, c.ca_pem, "-----BEGIN CERTIFICATE-----\n");
	CHECK_STR(t, c.cert_pem, "key");
	CHECK_STR(t, c.key_pem, "key");
	CHECK_STR(t, c.ns, "ml");
	CHECK(t, !c.token && !c.insecure);
	mu_kube_config_release(&c);
	CHECK_EQ_INT(t, load("kc1", "nope", &c, err), MU_ENOENT);
	CHECK(t, strstr(err, "nope") != NULL);
}

static void test_files(mu_t_t *t)
{
	put("kc2", "{\"apiVersion\":\"v1\",\"current-context\":\"x\",\"clusters\":[{\"name\":\"c\","
		   "\"cluster\":{\"server\":\"https://h:1\",\"certificate-authority\":\"ca.crt\"}}],"
		   "\"contexts\":[{\"name\":\"x\",\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}],"
		   "\"users\":[{\"name\":\"u\",\"user\":{\"tokenFile\":\"tok\",\"client-certificate\":"
		   "\"/abs/cert.pem\",\"client-key\":\"key.pem\"}}]}");
	put("tok", "file-token\n");
	mu_kube_config_t c;
	char err[256], want[256];
	CHECK_EQ_INT(t, load("kc2", NULL, &c, err), MU_OK);
	snprintf(want, sizeof want, "%s/ca.crt", dir);
	CHECK_STR(t, c.ca_file, want);
	snprintf(want, sizeof want, "%s/tok", dir);
	CHECK_STR(t, c.token_file, want);
	CHECK_STR(t, c.cert_file, "/abs/cert.pem");
	snprintf(want, sizeof want, "%s/key.pem", dir);
	CHECK_STR(t, c.key_file, want);
	/* the token file is read (and trimmed) when a request needs it */
	mu__kauth_t a;
	CHECK_EQ_INT(t, mu__kauth_init(&a, &c), MU_OK);
	mu__kc_t *kc;
	CHECK_EQ_INT(t, mu__kc_new(&a, &kc), MU_OK);
	mu__kresp_t r;
	CHECK_EQ_INT(t, mu__kc_do(kc, "GET", "/version", NULL, NULL, 200, &r), MU_EIO); /* h:1 */
	CHECK_STR(t, a.token, "file-token");
	mu__kresp_release(&r);
	mu__kc_free(kc);
	mu__kauth_release(&a);
	mu_kube_config_release(&c);
}

static void test_errors(mu_t_t *t)
{
	mu_kube_config_t c;
	char err[256];
	put("bad1", "clusters: [\n");
	CHECK_EQ_INT(t, load("bad1", NULL, &c, err), MU_EPARSE);
	put("bad2", "apiVersion: v1\ncurrent-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
		    "clusters:\n- name: c\n  cluster: {certificate-authority-data: '***'}\n");
	CHECK(t, load("bad2", NULL, &c, err) != MU_OK);
	put("bad3", "a: &x 1\nb: *x\n");
	CHECK_EQ_INT(t, load("bad3", NULL, &c, err), MU_EPARSE);
	CHECK_EQ_INT(t, load("missing", NULL, &c, err), MU_EIO);
	/* one context and no current-context: that one */
	put("one", "contexts:\n- name: only\n  context: {cluster: c}\nclusters:\n- name: c\n"
		   "  cluster: {server: 'http://x:1'}\n");
	CHECK_EQ_INT(t, load("one", NULL, &c, err), MU_OK);
	CHECK_STR(t, c.server, "http://x:1");
	mu_kube_config_release(&c);
}

static void test_in_cluster(mu_t_t *t)
{
	mu_kube_config_t c;
	char err[256], want[256];
	unsetenv("KUBERNETES_SERVICE_HOST");
	CHECK_EQ_INT(t, mu_kube_config_in_cluster(dir, &c, err, sizeof err), MU_ENOENT);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	put("token", "sa-token");
	put("namespace", "muster-system\n");
	CHECK_EQ_INT(t, mu_kube_config_in_cluster(dir, &c, err, sizeof err), MU_OK);
	CHECK_STR(t, c.server, "https://10.96.0.1:443");
	CHECK_STR(t, c.ns, "muster-system");
	snprintf(want, sizeof want, "%s/ca.crt", dir);
	CHECK_STR(t, c.ca_file, want);
	mu_kube_config_release(&c);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	CHECK_EQ_INT(t, mu_kube_config_in_cluster(dir, &c, err, sizeof err), MU_OK);
	CHECK_STR(t, c.server, "https://[fd00::1]:443");
	mu_kube_config_release(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

/* Base64 of kubeconfig data (muster/util.h): as Go's StdEncoding, line
 * breaks are skipped and anything else outside the alphabet is refused. */
static void test_base64(mu_t_t *t)
{
	char out[64];
	size_t n;
	CHECK_EQ_INT(t, mu__b64dec("aGVsbG8gd29ybGQ=", out, sizeof out, &n), MU_OK);
	CHECK_STR(t, out, "hello world");
	CHECK_EQ_INT(t, n, 11);
	CHECK_EQ_INT(t, mu__b64dec("aGVs\r\nbG8=\n", out, sizeof out, &n), MU_OK);
	CHECK_STR(t, out, "hello");
	CHECK_EQ_INT(t, mu__b64dec("a$b", out, sizeof out, &n), MU_EPARSE);
	CHECK_EQ_INT(t, mu__b64dec("aGVs bG8=", out, sizeof out, &n), MU_EPARSE);
	CHECK_EQ_INT(t, mu__b64dec("aGVsbG8=x", out, sizeof out, &n), MU_EPARSE);
	CHECK_EQ_INT(t, mu__b64dec("aGVsbG8gd29ybGQ=", out, 4, &n), MU_EPARSE);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	snprintf(dir, sizeof dir, "/tmp/muster-kc-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	MU_RUN(&t, test_token_and_data);
	MU_RUN(&t, test_files);
	MU_RUN(&t, test_errors);
	MU_RUN(&t, test_in_cluster);
	MU_RUN(&t, test_base64);
	const char *files[] = {"kc1", "kc2", "tok", "bad1", "bad2", "bad3", "one", "token", "namespace"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
	return mu_t_done(&t);
}
