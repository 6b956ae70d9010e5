#!/bin/sh
# events_v1.sh - events.k8s.io/v1 Events served alongside core/v1 Events
# from the same storage (issue 16), with the real kubectl and the official
# Python client against `muster up`: discovery lists both; an Event created
# through either group is read through both with the fields of each
# (regarding/involvedObject, note/message, reportingController/
# reportingComponent, deprecatedCount/count); field selectors use the
# group's names; merge and JSON patches and watches go through the
# conversion; server-side apply through events.k8s.io is refused (415).
# Usage: sh tests/e2e/events_v1.sh PATH_TO_MUSTER.  Ends with
# "e2e events_v1: N passed, N failed".  Every process started here is killed
# on exit.
E2E_NAME=events_v1; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; WPID=""
on_exit() { for p in $WPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 1
  namePrefix: n-
  allocatable: {cpu: "8", memory: 32Gi}
YAML
up_start "$T/cluster.yaml"

kc api-resources --api-group=events.k8s.io >"$T/out" 2>&1
has discovery "$T/out" "events.k8s.io/v1"
cat >"$T/ev.yaml" <<'YAML'
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e1}
eventTime: "2026-11-26T03:00:00.000000Z"
reportingController: example.com/ctl
reportingInstance: ctl-1
action: Testing
reason: Tested
type: Normal
note: hello
regarding: {apiVersion: v1, kind: Pod, name: p, namespace: default}
YAML
expect create-v1 0 kc create -f "$T/ev.yaml"
has create-v1-out "$T/out" "event.events.k8s.io/e1 created"
kc get events.v1.events.k8s.io e1 -o jsonpath='{.apiVersion}|{.note}|{.regarding.name}|{.reportingController}' >"$T/out"
has read-v1 "$T/out" "events.k8s.io/v1|hello|p|example.com/ctl"
kc get events.v1. e1 -o jsonpath='{.apiVersion}|{.message}|{.involvedObject.name}|{.reportingComponent}|{.note}' >"$T/out"
has read-core "$T/out" "v1|hello|p|example.com/ctl|"
kc get events.events.k8s.io >"$T/out"
has table "$T/out" "Tested"
kc get events.events.k8s.io --field-selector regarding.name=p -o name >"$T/out"
has field-selector "$T/out" "event.events.k8s.io/e1"
kc get events.events.k8s.io --field-selector regarding.name=q -o name >"$T/out"
hasnt field-selector-none "$T/out" "e1"

# a core Event read through events.k8s.io
printf 'apiVersion: v1\nkind: Event\nmetadata: {name: e2}\ninvolvedObject: {kind: Pod, name: p2, namespace: default}\nreason: Core\nmessage: from core\ncount: 3\nsource: {component: kubelet}\n' >"$T/core.yaml"
kc create -f "$T/core.yaml" >/dev/null
kc get events.events.k8s.io e2 -o jsonpath='{.note}|{.deprecatedCount}|{.deprecatedSource.component}|{.regarding.name}|{.message}' >"$T/out"
has core-as-v1 "$T/out" "from core|3|kubelet|p2|"

# watch through events.k8s.io while the Event changes through both groups
kc get events.events.k8s.io -w -o jsonpath='{.note}{"\n"}' >"$T/watch" 2>&1 &
WPID=$!
sleep 1
expect patch-v1 0 kc patch events.events.k8s.io e1 --type=merge -p '{"note":"patched"}'
[ "$(kc get events.v1. e1 -o jsonpath='{.message}')" = patched ] && ok || bad "a merge patch through events.k8s.io"
expect patch-json 0 kc patch events.events.k8s.io e1 --type=json -p '[{"op":"replace","path":"/note","value":"json"}]'
kc patch events.v1. e1 --type=merge -p '{"message":"via core"}' >/dev/null
wait_for watch-converted 50 grep -q "via core" "$T/watch"
has watch-patched "$T/watch" "patched"
kill "$WPID" 2>/dev/null; WPID=""
code=$(api -s -o "$T/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
	--data-binary '{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"}}' \
	"$S/apis/events.k8s.io/v1/namespaces/default/events/e1?fieldManager=x")
[ "$code" = 415 ] && ok || bad "apply through events.k8s.io: HTTP $code"
code=$(api -s -o "$T/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}' \
	"$S/apis/events.k8s.io/v1/namespaces/default/events")
[ "$code" = 400 ] && ok || bad "a Pod posted to events.k8s.io: HTTP $code"
expect delete-v1 0 kc delete events.events.k8s.io e2
kc get events.v1. e2 >/dev/null 2>&1 && bad "deleted through events.k8s.io but still a core Event" || ok

if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
	/usr/bin/python3 - "$T/data/kubeconfig" >"$T/py" 2>&1 <<'PY'
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
ev = client.EventsV1Api()
body = client.EventsV1Event(metadata=client.V1ObjectMeta(name="py"), event_time="2026-11-26T03:00:00.000000Z",
                            reporting_controller="py/ctl", reporting_instance="py-1", action="A", reason="R",
                            type="Normal", note="from python",
                            regarding=client.V1ObjectReference(kind="Pod", name="p", namespace="default"))
ev.create_namespaced_event("default", body)
got = ev.list_namespaced_event("default", field_selector="metadata.name=py").items
print("python", len(got), got[0].note, got[0].regarding.name, got[0].reporting_controller)
print("core", client.CoreV1Api().read_namespaced_event("py", "default").message)
PY
	has python "$T/py" "python 1 from python p py/ctl"
	has python-core "$T/py" "core from python"
else
	bad "python3-kubernetes is missing (scripts/install-deps.sh installs it)"
fi
done_
