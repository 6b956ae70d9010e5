#!/bin/sh
# event_ttl.sh - Events expire one --event-ttl after their last write, as
# kube-apiserver's (an etcd lease per Event, renewed by each write), with
# the real kubectl against `muster up --event-ttl 3s`: an Event left alone
# goes (and a watch sees it DELETED), one written again in the meantime
# stays until a TTL after that write, and a bad --event-ttl is refused.
# Without the TTL, muster up kept every Event, and a long-running server's
# memory grew with each pod it scheduled (the hour-long soak, issue 24).
# Usage: sh tests/e2e/event_ttl.sh PATH_TO_MUSTER.  Ends with
# "e2e event_ttl: N passed, N failed".  Every process started here is
# killed on exit.
E2E_NAME=event_ttl; . "$(dirname "$0")/lib/common.sh"
UPID=""; WPID=""
on_exit() { for p in $WPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
code() { if [ "$3" -eq "$2" ]; then ok; else bad "$1: exit $3, expected $2"; sed 's/^/  /' "$T/out" | head -5; fi; }

"$M" up --event-ttl soon --data "$T/bad" >"$T/out" 2>&1
code "a bad --event-ttl is a usage error" 2 $?
has "the error names the flag" "$T/out" "--event-ttl soon: expected a duration"

"$M" up --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet --event-ttl 3s >"$T/up.out" 2>"$T/up.err" &
UPID=$!
i=0
while [ "$i" -lt 150 ] && ! kc get --raw /readyz >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
ev() {
	printf 'apiVersion: v1\nkind: Event\nmetadata: {name: %s, namespace: default}\ninvolvedObject: {kind: Pod, name: p, namespace: default}\nreason: Tested\nmessage: "%s"\ntype: Normal\n' "$1" "$2"
}
ev e1 one | kc create -f - >"$T/out" 2>&1; code "create e1" 0 $?
ev e2 two | kc create -f - >"$T/out" 2>&1; code "create e2" 0 $?
kc get events --watch-only -o json --output-watch-events >"$T/watch" 2>&1 &
WPID=$!
sleep 1.5
kc patch event e2 --type merge -p '{"message":"written again"}' >"$T/out" 2>&1; code "write e2 again" 0 $?
# e1 goes 3 s after its create (the controller looks every 0.5 s at most)
i=0
while [ "$i" -lt 60 ] && kc get event e1 >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
kc get event e1 >"$T/out" 2>&1
has "e1 expired" "$T/out" "NotFound"
kc get event e2 >"$T/out" 2>&1
code "e2, written again 1.5 s later, is still there" 0 $?
sleep 3.5
kc get event e2 >"$T/out" 2>&1
has "e2 expired a TTL after its last write" "$T/out" "NotFound"
sleep 0.5
has "the watch saw e1 deleted" "$T/watch" '"type":"DELETED".*"message":"one"'
done_
