/*
 * csr_check.c - what kube-apiserver checks of a CertificateSigningRequest
 * (pkg/apis/certificates/validation, helpers.go), and its table row
 * (kubectl's printCertificateSigningRequest): the request is a PEM
 * "CERTIFICATE REQUEST" whose signature verifies, usages are known and
 * unique, the signerName a domain and path, expirationSeconds at least
 * 600, the conditions' rules.  Apart from csr.c (the API side and the
 * signer) so that the type registry, which names these, does not call
 * into what writes to the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "apiserver/api_int.h"
#include "apiserver/csr.h"

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* --- the request -------------------------------------------------------- */

/* Parses spec.request (base64 of PEM) of obj into *crq; false with a
 * message as Go's x509 parser and kube's ParseCSR word it. */
bool mu__csr_parse_request(const json_t *obj, gnutls_x509_crq_t *crq, char *msg, size_t len)
{
	const char *b64 = mu__jstr(obj, "spec.request");
	size_t cap = b64 ? strlen(b64) : 0, n = 0;
	char *pem = malloc(cap + 1);
	*crq = NULL;
	if (!pem)
		return snprintf(msg, len, "out of memory"), false;
	if (!b64 || mu__b64dec(b64, pem, cap, &n) != MU_OK) {
		free(pem);
		snprintf(msg, len, "PEM block type must be CERTIFICATE REQUEST");
		return false;
	}
	pem[n] = '\0';
	const char *begin = strstr(pem, "-----BEGIN ");
	if (!begin || strncmp(begin, "-----BEGIN CERTIFICATE REQUEST-----", 35)) {
		free(pem);
		snprintf(msg, len, "PEM block type must be CERTIFICATE REQUEST");
		return false;
	}
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)n};
	gnutls_x509_crq_init(crq);
	int rc = gnutls_x509_crq_import(*crq, &d, GNUTLS_X509_FMT_PEM);
	free(pem);
	if (rc < 0) {
		snprintf(msg, len, "x509: malformed certificate request (%s)", gnutls_strerror(rc));
	} else if ((rc = gnutls_x509_crq_verify(*crq, 0)) < 0) {
		snprintf(msg, len, "x509: signature verification failed (%s)", gnutls_strerror(rc));
	} else {
		return true;
	}
	gnutls_x509_crq_deinit(*crq);
	*crq = NULL;
	return false;
}

static const char *const key_usages[] = {"signing", "digital signature", "content commitment", "key encipherment",
					 "key agreement", "data encipherment", "cert sign", "crl sign",
					 "encipher only", "decipher only"};
static const unsigned key_bits[] = {GNUTLS_KEY_DIGITAL_SIGNATURE, GNUTLS_KEY_DIGITAL_SIGNATURE,
				    GNUTLS_KEY_NON_REPUDIATION,   GNUTLS_KEY_KEY_ENCIPHERMENT,
				    GNUTLS_KEY_KEY_AGREEMENT,     GNUTLS_KEY_DATA_ENCIPHERMENT,
				    GNUTLS_KEY_KEY_CERT_SIGN,     GNUTLS_KEY_CRL_SIGN,
				    GNUTLS_KEY_ENCIPHER_ONLY,     GNUTLS_KEY_DECIPHER_ONLY};
static const char *const ext_usages[] = {"any", "server auth", "client auth", "code signing", "email protection",
					 "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user",
					 "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"};
static const char *const ext_oids[] = {"2.5.29.37.0", "1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2",
				       "1.3.6.1.5.5.7.3.3", "1.3.6.1.5.5.7.3.4", "1.3.6.1.5.5.7.3.4",
				       "1.3.6.1.5.5.7.3.5", "1.3.6.1.5.5.7.3.6", "1.3.6.1.5.5.7.3.7",
				       "1.3.6.1.5.5.7.3.8", "1.3.6.1.5.5.7.3.9", "1.3.6.1.4.1.311.10.3.3",
				       "2.16.840.1.113730.4.1"};
#define NKEY ((int)(sizeof key_usages / sizeof *key_usages))
#define NEXT ((int)(sizeof ext_usages / sizeof *ext_usages))

/* Index of usage u among the key usages (0..NKEY-1), the extended ones
 * (NKEY..), or -1. */
static int usage_index(const char *u)
{
	for (int i = 0; i < NKEY; i++)
		if (!strcmp(u, key_usages[i]))
			return i;
	for (int i = 0; i < NEXT; i++)
		if (!strcmp(u, ext_usages[i]))
			return NKEY + i;
	return -1;
}

