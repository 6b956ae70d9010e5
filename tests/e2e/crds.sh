#!/bin/sh
# crds.sh - CustomResourceDefinitions on `muster up`, through kubectl: a CRD
# makes a served type (discovery, api-resources, short names, printer
# columns), its objects are pruned, defaulted and validated against the
# structural schema (422 with kube-apiserver's messages; unknown fields per
# --validate), the status subresource, label and field selectors, watch,
# survival across a restart, and deletion of the CRD with its objects;
# CEL validation rules in muster's subset; /openapi/v2 with kubectl explain;
# format and multipleOf, the scale subresource (kubectl scale), two served
# versions and a storage-version change, storedVersions trimmed through
# /status, the CRD-level checks of list types and defaults, validation
# ratcheting, and conversion webhooks called over HTTPS (a Python webhook
# with its own CA), server-side apply at the version they convert to.
# Then deploy/crds/ and every real CRD of ../shared/data/k8s/workloads
# apply, and each sample there is stored, validated and watched (skipped,
# saying so, when that data directory is absent).
# Usage: sh tests/e2e/crds.sh PATH_TO_MUSTER.  Ends with
# "e2e crds: N passed, N failed".
E2E_NAME=crds; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA=$ROOT/../shared/data/k8s/workloads
UPID=""; WPID=""; WHPID=""
on_exit() { [ -n "$WHPID" ] && kill "$WHPID" 2>/dev/null; [ -n "$WPID" ] && kill $WPID 2>/dev/null; [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
up_start "$ROOT/examples/cluster-small.yaml"

cat >"$T/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    selectableFields: [{jsonPath: .spec.color}]
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            properties:
              color: {type: string, enum: [red, blue]}
              size: {type: integer, minimum: 1, maximum: 10, default: 3}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              phase: {type: string}
EOF
expect "apply the CRD" 0 k apply -f "$T/crd.yaml"
has "created" "$T/out" "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
expect "established" 0 k wait --for condition=established --timeout=10s crd/widgets.example.com
expect "api-resources" 0 k api-resources --api-group=example.com
has "widgets served" "$T/out" "wd           example.com/v1   true         Widget"

cat >"$T/w1.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {team: a}}
spec: {color: red, extra: {free: {form: 1}}}
EOF
"$KC" --kubeconfig "$T/data/kubeconfig" get widgets --watch-only --output-watch-events >"$T/watch" 2>&1 &
WPID=$!
sleep 1
expect "create a widget" 0 k apply -f "$T/w1.yaml"
expect "get it" 0 k get wd w1 -o jsonpath='{.spec.size} {.spec.extra.free.form}'
has "defaulted and preserved" "$T/out" "3 1"
expect "printer columns" 0 k get widgets
has "columns" "$T/out" "NAME   COLOR   SIZE   AGE"
has "row" "$T/out" "w1     red     3"

sed 's/name: w1/name: w2/; s/color: red/color: green, size: 11/' "$T/w1.yaml" >"$T/w2.yaml"
expect "invalid widget" 1 k apply -f "$T/w2.yaml"
has "422 enum" "$T/out" 'spec.color: Unsupported value: "green": supported values: "red", "blue"'
has "422 maximum" "$T/out" "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
sed 's/name: w1/name: w3/; s/team: a/team: b/; s/color: red/color: blue, colour: blue/' "$T/w1.yaml" >"$T/w3.yaml"
expect "unknown field (strict)" 1 k apply -f "$T/w3.yaml"
has "strict" "$T/out" 'strict decoding error: unknown field "spec.colour"'
expect "unknown field (warn)" 0 k apply --validate=warn -f "$T/w3.yaml"
has "warned" "$T/out" 'unknown field "spec.colour"'
expect "pruned" 0 k get widget w3 -o jsonpath='{.spec}'
hasnt "colour pruned" "$T/out" "colour"

expect "status subresource" 0 k patch widget w1 --subresource=status --type=merge -p '{"status":{"phase":"Ready"}}'
expect "main resource ignores status" 0 k patch widget w1 --type=merge -p '{"status":{"phase":"Lost"},"spec":{"size":4}}'
expect "status kept" 0 k get widget w1 -o jsonpath='{.status.phase} {.spec.size} {.metadata.generation}'
has "status and generation" "$T/out" "Ready 4 2"
expect "label selector" 0 k get widgets -l team=a -o name
has "selected" "$T/out" "widget.example.com/w1"
hasnt "not selected" "$T/out" "w3"
expect "field selector" 0 k get widgets --field-selector spec.color=blue -o name
has "field selected" "$T/out" "widget.example.com/w3"
hasnt "field not selected" "$T/out" "w1"
expect "unknown field selector" 1 k get widgets --field-selector spec.size=3

# kubectl explain reads /openapi/v3: built-in kinds and the CRD's schema
expect "explain a CRD field" 0 k explain widgets.spec.size
has "explain type" "$T/out" "FIELD: size <integer>"
expect "explain a built-in kind" 0 k explain pods.spec.containers.env
has "explain list" "$T/out" "FIELD: env <[]EnvVar>"
has "explain nested" "$T/out" "valueFrom	<EnvVarSource>"
# the descriptions of the built-in kinds' fields, as kube-apiserver serves them
expect "explain pod.spec" 0 k explain pod.spec
has "model description" "$T/out" "PodSpec is a description of a pod."
has "field description" "$T/out" "Optional duration in seconds the pod may be active on the node relative to"
expect "openapi index" 0 k get --raw /openapi/v3
has "index lists the CRD" "$T/out" '"apis/example.com/v1":{"serverRelativeURL":"/openapi/v3/apis/example.com/v1?hash='
# CEL validation rules (x-kubernetes-validations) in muster's subset: self
# and its fields, has(), size(), comparisons, && || !, all(), exists(), `in`
# a list literal, and transition rules (oldSelf, run only on an update that
# has the old value); kube-apiserver's messages; a rule that is not CEL
# refuses the CRD; a rule muster does not evaluate (messageExpression) is
# named in a Warning
cat >"$T/gadget.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.minReplicas <= self.maxReplicas"
              message: "minReplicas must not exceed maxReplicas"
            - rule: "!has(self.label) || (size(self.label) <= 8 && self.label != 'bad')"
            - rule: "self.mode == oldSelf.mode"
              message: mode is immutable
            - rule: "self.minReplicas >= 0"
              messageExpression: "'minReplicas is ' + string(self.minReplicas)"
            properties:
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
              label: {type: string}
              mode: {type: string}
              tier:
                type: string
                x-kubernetes-validations:
                - {rule: "self in ['gold', 'silver']", message: tier must be gold or silver}
              ports:
                type: array
                items: {type: integer}
                x-kubernetes-validations:
                - {rule: "size(self) <= 2", message: at most two ports}
                - {rule: "self.all(p, p > 0 && p < 65536)", message: ports are 1 to 65535}
              volumes:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    size: {type: integer}
                x-kubernetes-validations:
                - rule: "!self.exists(v, has(v.size) && v.size > 100)"
                  message: no volume over 100
EOF
expect "CRD with CEL rules" 0 k apply -f "$T/gadget.yaml"
has "messageExpression warned" "$T/out" 'muster up does not evaluate spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[3].rule: "self.minReplicas >= 0" (messageExpression is not evaluated)'
hasnt "transition rule evaluated" "$T/out" 'oldSelf'
expect "gadget CRD established" 0 k wait --for condition=established --timeout=10s crd/gadgets.example.com
gadget() { printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: %s}\nspec: %s\n' "$1" "$2" >"$T/g.yaml"; k apply -f "$T/g.yaml"; }
gadget g-ok '{minReplicas: 1, maxReplicas: 3, label: fine, mode: a, tier: gold, ports: [80, 443], volumes: [{name: v, size: 5}]}'
has "valid gadget" "$T/out" "gadget.example.com/g-ok created"
gadget g-ok '{minReplicas: 1, maxReplicas: 4, label: fine, mode: a, tier: gold, ports: [80, 443]}'
has "update keeping mode" "$T/out" "gadget.example.com/g-ok configured"
gadget g-ok '{minReplicas: 1, maxReplicas: 4, label: fine, mode: b, tier: gold, ports: [80, 443]}'
has "transition rule" "$T/out" 'The Gadget "g-ok" is invalid: spec: Invalid value: "object": mode is immutable'
gadget g-tier '{minReplicas: 1, maxReplicas: 3, tier: bronze}'
has "in a list" "$T/out" 'spec.tier: Invalid value: "string": tier must be gold or silver'
gadget g-port0 '{minReplicas: 1, maxReplicas: 3, ports: [0]}'
has "all()" "$T/out" 'spec.ports: Invalid value: "array": ports are 1 to 65535'
gadget g-vol '{minReplicas: 1, maxReplicas: 3, volumes: [{name: a}, {name: b, size: 200}]}'
has "exists()" "$T/out" 'spec.volumes: Invalid value: "array": no volume over 100'
gadget g-minmax '{minReplicas: 5, maxReplicas: 3}'
has "rule message" "$T/out" 'The Gadget "g-minmax" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas'
gadget g-label '{minReplicas: 1, maxReplicas: 3, label: waytoolonglabel}'
has "failed rule" "$T/out" "spec: Invalid value: \"object\": failed rule: !has(self.label) || (size(self.label) <= 8 && self.label != 'bad')"
gadget g-badlabel '{minReplicas: 1, maxReplicas: 3, label: bad}'
has "string comparison" "$T/out" 'The Gadget "g-badlabel" is invalid'
gadget g-ports '{minReplicas: 1, maxReplicas: 3, ports: [1, 2, 3]}'
has "rule on a list" "$T/out" 'spec.ports: Invalid value: "array": at most two ports'
gadget g-missing '{maxReplicas: 3}'
has "missing field" "$T/out" 'no such key: minReplicas evaluating rule: self.minReplicas <= self.maxReplicas'
expect "only the valid gadget" 0 k get gadgets -o name
has "g-ok stored" "$T/out" "gadget.example.com/g-ok"
hasnt "no invalid gadget" "$T/out" "g-minmax"
sed 's/gadgets/gizmos/g; s/Gadget/Gizmo/; s/gadget/gizmo/; s/self.minReplicas <= self.maxReplicas/self.minReplicas <= /' \
	"$T/gadget.yaml" >"$T/gizmo.yaml"
expect "a rule that is not CEL" 1 k apply -f "$T/gizmo.yaml"
has "compilation failed" "$T/out" 'x-kubernetes-validations[0].rule: Invalid value: "self.minReplicas <= ": compilation failed: CEL at offset 20: unexpected end of the expression'

# /openapi/v2 from the same schemas: JSON, and the protobuf document that
# client-go's OpenAPISchema() asks for and kubectl explain's v2 output reads
expect "openapi v2 (JSON)" 0 k get --raw /openapi/v2
has "swagger 2.0" "$T/out" '"swagger":"2.0"'
has "v2 CRD definition" "$T/out" '"com.example.v1.Widget":{'
has "v2 refs" "$T/out" '"$ref":"#/definitions/io.k8s.api.v1.PodSpec"'
has "v2 body parameter" "$T/out" '"in":"body"'
expect "explain a CRD field (v2)" 0 k explain widgets.spec.size --output plaintext-openapiv2
has "v2 explain type" "$T/out" "FIELD:    size <integer>"
expect "explain a built-in kind (v2)" 0 k explain pods.spec.containers --output plaintext-openapiv2
has "v2 explain list" "$T/out" "RESOURCE: containers <[]Object>"
has "v2 explain fields" "$T/out" "imagePullPolicy	<string>"
has "v2 explain description" "$T/out" "List of containers belonging to the pod."

# format and multipleOf (kube-apiserver's supported formats, its messages;
# int32 is not checked, as kube drops it), the scale subresource with
# kubectl scale, and two versions with conversion strategy None: each read
# in the version it names, objects kept in the version they were stored in
# across a storage-version change
cat >"$T/sprocket.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: sprockets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: sprockets, singular: sprocket, kind: Sprocket}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    schema: &schema
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, maximum: 10}
              owner: {type: string, format: email}
              since: {type: string, format: date-time}
              id: {type: string, format: uuid}
              address: {type: string, format: ipv4}
              subnet: {type: string, format: cidr}
              host: {type: string, format: hostname}
              count: {type: string, format: int32}
              batch: {type: integer, multipleOf: 8}
              ratio: {type: number, multipleOf: 0.25}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
  - name: v2
    served: true
    storage: false
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    schema: *schema
EOF
expect "CRD with formats, scale and two versions" 0 k apply -f "$T/sprocket.yaml"
expect "sprocket CRD established" 0 k wait --for condition=established --timeout=10s crd/sprockets.example.com
sprocket() { printf 'apiVersion: example.com/%s\nkind: Sprocket\nmetadata: {name: %s}\nspec: %s\n' "$1" "$2" "$3" >"$T/s.yaml"; k apply -f "$T/s.yaml"; }
sprocket v1 s-bad '{owner: nobody, since: yesterday, id: "1234", address: 10.0.0.256, subnet: 10.0.0.0/33, host: -bad-.example.com, batch: 12, ratio: 0.3}'
has "format email" "$T/out" 'spec.owner: Invalid value: "nobody": spec.owner in body must be of type email: "nobody"'
has "format date-time" "$T/out" 'spec.since: Invalid value: "yesterday": spec.since in body must be of type date-time: "yesterday"'
has "format uuid" "$T/out" 'spec.id: Invalid value: "1234": spec.id in body must be of type uuid: "1234"'
has "format ipv4" "$T/out" 'spec.address: Invalid value: "10.0.0.256": spec.address in body must be of type ipv4: "10.0.0.256"'
has "format cidr" "$T/out" 'spec.subnet: Invalid value: "10.0.0.0/33": spec.subnet in body must be of type cidr: "10.0.0.0/33"'
has "format hostname" "$T/out" 'spec.host: Invalid value: "-bad-.example.com": spec.host in body must be of type hostname: "-bad-.example.com"'
has "multipleOf integer" "$T/out" 'spec.batch: Invalid value: 12: spec.batch in body should be a multiple of 8'
has "multipleOf number" "$T/out" 'spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25'
sprocket v1 s1 '{replicas: 1, owner: ops@example.com, since: "2026-11-27T09:00:00Z", id: 123e4567-e89b-12d3-a456-426614174000, address: 10.0.0.1, subnet: 10.0.0.0/8, host: build.example.com, count: "not checked", batch: 16, ratio: 0.75}'
has "valid formats" "$T/out" "sprocket.example.com/s1 created"
expect "status for the scale" 0 k patch sprocket s1 --subresource=status --type=merge -p '{"status":{"replicas":1,"selector":"app=s1"}}'
expect "kubectl scale" 0 k scale sprocket s1 --replicas=3
has "scaled" "$T/out" "sprocket.example.com/s1 scaled"
expect "replicas written" 0 k get sprocket s1 -o jsonpath='{.spec.replicas} {.metadata.generation}'
has "spec.replicas" "$T/out" "3 2"
expect "the Scale" 0 k get --raw /apis/example.com/v1/namespaces/default/sprockets/s1/scale
has "Scale object" "$T/out" '"kind":"Scale","apiVersion":"autoscaling/v1"'
has "Scale fields" "$T/out" '"spec":{"replicas":3},"status":{"replicas":1,"selector":"app=s1"}'
expect "scale past the schema" 1 k scale sprocket s1 --replicas=11
has "scale validated" "$T/out" 'The Sprocket "s1" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10'
expect "discovery lists the scale" 0 k get --raw /apis/example.com/v1
has "sprockets/scale" "$T/out" '"name":"sprockets/scale","singularName":"","namespaced":true,"kind":"Scale"'
expect "read at v1" 0 k get sprockets.v1.example.com s1 -o jsonpath='{.apiVersion}'
has "v1" "$T/out" "example.com/v1"
expect "read at v2" 0 k get sprockets.v2.example.com s1 -o jsonpath='{.apiVersion} {.spec.replicas}'
has "v2" "$T/out" "example.com/v2 3"
expect "list at v2" 0 k get --raw /apis/example.com/v2/namespaces/default/sprockets
has "list converted" "$T/out" '"kind":"SprocketList","apiVersion":"example.com/v2"'
has "items converted" "$T/out" '"items":[{"apiVersion":"example.com/v2","kind":"Sprocket"'
api -sN "$S/apis/example.com/v2/namespaces/default/sprockets?watch=1&timeoutSeconds=1" >"$T/watch3" 2>&1
has "watch at v2" "$T/watch3" '{"type":"ADDED","object":{"apiVersion":"example.com/v2","kind":"Sprocket"'
# strategy None: an apply at v2 is recorded at v2, as kube's field manager records it
printf 'apiVersion: example.com/v2\nkind: Sprocket\nmetadata: {name: s1, labels: {eve: "1"}}\n' >"$T/s1v2.yaml"
expect "apply at v2 (None)" 0 k apply --server-side --field-manager=eve -f "$T/s1v2.yaml"
expect "eve's entry" 0 k get sprockets.v1.example.com s1 -o jsonpath='{.metadata.managedFields[?(@.manager=="eve")].apiVersion}'
has "entry at v2 (None)" "$T/out" "example.com/v2"
# the storage version becomes v2: s1 stays stored in v1, both still read
sed 's/storage: true/storage: TRUE/; s/storage: false/storage: true/; s/storage: TRUE/storage: false/' "$T/sprocket.yaml" >"$T/sprocket2.yaml"
expect "storage version v2" 0 k apply -f "$T/sprocket2.yaml"
expect "storedVersions" 0 k get crd sprockets.example.com -o jsonpath='{.status.storedVersions}'
has "both stored versions" "$T/out" '["v1","v2"]'
sprocket v1 s2 '{replicas: 2}'
expect "new object read at v1" 0 k get sprockets.v1.example.com s2 -o jsonpath='{.apiVersion}'
has "s2 at v1" "$T/out" "example.com/v1"
expect "old object read at v2" 0 k get sprockets.v2.example.com s1 -o jsonpath='{.apiVersion} {.spec.owner}'
has "s1 at v2" "$T/out" "example.com/v2 ops@example.com"
awk '/- name: v2/{exit} {print}' "$T/sprocket2.yaml" | sed 's/storage: false/storage: true/; s/schema: &schema/schema:/' >"$T/sprocket3.yaml"
expect "a stored version cannot go" 1 k apply -f "$T/sprocket3.yaml"
has "storedVersions kept" "$T/out" 'status.storedVersions[1]: Invalid value: "v2": must appear in spec.versions'
# storedVersions trimmed through /status, as a storage migration does
expect "storedVersions without the storage version" 1 k patch crd sprockets.example.com --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}'
has "storage version kept" "$T/out" 'status.storedVersions: Invalid value: ["v1"]: must have the storage version v2'
expect "no storedVersions" 1 k patch crd sprockets.example.com --subresource=status --type=merge -p '{"status":{"storedVersions":[]}}'
has "one stored version" "$T/out" 'status.storedVersions: Invalid value: []: must have at least one stored version'
expect "storedVersions trimmed" 0 k patch crd sprockets.example.com --subresource=status --type=merge -p '{"status":{"storedVersions":["v2"]}}'
expect "trimmed storedVersions" 0 k get crd sprockets.example.com -o jsonpath='{.status.storedVersions}'
has "only v2" "$T/out" '["v2"]'
expect "a spec update keeps them" 0 k label crd sprockets.example.com migrated=yes
expect "storedVersions after a label" 0 k get crd sprockets.example.com -o jsonpath='{.status.storedVersions}'
has "still only v2" "$T/out" '["v2"]'

