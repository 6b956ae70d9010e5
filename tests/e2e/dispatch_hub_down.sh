#!/bin/sh
# dispatch_hub_down.sh - what `muster dispatch` says while its hub does not
# answer (docs/dispatch.md, "Twenty-second round: the hub down"): the hub's
# `muster up` is killed with -9 under a running dispatcher and started
# again on the same port and data.  Meanwhile the dispatcher names the
# first of its hub watches that is unhealthy and why (libcurl's words, not
# "HTTP 0"), says it when the reason changes and every 10 s, not every
# pass (about 100 a 10 s before), says the same of the PriorityClasses'
# read, and says when the hub's watches answer again; it keeps running.
# Usage: sh tests/e2e/dispatch_hub_down.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch_hub_down: N passed, N failed".
E2E_NAME=dispatch_hub_down; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; DPID=""
on_exit() { for p in $UPID $DPID; do kill -9 "$p" 2>/dev/null; done; }
printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-a}' \
	'spec: {}' >"$T/hub.yaml"
up_start "$T/hub.yaml"
PORT=${S##*:}
"$M" dispatch --kubeconfig "$T/data/kubeconfig" --no-leader-elect --interval 100ms \
	>"$T/d.out" 2>"$T/d.log" &
DPID=$!
wait_for dispatching 150 grep -q "dispatching for the hub" "$T/d.log"

kill -9 "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
sleep 12 # about 120 passes of 100 ms
cp "$T/d.log" "$T/down.log"
has names-watch "$T/down.log" "error the hub's "
has curl-words "$T/down.log" "Couldn't connect to server; retrying"
hasnt no-http-0 "$T/down.log" "clusters: HTTP 0"
n=$(grep -c "; retrying" "$T/down.log")
if [ "$n" -ge 1 ] && [ "$n" -le 4 ]; then ok; else bad "hub-down lines in 12 s: $n, expected 1 to 4"; fi
n=$(grep -c "priority classes: no answer" "$T/down.log")
if [ "$n" -ge 1 ] && [ "$n" -le 3 ]; then ok; else bad "priority-class lines in 12 s: $n, expected 1 to 3"; fi
has pcls-count "$T/down.log" "failure in a row)"
if kill -0 "$DPID" 2>/dev/null; then ok; else bad "the dispatcher exited"; fi

"$M" up --cluster "$T/hub.yaml" --listen "127.0.0.1:$PORT" --data "$T/data" --no-fsync --quiet \
	>"$T/up2.out" 2>"$T/up2.err" &
UPID=$!
# after: TEXT is in a line of the log written after the hub came back
after() { tail -n "+$(($(wc -l <"$T/down.log") + 1))" "$T/d.log" | grep -qF "$1"; }
wait_for answers-again 200 after "the hub's watches answer again"
wait_for pcls-again 100 after "priority classes: read again after"
if kill -0 "$DPID" 2>/dev/null; then ok; else bad "the dispatcher exited"; fi
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
has stopped "$T/d.log" "info  stopped:"
for s in AddressSanitizer "runtime error"; do hasnt "no-$s" "$T/d.log" "$s"; done
done_
