# common.sh - what every end-to-end script shares: the muster under test,
# a scratch directory removed on exit, pass/fail counters, the checks
# (expect, has, hasnt, wait_for), kubectl against a `muster up` data
# directory, and the closing line that tests/run.sh adds up.
#
# A script sets E2E_NAME (the name in its closing line), and E2E_FIXED=1
# if its has/hasnt texts are fixed strings rather than basic regexes, then
# sources this file with its own arguments:
#     E2E_NAME=cli; . "$(dirname "$0")/lib/common.sh"
# It may define on_exit() to stop what it started; it ends with done_.
# With E2E_KEEP=DIR set, the scratch directory (logs, data) is copied to DIR
# on exit, to read after a failure.
set -u
M=${1:-build/muster}
KC=${KC:-/usr/bin/kubectl}
T=$(mktemp -d)
P=0; F=0
on_exit() { :; }
trap 'on_exit; [ -n "${E2E_KEEP:-}" ] && cp -r "$T" "$E2E_KEEP"; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
ok() { P=$((P + 1)); }
bad() { F=$((F + 1)); echo "FAIL $*"; }
# done_: prints "e2e NAME: N passed, N failed" and exits 0 only if none failed.
done_() {
	echo "e2e $E2E_NAME: $P passed, $F failed"
	[ "$F" -eq 0 ]
	exit $?
}
# expect NAME WANT_EXIT CMD...: runs CMD with stdout in $T/out and stderr in
# $T/err, and checks its exit code (WANT may be "01": 0 or 1).
expect() {
	name=$1; want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	case "$want" in
	01) [ "$got" -le 1 ] && ok || { bad "$name: exit $got, expected 0 or 1"; sed 's/^/  /' "$T/err" | head -5; } ;;
	*) [ "$got" -eq "$want" ] && ok || { bad "$name: exit $got, expected $want"; sed 's/^/  /' "$T/err" | head -5; } ;;
	esac
}
# has NAME FILE TEXT / hasnt NAME FILE TEXT: TEXT is (not) in FILE.
e2e_grep() { if [ "${E2E_FIXED:-0}" = 1 ]; then grep -qF -- "$1" "$2"; else grep -q -- "$1" "$2"; fi; }
has() { if e2e_grep "$3" "$2"; then ok; else bad "$1: '$3' not in $2"; sed 's/^/  /' "$2" 2>/dev/null | head -8; fi; }
hasnt() { if e2e_grep "$3" "$2"; then bad "$1: '$3' in $2"; sed 's/^/  /' "$2" | head -8; else ok; fi; }
# wait_for NAME TRIES CMD...: retries CMD every 0.2 s; counts one check.
# Its variables are its own (wf_*): CMD may set n, i or name (fleet.sh's
# w sets n), which cut the tries short when they were these.
wait_for() {
	wf_name=$1; wf_n=$2; shift 2
	wf_i=0
	while [ "$wf_i" -lt "$wf_n" ]; do
		if "$@" >/dev/null 2>&1; then ok; return 0; fi
		sleep 0.2; wf_i=$((wf_i + 1))
	done
	bad "$wf_name: timed out"
	return 1
}
# k ARGS...: kubectl against the `muster up` of $T/data, output in $T/out.
k() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@" >"$T/out" 2>&1; }
# up_start CLUSTER_FILE: starts `muster up` on a free loopback port with its
# data in $T/data, and waits (15 s at most) until it answers /readyz; sets S
# (its https:// address) and UPID, or fails the script.  api ARGS... is curl
# against it, with its certificate and its token.
up_start() {
	"$M" up --cluster "$1" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
		>"$T/up.out" 2>"$T/up.err" &
	UPID=$!
	i=0; S=""
	while [ "$i" -lt 150 ]; do
		S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out")
		if [ -n "$S" ] && command curl -sfk "$S/readyz" >/dev/null 2>&1; then return 0; fi
		kill -0 "$UPID" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	cat "$T/up.err"; bad "muster up did not start"; done_
}
# token_kubeconfig TOKEN FILE: the kubeconfig of $T/data with its client
# certificate replaced by TOKEN (kubectl sends both when it has both, and
# kube-apiserver authenticates the certificate first).
token_kubeconfig() {
	sed -e '/^    client-certificate-data: /d' -e "s/^    client-key-data: .*/    token: $1/" \
		-e "s/^    token: .*/    token: $1/" "$T/data/kubeconfig" >"$2"
}
# sched_start ID [FLAG...]: starts `muster scheduler` on the cluster of
# up_start with leader id ID (its lease in namespace default), metrics on a
# free loopback port and FLAGs; output appended to $T/sched.out and
# $T/sched.log (a restart keeps the earlier runs' lines).  Sets SPID.
sched_start() {
	sid=$1; shift
	"$M" scheduler --kubeconfig "$T/data/kubeconfig" --id "$sid" --lease-namespace default \
		--metrics 127.0.0.1:0 "$@" >>"$T/sched.out" 2>>"$T/sched.log" &
	SPID=$!
}
api() { command curl --cacert "$T/data/tls.crt" -H "Authorization: Bearer $(cat "$T/data/token")" "$@"; }
# need_kubectl: fails the script at once when kubectl or curl is missing.
need_kubectl() {
	if [ ! -x "$KC" ] || ! command -v curl >/dev/null 2>&1; then
		echo "$E2E_NAME: needs $KC and curl (scripts/install-deps.sh installs them)"
		bad "kubectl or curl missing"
		done_
	fi
}

# up_start_one_node: up_start on one node n0 (16 CPUs, 64Gi, no devices of
# its own: the DRA tests give it slices) and one queue team-a.
up_start_one_node() {
	printf '%s\n' 'apiVersion: v1' 'kind: Node' 'metadata: {name: n0}' \
		'status: {allocatable: {cpu: "16", memory: 64Gi}}' '---' \
		'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-a}' \
		'spec: {}' >"$T/cluster.yaml"
	up_start "$T/cluster.yaml"
}
