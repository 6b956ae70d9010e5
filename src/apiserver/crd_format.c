/*
 * crd_format.c - the string formats a CRD schema's `format` names, checked
 * as kube-apiserver checks them.  kube-apiserver keeps in a CRD's schema
 * only the formats of apiextensions-apiserver's supported list (its
 * validation/formats.go; a name is compared with its dashes removed, so
 * "date-time" is "datetime") and validates a string value against each with
 * kube-openapi's strfmt registry (pkg/validation/strfmt): bsonobjectid, uri,
 * email, hostname, ipv4, ipv6, cidr, mac, uuid, uuid3, uuid4, uuid5, isbn,
 * isbn10, isbn13, creditcard, ssn, hexcolor, rgbcolor, byte, password,
 * date, duration and datetime.  Every other format (int32, int64, float,
 * double, and names nobody defined) is dropped from the schema there, so
 * here it is accepted without a check.  Only strings are checked.
 *
 * Where strfmt calls Go's parsers (net/mail, net/url, net.ParseMAC,
 * time.Parse) the checks below follow those parsers' grammar for the
 * common forms; docs/apiserver.md lists what differs (an email's comments
 * and quoted display names, a URI's host syntax).  Each check is linear
 * in the length of the string.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/crd.h"

/* --- small scanners ----------------------------------------------------- */

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* s matches (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?V[0-9a-f]{3}-?X[0-9a-f]{3}-?[0-9a-f]{12}$
 * where V is the version digit (0: any hex) and X one of variant (NULL:
 * any hex), as strfmt's UUID patterns. */
static bool uuid_ok(const char *s, char version, const char *variant)
{
	static const int len[5] = {8, 4, 4, 4, 12};
	for (int g = 0; g < 5; g++) {
		if (g && *s == '-')
			s++;
		if (strlen(s) < (size_t)len[g] || !all_hex(s, (size_t)len[g]))
			return false;
		if (g == 2 && version && s[0] != version)
			return false;
		if (g == 3 && variant && !strchr(variant, tolower((unsigned char)s[0])))
			return false;
		s += len[g];
	}
	return *s == '\0';
}

/* Digits of s, n of them (value into *v unless NULL; at most 9 digits
 * count). */
static bool digits(const char *s, size_t n, int *v)
{
	int x = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		if (x < 100000000)
			x = x * 10 + (s[i] - '0');
	}
	if (v)
		*v = x;
	return true;
}

/* --- dates and durations ------------------------------------------------ */

/* Go's time.Parse("2006-01-02", s): four-digit year, a month 01..12 and a
 * day that month has. */
static bool date_ok(const char *s, size_t n)
{
	int y, m, d;
	if (n != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4, &y) || !digits(s + 5, 2, &m) ||
	    !digits(s + 8, 2, &d))
		return false;
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	return !(m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
}

/* strfmt's IsDateTime: the part before the first "t" (case folded) is a
 * date, the part after it HH:MM:SS(.frac)?(z|+hh:mm) with hour <= 23,
 * minutes and seconds <= 59. */
static bool datetime_ok(const char *s)
{
	size_t n = strlen(s);
	const char *t = n >= 4 ? strpbrk(s, "tT") : NULL;
	if (!t || !date_ok(s, (size_t)(t - s)))
		return false;
	const char *q = t + 1;
	int h, mi, se;
	if (strpbrk(q, "tT") || strlen(q) < 9 || q[2] != ':' || q[5] != ':' || !digits(q, 2, &h) ||
	    !digits(q + 3, 2, &mi) || !digits(q + 6, 2, &se) || h > 23 || mi > 59 || se > 59)
		return false;
	q += 8;
	if (*q && *q != 'z' && *q != 'Z' && *q != '+' && *q != '-') { /* "(.[0-9]+)?": any one character */
		q++;
		size_t k = strspn(q, "0123456789");
		if (!k)
			return false;
		q += k;
	}
	if ((q[0] == 'z' || q[0] == 'Z') && !q[1])
		return true;
	return (q[0] == '+' || q[0] == '-') && strlen(q) == 6 && digits(q + 1, 2, NULL) && q[3] == ':' &&
	       digits(q + 4, 2, NULL);
}

