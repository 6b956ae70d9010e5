/*
 * fuzz_sysfs.c - libFuzzer target for the node agent's parsers of sysfs
 * file contents (src/agent/sysfs.h) and its output escaping.  The first
 * byte picks the parser, the rest is the file's content, copied to a buffer
 * of exactly that size (no NUL) so that any over-read trips ASan:
 *
 *   0 cpulist   1 nodeN/meminfo   2 nodeN/distance   3 hex (class, vendor)
 *   4 numa_node 5 PCI address     6 nvlink_peers     7 interface name
 *   8 a string written as JSON and YAML, both read back with libyaml
 *
 * Beyond "no crash", each case checks what a success promises (a cpulist
 * is canonical and formats back to itself, values are in range, addresses
 * are canonical) and aborts when it does not hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "agent/sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MUST(c) do { if (!(c)) abort(); } while (0)

static void fuzz_cpulist(const char *b, size_t n)
{
	mu_cpulist_t l, l2;
	mu_cpulist_init(&l);
	mu_cpulist_init(&l2);
	if (mu_cpulist_parse(b, n, &l) == MU_OK) {
		for (int32_t i = 0; i < l.n; i++) {
			MUST(l.r[i].lo <= l.r[i].hi && l.r[i].hi <= MU_TOPO_MAX_CPU);
			MUST(i == 0 || l.r[i].lo > l.r[i - 1].hi + 1);
			MUST(mu_cpulist_has(&l, l.r[i].lo) && mu_cpulist_has(&l, l.r[i].hi));
			MUST(!mu_cpulist_has(&l, l.r[i].hi + 1));
		}
		size_t need = mu_cpulist_format(&l, NULL, 0);
		char *s = malloc(need + 1);
		MUST(s);
		MUST(mu_cpulist_format(&l, s, need + 1) == need && strlen(s) == need);
		MUST(mu_cpulist_parse(s, need, &l2) == MU_OK && l2.n == l.n);
		MUST(l.n == 0 || !memcmp(l.r, l2.r, (size_t)l.n * sizeof *l.r));
		MUST(mu_cpulist_count(&l) == mu_cpulist_count(&l2));
		free(s);
	}
	mu_cpulist_release(&l);
	mu_cpulist_release(&l2);
}

static void fuzz_pci(const char *b, size_t n)
{
	char a[MU_PCI_ADDR_LEN], a2[MU_PCI_ADDR_LEN];
	if (mu__pci_addr(b, n, a) == MU_OK) {
		MUST(mu__pci_addr(a, strlen(a), a2) == MU_OK && !strcmp(a, a2));
	}
	char (*p)[MU_PCI_ADDR_LEN] = malloc(64 * sizeof *p);
	int32_t k = -1;
	MUST(p);
	if (mu__sysfs_peers(b, n, p, 64, &k) == MU_OK) {
		MUST(k >= 0 && k <= 64);
		for (int32_t i = 0; i < k; i++)
			MUST(mu__pci_addr(p[i], strlen(p[i]), a2) == MU_OK && !strcmp(p[i], a2));
	}
	free(p);
}

/* Reads text with libyaml into a string of events; NULL on a parse error. */
static char *events(const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	MUST(f && yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	bool ok = true;
	for (bool done = false; !done;) {
		if (!yaml_parser_parse(&p, &ev)) {
			ok = false;
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		fprintf(f, "%d", (int)ev.type);
		if (ev.type == YAML_SCALAR_EVENT)
			fprintf(f, "=%s\n", (const char *)ev.data.scalar.value);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	fclose(f);
	if (!ok)
		free(out);
	return ok ? out : NULL;
}

static void fuzz_emit(const char *b, size_t n)
{
	char *s = malloc(n + 1);
	MUST(s);
	memcpy(s, b, n);
	s[n] = '\0'; /* the string ends at the first NUL */
	mu__docb_t d;
	MUST(mu__docb_init(&d) == MU_OK);
	mu__doc_t *l = mu__doc_add(&d, d.root, "list", MU__DOC_LIST);
	mu__doc_str(&d, mu__doc_add(&d, l, NULL, MU__DOC_MAP), "name", s);
	mu__doc_int(&d, l, NULL, (int64_t)n);
	MUST(d.err == MU_OK);
	char *j = NULL, *y = NULL;
	size_t jn = 0, yn = 0;
	FILE *fj = open_memstream(&j, &jn), *fy = open_memstream(&y, &yn);
	MUST(fj && fy);
	MUST(mu__doc_write_json(d.root, fj) == MU_OK);
	MUST(mu__doc_write_yaml(d.root, fy) == MU_OK);
	fclose(fj);
	fclose(fy);
	char *je = events(j, jn), *ye = events(y, yn);
	MUST(je && ye && !strcmp(je, ye));
	free(je);
	free(ye);
	free(j);
	free(y);
	free(s);
	mu__docb_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > MU_TOPO_MAX_FILE)
		return 0;
	size_t n = size - 1;
	char *b = malloc(n ? n : 1);
	MUST(b);
	memcpy(b, data + 1, n);
	int64_t v;
	uint32_t h;
	int32_t d[8], k;
	switch (data[0] % 9) {
	case 0:
		fuzz_cpulist(b, n);
		break;
	case 1:
		if (mu__sysfs_meminfo(b, n, data[0] / 9 % 4, &v) == MU_OK)
			MUST(v >= 0 && v % 1024 == 0);
		break;
	case 2:
		if (mu__sysfs_distance(b, n, d, 8, &k) == MU_OK)
			for (int32_t i = 0; i < k; i++)
				MUST(k >= 1 && k <= 8 && d[i] >= 0 && d[i] <= 255);
		break;
	case 3:
		if (mu__sysfs_hex(b, n, 0xffffff, &h) == MU_OK)
			MUST(h <= 0xffffff);
		break;
	case 4:
		if (mu__sysfs_int(b, n, -1, MU_TOPO_MAX_NODE, &v) == MU_OK)
			MUST(v >= -1 && v <= MU_TOPO_MAX_NODE);
		break;
	case 5:
	case 6:
		fuzz_pci(b, n);
		break;
	case 7: {
		char name[64];
		size_t m = n < sizeof name - 1 ? n : sizeof name - 1;
		memcpy(name, b, m);
		name[m] = '\0';
		if (mu__ifname_ok(name))
			MUST(strlen(name) >= 1 && strlen(name) < MU_IFNAME_LEN &&
			     !strpbrk(name, " ,;|@:/\"\\"));
		break;
	}
	default:
		fuzz_emit(b, n);
		break;
	}
	free(b);
	return 0;
}