# the CRD-level checks of list types and defaults
cat >"$T/badcrd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gears.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gears, kind: Gear}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [id]
                items: {type: object, required: [name], properties: {name: {type: string}}}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: object, properties: {a: {type: string}}}
              size: {type: integer, maximum: 10, default: 20}
              opts: {type: object, properties: {a: {type: string}}, default: {a: x, b: z}}
EOF
SP='spec.versions[0].schema.openAPIV3Schema.properties[spec].properties'
expect "CRD-level checks" 1 k apply -f "$T/badcrd.yaml"
has "map key not a property" "$T/out" "$SP[ports].x-kubernetes-list-map-keys: Invalid value: [\"id\"]: entries must all be names of item properties"
has "set of granular maps" "$T/out" "$SP[tags].items.x-kubernetes-map-type: Invalid value: \"null\": must be atomic as item of a list with x-kubernetes-list-type=set"
has "default out of bounds" "$T/out" "$SP[size].default: Invalid value: 20: $SP[size].default in body should be less than or equal to 10"
has "default with unknown fields" "$T/out" "$SP[opts].default: Invalid value: {\"a\":\"x\",\"b\":\"z\"}: must not have unknown fields"
sed 's/\[id\]/[name]/; s/properties: {a: {type: string}}}/properties: {a: {type: string}}, x-kubernetes-map-type: atomic}/; s/default: 20/default: 2/; s/, b: z//' "$T/badcrd.yaml" >"$T/goodcrd.yaml"
expect "the CRD fixed" 0 k apply -f "$T/goodcrd.yaml"

