#!/bin/sh
# podspec.sh - kube-apiserver's pod spec defaults and checks, end to end
# with kubectl against `muster up` (issue 16, round 10):
#   - a Pod created with a minimal spec reads back with the defaults kube's
#     SetDefaults_* give it (compared field by field with what a real
#     kube-apiserver 1.32 stores: the container's imagePullPolicy,
#     terminationMessagePath and terminationMessagePolicy, the pod's
#     securityContext {}, enableServiceLinks, requests copied from limits,
#     ports' protocol, probes' timeout/period/thresholds and httpGet
#     path/scheme, volumes' defaultMode, an emptyDir for a sourceless volume,
#     hostPath type "", env fieldRef apiVersion);
#   - each invalid field gets 422 with kube's field path and message:
#     volumes (two sources, duplicate names, a secret without secretName, a
#     bad defaultMode), volumeMounts (unknown volume, duplicate mountPath,
#     absolute subPath), probes (two handlers, none, a port out of range,
#     negative thresholds, a liveness successThreshold other than 1, probes
#     on an init container), ports (containerPort range, duplicate names,
#     protocol), env names and valueFrom, requests above limits, security
#     contexts (runAsUser, seccomp and AppArmor profile types, Localhost
#     without a profile, allowPrivilegeEscalation with privileged),
#     imagePullPolicy, dnsPolicy, ephemeral containers on create;
#   - round 11: the scheduling fields (node and pod affinity, nodeSelector,
#     sysctls, dnsConfig, topology spread constraints) with kube's paths
#     and messages, and ServiceAccount admission: a pod reads back with
#     `default`, the projected kube-api-access-XXXXX volume and its mounts
#     as kube-apiserver 1.32 stores them, a missing ServiceAccount is 403,
#     automountServiceAccountToken (pod's, then the ServiceAccount's), the
#     deprecated serviceAccount, imagePullSecrets from the ServiceAccount,
#     and a new namespace's `default` ServiceAccount;
#   - round 12: every namespace's kube-root-ca.crt ConfigMap (the
#     kubeconfig's CA, kube's description), made again when deleted and
#     its data put back when edited;
#   - the same checks in a Deployment's and a Job's template, named from
#     spec.template.spec, and the template defaulted without the Pod-only
#     defaults (no enableServiceLinks);
#   - updates as ValidatePodUpdate: an image may change, an added toleration
#     is kept, a changed one is refused, activeDeadlineSeconds may only be
#     lowered, any other spec change is forbidden with kube's list; a
#     replace without the defaults is not a change.
# Usage: sh tests/e2e/podspec.sh PATH_TO_MUSTER.  Ends with
# "e2e podspec: N passed, N failed".  Every process started here is killed
# on exit.
E2E_NAME=podspec; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { [ -n "$UPID" ] && kill -9 "$UPID" 2>/dev/null; }
need_kubectl
up_start_one_node

# pod NAME SPEC: a Pod manifest in $T/NAME.yaml
pod() { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: %s\n' "$1" "$2" >"$T/$1.yaml"; }
# bad NAME SPEC CAUSE: creating the pod fails 422 with CAUSE in kubectl's output
bad_pod() {
	pod "$1" "$2"
	expect "$1: 422" 1 k create -f "$T/$1.yaml"
	has "$1: cause" "$T/out" "$3"
}
# field NAME JSONPATH WANT: the stored pod's field
field() {
	k get pod "$1" -o "jsonpath=$2"
	if [ "$(cat "$T/out")" = "$3" ]; then ok; else bad "$1 $2: '$(cat "$T/out")', want '$3'"; fi
}

# --- defaults: a minimal pod reads back as kube-apiserver stores it ---------
pod p-min '{containers: [{name: c, image: busybox, ports: [{containerPort: 80}],
  resources: {limits: {cpu: "1", memory: 1Gi}},
  env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}],
  livenessProbe: {httpGet: {port: 80}}, readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 5},
  volumeMounts: [{name: s, mountPath: /s}, {name: scratch, mountPath: /scratch}]},
  {name: d, image: "nginx:1.27"}],
  volumes: [{name: s, secret: {secretName: x}}, {name: cm, configMap: {name: cfg}}, {name: scratch},
  {name: h, hostPath: {path: /tmp}}, {name: dw, downwardAPI: {items: [{path: l, fieldRef: {fieldPath: metadata.labels}}]}}]}'
