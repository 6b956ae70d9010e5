#!/bin/sh
# listwatch.sh - resourceVersion and resourceVersionMatch on lists and
# watches of `muster up`, as kube-apiserver validates and serves them:
# unsupported or misplaced resourceVersionMatch values are 422 with
# ValidateListOptions' messages, a version the store has not reached is
# waited for and then 504 "Too large resource version", NotOlderThan serves
# the current list, Exact an older version 410.
# Usage: sh tests/e2e/listwatch.sh PATH_TO_MUSTER.  Ends with
# "e2e listwatch: N passed, N failed".
E2E_NAME=listwatch; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""
on_exit() { [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
up_start "$ROOT/examples/cluster-small.yaml"
get() { api -s -o "$T/out" -w '%{http_code}' "$S$1" >"$T/code"; }
RV=$(api -s "$S/api/v1/namespaces?limit=1" | sed -n 's/^{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"\([0-9]*\)".*/\1/p')
[ -n "$RV" ] && ok || bad "no list resourceVersion"
get "/api/v1/pods?resourceVersion=$RV&resourceVersionMatch=Bogus"
has "unsupported: 422" "$T/code" 422
has "unsupported message" "$T/out" 'resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\"'
get "/api/v1/pods?resourceVersionMatch=NotOlderThan"
has "without resourceVersion: 422" "$T/out" "resourceVersionMatch is forbidden unless resourceVersion is provided"
get "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact"
has "exact 0: 422" "$T/out" 'resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"'
get "/api/v1/pods?watch=1&resourceVersion=$RV&resourceVersionMatch=NotOlderThan"
has "watch: 422" "$T/out" "resourceVersionMatch is forbidden for watch"
get "/api/v1/namespaces?resourceVersion=$RV&resourceVersionMatch=NotOlderThan"
has "not older than now: 200" "$T/code" 200
has "listed" "$T/out" '"kind":"NamespaceList"'
get "/api/v1/namespaces?resourceVersion=$((RV + 100000))&resourceVersionMatch=NotOlderThan"
has "future: 504" "$T/code" 504
has "future message" "$T/out" "Too large resource version: $((RV + 100000))"
expect "a write" 0 k create configmap c1
get "/api/v1/namespaces?resourceVersion=$RV&resourceVersionMatch=Exact"
has "exact, older: 410" "$T/code" 410
done_