/* Go's time.ParseDuration: [-+]? then one or more number+unit ("1.5h",
 * "2h45m"), units ns us µs μs ms s m h; or "0". */
static bool go_duration_ok(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!strcmp(s, "0"))
		return true;
	if (!*s)
		return false;
	static const char *const units[] = {"ns", "us", "\xc2\xb5s", "\xce\xbcs", "ms", "s", "m", "h"};
	while (*s) {
		size_t a = strspn(s, "0123456789"), b = 0;
		if (s[a] == '.')
			b = 1 + strspn(s + a + 1, "0123456789");
		if (a == 0 && b <= 1)
			return false;
		s += a + b;
		size_t best = 0;
		for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
			size_t l = strlen(units[i]);
			if (!strncmp(s, units[i], l) && (s[l] == '\0' || s[l] == '.' || isdigit((unsigned char)s[l])) &&
			    l > best)
				best = l;
		}
		if (!best)
			return false;
		s += best;
	}
	return true;
}

/* The unit of one "<digits> <letters>" group of strfmt's Scala-style
 * durations is one it knows: an exact variant, or a word starting with the
 * last variant ("days", "hours"). */
static bool scala_unit_ok(const char *u, size_t n)
{
	static const char *const v[8][3] = {{"ns", "nano", NULL}, {"us", "\xc2\xb5s", "micro"}, {"ms", "milli", NULL},
					    {"s", "sec", NULL},    {"m", "min", NULL},        {"h", "hr", "hour"},
					    {"d", "day", NULL},    {"w", "wk", "week"}};
	char lo[64];
	if (n >= sizeof lo)
		return false;
	for (size_t i = 0; i < n; i++)
		lo[i] = (char)tolower((unsigned char)u[i]);
	lo[n] = '\0';
	for (int i = 0; i < 8; i++) {
		int last = v[i][2] ? 2 : 1;
		for (int j = 0; j <= last; j++)
			if (!strcmp(lo, v[i][j]) || (j == last && !strncmp(lo, v[i][j], strlen(v[i][j]))))
				return true;
	}
	return false;
}

/* strfmt's ParseDuration: Go's syntax, else ^\s*(?:\d+\s*[A-Za-zµ]+\s*)+$
 * with at least one group in a known unit. */
static bool duration_ok(const char *s)
{
	if (go_duration_ok(s))
		return true;
	bool known = false;
	s += strspn(s, " \t\n\r\f\v");
	if (!*s)
		return false;
	while (*s) {
		size_t d = strspn(s, "0123456789");
		if (!d)
			return false;
		s += d;
		s += strspn(s, " \t\n\r\f\v");
		const char *u = s;
		while (isalpha((unsigned char)*s) || ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] == 0xb5))
			s += (unsigned char)*s == 0xc2 ? 2 : 1;
		if (s == u)
			return false;
		known = known || scala_unit_ok(u, (size_t)(s - u));
		s += strspn(s, " \t\n\r\f\v");
	}
	return known;
}

/* --- network ------------------------------------------------------------ */

/* An IPv4 address as k8s.io/utils/net's ParseIPSloppy takes it: four
 * decimal parts of at most 255, leading zeros allowed. */
static bool ipv4_sloppy(const char *s, size_t n)
{
	int parts = 0;
	size_t i = 0;
	while (parts < 4) {
		size_t d = 0;
		long v = 0;
		while (i < n && isdigit((unsigned char)s[i]) && v <= 255) {
			v = v * 10 + (s[i++] - '0');
			d++;
		}
		if (!d || v > 255)
			return false;
		parts++;
		if (parts < 4 && (i >= n || s[i++] != '.'))
			return false;
	}
	return i == n;
}

static bool ipv6_ok(const char *s, size_t n)
{
	char buf[64];
	unsigned char out[16];
	if (n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET6, buf, out) == 1;
}

/* strfmt's cidr: ParseCIDRSloppy, an address and a prefix length. */
static bool cidr_ok(const char *s)
{
	const char *sl = strchr(s, '/');
	if (!sl || !sl[1] || strspn(sl + 1, "0123456789") != strlen(sl + 1) || strlen(sl + 1) > 3)
		return false;
	int bits = atoi(sl + 1);
	size_t n = (size_t)(sl - s);
	if (ipv4_sloppy(s, n))
		return bits <= 32;
	return ipv6_ok(s, n) && bits <= 128;
}