expect "a minimal pod is created" 0 k create -f "$T/p-min.yaml"
field p-min '{.spec.containers[0].imagePullPolicy}' Always
field p-min '{.spec.containers[1].imagePullPolicy}' IfNotPresent
field p-min '{.spec.containers[0].terminationMessagePath}' /dev/termination-log
field p-min '{.spec.containers[0].terminationMessagePolicy}' File
field p-min '{.spec.containers[0].ports[0].protocol}' TCP
field p-min '{.spec.containers[0].resources.requests}' '{"cpu":"1","memory":"1Gi"}'
field p-min '{.spec.containers[0].env[0].valueFrom.fieldRef.apiVersion}' v1
field p-min '{.spec.containers[0].livenessProbe}' \
	'{"failureThreshold":3,"httpGet":{"path":"/","port":80,"scheme":"HTTP"},"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1}'
field p-min '{.spec.containers[0].readinessProbe.periodSeconds}' 5
field p-min '{.spec.volumes[0].secret.defaultMode}' 420
field p-min '{.spec.volumes[1].configMap.defaultMode}' 420
field p-min '{.spec.volumes[2].emptyDir}' '{}'
field p-min '{.spec.volumes[3].hostPath}' '{"path":"/tmp","type":""}'
field p-min '{.spec.volumes[4].downwardAPI.defaultMode}' 420
field p-min '{.spec.volumes[4].downwardAPI.items[0].fieldRef.apiVersion}' v1
field p-min '{.spec.securityContext}' '{}'
field p-min '{.spec.enableServiceLinks}' true
field p-min '{.spec.dnsPolicy}/{.spec.restartPolicy}/{.spec.schedulerName}/{.spec.terminationGracePeriodSeconds}' \
	'ClusterFirst/Always/default-scheduler/30'
field p-min '{.status.qosClass}' Burstable
# a replace of the pod as first written is a change, as in kube: admission
# gave it a ServiceAccount and its token volume, which the manifest lacks
k get pod p-min -o 'jsonpath={.metadata.resourceVersion}'
rv=$(cat "$T/out")
sed "s/^metadata: {name: p-min}/metadata: {name: p-min, resourceVersion: \"$rv\"}/" "$T/p-min.yaml" >"$T/p-min2.yaml"
expect "a replace without what admission added is refused" 1 k replace -f "$T/p-min2.yaml"
has "refused as a pod update" "$T/out" 'spec: Forbidden: pod updates may not change fields other than'
# a replace without the defaults (all admission adds given) is not a change
pod p-rep '{serviceAccountName: default, automountServiceAccountToken: false, containers: [{name: c, image: "x:1", ports: [{containerPort: 80}]}]}'
expect "a pod to replace" 0 k create -f "$T/p-rep.yaml"
k get pod p-rep -o 'jsonpath={.metadata.resourceVersion}'
rv=$(cat "$T/out")
sed "s/^metadata: {name: p-rep}/metadata: {name: p-rep, resourceVersion: \"$rv\"}/" "$T/p-rep.yaml" >"$T/p-rep2.yaml"
expect "a replace without the defaults is accepted" 0 k replace -f "$T/p-rep2.yaml"

# --- ServiceAccount admission (plugin/pkg/admission/serviceaccount) -----------
# p-min as a real kube-apiserver 1.32 stores it: the `default` ServiceAccount,
# the deprecated serviceAccount equal to it, the projected kube-api-access-*
# volume (TokenVolumeSource) mounted read-only in every container
field p-min '{.spec.serviceAccountName}/{.spec.serviceAccount}' default/default
k get pod p-min -o 'jsonpath={.spec.volumes[5].name}'
case "$(cat "$T/out")" in kube-api-access-?????) ok ;; *) bad "token volume name: $(cat "$T/out")" ;; esac
vol=$(cat "$T/out")
field p-min '{.spec.volumes[5].projected}' \
	'{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"kube-root-ca.crt"}},{"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}'
field p-min '{.spec.containers[0].volumeMounts[2]}' \
	"{\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\",\"name\":\"$vol\",\"readOnly\":true}"
field p-min '{.spec.containers[1].volumeMounts[0].name}' "$vol"
field p-rep '{.spec.volumes}/{.spec.containers[0].volumeMounts}' '/'
pod sa-none '{serviceAccountName: nope, containers: [{name: c, image: x}]}'
expect "a pod of a ServiceAccount that does not exist: refused" 1 k create -f "$T/sa-none.yaml"
has "kube's admission message" "$T/out" 'pods "sa-none" is forbidden: error looking up service account default/nope: serviceaccount "nope" not found'
k get sa -A -o 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}'
has "every namespace has its default ServiceAccount" "$T/out" 'default/default kube-node-lease/default kube-public/default kube-system/default'
printf '%s\n' 'apiVersion: v1' 'kind: ServiceAccount' 'metadata: {name: builder}' 'automountServiceAccountToken: false' \
	'imagePullSecrets: [{name: regcred}]' >"$T/sa.yaml"
