/*
 * test_agent.c - the node agent: sysfs content parsers (cpulist edge cases
 * above all), discovery on the recorded trees tests/data/sysfs/{dgx8,pcie4}
 * and on small trees written here (no NUMA info, plain directories, broken
 * files), the JSON and YAML writers (checked with libyaml, which must read
 * both back to the same events), and discovery on this machine's /sys,
 * compared with the node files read independently.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/sysfs.h"
#include "check.h"

#define DGX8 "tests/data/sysfs/dgx8"
#define PCIE4 "tests/data/sysfs/pcie4"

/* --- helpers --- */

/* Parses s as a cpulist and formats it back; "ERR<code>" on failure. */
static const char *cpul(const char *s, char *buf, size_t len)
{
	mu_cpulist_t l;
	mu_cpulist_init(&l);
	int rc = mu_cpulist_parse(s, strlen(s), &l);
	if (rc != MU_OK)
		snprintf(buf, len, "ERR%d", rc);
	else
		mu_cpulist_format(&l, buf, len);
	mu_cpulist_release(&l);
	return buf;
}

/* Writes text to ROOT/rel, creating directories. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *mktree(void)
{
	char tmpl[] = "/tmp/muster-agent-XXXXXX";
	char *d = mkdtemp(tmpl);
	if (!d)
		return NULL;
	char *c = malloc(strlen(d) + 1);
	if (c)
		strcpy(c, d);
	return c;
}

static void rmtree(char *root)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	free(root);
}

/* Writes t as fmt into a malloc'd string. */
static char *render(const mu_topo_t *t, const char *name, mu_topo_format_t fmt)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	if (!f)
		return NULL;
	int rc = mu_topo_write(t, name, fmt, f);
	fclose(f);
	if (rc != MU_OK) {
		free(s);
		return NULL;
	}
	return s;
}

/* Parses text with libyaml into a string of events ("{" "[" "=value" "]"
 * "}"), or NULL when libyaml rejects it. */