/* Go's net.ParseMAC: 6, 8 or 20 octets as xx:xx:..., xx-xx-... or
 * xxxx.xxxx.xxxx. */
static bool mac_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 14)
		return false;
	if (s[2] == ':' || s[2] == '-') {
		if ((n + 1) % 3)
			return false;
		size_t oct = (n + 1) / 3;
		if (oct != 6 && oct != 8 && oct != 20)
			return false;
		for (size_t i = 0; i < n; i += 3)
			if (!all_hex(s + i, 2) || (i + 2 < n && s[i + 2] != s[2]))
				return false;
		return true;
	}
	if (s[4] == '.') {
		if ((n + 1) % 5)
			return false;
		size_t oct = 2 * (n + 1) / 5;
		if (oct != 6 && oct != 8 && oct != 20)
			return false;
		for (size_t i = 0; i < n; i += 5)
			if (!all_hex(s + i, 4) || (i + 4 < n && s[i + 4] != '.'))
				return false;
		return true;
	}
	return false;
}

/* A character strfmt's hostname pattern takes as a letter or symbol
 * ([a-zA-Z0-9\p{S}\p{L}]): ASCII letters, digits and symbols, and every
 * non-ASCII byte (muster does not look up Unicode classes). */
static bool host_ch(unsigned char c)
{
	return isalnum(c) || c >= 0x80 || (c && strchr("$+<=>^`|~", c));
}

/* strfmt's IsHostname: one label ([a-z0-9] then at most one "-"), or
 * labels ([a-z0-9], then [a-z0-9-]{0,61} ending in [a-z0-9]) each
 * followed by a dot, and a top-level label of 2 to 63 letters; at most 255
 * bytes, no label over 63. */
static bool hostname_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 255)
		return false;
	const char *dot = strrchr(s, '.');
	if (!dot) { /* [c]((-?[c]{0,62})?) */
		size_t i = 1 + (n > 1 && s[1] == '-');
		if (!host_ch((unsigned char)s[0]) || n - i > 62)
			return false;
		for (; i < n; i++)
			if (!host_ch((unsigned char)s[i]))
				return false;
		return true;
	}
	const char *tld = dot + 1;
	size_t tl = strlen(tld);
	if (tl < 2 || tl > 63)
		return false;
	for (size_t i = 0; i < tl; i++)
		if (!isalpha((unsigned char)tld[i]) && (unsigned char)tld[i] < 0x80)
			return false;
	for (const char *p = s; p < dot + 1;) {
		const char *e = strchr(p, '.');
		size_t l = (size_t)(e - p);
		if (!l || l > 63 || !host_ch((unsigned char)p[0]) || !host_ch((unsigned char)p[l - 1]))
			return false;
		for (size_t i = 0; i < l; i++)
			if (!host_ch((unsigned char)p[i]) && p[i] != '-')
				return false;
		p = e + 1;
	}
	return true;
}

/* RFC 5322 atext, the characters of a dot-atom. */
static bool atext(unsigned char c)
{
	return isalnum(c) || strchr("!#$%&'*+-/=?^_`{|}~", c) || c >= 0x80;
}

static bool dot_atom(const char *s, size_t n)
{
	if (!n || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(atext((unsigned char)s[i]) || (s[i] == '.' && s[i + 1] != '.')))
			return false;
	return true;
}

/* An addr-spec as net/mail reads it: a dot-atom or quoted local part, "@",
 * a dot-atom domain or a [domain literal]. */
static bool addr_spec(const char *s, size_t n)
{
	const char *at = NULL;
	size_t ln;
	if (n && s[0] == '"') {
		size_t i = 1;
		while (i < n && s[i] != '"')
			i += s[i] == '\\' ? 2 : 1;
		if (i >= n || i + 1 >= n || s[i + 1] != '@')
			return false;
		at = s + i + 1;
		ln = 0;
	} else {
		at = memchr(s, '@', n);
		if (!at)
			return false;
		ln = (size_t)(at - s);
		if (!dot_atom(s, ln))
			return false;
	}
	(void)ln;
	const char *d = at + 1;
	size_t dn = n - (size_t)(d - s);
	if (dn >= 2 && d[0] == '[' && d[dn - 1] == ']')
		return !memchr(d + 1, '[', dn - 2) && !memchr(d + 1, ']', dn - 2);
	return dot_atom(d, dn);
}