expect "a ServiceAccount without automount" 0 k create -f "$T/sa.yaml"
pod sa-old '{serviceAccount: builder, containers: [{name: c, image: x}, {name: d, image: x, volumeMounts: [{name: own, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]}], volumes: [{name: own}]}'
expect "a pod naming its ServiceAccount the deprecated way" 0 k create -f "$T/sa-old.yaml"
field sa-old '{.spec.serviceAccountName}/{.spec.serviceAccount}/{.spec.imagePullSecrets[0].name}' builder/builder/regcred
field sa-old '{.spec.volumes[*].name}|{.spec.containers[0].volumeMounts}' 'own|'
pod sa-on '{serviceAccountName: builder, automountServiceAccountToken: true, containers: [{name: c, image: x}, {name: d, image: x, volumeMounts: [{name: own, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]}], volumes: [{name: own}]}'
expect "the pod's automount wins over the ServiceAccount's" 0 k create -f "$T/sa-on.yaml"
k get pod sa-on -o 'jsonpath={.spec.volumes[1].name}|{.spec.containers[0].volumeMounts[0].mountPath}|{.spec.containers[1].volumeMounts[*].name}'
case "$(cat "$T/out")" in 'kube-api-access-?????|/var/run/secrets/kubernetes.io/serviceaccount|own') ok ;;
	kube-api-access-?????'|/var/run/secrets/kubernetes.io/serviceaccount|own') ok ;;
	*) bad "sa-on: $(cat "$T/out")" ;; esac
expect "a new namespace" 0 k create namespace fresh
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: fresh}\nspec: {containers: [{name: c, image: x}]}\n' >"$T/fresh.yaml"
expect "a pod in it at once (its default ServiceAccount made by the controller)" 0 k create -f "$T/fresh.yaml"
k get sa -n fresh -o 'jsonpath={.items[*].metadata.name}'
has "the new namespace's default ServiceAccount" "$T/out" 'default'
expect "its default ServiceAccount deleted" 0 k delete sa default -n fresh
n=0; until k get sa default -n fresh -o 'jsonpath={.metadata.name}' >/dev/null 2>&1 || [ $n -ge 50 ]; do n=$((n + 1)); sleep 0.1; done
expect "made again by the controller, as kube's serviceaccounts controller does" 0 k get sa default -n fresh
# --- kube-root-ca.crt (round 12: kube-controller-manager's root-ca-cert-publisher) ---
# cm_wait NS WANT: waits (5 s at most) until NS's kube-root-ca.crt reads WANT
# as "CA-DATA-KEYS|DESCRIPTION-SET"
cm_state() { k get configmap kube-root-ca.crt -n "$1" -o 'jsonpath={.data}|{.metadata.annotations.kubernetes\.io/description}'; }
cm_wait() { n=0; until cm_state "$1" && [ "$(sed -n 1p "$T/out" | cut -c1-20)" = "$2" ] || [ $n -ge 50 ]; do n=$((n + 1)); sleep 0.1; done; }
k get configmap -A --field-selector metadata.name=kube-root-ca.crt -o 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}'
has "every namespace has its kube-root-ca.crt" "$T/out" 'default/kube-root-ca.crt fresh/kube-root-ca.crt kube-node-lease/kube-root-ca.crt kube-public/kube-root-ca.crt kube-system/kube-root-ca.crt'
sed -n 's/^ *certificate-authority-data: //p' "$T/data/kubeconfig" | base64 -d >"$T/ca.want"
k get configmap kube-root-ca.crt -n fresh -o 'jsonpath={.data.ca\.crt}'
if [ -s "$T/ca.want" ] && cmp -s "$T/out" "$T/ca.want"; then ok; else bad "ca.crt is not the kubeconfig's CA"; fi
k get configmap kube-root-ca.crt -n default -o 'jsonpath={.metadata.annotations.kubernetes\.io/description}|{.metadata.managedFields[0].manager}'
has "kube's description annotation, made by kube-controller-manager" "$T/out" 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.|kube-controller-manager'
expect "kube-root-ca.crt deleted" 0 k delete configmap kube-root-ca.crt -n fresh
cm_wait fresh '{"ca.crt":"-----BEG'
expect "made again, as kube's root-ca-cert-publisher does" 0 k get configmap kube-root-ca.crt -n fresh
k get configmap kube-root-ca.crt -n fresh -o 'jsonpath={.data.ca\.crt}'
if cmp -s "$T/out" "$T/ca.want"; then ok; else bad "the CA made again differs"; fi
expect "its data edited, a key added, the description removed" 0 k patch configmap kube-root-ca.crt -n fresh --type=merge \
	-p '{"data":{"ca.crt":"x","extra":"y"},"binaryData":{"b":"AA=="},"metadata":{"annotations":{"kubernetes.io/description":null,"mine":"kept"}}}'