bool mu__csr_usage(const char *u, unsigned *key_bit, const char **ext_oid)
{
	int k = usage_index(u);
	*key_bit = k >= 0 && k < NKEY ? key_bits[k] : 0;
	*ext_oid = k >= NKEY ? ext_oids[k - NKEY] : NULL;
	return k >= 0;
}

/* --- validation --------------------------------------------------------- */

/* kube's ValidateCertificateSigningRequestSignerName, for the common
 * mistakes: present, DOMAIN/PATH with one '/', a domain of two or more
 * DNS labels. */
static void check_signer(const char *sn, mu__verr_t *e)
{
	if (!sn || !*sn) {
		mu__verr_add(e, "spec.signerName", "FieldValueRequired", "Required value: signerName must be provided");
		return;
	}
	const char *slash = strchr(sn, '/');
	if (!slash || strchr(slash + 1, '/')) {
		mu__verr_add(e, "spec.signerName", "FieldValueInvalid",
			     "Invalid value: \"%.200s\": must be a fully qualified domain and path of the form "
			     "'example.com/signer-name'",
			     sn);
		return;
	}
	int dom = (int)(slash - sn);
	if (!memchr(sn, '.', (size_t)dom))
		mu__verr_add(e, "spec.signerName", "FieldValueInvalid",
			     "Invalid value: \"%.*s\": should be a domain with at least two segments separated by dots",
			     dom > 200 ? 200 : dom, sn);
	if (!slash[1])
		mu__verr_add(e, "spec.signerName", "FieldValueInvalid",
			     "Invalid value: \"\": validating label \"\": a lowercase RFC 1123 subdomain must consist of "
			     "lower case alphanumeric characters, '-' or '.', and must start and end with an "
			     "alphanumeric character (e.g. 'example.com', regex used for validation is "
			     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

static void check_conditions(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	bool approved = false, denied = false, old_both = false;
	size_t i;
	json_t *c;
	int oa = 0, od = 0;
	json_array_foreach(mu__jget(old, "status.conditions"), i, c) {
		const char *t = nz(mu__jstr(c, "type"));
		oa |= !strcmp(t, "Approved");
		od |= !strcmp(t, "Denied");
	}
	old_both = oa && od;
	char seen[8][32];
	int nseen = 0;
	json_array_foreach(mu__jget(obj, "status.conditions"), i, c) {
		const char *t = nz(mu__jstr(c, "type")), *st = mu__jstr(c, "status");
		char f[64];
		if (!*t) {
			snprintf(f, sizeof f, "status.conditions[%zu].type", i);
			mu__verr_add(e, f, "FieldValueRequired", "Required value");
		}
		bool true_only = !strcmp(t, "Approved") || !strcmp(t, "Denied") || !strcmp(t, "Failed");
		snprintf(f, sizeof f, "status.conditions[%zu].status", i);
		if (!st || !*st)
			mu__verr_add(e, f, "FieldValueRequired", "Required value");
		else if (true_only && strcmp(st, "True"))
			mu__verr_add(e, f, "FieldValueNotSupported", "Unsupported value: \"%.60s\": supported values: "
				     "\"True\"", st);
		else if (!true_only && strcmp(st, "True") && strcmp(st, "False") && strcmp(st, "Unknown"))
			mu__verr_add(e, f, "FieldValueNotSupported", "Unsupported value: \"%.60s\": supported values: "
				     "\"False\", \"True\", \"Unknown\"", st);
		snprintf(f, sizeof f, "status.conditions[%zu].type", i);
		if (!old_both && ((!strcmp(t, "Approved") && denied) || (!strcmp(t, "Denied") && approved)))
			mu__verr_add(e, f, "FieldValueInvalid", "Invalid value: \"%s\": Approved and Denied conditions are "
				     "mutually exclusive", t);
		approved |= !strcmp(t, "Approved");
		denied |= !strcmp(t, "Denied");
		for (int k = 0; k < nseen; k++)
			if (!strcmp(seen[k], t))
				mu__verr_add(e, f, "FieldValueDuplicate", "Duplicate value: \"%.60s\"", t);
		if (nseen < 8)
			snprintf(seen[nseen++], sizeof seen[0], "%.31s", t);
	}
}

/* How many conditions of type t obj has. */
int mu__csr_count_cond(const json_t *obj, const char *t)
{
	int n = 0;
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(obj, "status.conditions"), i, c)
		n += !strcmp(nz(mu__jstr(c, "type")), t);
	return n;
}

void mu__validate_csr(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	char msg[300];
	gnutls_x509_crq_t crq;
	if (!mu__csr_parse_request(obj, &crq, msg, sizeof msg))
		mu__verr_add(e, "spec.request", "FieldValueInvalid", "Invalid value: \"<request data>\": %s", msg);
	else
		gnutls_x509_crq_deinit(crq);
	const json_t *us = mu__jget(obj, "spec.usages");
	if (json_array_size(us) == 0)
		mu__verr_add(e, "spec.usages", "FieldValueRequired", "Required value: usages must be provided");
	size_t i, j;
	json_t *u, *w;
	json_array_foreach(us, i, u) {
		char f[48];
		snprintf(f, sizeof f, "spec.usages[%zu]", i);
		const char *s = nz(json_string_value(u));
		if (usage_index(s) < 0)
			mu__verr_add(e, f, "FieldValueNotSupported", "Unsupported value: \"%.60s\": supported values: "
				     "\"any\", \"cert sign\", \"client auth\", \"code signing\", \"content commitment\", "
				     "\"crl sign\", \"data encipherment\", \"decipher only\", \"digital signature\", "
				     "\"email protection\", \"encipher only\", \"ipsec end system\", \"ipsec tunnel\", "
				     "\"ipsec user\", \"key agreement\", \"key encipherment\", \"microsoft sgc\", "
				     "\"netscape sgc\", \"ocsp signing\", \"s/mime\", \"server auth\", \"signing\", "
				     "\"timestamping\"", s);
		json_array_foreach(us, j, w) {
			if (j >= i)
				break;
			if (json_equal(u, w)) {
				mu__verr_add(e, f, "FieldValueDuplicate", "Duplicate value: \"%.60s\"", s);
				break;
			}
		}
	}
	const char *sn = mu__jstr(obj, "spec.signerName");
	if (!old && sn && !strcmp(sn, "kubernetes.io/legacy-unknown")) /* allowed on an update only */
		mu__verr_add(e, "spec.signerName", "FieldValueInvalid", "Invalid value: \"%s\": the legacy signerName "
			     "is not allowed via this API version", sn);
	else
		check_signer(sn, e);
	const json_t *exp = mu__jget(obj, "spec.expirationSeconds");
	if (exp && (!json_is_integer(exp) || json_integer_value(exp) < 600))
		mu__verr_add(e, "spec.expirationSeconds", "FieldValueInvalid", "Invalid value: %lld: may not specify a "
			     "duration less than 600 seconds (10 minutes)", (long long)json_integer_value(exp));
	check_conditions(obj, old, e);
	if (!old)
		return;
	static const char *const keep[] = {"Approved", "Denied", "Failed"};
	for (int k = 0; k < 3; k++)
		if (mu__csr_count_cond(obj, keep[k]) < mu__csr_count_cond(old, keep[k]))
			mu__verr_add(e, "status.conditions", "FieldValueForbidden", "Forbidden: updates may not remove a "
				     "condition of type \"%s\"", keep[k]);
	const char *oc = mu__jstr(old, "status.certificate"), *nc = mu__jstr(obj, "status.certificate");
	if (oc && *oc && strcmp(oc, nz(nc)))
		mu__verr_add(e, "status.certificate", "FieldValueForbidden",
			     "Forbidden: updates may not modify existing certificate content");
}

/* --- table rows --------------------------------------------------------- */

void mu__row_csr(const json_t *o, int64_t now, json_t *cells)
{
	char age[32] = "<unknown>", dur[32] = "<none>", cond[64];
	int64_t t = mu__parse_rfc3339(mu__jstr(o, "metadata.creationTimestamp"));
	if (t >= 0)
		mu__age(now - t, age, sizeof age);
	const json_t *exp = mu__jget(o, "spec.expirationSeconds");
	if (json_is_integer(exp))
		mu__age(json_integer_value(exp), dur, sizeof dur);
	const char *cert = mu__jstr(o, "status.certificate");
	snprintf(cond, sizeof cond, "%s%s%s",
		 mu__csr_count_cond(o, "Denied") ? "Denied" : mu__csr_count_cond(o, "Approved") ? "Approved" : "Pending",
		 mu__csr_count_cond(o, "Failed") ? ",Failed" : "", cert && *cert ? ",Issued" : "");
	const char *sn = mu__jstr(o, "spec.signerName");
	json_array_append_new(cells, json_string(nz(mu__jstr(o, "metadata.name"))));
	json_array_append_new(cells, json_string(age));
	json_array_append_new(cells, json_string(sn && *sn ? sn : "<none>"));
	json_array_append_new(cells, json_string(nz(mu__jstr(o, "spec.username"))));
	json_array_append_new(cells, json_string(dur));
	json_array_append_new(cells, json_string(cond));
}