static char *yaml_events(const char *text)
{
	yaml_parser_t p;
	yaml_event_t ev;
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	if (!f || !yaml_parser_initialize(&p))
		return NULL;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	bool ok = true, done = false;
	while (ok && !done) {
		if (!yaml_parser_parse(&p, &ev)) {
			ok = false;
			break;
		}
		switch (ev.type) {
		case YAML_MAPPING_START_EVENT: fputs("{", f); break;
		case YAML_MAPPING_END_EVENT: fputs("}", f); break;
		case YAML_SEQUENCE_START_EVENT: fputs("[", f); break;
		case YAML_SEQUENCE_END_EVENT: fputs("]", f); break;
		case YAML_SCALAR_EVENT:
			fprintf(f, "=%s\n", (const char *)ev.data.scalar.value);
			break;
		case YAML_STREAM_END_EVENT: done = true; break;
		default: break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	fclose(f);
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

/* Renders t both ways; checks libyaml reads both to the same events. */
static void check_formats_agree(mu_t_t *t, const mu_topo_t *topo)
{
	char *j = render(topo, "n1", MU_TOPO_JSON), *y = render(topo, "n1", MU_TOPO_YAML);
	CHECK(t, j && y);
	char *je = j ? yaml_events(j) : NULL, *ye = y ? yaml_events(y) : NULL;
	CHECK(t, je && ye);
	if (je && ye)
		CHECK_STR(t, je, ye);
	free(j);
	free(y);
	free(je);
	free(ye);
}

static const mu_pci_dev_t *find_dev(const mu_pci_dev_t *v, int32_t n, const char *addr)
{
	for (int32_t i = 0; i < n; i++)
		if (!strcmp(v[i].addr, addr))
			return &v[i];
	return NULL;
}

/* --- parsers --- */

static void test_cpulist_good(mu_t_t *t)
{
	char b[128];
	CHECK_STR(t, cpul("0-3,8,10-11\n", b, sizeof b), "0-3,8,10-11");
	CHECK_STR(t, cpul("", b, sizeof b), "");
	CHECK_STR(t, cpul("\n", b, sizeof b), "");
	CHECK_STR(t, cpul("5", b, sizeof b), "5");
	CHECK_STR(t, cpul("0,1,2", b, sizeof b), "0-2");
	CHECK_STR(t, cpul("0-1", b, sizeof b), "0-1");
	CHECK_STR(t, cpul("8,0-3,2-5,6-7", b, sizeof b), "0-8");
	CHECK_STR(t, cpul("64-95,0-31", b, sizeof b), "0-31,64-95");
	CHECK_STR(t, cpul("3,3,3", b, sizeof b), "3");
	CHECK_STR(t, cpul("0-31,64-95\r\n", b, sizeof b), "0-31,64-95");
	CHECK_STR(t, cpul("007", b, sizeof b), "7");
	CHECK_STR(t, cpul("65535", b, sizeof b), "65535");
	mu_cpulist_t l;
	mu_cpulist_init(&l);
	CHECK_EQ_INT(t, mu_cpulist_parse("0-65535", 7, &l), MU_OK);
	CHECK_EQ_INT(t, mu_cpulist_count(&l), 65536);
	CHECK_EQ_INT(t, mu_cpulist_parse("0-3,8,10-11", 11, &l), MU_OK);
	CHECK_EQ_INT(t, mu_cpulist_count(&l), 7);
	CHECK(t, mu_cpulist_has(&l, 0) && mu_cpulist_has(&l, 3) && mu_cpulist_has(&l, 8));
	CHECK(t, mu_cpulist_has(&l, 11) && !mu_cpulist_has(&l, 4) && !mu_cpulist_has(&l, 9));
	CHECK(t, !mu_cpulist_has(&l, 12) && !mu_cpulist_has(&l, -1));
	/* Only len bytes are read: "0-3" of "0-3,garbage". */
	CHECK_EQ_INT(t, mu_cpulist_parse("0-3,garbage", 3, &l), MU_OK);
	CHECK_EQ_INT(t, mu_cpulist_count(&l), 4);
	mu_cpulist_release(&l);
}

static void test_cpulist_bad(mu_t_t *t)
{
	char b[64];
	static const char *const parse[] = {
		"a", "0-", "-1", "0,,1", ",0", "0,", "0 1", "0-3:2/4", "0x1",
		" 0", "1-2-3", "0-a", ",", "0\t1", "+1", "1.5"};
	for (size_t i = 0; i < sizeof parse / sizeof *parse; i++)
		if (strcmp(cpul(parse[i], b, sizeof b), "ERR-5"))
			CHECK_STR(t, parse[i], "(should fail to parse)");
	static const char *const range[] = {
		"65536", "0-65536", "3-1", "99999999999999999999", "0-99999999999"};
	for (size_t i = 0; i < sizeof range / sizeof *range; i++)
		if (strcmp(cpul(range[i], b, sizeof b), "ERR-6"))
			CHECK_STR(t, range[i], "(should be out of range)");
	/* A NUL inside is garbage; a failure leaves the list untouched. */
	mu_cpulist_t l;
	mu_cpulist_init(&l);
	CHECK_EQ_INT(t, mu_cpulist_parse("4-5", 3, &l), MU_OK);
	CHECK_EQ_INT(t, mu_cpulist_parse("0\0" "1", 3, &l), MU_EPARSE);
	CHECK_EQ_INT(t, mu_cpulist_parse("1-0", 3, &l), MU_ERANGE);
	CHECK_EQ_INT(t, mu_cpulist_count(&l), 2);
	CHECK(t, mu_cpulist_has(&l, 4));
	mu_cpulist_release(&l);
}

static void test_cpulist_format(mu_t_t *t)
{
	mu_cpulist_t l;
	mu_cpulist_init(&l);
	CHECK_EQ_INT(t, mu_cpulist_parse("0-31,64-95", 10, &l), MU_OK);
	char b[8];
	CHECK_EQ_INT(t, mu_cpulist_format(&l, NULL, 0), 10);
	CHECK_EQ_INT(t, mu_cpulist_format(&l, b, sizeof b), 10);
	CHECK_STR(t, b, "0-31"); /* truncated at an item, NUL-terminated */
	char big[16];
	CHECK_EQ_INT(t, mu_cpulist_format(&l, big, sizeof big), 10);
	CHECK_STR(t, big, "0-31,64-95");
	mu_cpulist_release(&l);
	mu_cpulist_init(&l);
	CHECK_EQ_INT(t, mu_cpulist_format(&l, big, sizeof big), 0);
	CHECK_STR(t, big, "");
	/* Every other CPU of 0..65535: 32768 items, and back. */
	char *s = malloc(200000), *s2 = malloc(200000);
	size_t n = 0;
	for (int c = 0; c <= MU_TOPO_MAX_CPU; c += 2)
		n += (size_t)sprintf(s + n, "%s%d", c ? "," : "", c);
	CHECK_EQ_INT(t, mu_cpulist_parse(s, n, &l), MU_OK);
	CHECK_EQ_INT(t, mu_cpulist_count(&l), 32768);
	CHECK_EQ_INT(t, mu_cpulist_format(&l, s2, 200000), n);
	CHECK(t, memcmp(s, s2, n) == 0);
	free(s);
	free(s2);
	mu_cpulist_release(&l);
}

static void test_scalar_parsers(mu_t_t *t)
{
	int64_t v = 99;
	uint32_t h = 0;
	CHECK_EQ_INT(t, mu__sysfs_int("-1\n", 3, -1, 1023, &v), MU_OK);
	CHECK_EQ_INT(t, v, -1);
	CHECK_EQ_INT(t, mu__sysfs_int("1023", 4, -1, 1023, &v), MU_OK);
	CHECK_EQ_INT(t, v, 1023);
	CHECK_EQ_INT(t, mu__sysfs_int("1024", 4, -1, 1023, &v), MU_ERANGE);
	CHECK_EQ_INT(t, mu__sysfs_int("-2", 2, -1, 1023, &v), MU_ERANGE);
	CHECK_EQ_INT(t, mu__sysfs_int("", 0, -1, 1023, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu__sysfs_int("-", 1, -1, 1023, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu__sysfs_int("1x", 2, -1, 1023, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu__sysfs_int("99999999999999999999999", 23, -1, 1023, &v), MU_ERANGE);
	CHECK_EQ_INT(t, v, 1023);
	CHECK_EQ_INT(t, mu__sysfs_hex("0x030200\n", 9, 0xffffff, &h), MU_OK);
	CHECK_EQ_INT(t, h, 0x030200);
	CHECK_EQ_INT(t, mu__sysfs_hex("0X10DE", 6, 0xffff, &h), MU_OK);
	CHECK_EQ_INT(t, h, 0x10de);
	CHECK_EQ_INT(t, mu__sysfs_hex("0x10000", 7, 0xffff, &h), MU_ERANGE);
	CHECK_EQ_INT(t, mu__sysfs_hex("0x123456789", 11, 0xffffffff, &h), MU_ERANGE);
	CHECK_EQ_INT(t, mu__sysfs_hex("10de", 4, 0xffff, &h), MU_EPARSE);
	CHECK_EQ_INT(t, mu__sysfs_hex("0x", 2, 0xffff, &h), MU_EPARSE);
	CHECK_EQ_INT(t, mu__sysfs_hex("0xg", 3, 0xffff, &h), MU_EPARSE);
	CHECK_EQ_INT(t, h, 0x10de);
}

static void test_meminfo_distance(mu_t_t *t)
{
	const char *mi = "Node 1 MemTotal:       1024 kB\nNode 1 MemFree: 10 kB\n";
	int64_t b = 0;
	CHECK_EQ_INT(t, mu__sysfs_meminfo(mi, strlen(mi), 1, &b), MU_OK);
	CHECK_EQ_INT(t, b, 1024 * 1024);
	CHECK_EQ_INT(t, mu__sysfs_meminfo(mi, strlen(mi), 0, &b), MU_EPARSE);
	const char *none = "Node 0 MemFree: 10 kB\n";
	CHECK_EQ_INT(t, mu__sysfs_meminfo(none, strlen(none), 0, &b), MU_EPARSE);
	const char *two = "Node 0 MemTotal: 1 kB\nNode 0 MemTotal: 2 kB\n";
	CHECK_EQ_INT(t, mu__sysfs_meminfo(two, strlen(two), 0, &b), MU_EPARSE);
	const char *unit = "Node 0 MemTotal: 1 MB\n";
	CHECK_EQ_INT(t, mu__sysfs_meminfo(unit, strlen(unit), 0, &b), MU_EPARSE);
	const char *huge = "Node 0 MemTotal: 9007199254740993 kB\n";
	CHECK_EQ_INT(t, mu__sysfs_meminfo(huge, strlen(huge), 0, &b), MU_ERANGE);
	const char *nul = "Node 0 MemTotal: 1\0 kB\n";
	CHECK_EQ_INT(t, mu__sysfs_meminfo(nul, 23, 0, &b), MU_EPARSE);
	CHECK_EQ_INT(t, b, 1024 * 1024);

	int32_t d[4], n = 0;
	CHECK_EQ_INT(t, mu__sysfs_distance("10 21\n", 6, d, 4, &n), MU_OK);
	CHECK_EQ_INT(t, n, 2);
	CHECK(t, d[0] == 10 && d[1] == 21);
	CHECK_EQ_INT(t, mu__sysfs_distance("10 21 31 41 51", 14, d, 4, &n), MU_ERANGE);
	CHECK_EQ_INT(t, mu__sysfs_distance("10 256", 6, d, 4, &n), MU_ERANGE);
	CHECK_EQ_INT(t, mu__sysfs_distance("10,21", 5, d, 4, &n), MU_EPARSE);
	CHECK_EQ_INT(t, mu__sysfs_distance("\n", 1, d, 4, &n), MU_EPARSE);
	CHECK_EQ_INT(t, n, 2);
}

static void test_pci_addr_peers(mu_t_t *t)
{
	char a[MU_PCI_ADDR_LEN];
	CHECK_EQ_INT(t, mu__pci_addr("0000:07:00.0", 12, a), MU_OK);
	CHECK_STR(t, a, "0000:07:00.0");
	CHECK_EQ_INT(t, mu__pci_addr("00000000:0A:1f.7", 16, a), MU_OK); /* nvidia-smi */
	CHECK_STR(t, a, "0000:0a:1f.7");
	CHECK_EQ_INT(t, mu__pci_addr("10000:e1:00.0", 13, a), MU_OK); /* VMD */
	CHECK_STR(t, a, "10000:e1:00.0");
	CHECK_EQ_INT(t, mu__pci_addr("0000:07:20.0", 12, a), MU_ERANGE);
	CHECK_EQ_INT(t, mu__pci_addr("0000:07:00.8", 12, a), MU_ERANGE);
	CHECK_EQ_INT(t, mu__pci_addr("07:00.0", 7, a), MU_EPARSE);
	CHECK_EQ_INT(t, mu__pci_addr("0000:007:00.0", 13, a), MU_EPARSE);
	CHECK_EQ_INT(t, mu__pci_addr("0000:07:00.0x", 13, a), MU_EPARSE);
	CHECK_EQ_INT(t, mu__pci_addr("000000000:07:00.0", 17, a), MU_EPARSE);
	CHECK_EQ_INT(t, mu__pci_addr("", 0, a), MU_EPARSE);

	char p[4][MU_PCI_ADDR_LEN];
	int32_t n = -1;
	const char *s = "0000:07:00.0  00000000:0F:00.0\n";
	CHECK_EQ_INT(t, mu__sysfs_peers(s, strlen(s), p, 4, &n), MU_OK);
	CHECK_EQ_INT(t, n, 2);
	CHECK_STR(t, p[1], "0000:0f:00.0");
	CHECK_EQ_INT(t, mu__sysfs_peers("\n", 1, p, 4, &n), MU_OK);
	CHECK_EQ_INT(t, n, 0);
	CHECK_EQ_INT(t, mu__sysfs_peers("0000:07:00.0,0000:08:00.0", 25, p, 4, &n), MU_EPARSE);
	s = "0:1:0.0 0:2:0.0 0:3:0.0 0:4:0.0 0:5:0.0";
	CHECK_EQ_INT(t, mu__sysfs_peers(s, strlen(s), p, 4, &n), MU_ERANGE);

	CHECK(t, mu__ifname_ok("eth0") && mu__ifname_ok("ibp12s0") && mu__ifname_ok("enp33s0f0np0"));
	CHECK(t, mu__ifname_ok("a_b.c-d") && mu__ifname_ok("abcdefghijklmno"));
	CHECK(t, !mu__ifname_ok("") && !mu__ifname_ok("abcdefghijklmnop"));
	CHECK(t, !mu__ifname_ok("a b") && !mu__ifname_ok("a,b") && !mu__ifname_ok("a@b"));
	CHECK(t, !mu__ifname_ok("a\"b") && !mu__ifname_ok("\xc3\xa9"));
}

/* --- recorded trees --- */

static void test_dgx8_numa(mu_t_t *t)
{
	mu_topo_t topo;
	mu_diag_t d;
	char b[64];
	mu_topo_init(&topo);
	CHECK_EQ_INT(t, mu_topo_discover(DGX8, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.nnodes, 2);
	if (topo.nnodes == 2) {
		CHECK_EQ_INT(t, topo.nodes[0].id, 0);
		CHECK_EQ_INT(t, topo.nodes[1].id, 1);
		mu_cpulist_format(&topo.nodes[0].cpus, b, sizeof b);
		CHECK_STR(t, b, "0-31,64-95");
		mu_cpulist_format(&topo.nodes[1].cpus, b, sizeof b);
		CHECK_STR(t, b, "32-63,96-127");
		CHECK_EQ_INT(t, mu_cpulist_count(&topo.nodes[1].cpus), 64);
		CHECK_EQ_INT(t, topo.nodes[0].mem_bytes, 512LL << 30);
		CHECK_EQ_INT(t, topo.nodes[1].mem_bytes, 512LL << 30);
		CHECK(t, topo.nodes[0].dist && topo.nodes[1].dist);
		if (topo.nodes[0].dist && topo.nodes[1].dist) {
			CHECK(t, topo.nodes[0].dist[0] == 10 && topo.nodes[0].dist[1] == 21);
			CHECK(t, topo.nodes[1].dist[0] == 21 && topo.nodes[1].dist[1] == 10);
		}
	}
	CHECK_EQ_INT(t, topo.flags, 0);
	CHECK_STR(t, topo.notes, "");
	mu_topo_release(&topo);
}

static void test_dgx8_devices(mu_t_t *t)
{
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	CHECK_EQ_INT(t, mu_topo_discover(DGX8, &topo, &d), MU_OK);
	/* 8 GPUs (the BMC's ASPEED VGA at 0000:08:00.0 is not one), 4 per
	 * NUMA node, one NVLink island, 4 PCIe switches of 2. */
	CHECK_EQ_INT(t, topo.ngpus, 8);
	CHECK_EQ_INT(t, topo.n_nvlink, 1);
	CHECK_EQ_INT(t, topo.n_pcie, 4);
	CHECK(t, !find_dev(topo.gpus, topo.ngpus, "0000:08:00.0"));
	int per_zone[2] = {0, 0};
	for (int32_t i = 0; i < topo.ngpus; i++) {
		const mu_pci_dev_t *g = &topo.gpus[i];
		CHECK(t, g->zone == 0 || g->zone == 1);
		per_zone[g->zone & 1]++;
		CHECK_EQ_INT(t, g->vendor, 0x10de);
		CHECK_EQ_INT(t, g->device, 0x20b0);
		CHECK_EQ_INT(t, g->class_code, 0x030200);
		CHECK_EQ_INT(t, g->nvlink_group, 0);
		CHECK_EQ_INT(t, g->pcie_group, i / 2);
		CHECK_EQ_INT(t, g->numa_node, i / 4);
		CHECK_EQ_INT(t, g->zone, i / 4);
	}
	CHECK(t, per_zone[0] == 4 && per_zone[1] == 4);
	const mu_pci_dev_t *g = find_dev(topo.gpus, topo.ngpus, "0000:43:00.0");
	CHECK(t, g != NULL);
	if (g) {
		CHECK_STR(t, g->pcie_root, "0000:40:01.1");
		CHECK_EQ_INT(t, g->pcie_group, 1);
	}
	/* 8 NICs, named from net/, beside the GPUs of their switch. */
	CHECK_EQ_INT(t, topo.nnics, 8);
	static const char *const names[] = {"ibp5s0", "ibp6s0", "ibp69s0", "ibp70s0",
					    "ibp133s0", "ibp134s0", "ibp197s0", "ibp198s0"};
	for (int32_t i = 0; i < topo.nnics && i < 8; i++) {
		const mu_pci_dev_t *n = &topo.nics[i];
		CHECK_STR(t, n->name, names[i]);
		CHECK_EQ_INT(t, n->vendor, 0x15b3);
		CHECK_EQ_INT(t, n->class_code, 0x020000);
		CHECK_EQ_INT(t, n->zone, i / 4);
		CHECK_EQ_INT(t, n->pcie_group, i / 2);
		CHECK_EQ_INT(t, n->nvlink_group, -1);
	}
	mu_topo_release(&topo);
}

static void test_dgx8_output(mu_t_t *t)
{
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	CHECK_EQ_INT(t, mu_topo_discover(DGX8, &topo, &d), MU_OK);
	char *j = render(&topo, "dgx-01", MU_TOPO_JSON);
	char *y = render(&topo, "dgx-01", MU_TOPO_YAML);
	CHECK(t, j && y);
	static const char *const in_json[] = {
		"\"apiVersion\": \"topology.node.k8s.io/v1alpha2\"",
		"\"kind\": \"NodeResourceTopology\"",
		"\"metadata\": {\"name\": \"dgx-01\"}",
		"\"topologyPolicies\": [\"None\"]",
		"\"name\": \"node-0\",\n      \"type\": \"Node\"",
		"{\"name\": \"node-1\", \"value\": 21}",
		"{\"name\": \"muster.io/cpus\", \"value\": \"0-31,64-95\"}",
		"{\"name\": \"muster.io/cpus\", \"value\": \"32-63,96-127\"}",
		"{\"name\": \"muster.io/gpus\", \"value\": \"0000:03:00.0,0000:04:00.0,0000:43:00.0,0000:44:00.0\"}",
		"{\"name\": \"muster.io/gpu-link-groups\", \"value\": \"nvlink0:0000:03:00.0|0000:04:00.0|0000:43:00.0|0000:44:00.0;pcie0:0000:03:00.0|0000:04:00.0;pcie1:0000:43:00.0|0000:44:00.0\"}",
		"{\"name\": \"muster.io/nics\", \"value\": \"ibp133s0@0000:85:00.0,ibp134s0@0000:86:00.0,ibp197s0@0000:c5:00.0,ibp198s0@0000:c6:00.0\"}",
		"{\"name\": \"muster.io/nic-link-groups\", \"value\": \"pcie0:0000:05:00.0|0000:06:00.0;pcie1:0000:45:00.0|0000:46:00.0\"}",
		"{\"name\": \"cpu\", \"capacity\": \"64\", \"allocatable\": \"64\", \"available\": \"64\"}",
		"{\"name\": \"memory\", \"capacity\": \"549755813888\", \"allocatable\": \"549755813888\", \"available\": \"549755813888\"}",
		"{\"name\": \"nvidia.com/gpu\", \"capacity\": \"4\", \"allocatable\": \"4\", \"available\": \"4\"}",
		"{\"name\": \"muster.io/numa\", \"value\": \"sysfs\"}",
		"\"nvlink0:0000:03:00.0|0000:04:00.0|0000:43:00.0|0000:44:00.0|0000:83:00.0|0000:84:00.0|0000:c3:00.0|0000:c4:00.0;pcie0:",
	};
	for (size_t i = 0; j && i < sizeof in_json / sizeof *in_json; i++)
		if (!strstr(j, in_json[i]))
			CHECK_STR(t, in_json[i], "(missing from the JSON)");
	CHECK(t, j && !strstr(j, "numa-assumed") && !strstr(j, "muster.io/notes"));
	static const char *const in_yaml[] = {
		"apiVersion: \"topology.node.k8s.io/v1alpha2\"\n",
		"kind: \"NodeResourceTopology\"\n",
		"metadata:\n  name: \"dgx-01\"\n",
		"topologyPolicies:\n  - \"None\"\n",
		"zones:\n  - name: \"node-0\"\n    type: \"Node\"\n    costs:\n      - name: \"node-0\"\n        value: 10\n",
		"      - name: \"muster.io/cpus\"\n        value: \"32-63,96-127\"\n",
		"      - name: \"nvidia.com/gpu\"\n        capacity: \"4\"\n        allocatable: \"4\"\n        available: \"4\"\n",
	};
	for (size_t i = 0; y && i < sizeof in_yaml / sizeof *in_yaml; i++)
		if (!strstr(y, in_yaml[i]))
			CHECK_STR(t, in_yaml[i], "(missing from the YAML)");
	check_formats_agree(t, &topo);
	free(j);
	free(y);
	mu_topo_release(&topo);
}

static void test_pcie4(mu_t_t *t)
{
	mu_topo_t topo;
	mu_diag_t d;
	char b[64];
	mu_topo_init(&topo);
	CHECK_EQ_INT(t, mu_topo_discover(PCIE4, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.nnodes, 1);
	mu_cpulist_format(&topo.nodes[0].cpus, b, sizeof b);
	CHECK_STR(t, b, "0-63");
	CHECK_EQ_INT(t, topo.nodes[0].mem_bytes, 256LL << 30);
	CHECK_EQ_INT(t, topo.flags, MU_TOPO_NUMA_ASSUMED);
	CHECK_EQ_INT(t, topo.ngpus, 4);
	CHECK_EQ_INT(t, topo.n_nvlink, 0);
	CHECK_EQ_INT(t, topo.n_pcie, 2);
	for (int32_t i = 0; i < topo.ngpus; i++) {
		CHECK_EQ_INT(t, topo.gpus[i].numa_node, -1);
		CHECK_EQ_INT(t, topo.gpus[i].zone, 0);
		CHECK_EQ_INT(t, topo.gpus[i].nvlink_group, -1);
		CHECK_EQ_INT(t, topo.gpus[i].pcie_group, i / 2);
		CHECK_EQ_INT(t, topo.gpus[i].class_code, i < 2 ? 0x030000 : 0x030200);
	}
	CHECK_EQ_INT(t, topo.nnics, 2);
	if (topo.nnics == 2) {
		CHECK_STR(t, topo.nics[0].name, "enp33s0f0");
		CHECK_STR(t, topo.nics[1].name, "enp33s0f1");
		CHECK_STR(t, topo.nics[1].addr, "0000:21:00.1");
		CHECK_EQ_INT(t, topo.nics[0].pcie_group, -1);
		CHECK_EQ_INT(t, topo.nics[0].vendor, 0x8086);
	}
	char *j = render(&topo, "pcie4", MU_TOPO_JSON);
	CHECK(t, j != NULL);
	if (j) {
		CHECK(t, strstr(j, "{\"name\": \"muster.io/numa-assumed\", \"value\": "
			  "\"0000:03:00.0,0000:04:00.0,0000:13:00.0,0000:14:00.0,0000:21:00.0,0000:21:00.1\"}"));
		CHECK(t, strstr(j, "\"value\": \"pcie0:0000:03:00.0|0000:04:00.0;pcie1:0000:13:00.0|0000:14:00.0\"}"));
		CHECK(t, strstr(j, "\"value\": \"enp33s0f0@0000:21:00.0,enp33s0f1@0000:21:00.1\"}"));
		CHECK(t, !strstr(j, "nvlink") && !strstr(j, "nic-link-groups"));
		CHECK(t, strstr(j, "{\"name\": \"node-0\", \"value\": 10}"));
	}
	free(j);
	check_formats_agree(t, &topo);
	mu_topo_release(&topo);
}

/* --- small trees written here --- */

/* Adds PCI function ADDR as a plain directory under bus/pci/devices. */
static void pci_plain(const char *root, const char *addr, const char *cls,
		      const char *vendor, const char *numa)
{
	char rel[256];
	snprintf(rel, sizeof rel, "bus/pci/devices/%s/class", addr);
	put(root, rel, cls);
	snprintf(rel, sizeof rel, "bus/pci/devices/%s/vendor", addr);
	put(root, rel, vendor);
	snprintf(rel, sizeof rel, "bus/pci/devices/%s/device", addr);
	put(root, rel, "0x1234\n");
	snprintf(rel, sizeof rel, "bus/pci/devices/%s/numa_node", addr);
	put(root, rel, numa);
}

static void one_node(const char *root)
{
	put(root, "devices/system/node/node0/cpulist", "0-3\n");
	put(root, "devices/system/node/node0/meminfo", "Node 0 MemTotal: 4 kB\n");
	put(root, "devices/system/node/node0/distance", "10\n");
}

static void test_no_numa(mu_t_t *t)
{
	char *root = mktree();
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	put(root, "devices/system/cpu/online", "0-7\n");
	CHECK_EQ_INT(t, mu_topo_discover(root, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.nnodes, 1);
	CHECK_EQ_INT(t, topo.flags, MU_TOPO_NO_NUMA);
	CHECK_EQ_INT(t, topo.nodes[0].id, 0);
	CHECK_EQ_INT(t, mu_cpulist_count(&topo.nodes[0].cpus), 8);
	CHECK_EQ_INT(t, topo.nodes[0].mem_bytes, -1);
	CHECK(t, topo.nodes[0].dist == NULL);
	CHECK(t, strstr(topo.notes, "no bus/pci/devices") != NULL);
	char *j = render(&topo, "n", MU_TOPO_JSON);
	CHECK(t, j && strstr(j, "\"value\": \"unknown: one zone from devices/system/cpu/online\"}"));
	CHECK(t, j && strstr(j, "{\"name\": \"cpu\", \"capacity\": \"8\""));
	CHECK(t, j && !strstr(j, "memory") && !strstr(j, "costs") && !strstr(j, "gpu"));
	CHECK(t, j && strstr(j, "{\"name\": \"muster.io/notes\", \"value\": \"no bus/pci/devices"));
	free(j);
	check_formats_agree(t, &topo);
	mu_topo_release(&topo);
	rmtree(root);
}

/* Discovers root, expecting error rc and a message containing msg. */
static void expect_err(mu_t_t *t, const char *root, int rc, const char *msg)
{
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	int got = mu_topo_discover(root, &topo, &d);
	CHECK_EQ_INT(t, got, rc);
	if (!strstr(d.msg, msg))
		CHECK_STR(t, d.msg, msg);
	CHECK(t, topo.nnodes == 0 && !topo.nodes && !topo.gpus && !topo.nics);
	mu_topo_release(&topo);
}

static void test_errors(mu_t_t *t)
{
	expect_err(t, "/nonexistent/muster-sysfs", MU_ENOENT,
		   "/nonexistent/muster-sysfs: no such directory");
	expect_err(t, "tests/unit/check.h", MU_ENOENT, "no such directory");
	char *root = mktree(), path[4200];
	expect_err(t, root, MU_ENOENT, "not a sysfs tree");

	put(root, "devices/system/node/node0/meminfo", "Node 0 MemTotal: 4 kB\n");
	expect_err(t, root, MU_ENOENT, "node0/cpulist: missing");
	put(root, "devices/system/node/node0/cpulist", "0-3,x\n");
	expect_err(t, root, MU_EPARSE, "node0/cpulist: not a valid cpulist: \"0-3,x\"");
	put(root, "devices/system/node/node0/cpulist", "0-70000\n");
	expect_err(t, root, MU_ERANGE, "node0/cpulist: out-of-range cpulist");
	snprintf(path, sizeof path, "%s/devices/system/node/node0/cpulist", root);
	unlink(path);
	CHECK_EQ_INT(t, mkfifo(path, 0644), 0);
	expect_err(t, root, MU_EINVAL, "node0/cpulist: not a regular file");
	unlink(path);
	put(root, "devices/system/node/node0/cpulist", "0-3\n");
	put(root, "devices/system/node/node0/meminfo", "Node 0 MemTotal: lots\n");
	expect_err(t, root, MU_EPARSE, "node0/meminfo: not a valid meminfo");
	char *big = malloc(70001);
	memset(big, 'x', 70000);
	big[70000] = '\0';
	put(root, "devices/system/node/node0/meminfo", big);
	free(big);
	expect_err(t, root, MU_ELIMIT, "node0/meminfo: larger than 65535 bytes");
	put(root, "devices/system/node/node0/meminfo", "Node 0 MemTotal: 4 kB\n");
	put(root, "devices/system/node/node0/distance", "ten\n");
	expect_err(t, root, MU_EPARSE, "node0/distance: not a valid distance list");
	put(root, "devices/system/node/node0/distance", "10\n");
	rmtree(root);
}

static void test_errors_pci(mu_t_t *t)
{
	char *root = mktree(), path[4200];
	one_node(root);
	pci_plain(root, "0000:07:00.0", "0x030200\n", "0x10de\n", "zero\n");
	expect_err(t, root, MU_EPARSE, "0000:07:00.0/numa_node: not a valid numa_node: \"zero\"");
	put(root, "bus/pci/devices/0000:07:00.0/numa_node", "0\n");
	put(root, "bus/pci/devices/0000:07:00.0/class", "0x10302000\n");
	expect_err(t, root, MU_ERANGE, "0000:07:00.0/class: out-of-range hex value");
	put(root, "bus/pci/devices/0000:07:00.0/class", "0x030200\n");
	snprintf(path, sizeof path, "%s/bus/pci/devices/0000:07:00.0/vendor", root);
	unlink(path);
	expect_err(t, root, MU_ENOENT, "0000:07:00.0/vendor: missing");
	put(root, "bus/pci/devices/0000:07:00.0/vendor", "0x10de\n");
	put(root, "bus/pci/devices/0000:07:00.0/nvlink_peers", "GPU1\n");
	expect_err(t, root, MU_EPARSE, "0000:07:00.0/nvlink_peers: not a valid list of PCI addresses");
	put(root, "bus/pci/devices/0000:07:00.0/nvlink_peers", "\n");
	/* The same device twice, under two spellings. */
	pci_plain(root, "0:7:0.0", "0x030200\n", "0x10de\n", "0\n");
	expect_err(t, root, MU_EPARSE, "two entries for PCI address 0000:07:00.0");
	snprintf(path, sizeof path, "rm -r '%s/bus/pci/devices/0:7:0.0'", root);
	CHECK_EQ_INT(t, system(path), 0);

	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	CHECK_EQ_INT(t, mu_topo_discover(root, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.ngpus, 1);
	mu_topo_release(&topo);
	/* No diag: errors still come back. */
	CHECK_EQ_INT(t, mu_topo_discover("/nonexistent", &topo, NULL), MU_ENOENT);
	rmtree(root);
}

static void test_distances_and_ids(mu_t_t *t)
{
	char *root = mktree();
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	/* Sparse ids, a memory-only node, distances that do not add up. */
	put(root, "devices/system/node/node0/cpulist", "0-3\n");
	put(root, "devices/system/node/node0/distance", "10\n");
	put(root, "devices/system/node/node2/cpulist", "\n");
	put(root, "devices/system/node/node2/distance", "21 10\n");
	put(root, "devices/system/node/node03/cpulist", "9\n");  /* not a node */
	put(root, "devices/system/node/nodex/cpulist", "9\n");   /* not a node */
	put(root, "devices/system/node/online", "0,2\n");
	CHECK_EQ_INT(t, mu_topo_discover(root, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.nnodes, 2);
	CHECK_EQ_INT(t, topo.nodes[1].id, 2);
	CHECK_EQ_INT(t, topo.flags, MU_TOPO_NO_COSTS);
	CHECK(t, !topo.nodes[0].dist && !topo.nodes[1].dist);
	CHECK(t, strstr(topo.notes, "node0/distance has 1 entries for 2 nodes") != NULL);
	CHECK_EQ_INT(t, topo.nodes[0].mem_bytes, -1);
	char *j = render(&topo, "n", MU_TOPO_JSON);
	CHECK(t, j && !strstr(j, "\"costs\"") && !strstr(j, "memory"));
	CHECK(t, j && strstr(j, "\"name\": \"node-2\""));
	CHECK(t, j && strstr(j, "{\"name\": \"muster.io/cpus\", \"value\": \"\"}"));
	CHECK(t, j && strstr(j, "{\"name\": \"cpu\", \"capacity\": \"0\""));
	free(j);
	mu_topo_release(&topo);

	put(root, "devices/system/node/node0/distance", "10 20\n");
	put(root, "devices/system/node/node2/distance", "20 10\n");
	CHECK_EQ_INT(t, mu_topo_discover(root, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.flags, 0);
	j = render(&topo, "n", MU_TOPO_JSON);
	CHECK(t, j && strstr(j, "{\"name\": \"node-2\", \"value\": 20}"));
	free(j);
	check_formats_agree(t, &topo);
	mu_topo_release(&topo);
	rmtree(root);
}

static void test_plain_tree(mu_t_t *t)
{
	char *root = mktree();
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	one_node(root);
	/* Plain directories: no hierarchy, so every GPU is its own domain. */
	pci_plain(root, "0000:07:00.0", "0x030200\n", "0x10de\n", "0\n");
	pci_plain(root, "0000:0a:00.0", "0x030000\n", "0x10de\n", "0\n");
	pci_plain(root, "0000:0b:00.0", "0x038000\n", "0x10de\n", "0\n"); /* other class */
	pci_plain(root, "0000:0c:00.0", "0x030200\n", "0x1002\n", "5\n"); /* AMD */
	pci_plain(root, "0000:0d:00.0", "0x030000\n", "0x1a03\n", "0\n"); /* BMC VGA */
	pci_plain(root, "0000:0e:00.0", "0x020700\n", "0x15b3\n", "-1\n"); /* IB */
	pci_plain(root, "0000:0f:00.0", "0x020000\n", "0x1af4\n", "-1\n"); /* virtio */
	put(root, "bus/pci/devices/0000:0e:00.0/net/bad name/x", "");
	put(root, "bus/pci/devices/0000:0e:00.0/net/ib0/x", "");
	put(root, "bus/pci/devices/0000:0f:00.0/virtio2/net/eth0/x", "");
	put(root, "bus/pci/devices/junk/class", "0x030200\n"); /* not an address */
	/* NVLink peers as nvidia-smi prints them, one side only, and a peer
	 * that is not a GPU here. */
	put(root, "bus/pci/devices/0000:07:00.0/nvlink_peers",
	    "00000000:0A:00.0 0000:99:00.0\n");
	CHECK_EQ_INT(t, mu_topo_discover(root, &topo, &d), MU_OK);
	CHECK_EQ_INT(t, topo.ngpus, 3);
	CHECK_EQ_INT(t, topo.n_pcie, 3);
	CHECK_EQ_INT(t, topo.n_nvlink, 1);
	const mu_pci_dev_t *a = find_dev(topo.gpus, topo.ngpus, "0000:0a:00.0");
	const mu_pci_dev_t *amd = find_dev(topo.gpus, topo.ngpus, "0000:0c:00.0");
	CHECK(t, a && amd);
	if (a && amd) {
		CHECK_STR(t, a->pcie_root, "0000:0a:00.0");
		CHECK_EQ_INT(t, a->nvlink_group, 0);
		CHECK_EQ_INT(t, topo.gpus[0].nvlink_group, 0);
		CHECK_EQ_INT(t, amd->nvlink_group, -1);
		CHECK_EQ_INT(t, amd->zone, 0);
	}
	CHECK_EQ_INT(t, topo.nnics, 2);
	if (topo.nnics == 2) {
		CHECK_STR(t, topo.nics[0].name, "ib0");
		CHECK_EQ_INT(t, topo.nics[0].class_code, 0x020700);
		CHECK_STR(t, topo.nics[1].name, "eth0");
	}
	CHECK_EQ_INT(t, topo.flags, MU_TOPO_NUMA_ASSUMED);
	CHECK(t, strstr(topo.notes, "0000:07:00.0/nvlink_peers names 0000:99:00.0, not a GPU here"));
	CHECK(t, strstr(topo.notes, "0000:0c:00.0: numa_node 5 has no node directory; placed in node-0"));
	CHECK(t, strstr(topo.notes, "0000:0e:00.0: interface name bad name skipped"));
	char *j = render(&topo, "n", MU_TOPO_JSON);
	CHECK(t, j && strstr(j, "{\"name\": \"nvidia.com/gpu\", \"capacity\": \"2\""));
	CHECK(t, j && strstr(j, "{\"name\": \"amd.com/gpu\", \"capacity\": \"1\""));
	CHECK(t, j && strstr(j, "\"value\": \"nvlink0:0000:07:00.0|0000:0a:00.0;"
			     "pcie0:0000:07:00.0;pcie1:0000:0a:00.0;pcie2:0000:0c:00.0\"}"));
	CHECK(t, j && strstr(j, "\"value\": \"ib0@0000:0e:00.0,eth0@0000:0f:00.0\"}"));
	CHECK(t, j && strstr(j, "{\"name\": \"muster.io/numa-assumed\", \"value\": \"0000:0e:00.0,0000:0f:00.0\"}"));
	free(j);
	check_formats_agree(t, &topo);
	mu_topo_release(&topo);
	rmtree(root);
}

static void test_escaping(mu_t_t *t)
{
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	CHECK_EQ_INT(t, mu_topo_discover(PCIE4, &topo, &d), MU_OK);
	const char *name = "a\"b\\c\nd\te\x01\x7f\xc3\xa9: #x";
	char *j = render(&topo, name, MU_TOPO_JSON), *y = render(&topo, name, MU_TOPO_YAML);
	const char *want = "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\\u00c3\\u00a9: #x\"";
	CHECK(t, j && strstr(j, want));
	CHECK(t, y && strstr(y, want));
	for (const char *p = j; p && *p; p++)
		CHECK(t, (unsigned char)*p < 0x7f);
	char *je = j ? yaml_events(j) : NULL, *ye = y ? yaml_events(y) : NULL;
	CHECK(t, je && ye && !strcmp(je, ye));
	CHECK(t, je && strstr(je, "=a\"b\\c\nd\te\x01"));
	free(je);
	free(ye);
	free(j);
	free(y);
	/* A write error comes back as MU_EIO. */
	FILE *f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		CHECK_EQ_INT(t, mu_topo_write(&topo, "n", MU_TOPO_YAML, f), MU_EIO);
		fclose(f);
	}
	mu_topo_release(&topo);
}

/* --- this machine --- */

/* Reads a small file into buf without its trailing newline; false if
 * it cannot. */
static bool slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return true;
}

/* Compares the NUMA nodes found in /sys with nodeN/cpulist and meminfo
 * read here with stdio. */
static void check_real_nodes(mu_t_t *t, const mu_topo_t *topo)
{
	DIR *dir = opendir("/sys/devices/system/node");
	if (!dir) {
		CHECK_EQ_INT(t, topo->flags & MU_TOPO_NO_NUMA, MU_TOPO_NO_NUMA);
		return;
	}
	int seen = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		int id;
		char tail;
		if (sscanf(de->d_name, "node%d%c", &id, &tail) != 1)
			continue;
		seen++;
		const mu_numa_node_t *node = NULL;
		for (int32_t i = 0; i < topo->nnodes; i++)
			if (topo->nodes[i].id == id)
				node = &topo->nodes[i];
		CHECK(t, node != NULL);
		char path[512], want[8192], got[8192], mem[65536];
		snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", id);
		CHECK(t, slurp(path, want, sizeof want));
		if (!node)
			continue;
		mu_cpulist_format(&node->cpus, got, sizeof got);
		CHECK_STR(t, got, want);
		snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", id);
		long long kb = -1;
		if (slurp(path, mem, sizeof mem)) {
			const char *m = strstr(mem, "MemTotal:");
			CHECK(t, m && sscanf(m, "MemTotal: %lld kB", &kb) == 1);
		}
		CHECK_EQ_INT(t, node->mem_bytes, kb < 0 ? -1 : kb * 1024);
	}
	closedir(dir);
	CHECK_EQ_INT(t, topo->nnodes, seen);
	printf("  /sys: %d NUMA node(s), %d CPUs on the first, %d GPU(s), %d NIC(s)\n",
	       seen, mu_cpulist_count(&topo->nodes[0].cpus), (int)topo->ngpus,
	       (int)topo->nnics);
}

/* Counts the GPUs and NICs of /sys/bus/pci/devices with stdio, and checks
 * every NIC name is an interface of /sys/class/net. */
static void check_real_devices(mu_t_t *t, const mu_topo_t *topo)
{
	DIR *dir = opendir("/sys/bus/pci/devices");
	int gpus = 0, nics = 0;
	struct dirent *de;
	while (dir && (de = readdir(dir)) != NULL) {
		char path[512], c[64], v[64];
		unsigned cls = 0, ven = 0;
		snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/class", de->d_name);
		if (de->d_name[0] == '.' || !slurp(path, c, sizeof c))
			continue;
		snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", de->d_name);
		if (!slurp(path, v, sizeof v) || sscanf(c, "%x", &cls) != 1 ||
		    sscanf(v, "%x", &ven) != 1)
			continue;
		if ((cls >> 8 == 0x0300 || cls >> 8 == 0x0302) && (ven == 0x10de || ven == 0x1002))
			gpus++;
		if (cls >> 8 == 0x0200 || cls >> 8 == 0x0207)
			nics++;
	}
	if (dir)
		closedir(dir);
	CHECK_EQ_INT(t, topo->ngpus, gpus);
	CHECK_EQ_INT(t, topo->nnics, nics);
	for (int32_t i = 0; i < topo->nnics; i++) {
		char path[512];
		struct stat st;
		if (!topo->nics[i].name[0])
			continue;
		snprintf(path, sizeof path, "/sys/class/net/%s", topo->nics[i].name);
		CHECK(t, stat(path, &st) == 0);
	}
}

static void test_real_sysfs(mu_t_t *t)
{
	struct stat st;
	if (stat("/sys/devices/system", &st) != 0) {
		printf("  no /sys on this machine: skipped\n");
		return;
	}
	mu_topo_t topo;
	mu_diag_t d;
	mu_topo_init(&topo);
	int rc = mu_topo_discover(NULL, &topo, &d);
	CHECK_EQ_INT(t, rc, MU_OK);
	if (rc != MU_OK) {
		fprintf(stderr, "  %s\n", d.msg);
		return;
	}
	CHECK(t, topo.nnodes >= 1);
	CHECK(t, mu_cpulist_count(&topo.nodes[0].cpus) >= 0);
	int32_t cpus = 0;
	for (int32_t i = 0; i < topo.nnodes; i++)
		cpus += mu_cpulist_count(&topo.nodes[i].cpus);
	CHECK(t, cpus >= 1);
	char online[8192];
	if (slurp("/sys/devices/system/cpu/online", online, sizeof online)) {
		mu_cpulist_t l;
		mu_cpulist_init(&l);
		CHECK_EQ_INT(t, mu_cpulist_parse(online, strlen(online), &l), MU_OK);
		CHECK_EQ_INT(t, cpus, mu_cpulist_count(&l));
		mu_cpulist_release(&l);
	}
	check_real_nodes(t, &topo);
	check_real_devices(t, &topo);
	check_formats_agree(t, &topo);
	mu_topo_release(&topo);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_cpulist_good);
	MU_RUN(&t, test_cpulist_bad);
	MU_RUN(&t, test_cpulist_format);
	MU_RUN(&t, test_scalar_parsers);
	MU_RUN(&t, test_meminfo_distance);
	MU_RUN(&t, test_pci_addr_peers);
	MU_RUN(&t, test_dgx8_numa);
	MU_RUN(&t, test_dgx8_devices);
	MU_RUN(&t, test_dgx8_output);
	MU_RUN(&t, test_pcie4);
	MU_RUN(&t, test_no_numa);
	MU_RUN(&t, test_errors);
	MU_RUN(&t, test_errors_pci);
	MU_RUN(&t, test_distances_and_ids);
	MU_RUN(&t, test_plain_tree);
	MU_RUN(&t, test_escaping);
	MU_RUN(&t, test_real_sysfs);
	return mu_t_done(&t);
}