cm_wait fresh '{"ca.crt":"-----BEG'
k get configmap kube-root-ca.crt -n fresh -o 'jsonpath={.data.extra}/{.binaryData.b}/{.metadata.annotations.mine}/{.metadata.annotations.kubernetes\.io/description}'
has "data put back exactly (extra key dropped), binaryData and other annotations kept, description set" "$T/out" '/AA==/kept/Contains a CA bundle'
k get configmap kube-root-ca.crt -n fresh -o 'jsonpath={.data.ca\.crt}'
if cmp -s "$T/out" "$T/ca.want"; then ok; else bad "ca.crt not restored"; fi
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: d-sa}' \
	'spec: {selector: {matchLabels: {app: s}}, template: {metadata: {labels: {app: s}}, spec: {serviceAccount: builder, containers: [{name: c, image: x}]}}}' \
	>"$T/d-sa.yaml"
expect "a Deployment naming its ServiceAccount the deprecated way" 0 k create -f "$T/d-sa.yaml"
k get deployment d-sa -o 'jsonpath={.spec.template.spec.serviceAccountName}/{.spec.template.spec.serviceAccount}'
has "its template reads back with both, as the v1 conversion gives" "$T/out" 'builder/builder'

# --- volumes ------------------------------------------------------------------
bad_pod v-two '{containers: [{name: c, image: x}], volumes: [{name: a, emptyDir: {}, secret: {secretName: s}}]}' \
	'spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type'
bad_pod v-dup '{containers: [{name: c, image: x}], volumes: [{name: a, emptyDir: {}}, {name: a, emptyDir: {}}]}' \
	'spec.volumes[1].name: Duplicate value: "a"'
bad_pod v-secret '{containers: [{name: c, image: x}], volumes: [{name: a, secret: {}}]}' \
	'spec.volumes[0].secret.secretName: Required value'
bad_pod v-mode '{containers: [{name: c, image: x}], volumes: [{name: a, configMap: {name: m, defaultMode: 1000}}]}' \
	'spec.volumes[0].configMap.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive'
bad_pod v-name '{containers: [{name: c, image: x}], volumes: [{name: A_b, emptyDir: {}}]}' \
	'spec.volumes[0].name: Invalid value: "A_b": a lowercase RFC 1123 label must consist of'
bad_pod m-none '{containers: [{name: c, image: x, volumeMounts: [{name: nope, mountPath: /a}]}]}' \
	'spec.containers[0].volumeMounts[0].name: Not found: "nope"'
bad_pod m-dup '{containers: [{name: c, image: x, volumeMounts: [{name: a, mountPath: /a}, {name: a, mountPath: /a}]}], volumes: [{name: a}]}' \
	'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique'
bad_pod m-nopath '{containers: [{name: c, image: x, volumeMounts: [{name: a}]}], volumes: [{name: a}]}' \
	'spec.containers[0].volumeMounts[0].mountPath: Required value'
bad_pod m-sub '{containers: [{name: c, image: x, volumeMounts: [{name: a, mountPath: /a, subPath: /etc}]}], volumes: [{name: a}]}' \
	'spec.containers[0].volumeMounts.subPath: Invalid value: "/etc": must be a relative path'

# --- probes -------------------------------------------------------------------
bad_pod pr-two '{containers: [{name: c, image: x, livenessProbe: {exec: {command: [true]}, tcpSocket: {port: 1}}}]}' \
	'spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type'
bad_pod pr-none '{containers: [{name: c, image: x, readinessProbe: {periodSeconds: 3}}]}' \
	'spec.containers[0].readinessProbe: Required value: must specify a handler type'
bad_pod pr-port '{containers: [{name: c, image: x, startupProbe: {httpGet: {port: 70000}}}]}' \
	'spec.containers[0].startupProbe.httpGet.port: Invalid value: 70000: must be between 1 and 65535, inclusive'
bad_pod pr-neg '{containers: [{name: c, image: x, readinessProbe: {tcpSocket: {port: 1}, failureThreshold: -1}}]}' \
	'spec.containers[0].readinessProbe.failureThreshold: Invalid value: -1: must be greater than or equal to 0'
bad_pod pr-succ '{containers: [{name: c, image: x, livenessProbe: {tcpSocket: {port: 1}, successThreshold: 2}}]}' \
	'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'
bad_pod pr-init '{initContainers: [{name: i, image: x, livenessProbe: {tcpSocket: {port: 1}}}], containers: [{name: c, image: x}]}' \
	'spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always'
bad_pod pr-exec '{containers: [{name: c, image: x, livenessProbe: {exec: {}}}]}' \
	'spec.containers[0].livenessProbe.exec.command: Required value'