# validation ratcheting (kube 1.30+, on by default): a CRD update makes a
# stored object invalid; an update that leaves the invalid values as they
# were is accepted, one that changes one is judged by the new schema
cat >"$T/gizmo.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, maximum: 10}
              mode: {type: string}
EOF
expect "gizmo CRD" 0 k apply -f "$T/gizmo.yaml"
expect "gizmo established" 0 k wait --for condition=established --timeout=10s crd/gizmos.example.com
printf 'apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g1}\nspec: {size: 8, mode: fast}\n' >"$T/g1.yaml"
expect "gizmo g1" 0 k apply -f "$T/g1.yaml"
sed 's/maximum: 10/maximum: 5/; s/mode: {type: string}/mode: {type: string, enum: [slow]}/' "$T/gizmo.yaml" >"$T/gizmo2.yaml"
expect "schema tightened" 0 k apply -f "$T/gizmo2.yaml"
expect "label an invalid object" 0 k label gizmo g1 edited=yes
expect "the invalid object labelled" 0 k get gizmo g1 -o jsonpath='{.metadata.labels.edited} {.spec.size}'
has "labelled, size kept" "$T/out" "yes 8"
expect "a changed invalid field" 1 k patch gizmo g1 --type=merge -p '{"spec":{"size":9}}'
has "changed field judged" "$T/out" 'spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5'
hasnt "unchanged field ratcheted" "$T/out" 'spec.mode'
expect "the other field fixed, size left" 0 k patch gizmo g1 --type=merge -p '{"spec":{"mode":"slow"}}'
sed 's/g1/g2/' "$T/g1.yaml" >"$T/g2.yaml"
expect "a new object is judged whole" 1 k apply -f "$T/g2.yaml"
has "new object refused" "$T/out" 'spec.size: Invalid value: 8: spec.size in body should be less than or equal to 5'
expect "delete the gizmo CRD" 0 k delete crd gizmos.example.com

