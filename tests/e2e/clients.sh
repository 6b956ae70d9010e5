#!/bin/sh
# clients.sh - `muster up` driven by the official Kubernetes clients other
# than kubectl: the Python client (Debian's python3-kubernetes, run by
# tests/clients/python_client.py) and the JavaScript client
# (@kubernetes/client-node, pinned below, installed with npm into
# build/clients-js at test time; skipped with a message only when npm cannot
# reach its registry).  Also the slowloris check: idle connections must not
# keep new requests out (tests/clients/slowloris.py, loopback, bounded).
# Usage: sh tests/e2e/clients.sh PATH_TO_MUSTER.  Ends with
# "e2e clients: N passed, N failed".
E2E_NAME=clients; . "$(dirname "$0")/lib/common.sh"
JS_CLIENT_VERSION=1.1.2   # its models are OpenAPI v1.32.0, the version muster up reports
SPID=""
on_exit() { [ -n "$SPID" ] && kill -9 "$SPID" 2>/dev/null; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

"$M" up --listen 127.0.0.1:0 --data "$T/data" --cluster "$ROOT/examples/cluster-small.yaml" --no-fsync \
	--quiet >"$T/up.out" 2>"$T/up.err" &
SPID=$!
i=0
S=""
while [ "$i" -lt 150 ]; do
	S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out")
	if [ -n "$S" ] && curl -sfk "$S/readyz" >/dev/null 2>&1; then break; fi
	sleep 0.1; i=$((i + 1))
done
[ -n "$S" ] || { bad "server did not start"; cat "$T/up.err"; done_; }

# --- the Python client --------------------------------------------------------
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
	/usr/bin/python3 "$ROOT/tests/clients/python_client.py" "$T/data/kubeconfig" ${PY_BENCH:+--bench "$PY_BENCH"} >"$T/py" 2>&1
	if tail -1 "$T/py" | grep -q "python client: [0-9]* passed, 0 failed"; then ok; else bad "python client"; cat "$T/py"; fi
	grep "creates/s" "$T/py" || true
else
	bad "python3-kubernetes is missing (scripts/install-deps.sh installs it)"
fi

# --- the JavaScript client ------------------------------------------------------
JSDIR="$ROOT/build/clients-js"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	bad "node and npm are missing (scripts/install-deps.sh installs them)"
elif [ ! -f "$JSDIR/node_modules/@kubernetes/client-node/package.json" ] ||
	! grep -q "\"version\": \"$JS_CLIENT_VERSION\"" "$JSDIR/node_modules/@kubernetes/client-node/package.json" &&
	! (mkdir -p "$JSDIR" && cd "$JSDIR" && timeout 300 npm install --no-audit --no-fund --loglevel=error \
		"@kubernetes/client-node@$JS_CLIENT_VERSION" >"$T/npm" 2>&1); then
	echo "clients.sh: SKIPPED the JavaScript client: npm could not install @kubernetes/client-node@$JS_CLIENT_VERSION:"
	tail -3 "$T/npm"
else
	# the JavaScript client refuses plain http:// unless told to skip TLS
	# verification (client-node 1.x); with TLS it needs nothing
	if grep -q 'server: http://' "$T/data/kubeconfig"; then
		sed 's|^    server: http://|    insecure-skip-tls-verify: true\n    server: http://|' "$T/data/kubeconfig" >"$T/kc-js"
	else
		cp "$T/data/kubeconfig" "$T/kc-js"
	fi
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/js.key" -subj "/CN=js-user" \
		-out "$T/js.csr" 2>/dev/null
	node "$ROOT/tests/clients/js_client.js" "$JSDIR" "$T/kc-js" "$T/js.csr" >"$T/js" 2>&1
	if tail -1 "$T/js" | grep -q "js client: [0-9]* passed, 0 failed"; then ok; else bad "js client"; cat "$T/js"; fi
fi

# --- slowloris: 700 connections that never finish a request (more than the
# 512 connections a server keeps) must not keep a real request out -----------
HOSTPORT=${S#https://}
/usr/bin/python3 "$ROOT/tests/clients/slowloris.py" "${HOSTPORT%:*}" "${HOSTPORT##*:}" 700 12 >"$T/slow" 2>&1 &
LPID=$!
i=0
while [ "$i" -lt 100 ] && ! grep -q '^open' "$T/slow"; do sleep 0.1; i=$((i + 1)); done
has slowloris-open "$T/slow" "^open 7[0-9][0-9]"
TOKEN=$(cat "$T/data/token")
t0=$(date +%s)
code=$(command curl -s -m 10 --cacert "$T/data/tls.crt" -H "Authorization: Bearer $TOKEN" -o "$T/body" -w '%{http_code}' "$S/api/v1/namespaces")
if [ "$code" = 200 ] && [ $(($(date +%s) - t0)) -le 5 ]; then ok; else bad "slowloris: a request during 700 idle connections got HTTP $code after $(($(date +%s) - t0)) s"; fi
"$KC" --kubeconfig "$T/data/kubeconfig" get nodes >"$T/out" 2>&1; has slowloris-kubectl "$T/out" "Ready"
wait "$LPID"
has slowloris-evicted "$T/slow" "closed by the server: [1-9]"
cat "$T/slow"

kill -TERM "$SPID"
i=0
while kill -0 "$SPID" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$SPID" 2>/dev/null; then bad "server did not stop on SIGTERM"; else ok; SPID=""; fi
if grep -qE 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$T/up.err"; then bad "sanitizer report"; cat "$T/up.err"; else ok; fi
done_