# --- ports, env, resources, enumerations ---------------------------------------
bad_pod po-range '{containers: [{name: c, image: x, ports: [{containerPort: 0}, {containerPort: 65536}]}]}' \
	'spec.containers[0].ports[1].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive'
has "po-range: a missing containerPort is Required" "$T/out" 'spec.containers[0].ports[0].containerPort: Required value'
bad_pod po-dup '{containers: [{name: c, image: x, ports: [{name: http, containerPort: 80}, {name: http, containerPort: 81}]}]}' \
	'spec.containers[0].ports[1].name: Duplicate value: "http"'
bad_pod po-proto '{containers: [{name: c, image: x, ports: [{containerPort: 80, protocol: HTTP}]}]}' \
	'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'
bad_pod po-name '{containers: [{name: c, image: x, ports: [{name: "a-very-long-port-name", containerPort: 80}]}]}' \
	'spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters'
bad_pod env-name '{containers: [{name: c, image: x, env: [{name: "A=B", value: v}]}]}' \
	"spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='"
bad_pod env-from '{containers: [{name: c, image: x, env: [{name: A, value: v, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]}]}' \
	'spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty'
bad_pod res '{containers: [{name: c, image: x, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]}' \
	'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
bad_pod pull '{containers: [{name: c, image: x, imagePullPolicy: Sometimes}]}' \
	'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'
bad_pod dns '{dnsPolicy: Google, containers: [{name: c, image: x}]}' \
	'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"'
bad_pod eph '{containers: [{name: c, image: x}], ephemeralContainers: [{name: e, image: x}]}' \
	'spec.ephemeralContainers: Forbidden: cannot be set on create'
bad_pod eph-dup '{containers: [{name: c, image: x}], ephemeralContainers: [{name: c, image: x}]}' \
	'spec.ephemeralContainers[0].name: Duplicate value: "c"'

# --- security contexts ----------------------------------------------------------
bad_pod sc-user '{securityContext: {runAsUser: -1}, containers: [{name: c, image: x}]}' \
	'spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive'
bad_pod sc-cuser '{containers: [{name: c, image: x, securityContext: {runAsGroup: -5}}]}' \
	'spec.containers[0].securityContext.runAsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive'
bad_pod sc-seccomp '{securityContext: {seccompProfile: {type: Strict}}, containers: [{name: c, image: x}]}' \
	'spec.securityContext.seccompProfile.type: Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"'
bad_pod sc-local '{containers: [{name: c, image: x, securityContext: {seccompProfile: {type: Localhost}}}]}' \
	'spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost'
bad_pod sc-aa '{containers: [{name: c, image: x, securityContext: {appArmorProfile: {type: Enforce}}}]}' \
	'spec.containers[0].securityContext.appArmorProfile.type: Unsupported value: "Enforce": supported values: "Localhost", "RuntimeDefault", "Unconfined"'
bad_pod sc-priv '{containers: [{name: c, image: x, securityContext: {privileged: true, allowPrivilegeEscalation: false}}]}' \
	'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'
bad_pod sc-sysadmin '{containers: [{name: c, image: x, securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [CAP_SYS_ADMIN]}}}]}' \
	'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'

# --- scheduling: affinity, nodeSelector, sysctls, DNS config, topology spread ---
bad_pod af-terms '{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}, containers: [{name: c, image: x}]}' \
	'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term'
bad_pod af-op '{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Near, values: [a]}]}]}}}, containers: [{name: c, image: x}]}' \
	'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'
bad_pod af-weight '{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}]}}, containers: [{name: c, image: x}]}' \
	'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100'
bad_pod af-topo '{affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}}]}}, containers: [{name: c, image: x}]}' \
	'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty'
has "af-topo: an empty topologyKey is no qualified name either" "$T/out" 'topologyKey: Invalid value: "": name part must be non-empty'
bad_pod af-mlk '{affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, podAffinityTerm: {topologyKey: zone, labelSelector: {matchLabels: {a: b}}, matchLabelKeys: [app], mismatchLabelKeys: [app]}}]}}, containers: [{name: c, image: x}]}' \
	'spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and mismatchLabelKeys'
bad_pod af-sel '{affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchExpressions: [{key: app, operator: In}]}}]}}, containers: [{name: c, image: x}]}' \
	"spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'"
bad_pod nodesel '{nodeSelector: {"a/b/c": x}, containers: [{name: c, image: x}]}' \
	'spec.nodeSelector: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters'