/* strfmt's IsEmail (net/mail.ParseAddress): "local@domain", or a display
 * name of words followed by "<local@domain>"; surrounding spaces allowed. */
static bool email_ok(const char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	if (n && s[n - 1] == '>') {
		const char *lt = memchr(s, '<', n);
		if (!lt)
			return false;
		for (const char *p = s; p < lt; p++)
			if (!(atext((unsigned char)*p) || *p == ' ' || *p == '.' || *p == '"'))
				return false;
		return addr_spec(lt + 1, (size_t)(s + n - 1 - (lt + 1)));
	}
	return addr_spec(s, n);
}

/* Go's url.ParseRequestURI: an absolute URI (a scheme, then ":") or an
 * absolute path, no control characters or spaces in a host, no fragment
 * parsing ("#" is part of the path). */
static bool uri_ok(const char *s)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	if (*s == '/')
		return true;
	if (!isalpha((unsigned char)*s))
		return false;
	const char *p = s + 1;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	if (*p != ':')
		return false;
	if (p[1] == '/' && p[2] == '/') {
		const char *h = p + 3;
		size_t hl = strcspn(h, "/?");
		for (size_t i = 0; i < hl; i++)
			if (h[i] == ' ' || h[i] == '<' || h[i] == '>' || h[i] == '"')
				return false;
	}
	return true;
}

/* --- numbers in strings ------------------------------------------------- */

/* govalidator's ISBN checks on s without spaces and dashes. */
static bool isbn_ok(const char *s, int version)
{
	char d[32];
	size_t n = 0;
	for (; *s; s++)
		if (!isspace((unsigned char)*s) && *s != '-') {
			if (n + 1 >= sizeof d)
				return false;
			d[n++] = *s;
		}
	d[n] = '\0';
	if ((version == 0 || version == 10) && n == 10 && digits(d, 9, NULL) &&
	    (isdigit((unsigned char)d[9]) || d[9] == 'X')) {
		int sum = 0;
		for (int i = 0; i < 9; i++)
			sum += (i + 1) * (d[i] - '0');
		sum += 10 * (d[9] == 'X' ? 10 : d[9] - '0');
		if (sum % 11 == 0)
			return true;
	}
	if ((version == 0 || version == 13) && n == 13 && digits(d, 13, NULL)) {
		int sum = 0;
		for (int i = 0; i < 12; i++)
			sum += (i % 2 ? 3 : 1) * (d[i] - '0');
		if ((10 - sum % 10) % 10 == d[12] - '0')
			return true;
	}
	return false;
}

static bool starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

/* govalidator's IsCreditCard: the digits of s (other characters dropped)
 * are a Visa, MasterCard, Discover, Amex, Diners or JCB number passing
 * Luhn's check. */
static bool creditcard_ok(const char *s)
{
	char d[64];
	size_t n = 0;
	for (; *s; s++)
		if (isdigit((unsigned char)*s)) {
			if (n + 1 >= sizeof d)
				return false;
			d[n++] = *s;
		}
	d[n] = '\0';
	if (n < 13)
		return false;
	bool brand = (d[0] == '4' && (n == 13 || n == 16)) || (d[0] == '5' && d[1] >= '1' && d[1] <= '5' && n == 16) ||
		     ((starts(d, "6011") || starts(d, "65")) && n == 16) ||
		     (d[0] == '3' && (d[1] == '4' || d[1] == '7') && n == 15) ||
		     (d[0] == '3' && ((d[1] == '0' && d[2] >= '0' && d[2] <= '5') || d[1] == '6' || d[1] == '8') && n == 14) ||
		     ((starts(d, "2131") || starts(d, "1800")) && n == 15) ||
		     (starts(d, "35") && n == 16);
	if (!brand)
		return false;
	int sum = 0;
	for (size_t i = 0; i < n; i++) {
		int x = d[n - 1 - i] - '0';
		if (i % 2 && (x *= 2) > 9)
			x -= 9;
		sum += x;
	}
	return sum % 10 == 0;
}