# conversion webhooks: called over HTTPS as kube-apiserver calls them (a
# Python webhook with a certificate of its own CA converts v1 <-> v2, v2's
# replicas twice v1's)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/ca.key" -out "$T/ca.crt" \
	-days 1 -subj /CN=webhook-ca >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/wh.key" -out "$T/wh.csr" \
	-subj /CN=127.0.0.1 >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/wh.ext"
openssl x509 -req -in "$T/wh.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial -out "$T/wh.crt" -days 1 \
	-extfile "$T/wh.ext" >/dev/null 2>&1
python3 "$ROOT/tests/e2e/lib/conv_webhook.py" "$T/wh.crt" "$T/wh.key" "$T/wh.port" "$T/wh.log" 2>"$T/wh.err" &
WHPID=$!
i=0; while [ ! -s "$T/wh.port" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
WH="https://127.0.0.1:$(cat "$T/wh.port")/convert"
CAB=$(base64 -w0 "$T/ca.crt")
sed 's/sprockets/cogs/g; s/Sprocket/Cog/; s/sprocket/cog/' "$T/sprocket.yaml" >"$T/cog.yaml"
printf '  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig: {url: "%s", caBundle: "%s"}\n' "$WH" "$CAB" >>"$T/cog.yaml"
expect "webhook CRD accepted" 0 k apply -f "$T/cog.yaml"
expect "cog CRD established" 0 k wait --for condition=established --timeout=10s crd/cogs.example.com
cog() { printf 'apiVersion: example.com/%s\nkind: Cog\nmetadata: {name: %s}\nspec: {replicas: %s}\n' "$1" "$2" "$3" >"$T/c.yaml"; k apply -f "$T/c.yaml"; }
expect "cog at the storage version" 0 cog v1 c1 2
expect "cog read at v2" 0 k get cogs.v2.example.com c1 -o jsonpath='{.apiVersion} {.spec.replicas}'
has "converted by the webhook" "$T/out" "example.com/v2 4"
expect "cog written at v2" 0 cog v2 c2 6
expect "c2 read at v1" 0 k get cogs.v1.example.com c2 -o jsonpath='{.apiVersion} {.spec.replicas}'
has "stored as v1" "$T/out" "example.com/v1 3"
expect "c2 read at v2" 0 k get cogs.v2.example.com c2 -o jsonpath='{.spec.replicas}'
has "round trip" "$T/out" "6"
expect "merge patch at v2" 0 k patch cogs.v2.example.com c2 --type=merge -p '{"spec":{"replicas":8}}'
expect "patched at v1" 0 k get cogs.v1.example.com c2 -o jsonpath='{.spec.replicas}'
has "patch converted" "$T/out" "4"
expect "JSON patch at v2" 0 k patch cogs.v2.example.com c2 --type=json -p '[{"op":"replace","path":"/spec/replicas","value":10}]'
expect "JSON-patched at v1" 0 k get cogs.v1.example.com c2 -o jsonpath='{.spec.replicas}'
has "JSON patch converted" "$T/out" "5"
expect "merge patch back at v2" 0 k patch cogs.v2.example.com c2 --type=merge -p '{"spec":{"replicas":8}}'
: >"$T/wh.log"
expect "list at v2" 0 k get --raw /apis/example.com/v2/namespaces/default/cogs
has "list converted" "$T/out" '"kind":"CogList","apiVersion":"example.com/v2"'
has "one review for the list" "$T/wh.log" "/convert?timeout=30s 2 example.com/v2 c1,c2"
api -sN "$S/apis/example.com/v2/namespaces/default/cogs?watch=1&timeoutSeconds=1" >"$T/watch4" 2>&1
has "watch at v2" "$T/watch4" '{"type":"ADDED","object":{"apiVersion":"example.com/v2","kind":"Cog"'
has "watch converted" "$T/watch4" '"spec":{"replicas":8}'
expect "kubectl get at v2" 0 k get cogs.v2.example.com
has "table at v2" "$T/out" "c2"
# concurrent patches at v2: each read, converted and written as a replace;
# the ones that lose a race are retried, as kube's patcher retries them
RP=""
for l in a b c d; do
	"$KC" --kubeconfig "$T/data/kubeconfig" patch cogs.v2.example.com c1 --type=merge \
		-p "{\"metadata\":{\"labels\":{\"$l\":\"1\"}}}" >"$T/race.$l" 2>&1 &
	RP="$RP $!"
done
wait $RP
for l in a b c d; do has "concurrent patch $l" "$T/race.$l" "cog.example.com/c1 patched"; done
expect "every patch kept" 0 k get cogs.v1.example.com c1 -o jsonpath='{.metadata.labels}'
has "four labels" "$T/out" '{"a":"1","b":"1","c":"1","d":"1"}'
cog v2 c3 2 >/dev/null
api -s -X DELETE "$S/apis/example.com/v2/namespaces/default/cogs/c3" >"$T/out" 2>&1
has "deleted object converted" "$T/out" '"apiVersion":"example.com/v2","kind":"Cog"'
has "deleted object's replicas" "$T/out" '"spec":{"replicas":2}'

# server-side apply at v2, a version the webhook converts to (kube's
# structured-merge manager applies at the request's version): entries
# carry the version they were applied at; a manager at v1 is compared on
# the objects converted to v1
printf 'apiVersion: example.com/v2\nkind: Cog\nmetadata: {name: sa1, labels: {l: a}}\nspec: {replicas: 6}\n' >"$T/sa1.yaml"
expect "apply creates at v2" 0 k apply --server-side --field-manager=alice -f "$T/sa1.yaml"
has "created by apply" "$T/out" "cog.example.com/sa1 serverside-applied"
expect "stored converted" 0 k get cogs.v1.example.com sa1 -o jsonpath='{.spec.replicas}'
has "replicas at v1" "$T/out" "3"
expect "alice's entry" 0 k get cogs.v2.example.com sa1 -o jsonpath='{.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation} {.metadata.managedFields[0].apiVersion}'
has "entry at v2" "$T/out" "alice Apply example.com/v2"
printf 'apiVersion: example.com/v1\nkind: Cog\nmetadata: {name: sa1, labels: {b: x}}\nspec: {replicas: 3}\n' >"$T/sa1b.yaml"
: >"$T/wh.log"
expect "bob applies the same value at v1" 0 k apply --server-side --field-manager=bob -f "$T/sa1b.yaml"
has "alice compared at v2" "$T/wh.log" "/convert?timeout=30s 2 example.com/v2 sa1,sa1"
printf 'apiVersion: example.com/v2\nkind: Cog\nmetadata: {name: sa1}\nspec: {replicas: 8}\n' >"$T/sa1c.yaml"
expect "carol conflicts at v2" 1 k apply --server-side --field-manager=carol -f "$T/sa1c.yaml"
has "conflicts at both versions" "$T/out" 'Apply failed with 2 conflicts: conflicts with "alice":'
has "bob's at v1" "$T/out" 'conflicts with "bob":'
sed 's/replicas: 6/replicas: 10/' "$T/sa1.yaml" >"$T/sa1d.yaml"
expect "alice conflicts with bob at v1" 1 k apply --server-side --field-manager=alice -f "$T/sa1d.yaml"
has "conflict converted" "$T/out" 'Apply failed with 1 conflict: conflict with "bob": .spec.replicas'
expect "alice forces" 0 k apply --server-side --force-conflicts --field-manager=alice -f "$T/sa1d.yaml"
expect "forced value" 0 k get cogs.v1.example.com sa1 -o jsonpath='{.spec.replicas}'
has "5 at v1" "$T/out" "5"
expect "bob lost replicas" 0 k get cogs.v1.example.com sa1 -o jsonpath='{.metadata.managedFields[?(@.manager=="bob")].fieldsV1}'
has "bob keeps his label" "$T/out" '"f:b"'
hasnt "bob's replicas gone" "$T/out" 'replicas'
printf 'apiVersion: example.com/v2\nkind: Cog\nmetadata: {name: sa1}\nspec: {replicas: 10}\n' >"$T/sa1e.yaml"
expect "alice stops applying her label" 0 k apply --server-side --field-manager=alice -f "$T/sa1e.yaml"
expect "label removed" 0 k get cogs.v2.example.com sa1 -o jsonpath='{.metadata.labels}'
has "bob's label stays" "$T/out" '{"b":"x"}'
printf 'apiVersion: example.com/v2\nkind: Cog\nmetadata: {name: sa1}\n' >"$T/sa1g.yaml"
expect "bob applies at v2 without his label" 0 k apply --server-side --field-manager=bob -f "$T/sa1g.yaml"
expect "bob's label pruned at v1" 0 k get cogs.v2.example.com sa1 -o jsonpath='{.metadata.labels} {.spec.replicas}'
hasnt "label applied at v1 gone" "$T/out" '"b"'
has "alice's replicas stay" "$T/out" '10'
api -s -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary '{"apiVersion":"example.com/v1","kind":"Cog","metadata":{"name":"sa1"}}' \
	"$S/apis/example.com/v2/namespaces/default/cogs/sa1?fieldManager=alice" >"$T/out" 2>&1
has "version mismatch" "$T/out" 'the API version in the data (example.com/v1) does not match the expected API version (example.com/v2)'
# the webhook's failures, with kube-apiserver's messages
expect "fail-c1 at v1" 0 cog v1 fail-c1 1
expect "failure answered" 1 k get cogs.v2.example.com fail-c1
has "webhook failure" "$T/out" 'conversion for example.com/v1, Kind=Cog failed: conversion webhook for example.com/v1, Kind=Cog failed: cannot convert fail-c1'
expect "list fails with it" 1 k get cogs.v2.example.com
has "list failure" "$T/out" 'cannot convert fail-c1'
expect "delete fail-c1" 0 k delete cogs.v1.example.com fail-c1
expect "baduid-c1 at v1" 0 cog v1 baduid-c1 1
expect "wrong uid" 1 k get cogs.v2.example.com baduid-c1
has "uid checked" "$T/out" 'failed: expected response.uid="'
expect "delete baduid-c1" 0 k delete cogs.v1.example.com baduid-c1
expect "rename-c1 at v1" 0 cog v1 rename-c1 1
expect "renamed" 1 k get cogs.v2.example.com rename-c1
has "name checked" "$T/out" 'conversion for example.com/v1, Kind=Cog returned invalid converted object at index 1: must have the same name: rename-c1 != renamed'
expect "delete rename-c1" 0 k delete cogs.v1.example.com rename-c1
# TLS verified against the caBundle: another CA's bundle fails
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/ca2.key" -out "$T/ca2.crt" \
	-days 1 -subj /CN=other-ca >/dev/null 2>&1
sed "s|caBundle: \"$CAB\"|caBundle: \"$(base64 -w0 "$T/ca2.crt")\"|" "$T/cog.yaml" >"$T/cog3.yaml"
expect "another caBundle" 0 k apply -f "$T/cog3.yaml"
expect "certificate refused" 1 k get cogs.v2.example.com c1
has "TLS verified" "$T/out" "failed: Post \"$WH?timeout=30s\": "
# a service cannot be resolved by muster up; http is refused on the CRD
sed "s|clientConfig: {url: .*|clientConfig: {service: {name: conv, namespace: default, path: /convert}}|" "$T/cog.yaml" >"$T/cog4.yaml"
expect "service webhook" 0 k apply -f "$T/cog4.yaml"
expect "service not resolved" 1 k get cogs.v2.example.com c1
has "service gap" "$T/out" 'muster up does not resolve clientConfig.service'
# why: muster up serves no Services (kube-apiserver resolves the service's
# ClusterIP, which only kube-proxy routes), and the service is checked on
# the CRD as kube's ValidateWebhookService checks it
expect "no Services served" 1 k get services
has "services unknown" "$T/out" 'the server doesn'"'"'t have a resource type "services"'
sed "s|clientConfig: {url: .*|clientConfig: {service: {name: conv, namespace: '', port: 0, path: convert}}|" "$T/cog.yaml" >"$T/cog6.yaml"
expect "service checked" 1 k apply -f "$T/cog6.yaml"
has "service namespace" "$T/out" 'spec.conversion.webhook.clientConfig.service.namespace: Required value: service namespace is required'
has "service port" "$T/out" 'spec.conversion.webhook.clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive'
has "service path" "$T/out" 'spec.conversion.webhook.clientConfig.service.path: Invalid value: "convert": must start with a '"'"'/'"'"''
sed "s|url: \"https://|url: \"http://|" "$T/cog.yaml" >"$T/cog5.yaml"
expect "http webhook" 1 k apply -f "$T/cog5.yaml"
has "https only" "$T/out" "spec.conversion.webhook.clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"
kill "$WHPID" 2>/dev/null; wait "$WHPID" 2>/dev/null; WHPID=""
sed 's/strategy: Webhook/strategy: None/' "$T/cog.yaml" >"$T/cog2.yaml"
expect "webhook with strategy None" 1 k apply -f "$T/cog2.yaml"
has "webhook forbidden" "$T/out" 'spec.conversion.webhook: Forbidden: should not be set when strategy is not set to Webhook'

# across a restart the type is served again from the stored CRD
kill "$UPID"; wait "$UPID" 2>/dev/null
up_start "$ROOT/examples/cluster-small.yaml"
expect "served after restart" 0 k get widget w1 -o jsonpath='{.status.phase}'
has "kept" "$T/out" "Ready"
expect "delete the CRD" 0 k delete crd widgets.example.com
expect "type gone" 1 k get --raw /apis/example.com/v1/namespaces/default/widgets
has "404" "$T/out" "NotFound"
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; WPID=""
grep -q "^ADDED *w1 *red" "$T/watch" && ok || { bad "watch: no ADDED w1"; cat "$T/watch"; }
grep -q "^MODIFIED *w1 *red *4" "$T/watch" && ok || { bad "watch: no MODIFIED w1"; cat "$T/watch"; }

# muster's own CRDs: muster serves those kinds itself, the CRDs are stored
expect "deploy/crds apply" 0 k apply -f "$ROOT/deploy/crds/"
has "queues CRD" "$T/out" "customresourcedefinition.apiextensions.k8s.io/queues.muster.io created"
expect "deploy/examples/queues.yaml" 0 k apply -f "$ROOT/deploy/examples/queues.yaml"

# the real CRDs and samples of the workload projects
if [ ! -d "$DATA/crds" ]; then
	echo "crds.sh: SKIPPED the real CRDs: $DATA is absent (it is in the shared data directory, not the repository)"
	done_
fi
# server-side apply, as their projects document: the largest are over the
# 256 KiB kubectl.kubernetes.io/last-applied-configuration annotation limit
expect "real CRDs apply" 0 k apply --server-side -f "$DATA/crds/"
n=$(grep -c "serverside-applied" "$T/out")
[ "$n" -eq "$(ls "$DATA"/crds/*.yaml | wc -l)" ] && ok || { bad "applied $n CRDs"; cat "$T/out"; }
expect "client-side apply of a large CRD" 1 k apply -f "$DATA/crds/ray.io_rayjobs.yaml"
has "annotation limit" "$T/out" "metadata.annotations"
expect "kubeflow namespace" 0 k create namespace kubeflow
# the resourceVersion before the samples: watches from it replay their creation
RV=$(api -s "$S/api/v1/namespaces?limit=1" | sed -n 's/^{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"\([0-9]*\)".*/\1/p')
for f in "$DATA"/samples/*.yaml; do
	expect "sample $(basename "$f")" 0 k apply -f "$f"
	expect "stored $(basename "$f")" 0 k get -f "$f" -o name
done
expect "jobset defaulted" 0 k get jobset paralleljobs -o jsonpath='{.spec.replicatedJobs[0].replicas}'
has "replicas default" "$T/out" "1"
# JobSet's successPolicy is immutable (`self == oldSelf`): set once where
# there was none, it may not change
expect "jobset successPolicy set" 0 k patch jobset paralleljobs --type=merge -p '{"spec":{"successPolicy":{"operator":"Any"}}}'
expect "jobset successPolicy changed" 1 k patch jobset paralleljobs --type=merge -p '{"spec":{"successPolicy":{"operator":"All"}}}'
has "jobset immutable" "$T/out" 'spec.successPolicy: Invalid value: "object": Value is immutable'
# KubeRay's managedBy: one of two controllers (`self in [...]`), immutable
expect "rayjob managedBy" 1 k patch rayjob rayjob-sample --type=merge -p '{"spec":{"managedBy":"someone-else"}}'
has "rayjob managedBy message" "$T/out" "spec.managedBy: Invalid value: \"string\": the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'"
sed 's/replicas: 1$/replicas: one/' "$DATA/samples/pytorchjob.yaml" | sed 's/name: pytorch-simple/name: bad/' >"$T/bad.yaml"
expect "invalid PyTorchJob" 1 k apply -f "$T/bad.yaml"
has "type checked" "$T/out" "in body must be of type integer"
for gvr in jobset.x-k8s.io/v1alpha2/jobsets leaderworkerset.x-k8s.io/v1/leaderworkersets \
	kubeflow.org/v1/mpijobs kubeflow.org/v1/pytorchjobs ray.io/v1/rayjobs; do
	api -sN "$S/apis/$gvr?watch=1&resourceVersion=$RV&timeoutSeconds=2" >"$T/watch2" 2>&1
	has "watched $gvr" "$T/watch2" '{"type":"ADDED","object":{"apiVersion":"'"${gvr%/*}"'"'
done
done_