bad_pod sysctl '{securityContext: {sysctls: [{name: kernel.shm_rmid_forced, value: "1"}, {name: kernel.shm_rmid_forced, value: "0"}, {name: "Bad!", value: "1"}]}, containers: [{name: c, image: x}]}' \
	'spec.securityContext.sysctls[1].name: Duplicate value: "kernel.shm_rmid_forced"'
has "sysctl: the name's syntax" "$T/out" 'spec.securityContext.sysctls[2].name: Invalid value: "Bad!": must have at most 253 characters and match regex'
bad_pod sysctl-net '{hostNetwork: true, securityContext: {sysctls: [{name: net.ipv4.ip_local_port_range, value: "1024 65535"}]}, containers: [{name: c, image: x}]}' \
	"spec.securityContext.sysctls[0].name: Invalid value: \"net.ipv4.ip_local_port_range\": may not be specified when 'hostNetwork' is true"
bad_pod dnsnone '{dnsPolicy: None, containers: [{name: c, image: x}]}' \
	'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'
bad_pod dnscfg '{dnsConfig: {nameservers: [1.1.1.1, 2.2.2.2, 3.3.3.3, 300.1.1.1], searches: [Bad_Name], options: [{value: "1"}]}, containers: [{name: c, image: x}]}' \
	'spec.dnsConfig.nameservers: Invalid value: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "300.1.1.1"}: must not have more than 3 nameservers'
has "dnscfg: a nameserver must be an IP" "$T/out" 'spec.dnsConfig.nameservers[3]: Invalid value: "300.1.1.1": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
has "dnscfg: searches are DNS subdomains" "$T/out" 'spec.dnsConfig.searches[0]: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
has "dnscfg: an option needs a name" "$T/out" 'spec.dnsConfig.options[0]: Required value: must not be empty'
bad_pod spread '{topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 1, topologyKey: rack, whenUnsatisfiable: ScheduleAnyway, minDomains: 2, nodeAffinityPolicy: Always}], containers: [{name: c, image: x}]}' \
	'spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero'
has "spread: one constraint per {topologyKey, whenUnsatisfiable}" "$T/out" 'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"'
has "spread: minDomains only with DoNotSchedule" "$T/out" 'spec.topologySpreadConstraints[2].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway'
has "spread: the node policies" "$T/out" 'spec.topologySpreadConstraints[2].nodeAffinityPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"'
bad_pod spread-when '{topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}], containers: [{name: c, image: x}]}' \
	'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"'
# a new pod's matchLabelKeys join its term's selector with the pod's value
# (kube 1.32's pod strategy, MatchLabelKeysInPodAffinity); a key the
# selector names already is then in both
printf '%s\n' 'apiVersion: v1' 'kind: Pod' 'metadata: {name: mlk, labels: {app: a, tier: t}}' \
	'spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchLabels: {x: y}}, matchLabelKeys: [app, absent], mismatchLabelKeys: [tier]}]}}, containers: [{name: c, image: x}]}' >"$T/mlk.yaml"
expect "a pod with matchLabelKeys" 0 k create -f "$T/mlk.yaml"
field mlk '{.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions}' \
	'[{"key":"app","operator":"In","values":["a"]},{"key":"tier","operator":"NotIn","values":["t"]}]'
printf '%s\n' 'apiVersion: v1' 'kind: Pod' 'metadata: {name: mlk2, labels: {app: a}}' \
	'spec: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchLabels: {app: a}}, matchLabelKeys: [app]}]}}, containers: [{name: c, image: x}]}' >"$T/mlk2.yaml"
expect "a matchLabelKeys key the selector names: 422" 1 k create -f "$T/mlk2.yaml"
has "named as kube names it" "$T/out" 'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector'
pod sched-ok '{nodeSelector: {zone: a}, dnsPolicy: None, dnsConfig: {nameservers: [10.0.0.10], searches: [svc.cluster.local.], options: [{name: ndots, value: "2"}]}, securityContext: {sysctls: [{name: net.ipv4.ip_local_port_range, value: "1024 65535"}]}, affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: a}}}}]}}, topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 2, labelSelector: {matchLabels: {app: a}}}], containers: [{name: c, image: x}]}'
expect "a pod with valid scheduling fields is created" 0 k create -f "$T/sched-ok.yaml"

# --- templates: the same checks, named from spec.template.spec ------------------
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: d-vol}' \
	'spec: {selector: {matchLabels: {app: d}}, template: {metadata: {labels: {app: d}}, spec: {containers: [{name: c, image: x, volumeMounts: [{name: nope, mountPath: /a}]}]}}}' \
	>"$T/d-vol.yaml"