/* govalidator's IsBase64: groups of four of [A-Za-z0-9+/], the last one
 * possibly padded with "=" or "=="; not empty. */
static bool base64_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n % 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool b64 = isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '/';
		bool pad = s[i] == '=' && i >= n - 2 && (i == n - 1 || s[n - 1] == '=');
		if (!b64 && !pad)
			return false;
	}
	return true;
}

/* ^rgb\(\s*N\s*,\s*N\s*,\s*N\s*\)$ with N 0..255 without leading zeros. */
static bool rgb_ok(const char *s)
{
	if (strncmp(s, "rgb(", 4))
		return false;
	s += 4;
	for (int i = 0; i < 3; i++) {
		s += strspn(s, " \t\n\r\f\v");
		size_t d = strspn(s, "0123456789");
		if (!d || d > 3 || (d > 1 && s[0] == '0') || atoi(s) > 255)
			return false;
		s += d;
		s += strspn(s, " \t\n\r\f\v");
		if (*s++ != (i < 2 ? ',' : ')'))
			return false;
	}
	return *s == '\0';
}

/* --- the registry -------------------------------------------------------- */

/* The format name as strfmt looks it up: dashes removed. */
static void normalize(const char *f, char *out, size_t len)
{
	size_t k = 0;
	for (; *f && k + 1 < len; f++)
		if (*f != '-')
			out[k++] = *f;
	out[k] = '\0';
}

bool mu__crd_format_supported(const char *format)
{
	static const char *const names[] = {"bsonobjectid", "uri",    "email",    "hostname", "ipv4",     "ipv6",
					    "cidr",         "mac",    "uuid",     "uuid3",    "uuid4",    "uuid5",
					    "isbn",         "isbn10", "isbn13",   "creditcard", "ssn",    "hexcolor",
					    "rgbcolor",     "byte",   "password", "date",     "duration", "datetime"};
	char f[32];
	if (!format || strlen(format) >= sizeof f)
		return false;
	normalize(format, f, sizeof f);
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(f, names[i]))
			return true;
	return false;
}

bool mu__crd_format_ok(const char *format, const char *s)
{
	char f[32];
	if (!mu__crd_format_supported(format))
		return true;
	normalize(format, f, sizeof f);
	size_t n = strlen(s);
	if (!strcmp(f, "bsonobjectid"))
		return n == 24 && all_hex(s, n);
	if (!strcmp(f, "uri"))
		return uri_ok(s);
	if (!strcmp(f, "email"))
		return email_ok(s);
	if (!strcmp(f, "hostname"))
		return hostname_ok(s);
	if (!strcmp(f, "ipv4"))
		return ipv4_sloppy(s, n) || (strchr(s, '.') && ipv6_ok(s, n));
	if (!strcmp(f, "ipv6"))
		return strchr(s, ':') && ipv6_ok(s, n);
	if (!strcmp(f, "cidr"))
		return cidr_ok(s);
	if (!strcmp(f, "mac"))
		return mac_ok(s);
	if (!strncmp(f, "uuid", 4))
		return uuid_ok(s, f[4], f[4] == '4' || f[4] == '5' ? "89ab" : NULL);
	if (!strncmp(f, "isbn", 4))
		return isbn_ok(s, atoi(f + 4));
	if (!strcmp(f, "creditcard"))
		return creditcard_ok(s);
	if (!strcmp(f, "ssn"))
		return n == 11 && digits(s, 3, NULL) && (s[3] == '-' || s[3] == ' ') && digits(s + 4, 2, NULL) &&
		       (s[6] == '-' || s[6] == ' ') && digits(s + 7, 4, NULL);
	if (!strcmp(f, "hexcolor"))
		return (n == (size_t)(3 + (s[0] == '#')) || n == (size_t)(6 + (s[0] == '#'))) &&
		       all_hex(s + (s[0] == '#'), n - (s[0] == '#'));
	if (!strcmp(f, "rgbcolor"))
		return rgb_ok(s);
	if (!strcmp(f, "byte"))
		return base64_ok(s);
	if (!strcmp(f, "date"))
		return date_ok(s, n);
	if (!strcmp(f, "datetime"))
		return datetime_ok(s);
	if (!strcmp(f, "duration"))
		return duration_ok(s);
	return true; /* password */
}