expect "a Deployment's template with a mount of no volume: 422" 1 k create -f "$T/d-vol.yaml"
has "cause named from the template" "$T/out" 'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "nope"'
printf '%s\n' 'apiVersion: batch/v1' 'kind: Job' 'metadata: {name: j-probe}' \
	'spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x, livenessProbe: {tcpSocket: {port: 0}}}], ephemeralContainers: [{name: e, image: x}]}}}' \
	>"$T/j-probe.yaml"
expect "a Job's template with a bad probe port: 422" 1 k create -f "$T/j-probe.yaml"
has "probe cause named from the template" "$T/out" 'spec.template.spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive'
has "ephemeral containers refused in a template" "$T/out" 'spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template'
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: d-spread}' \
	'spec: {selector: {matchLabels: {app: d}}, template: {metadata: {labels: {app: d}}, spec: {topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}], containers: [{name: c, image: x}]}}}' \
	>"$T/d-spread.yaml"
expect "a Deployment's template with a spread constraint without topologyKey: 422" 1 k create -f "$T/d-spread.yaml"
has "spread cause named from the template" "$T/out" 'spec.template.spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty'
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: d-ok}' \
	'spec: {selector: {matchLabels: {app: o}}, template: {metadata: {labels: {app: o}}, spec: {containers: [{name: c, image: "x:1", resources: {limits: {cpu: "1"}}, readinessProbe: {httpGet: {port: 8080}}}], volumes: [{name: v}]}}}' \
	>"$T/d-ok.yaml"
expect "a valid Deployment is created" 0 k create -f "$T/d-ok.yaml"
k get deployment d-ok -o 'jsonpath={.spec.template.spec.containers[0].terminationMessagePolicy}/{.spec.template.spec.containers[0].readinessProbe.timeoutSeconds}/{.spec.template.spec.volumes[0].emptyDir}/{.spec.template.spec.securityContext}'
has "the template's spec defaulted" "$T/out" 'File/1/{}/{}'
k get deployment d-ok -o 'jsonpath=[{.spec.template.spec.enableServiceLinks}][{.spec.template.spec.containers[0].resources.requests}]'
has "no Pod-only defaults in a template" "$T/out" '[][]'

# --- round 12: fields behind gates off in kube 1.32, host aliases, deprecated volumes ---
pod p-gated '{hostUsers: false, hostNetwork: true, resources: {requests: {cpu: "1"}}, containers: [{name: c, image: x}]}'
expect "hostUsers and pod-level resources (gates off in 1.32) do not refuse a pod" 0 k create -f "$T/p-gated.yaml"
field p-gated '[{.spec.hostUsers}][{.spec.resources}][{.spec.hostNetwork}]' '[][][true]'
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: d-gated}' \
	'spec: {selector: {matchLabels: {app: g}}, template: {metadata: {labels: {app: g}}, spec: {hostUsers: false, resources: {limits: {memory: 1Gi}}, containers: [{name: c, image: x}]}}}' \
	>"$T/d-gated.yaml"
expect "a Deployment whose template has them" 0 k create -f "$T/d-gated.yaml"
k get deployment d-gated -o 'jsonpath=[{.spec.template.spec.hostUsers}][{.spec.template.spec.resources}]'
has "dropped from the template too" "$T/out" '[][]'
expect "hostUsers added by an update is dropped, not a change of the spec" 0 k patch pod p-gated -p '{"spec":{"hostUsers":false,"resources":{"requests":{"cpu":"2"}}}}'
field p-gated '[{.spec.hostUsers}][{.spec.resources}]' '[][]'
bad_pod p-alias '{hostAliases: [{ip: 10.0.0.300, hostnames: [ok.example, Bad_Host]}, {hostnames: [a]}], containers: [{name: c, image: x}]}' \
	'spec.hostAliases[0].ip: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
has "a hostname not a DNS subdomain" "$T/out" 'spec.hostAliases[0].hostnames[1]: Invalid value: "Bad_Host": a lowercase RFC 1123 subdomain must consist of'
has "an alias without ip" "$T/out" 'spec.hostAliases[1].ip: Invalid value: "": must be a valid IP address'
pod p-alias-ok '{hostNetwork: true, hostAliases: [{ip: "2001:db8::1", hostnames: [a.example]}, {ip: 010.0.0.1, hostnames: [b]}], containers: [{name: c, image: x}]}'
expect "host aliases with hostNetwork (allowed since 1.8), a sloppy IPv4" 0 k create -f "$T/p-alias-ok.yaml"
bad_pod p-legacy '{volumes: [{name: g, gitRepo: {directory: ../up}}, {name: pd, gcePersistentDisk: {partition: 256}},
  {name: ebs, awsElasticBlockStore: {volumeID: ""}}, {name: r, rbd: {monitors: []}}, {name: cf, cephfs: {path: /}},
  {name: gl, glusterfs: {path: p}}, {name: af, azureFile: {shareName: s}}, {name: ad, azureDisk: {diskName: d, diskURI: u, cachingMode: Fast}},
  {name: fl, flocker: {}}, {name: is, iscsi: {targetPortal: "1.2.3.4:3260", iqn: iqn.2001-04.com.example:x, lun: 300}},
  {name: ci, cinder: {}}], containers: [{name: c, image: x}]}' \
	'spec.volumes[0].gitRepo.repository: Required value'
has "gitRepo directory" "$T/out" "spec.volumes[0].gitRepo.directory: Invalid value: \"../up\": must not contain '..'"
has "gcePersistentDisk pdName" "$T/out" 'spec.volumes[1].gcePersistentDisk.pdName: Required value'
has "gcePersistentDisk partition" "$T/out" 'spec.volumes[1].gcePersistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive'
has "awsElasticBlockStore volumeID" "$T/out" 'spec.volumes[2].awsElasticBlockStore.volumeID: Required value'
has "rbd monitors" "$T/out" 'spec.volumes[3].rbd.monitors: Required value'
has "rbd image" "$T/out" 'spec.volumes[3].rbd.image: Required value'
has "cephfs monitors" "$T/out" 'spec.volumes[4].cephfs.monitors: Required value'
has "glusterfs endpoints" "$T/out" 'spec.volumes[5].glusterfs.endpoints: Required value'
has "azureFile secretName" "$T/out" 'spec.volumes[6].azureFile.secretName: Required value'
has "azureDisk cachingMode" "$T/out" 'spec.volumes[7].azureDisk.cachingMode: Unsupported value: "Fast": supported values: "None", "ReadOnly", "ReadWrite"'
has "flocker dataset" "$T/out" 'spec.volumes[8].flocker: Required value: one of datasetName and datasetUUID is required'
has "iscsi lun" "$T/out" 'spec.volumes[9].iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive'
has "cinder volumeID" "$T/out" 'spec.volumes[10].cinder.volumeID: Required value'
pod p-legacy-ok '{volumes: [{name: r, rbd: {monitors: [m1], image: i}}, {name: ad, azureDisk: {diskName: d, diskURI: u}},
  {name: is, iscsi: {targetPortal: "1.2.3.4:3260", iqn: iqn.2001-04.com.example:x, lun: 0}}], containers: [{name: c, image: x}]}'
expect "valid deprecated volumes are created" 0 k create -f "$T/p-legacy-ok.yaml"
field p-legacy-ok '{.spec.volumes[0].rbd.pool}/{.spec.volumes[0].rbd.user}/{.spec.volumes[0].rbd.keyring}/{.spec.volumes[1].azureDisk.cachingMode}/{.spec.volumes[1].azureDisk.kind}/{.spec.volumes[1].azureDisk.fsType}/{.spec.volumes[1].azureDisk.readOnly}/{.spec.volumes[2].iscsi.iscsiInterface}' \
	'rbd/admin//etc/ceph/keyring/ReadWrite/Shared/ext4/false/default'

# --- updates (ValidatePodUpdate) -------------------------------------------------
pod p-up '{activeDeadlineSeconds: 100, tolerations: [{key: a, operator: Exists, effect: NoExecute, tolerationSeconds: 5}], containers: [{name: c, image: "x:1"}]}'
expect "a pod to update" 0 k create -f "$T/p-up.yaml"
expect "an image may change" 0 k patch pod p-up -p '{"spec":{"containers":[{"name":"c","image":"x:2"}]}}'
expect "a toleration may be added, tolerationSeconds changed" 0 k patch pod p-up --type=json \
	-p '[{"op":"replace","path":"/spec/tolerations","value":[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":9},{"key":"b","operator":"Exists"}]}]'
expect "an existing toleration may not change" 1 k patch pod p-up --type=json \
	-p '[{"op":"replace","path":"/spec/tolerations/1/key","value":"z"}]'
has "kube's toleration message" "$T/out" 'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds'
expect "activeDeadlineSeconds may be lowered" 0 k patch pod p-up -p '{"spec":{"activeDeadlineSeconds":50}}'
expect "activeDeadlineSeconds may not be raised" 1 k patch pod p-up -p '{"spec":{"activeDeadlineSeconds":60}}'
has "kube's deadline message" "$T/out" 'spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value'
expect "another spec field may not change" 1 k patch pod p-up -p '{"spec":{"dnsPolicy":"Default"}}'
has "kube's list of updatable fields" "$T/out" 'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'
k get pod p-up -o 'jsonpath={.spec.containers[0].image}/{.spec.activeDeadlineSeconds}/{.spec.tolerations[1].key}'
has "the allowed updates were stored" "$T/out" 'x:2/50/b'

done_
