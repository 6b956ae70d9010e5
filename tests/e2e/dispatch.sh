#!/bin/sh
# dispatch.sh - end-to-end tests of `muster dispatch`, the hub daemon
# (docs/dispatch.md): a hub `muster up` and three worker `muster up`s
# (small: 2 x 8 GPUs, private; big: 4 x 8, private; cloud: 2 x 8, public,
# in pull mode through `muster dispatch agent`), each worker with its own
# `muster scheduler`, and the dispatcher, all
# driven by kubectl against the hub.  Checked: the Clusters become Ready
# with their GPUs; bad input gets a clear message (a broken kubeconfig, a
# missing Secret, an unknown cluster selector, a job larger than any
# cluster); a gang that fits only the big cluster goes there; burst to the
# public cluster happens only after --burst-after; 200 mixed jobs all
# complete, each on exactly one cluster; kill -9 of the dispatcher in the
# middle of a dispatch burst leaves no duplicate after the restart; a job
# that never starts is withdrawn after --start-timeout (one copy at a
# time); draining a cluster sends nothing new there and leaves what
# runs; a worker whose API server is killed has its jobs requeued
# elsewhere after --cluster-lost-after, and once it is back its stale
# copies are deleted; a standby dispatcher waits for the lease and takes
# over when the leader stops, and the old leader's lease term is fenced
# off (a patch under it is refused); a copy the worker refuses for good
# (403 from a read-only account) ends NotAdmitted with the worker's words
# and is not sent again; a hub queue's parent limits it (a child of a
# queue with a 2-GPU limit runs one 2-GPU job at a time), and a queue's
# cap on a cluster (annotation muster.io/cluster-caps) keeps its jobs
# off it, or (CL=jobs:N) to N jobs at a time there.  The dispatcher and the pull-mode
# agent run with the service accounts of deploy/dispatch-rbac.yaml and
# deploy/dispatch-agent-rbac.yaml (so that a missing right fails a check);
# hub Jobs carry the condition Dispatched, and one whose spec.managedBy is
# muster.io/dispatch gets its copy's status (kubectl wait
# --for=condition=complete on the hub).
# Usage: sh tests/e2e/dispatch.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch: N passed, N failed".  Every wait is a bounded loop and
# every process started here is killed on exit.
E2E_NAME=dispatch; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PIDS=""
on_exit() {
	for p in $PIDS $DPID; do kill -9 "$p" 2>/dev/null; done
	[ -n "${E2E_KEEP:-}" ] && cp "$T"/*.log "$T"/*.err "$E2E_KEEP"/ 2>/dev/null
}
DPID=""
need_kubectl

# pool NAME COUNT: a worker's cluster file (COUNT nodes of 8 A100s).
pool() {
	cat <<EOF
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: $2
  namePrefix: $1-
  gpuModel: A100
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {deserved: 64}}}
EOF
}
# start NAME [PORT]: a `muster up` with data in $T/NAME (port 0: any);
# sets NAME_S to its address.
start() {
	"$M" up --cluster "$T/$1.yaml" --listen "127.0.0.1:${2:-0}" --data "$T/$1" --no-fsync --quiet \
		>"$T/$1.up.out" 2>"$T/$1.up.err" &
	eval "${1}_PID=\$!"; PIDS="$PIDS $!"
	i=0
	while [ "$i" -lt 150 ]; do
		s=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/$1.up.out" 2>/dev/null)
		if [ -n "$s" ] && command curl -sfk "$s/readyz" >/dev/null 2>&1; then
			eval "${1}_S=$s"; return 0
		fi
		sleep 0.1; i=$((i + 1))
	done
	cat "$T/$1.up.err"; bad "muster up $1 did not start"; done_
}
# h ARGS: kubectl against the hub; w NAME ARGS: against worker NAME.
h() { "$KC" --kubeconfig "$T/hub/kubeconfig" "$@" >"$T/out" 2>&1; }
w() { n=$1; shift; "$KC" --kubeconfig "$T/$n/kubeconfig" "$@" 2>/dev/null; }
# ann JOB KEY: a hub Job's annotation muster.io/KEY.
ann() { "$KC" --kubeconfig "$T/hub/kubeconfig" get job "$1" -o "jsonpath={.metadata.annotations.muster\.io/$2}" 2>/dev/null; }
ann_is() { [ "$(ann "$1" "$2")" = "$3" ]; }
# job NAME PODS GPUS DURATION [EXTRA_ANNOTATIONS] [SCHEDULER] [MANAGED_BY]: a hub Job.
job() {
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/duration: $4 ${5:-}}
spec:
  ${7:+managedBy: $7}
  suspend: true
  parallelism: $2
  completions: $2
  template:
    spec:
      schedulerName: ${6:-muster}
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: "$3"}}}
---
EOF
}
# cond JOB TYPE FIELD: a hub Job's condition TYPE's FIELD (status, reason).
cond() { "$KC" --kubeconfig "$T/hub/kubeconfig" get job "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null; }
cond_is() { [ "$(cond "$1" "$2" "$3")" = "$4" ]; }
# sa_kc CLUSTER ACCOUNT: a kubeconfig for CLUSTER as service account
# muster-system/ACCOUNT (its token from kubectl create token), in
# $T/CLUSTER-ACCOUNT.kc.
sa_kc() {
	tok=$("$KC" --kubeconfig "$T/$1/kubeconfig" create token "$2" -n muster-system 2>"$T/err") ||
		{ bad "token for $2 on $1: $(cat "$T/err")"; return 1; }
	# the service account's token instead of the admin client certificate
	# (kubectl sends both when it has both, and the certificate wins)
	sed -e '/^    client-certificate-data: /d' -e "s/^    client-key-data: .*/    token: $tok/" \
		-e "s/^    token: .*/    token: $tok/" "$T/$1/kubeconfig" >"$T/$1-$2.kc"
}
dispatcher() {
	"$M" dispatch --kubeconfig "$T/hub-muster-dispatch.kc" --interval 100ms --burst-after 6s \
		--start-timeout 8s --cluster-lost-after 4s --request-timeout 1s --id d1 \
		--burst-priority-class urgent \
		--lease-namespace muster-system --lease-duration 10s --retry-period 1s \
		--metrics 127.0.0.1:0 >>"$T/d.out" 2>>"$T/d.log" &
	DPID=$!
}
# copies NAME: on how many workers a Job NAME exists.
copies() {
	c=0
	for n in small big cloud; do
		w "$n" get job "$1" -o name | grep -q . && c=$((c + 1))
	done
	echo "$c"
}

cat >"$T/hub.yaml" <<'EOF'
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {deserved: 64}}}
EOF
pool small 2 >"$T/small.yaml"; pool big 4 >"$T/big.yaml"; pool cloud 2 >"$T/cloud.yaml"
for n in hub small big cloud; do start "$n"; done
for n in small big cloud; do
	"$M" scheduler --kubeconfig "$T/$n/kubeconfig" --no-leader-elect --min-runtime 0 \
		>"$T/$n.s.out" 2>"$T/$n.s.log" &
	PIDS="$PIDS $!"
done
h create namespace muster-system
printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: urgent}\nvalue: 1000\n' >"$T/pc.yaml"
expect "priority class urgent" 0 h apply -f "$T/pc.yaml"
# ... and on the workers: the copies' pods name it there
for n in small big cloud; do w "$n" apply -f "$T/pc.yaml" >/dev/null && ok || bad "urgent on $n"; done
# the dispatcher and the agent run as the accounts deploy/ grants
expect "apply deploy/dispatch-rbac.yaml" 0 h apply -f "$ROOT/deploy/dispatch-rbac.yaml"
sa_kc hub muster-dispatch; sa_kc hub muster-dispatch-agent
expect "apply deploy/dispatch-agent-rbac.yaml" 0 w cloud apply -f "$ROOT/deploy/dispatch-agent-rbac.yaml"
sa_kc cloud muster-dispatch-agent
expect "the account cannot read other Secrets" 1 "$KC" --kubeconfig "$T/hub-muster-dispatch.kc" get secrets -n default
for n in small big; do
	h -n muster-system create secret generic "$n-kc" --from-file=kubeconfig="$T/$n/kubeconfig"
done
printf 'apiVersion: v1\nkind: Config\nclusters: []\n' >"$T/broken.kc"
h -n muster-system create secret generic broken-kc --from-file=kubeconfig="$T/broken.kc"
cat >"$T/clusters.yaml" <<'EOF'
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: small, labels: {region: eu}}
spec: {tier: private, kubeconfigSecret: {name: small-kc}}
---
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: big, labels: {region: us}}
spec: {tier: private, kubeconfigSecret: {name: big-kc}}
---
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: cloud, labels: {region: us, provider: acme}}
spec: {tier: public, costPerGPUHour: 3, mode: pull}
---
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: broken}
spec: {tier: private, kubeconfigSecret: {name: broken-kc}}
---
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: nosecret}
spec: {tier: private, kubeconfigSecret: {name: nosuch-kc}}
EOF
if h apply -f "$T/clusters.yaml"; then ok; else bad "clusters: $(cat "$T/out")"; fi
dispatcher
# cloud is in pull mode: its agent calls the hub, which has no kubeconfig for it
"$M" dispatch agent --hub-kubeconfig "$T/hub-muster-dispatch-agent.kc" \
	--kubeconfig "$T/cloud-muster-dispatch-agent.kc" \
	--cluster cloud --interval 100ms >"$T/agent.out" 2>"$T/agent.log" &
PIDS="$PIDS $!"

# --- clusters: Ready with their GPUs; bad kubeconfigs say why -------------
state_is() { [ "$("$KC" --kubeconfig "$T/hub/kubeconfig" get cluster "$1" -o jsonpath='{.status.state}' 2>/dev/null)" = "$2" ]; }
for n in small big cloud; do wait_for "ready-$n" 100 state_is "$n" Ready; done
h get clusters; tr -s ' ' <"$T/out" >"$T/o2"; has get-big "$T/o2" "big private push Ready 32 32"
has get-cloud "$T/o2" "cloud public pull Ready 16 16"
has get-broken "$T/out" "Unreachable"
h get cluster broken -o jsonpath='{.status.message}'; has broken-message "$T/out" "kubeconfig Secret muster-system/broken-kc"
h get cluster nosecret -o jsonpath='{.status.message}'; has nosecret-message "$T/out" "muster-system/nosuch-kc: HTTP 404"

# --- where jobs go, and why they wait ----------------------------------------
{ job gang 4 8 2s; job huge 5 8 2s; job mars 1 1 2s ', muster.io/cluster-selector: region=mars'; } >"$T/a.yaml"
h apply -f "$T/a.yaml"
wait_for gang-to-big 50 ann_is gang cluster big
wait_for huge-waits 50 ann_is huge dispatch-reason LargerThanAnyCluster
has huge-why "$(ann huge dispatch-message >"$T/m"; echo "$T/m")" "big: too big; broken: too big; cloud: too big; nosecret: too big; small: too big"
wait_for mars-waits 50 ann_is mars dispatch-reason NoMatchingCluster
# status as conditions: Dispatched True where it went, False with why
expect gang-condition 0 h wait --for=condition=Dispatched job/gang --timeout=10s
has gang-condition-where "$(cond gang Dispatched message >"$T/m"; echo "$T/m")" "on cluster big (generation 1)"
wait_for huge-condition 50 cond_is huge Dispatched reason LargerThanAnyCluster
[ "$(cond huge Dispatched status)" = False ] && ok || bad "huge: Dispatched is $(cond huge Dispatched status)"
expect kexplain-huge 0 "$M" kexplain --kubeconfig "$T/hub/kubeconfig" job/huge
has kexplain-why "$T/out" "waits:      LargerThanAnyCluster: big: too big"
expect kexplain-gang 0 "$M" kexplain --kubeconfig "$T/hub/kubeconfig" job/gang
has kexplain-where "$T/out" "on cluster big (dispatch generation 1)"
murl=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/d.log" | tail -n 1)
command curl -sf "$murl/metrics" >"$T/metrics"
has metrics-dispatched "$T/metrics" "muster_dispatch_dispatched_total 1"
has metrics-gpus "$T/metrics" 'muster_dispatch_cluster_gpus{cluster="big"} 32'
has metrics-waiting "$T/metrics" 'muster_dispatch_jobs{state="queued"} 2'
# a Cluster relabelled on the hub is taken without a restart: mars goes
h label cluster small region=mars --overwrite
wait_for relabel-mars-goes 50 ann_is mars cluster small
h label cluster small region=eu --overwrite
relabelled() { [ "$(grep -c "cluster small: labels, tier or price changed" "$T/d.log")" -ge 2 ]; }
wait_for relabel-back-taken 50 relabelled
wait_for gang-done 100 ann_is gang dispatch-phase Succeeded
[ "$(copies gang)" = 1 ] && ok || bad "gang: $(copies gang) copies"
[ "$(ann huge cluster)" = "" ] && [ "$(copies huge)" = 0 ] && ok || bad "huge was sent somewhere"
h delete job huge mars
# spec.managedBy: the hub's Job controller leaves it; its status is the copy's
job managed 2 1 1s "" muster muster.io/dispatch >"$T/mg.yaml"; h apply -f "$T/mg.yaml"
expect managed-complete 0 h wait --for=condition=complete job/managed --timeout=60s
h get job managed -o jsonpath='{.status.succeeded} {.status.active} {.status.completionTime}'
case "$(cat "$T/out")" in "2 0 20"*) ok ;; *) bad "managed status: $(cat "$T/out")" ;; esac
c=$(ann managed cluster); [ -n "$c" ] && [ -z "$(w "$c" get job managed -o 'jsonpath={.spec.managedBy}')" ] && ok ||
	bad "managed: the copy on '$c' kept spec.managedBy"

# --- burst: the public cluster only after --burst-after ---------------------
: >"$T/b.yaml"
for i in 1 2 3 4 5 6; do job "fill$i" 1 8 25s >>"$T/b.yaml"; done
h apply -f "$T/b.yaml"
ran() { [ "$(ann "$1" dispatch-phase)" = Running ]; }
for i in 1 2 3 4 5 6; do wait_for "fill$i-runs" 100 ran "fill$i"; done
# the write-back of a copy's pod events (Running, the counts) waits for
# the full pass (round 16): the hub still shows them, within a second
wait_for fill1-pods 30 ann_is fill1 dispatch-pods "bound=1,running=1,succeeded=0,failed=0"
job burst 1 8 1s >"$T/c.yaml"; h apply -f "$T/c.yaml"
t0=$(date +%s)
wait_for burst-waits 30 ann_is burst dispatch-reason BurstWait
# burst by PriorityClass name (--burst-priority-class urgent): at once
job hurry 1 8 1s | sed 's/restartPolicy: Never/restartPolicy: Never\n      priorityClassName: urgent/' >"$T/u.yaml"
job nocls 1 1 1s | sed 's/restartPolicy: Never/restartPolicy: Never\n      priorityClassName: nosuch/' >>"$T/u.yaml"
h apply -f "$T/u.yaml"
wait_for hurry-to-cloud 15 ann_is hurry cluster cloud
wait_for nocls-waits 25 cond_is nocls Dispatched reason UnknownPriorityClass
has nocls-why "$(cond nocls Dispatched message >"$T/m"; echo "$T/m")" "PriorityClass nosuch does not exist on the hub"
[ "$(($(date +%s) - t0))" -ge 5 ] || [ "$(ann burst cluster)" = "" ] && ok ||
	bad "burst went to $(ann burst cluster) before the wait"
h delete job nocls
wait_for burst-to-cloud 60 ann_is burst cluster cloud
dt=$(($(date +%s) - t0))
[ "$dt" -ge 5 ] && ok || bad "burst after ${dt}s, before the 6 s wait"
agent_says() { ann burst agent-status | grep -q "^1 Succeeded bound=1"; }
wait_for pull-status-back 100 agent_says
[ "$(w cloud get job burst -o name)" = job.batch/burst ] && ok || bad "pull: no copy of burst on cloud"
for i in 1 2 3 4 5 6; do hasnt "fill$i-not-cloud" "$(ann "fill$i" cluster >"$T/m"; echo "$T/m")" cloud; done

# --- 200 mixed jobs: all complete, each on exactly one cluster --------------
: >"$T/mix.yaml"
i=0
while [ "$i" -lt 200 ]; do
	g=$((1 << (i % 4))); p=$((1 + (i / 4) % 2))
	job "m-$i" "$p" "$g" 1s >>"$T/mix.yaml"
	i=$((i + 1))
done
t0=$(date +%s)
if h apply -f "$T/mix.yaml"; then ok; else bad "mix: $(head -3 "$T/out")"; fi
# phases PREFIX: the dispatch phase of every hub Job whose name starts with PREFIX.
phases() {
	"$KC" --kubeconfig "$T/hub/kubeconfig" get jobs -o \
		'jsonpath={range .items[*]}{.metadata.name} {.metadata.annotations.muster\.io/dispatch-phase}{"\n"}{end}' \
		2>/dev/null | grep "^$1"
}
all_done() { [ "$(phases "$1" | grep -c ' Succeeded$')" -eq "$2" ]; }
wait_for mix-complete 900 all_done m- 200
echo "  200 jobs dispatched and completed in $(($(date +%s) - t0)) s"
# where NAME_PREFIX: every worker copy, one "NAME" line per copy.
where() { for n in small big cloud; do w "$n" get jobs -o name | sed -n "s|^job.batch/\($1\)|\1|p"; done; }
where 'm-.*' | sort >"$T/where"
[ "$(wc -l <"$T/where")" -eq 200 ] && ok || bad "mix: $(wc -l <"$T/where") copies for 200 jobs"
[ -z "$(uniq -d "$T/where")" ] && ok || bad "mix: on two clusters: $(uniq -d "$T/where" | head -3)"

# --- kill -9 the dispatcher while it dispatches: no duplicates ---------------
: >"$T/k.yaml"
i=0
while [ "$i" -lt 100 ]; do job "k-$i" 1 4 1s >>"$T/k.yaml"; i=$((i + 1)); done
h apply -f "$T/k.yaml"
some() { [ "$(where 'k-.*' | wc -l)" -ge 3 ]; }
wait_for kill-some 100 some
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
n=$(where 'k-.*' | wc -l)
echo "  killed the dispatcher with $n of 100 copies created"
dispatcher
wait_for kill-complete 600 all_done k- 100
where 'k-.*' | sort >"$T/where"
[ "$(wc -l <"$T/where")" -eq 100 ] && ok || bad "kill -9: $(wc -l <"$T/where") copies for 100 jobs"
[ -z "$(uniq -d "$T/where")" ] && ok || bad "kill -9: on two clusters: $(uniq -d "$T/where" | head -3)"
# no job was dispatched again without a reason: a generation above 1
# only after the dispatcher took the job back, each time logged (its
# copy withdrawn after --start-timeout and its deletion confirmed, its
# cluster lost for --cluster-lost-after, its copy deleted on the worker,
# or a record whose answer was lost: that record may have been written,
# so the next dispatch takes the next generation, and no copy was made
# for it).  Under load the short timeouts of this test (a cluster lost
# after 4 s, requests timed out after 1 s) can take any job back, not
# only a withdrawn one, so counting the takings-back, not expecting
# generation 1, is what holds whatever the load; the copies above show
# each job ran once.
"$KC" --kubeconfig "$T/hub/kubeconfig" get jobs -o \
	'jsonpath={range .items[*]}{.metadata.name} {.metadata.annotations.muster\.io/dispatch-generation}{"\n"}{end}' >"$T/gens"
twice=""
while read -r name gen; do
	[ -n "$gen" ] && [ "$gen" -gt 1 ] || continue
	back=$(grep -c -E "job default/$name: (back to the hub \(|record: HTTP|annotations: HTTP)" "$T/d.log")
	[ "$((gen - 1))" -le "$back" ] || twice="$twice $name:$gen(back $back)"
done <"$T/gens"
[ -z "$twice" ] && ok || bad "kill -9: dispatched twice:$twice"

# --- a job that never starts is withdrawn after --start-timeout ---------------
job never 1 8 1s "" nobody >"$T/n.yaml"; h apply -f "$T/n.yaml"
gen_ge() { [ "$(ann "$1" dispatch-generation)" -ge "$2" ] 2>/dev/null; }
most_one() { i=0; while [ "$i" -lt 60 ]; do [ "$(copies never)" -le 1 ] || return 1; gen_ge never 2 && return 0; sleep 0.3; i=$((i + 1)); done; return 1; }
if most_one; then ok; else bad "start timeout: two copies at once, or no redispatch"; fi
h get events --field-selector involvedObject.name=never; has start-timeout-event "$T/out" "StartTimeout"
h delete job never
gone() { [ "$(copies "$1")" = 0 ]; }
wait_for never-copy-deleted 50 gone never

# --- draining a cluster: no new jobs there, what runs stays --------------------
job keep 1 8 20s ', muster.io/cluster-selector: region=eu' >"$T/r.yaml"; h apply -f "$T/r.yaml"
wait_for keep-runs 100 ann_is keep dispatch-phase Running
h annotate cluster small muster.io/drain=true
wait_for small-draining 50 state_is small Draining
job eu 1 1 1s ', muster.io/cluster-selector: region=eu' >"$T/e.yaml"; h apply -f "$T/e.yaml"
wait_for eu-waits 50 ann_is eu dispatch-reason ClustersNotReady
[ "$(ann keep dispatch-phase)" = Running ] && [ "$(ann keep cluster)" = small ] && ok ||
	bad "drain disturbed keep: $(ann keep dispatch-phase) on $(ann keep cluster)"
h annotate cluster small muster.io/drain-
wait_for eu-after-drain 100 ann_is eu dispatch-phase Succeeded
h delete job keep eu
wait_for keep-copy-deleted 50 gone keep

# --- a lost worker: its jobs requeued elsewhere; back: stale copies deleted ---
job lost 2 8 60s >"$T/l.yaml"; h apply -f "$T/l.yaml"
wait_for lost-on-small 100 ann_is lost cluster small
wait_for lost-runs 100 ann_is lost dispatch-phase Running
port=${small_S##*:}
kill -9 "$small_PID"; wait "$small_PID" 2>/dev/null
t0=$(date +%s)
elsewhere() { c=$(ann lost cluster); [ -n "$c" ] && [ "$c" != small ]; }
wait_for lost-requeued 150 elsewhere
dt=$(($(date +%s) - t0))
[ "$dt" -le 12 ] && ok || bad "lost: requeued after ${dt}s"
wait_for lost-unreachable 50 state_is small Unreachable
start small "$port"
wait_for small-ready-again 100 state_is small Ready
stale_gone() { ! w small get job lost -o name | grep -q .; }
wait_for stale-copy-deleted 100 stale_gone
[ "$(copies lost)" = 1 ] && ok || bad "lost: $(copies lost) copies"
grep -q "stale copy default/lost" "$T/d.log" && ok || bad "no stale copy deleted in the log"
h delete job lost

# --- hub queues: a parent's limit holds its children; caps per cluster ------
# org (2 GPUs at most) becomes team-a's parent: of two 2-GPU jobs one runs
printf 'apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: org}\nspec: {resources: {gpu: {deserved: 0, limit: 2}}}\n' >"$T/org.yaml"
expect "hub queue org" 0 h apply -f "$T/org.yaml"
expect "team-a under org" 0 h patch queue team-a --type=merge -p '{"spec":{"parent":"org"}}'
sleep 1
job tree1 1 2 30s >"$T/tr.yaml"; h apply -f "$T/tr.yaml"
wait_for tree1-runs 100 ann_is tree1 dispatch-phase Running
job tree2 1 2 1s >"$T/tr.yaml"; h apply -f "$T/tr.yaml"
wait_for tree2-parent-limit 50 ann_is tree2 dispatch-reason QueueLimit
expect "team-a a root again" 0 h patch queue team-a --type=json -p '[{"op":"remove","path":"/spec/parent"}]'
wait_for tree2-after 100 ann_is tree2 dispatch-phase Succeeded
h delete job tree1 tree2
# caps: team-a may use no pod on small (the job's only cluster), then
# the cap is lifted
expect "caps on team-a" 0 h annotate queue team-a muster.io/cluster-caps=small=pods:0,big=gpu:4
job capped 1 1 1s ', muster.io/cluster-selector: region=eu' >"$T/cp.yaml"; h apply -f "$T/cp.yaml"
wait_for capped-waits 50 ann_is capped dispatch-reason ClusterCap
expect "caps lifted" 0 h annotate queue team-a muster.io/cluster-caps-
wait_for capped-after 100 ann_is capped dispatch-phase Succeeded
# a cap on jobs: one job of team-a at a time on small, whatever its pods
expect "jobs cap" 0 h annotate queue team-a muster.io/cluster-caps=small=jobs:1
job cj1 2 1 8s ', muster.io/cluster-selector: region=eu' >"$T/cj.yaml"; h apply -f "$T/cj.yaml"
wait_for cj1-runs 100 ann_is cj1 dispatch-phase Running
job cj2 1 1 1s ', muster.io/cluster-selector: region=eu' >"$T/cj.yaml"; h apply -f "$T/cj.yaml"
wait_for cj2-jobs-cap 50 ann_is cj2 dispatch-reason ClusterCap
wait_for cj2-after-cj1 150 ann_is cj2 dispatch-phase Succeeded
h delete job cj1 cj2
expect "jobs cap lifted" 0 h annotate queue team-a muster.io/cluster-caps-
expect "bad caps" 0 h annotate queue team-a muster.io/cluster-caps=small
wait_for bad-caps-logged 50 grep -q "muster.io/cluster-caps \"small\": expected CLUSTER=gpu:N" "$T/d.log"
# and said where `kubectl describe queue` shows it: a Warning Event
queue_event() { h get events -n default -o jsonpath='{range .items[?(@.reason=="InvalidQueue")]}{.involvedObject.kind}/{.involvedObject.name}: {.message}{"\n"}{end}' && grep -q 'Queue/team-a: not taken by the dispatcher (invalid argument): annotation muster.io/cluster-caps "small": expected' "$T/out"; }
wait_for bad-caps-event 50 queue_event
# and as the condition Active on the Queue's status (round 11), which
# turns Ready again once the annotation is fixed
queue_cond() { h get queue team-a -o jsonpath='{range .status.conditions[?(@.type=="Active")]}{.status}/{.reason}: {.message}{end}' && grep -q "$1" "$T/out"; }
wait_for bad-caps-condition 50 queue_cond 'False/InvalidQueue: not taken by the dispatcher (invalid argument): annotation muster.io/cluster-caps "small"'
h annotate queue team-a muster.io/cluster-caps-
wait_for caps-condition-ready 50 queue_cond 'True/Ready'
h delete job capped

# --- a copy its worker refuses for good: NotAdmitted, not sent again --------
# tiny: a worker whose credentials may read but not create (403 Forbidden
# for every copy), as a misconfigured or revoked account would be
printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  count: 1\n  namePrefix: tiny-\n  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}\n' >"$T/tiny.yaml"
start tiny
cat >"$T/ro.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: muster-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: muster-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- {apiGroups: ["", batch], resources: [nodes, pods, jobs], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: muster-system}]
EOF
w tiny apply -f "$T/ro.yaml" >/dev/null && ok || bad "tiny: read-only account"
sa_kc tiny reader
h -n muster-system create secret generic tiny-kc --from-file=kubeconfig="$T/tiny-reader.kc"
printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: tiny, labels: {lock: "yes"}}\nspec: {tier: private, kubeconfigSecret: {name: tiny-kc}}\n' >"$T/tiny-cl.yaml"
expect "cluster tiny" 0 h apply -f "$T/tiny-cl.yaml"
wait_for tiny-ready 100 state_is tiny Ready
{ job locked 1 1 1s ', muster.io/cluster-selector: lock=yes'
  job locked2 1 1 1s ', muster.io/cluster-selector: lock=yes' muster muster.io/dispatch; } >"$T/lk.yaml"
h apply -f "$T/lk.yaml"
wait_for refused-not-admitted 100 ann_is locked dispatch-phase NotAdmitted
wait_for refused-condition 50 cond_is locked Dispatched reason NotAdmitted
has refused-why "$(cond locked Dispatched message >"$T/m"; echo "$T/m")" "cluster tiny refused the copy: HTTP 403"
has refused-worker-words "$T/m" "cannot create resource"
expect refused-managed-failed 0 h wait --for=condition=failed job/locked2 --timeout=20s
h get events --field-selector involvedObject.name=locked; has refused-event "$T/out" "NotAdmitted"
sleep 3 # sent once: no new generation, no second try
[ "$(ann locked dispatch-generation)" = 1 ] && [ "$(grep -c "create job default/locked:" "$T/d.log")" = 1 ] && ok ||
	bad "refused: generation $(ann locked dispatch-generation), $(grep -c "create job default/locked:" "$T/d.log") creates"
h delete job locked locked2
h delete cluster tiny

# --- leader election: a standby waits, and takes over on SIGTERM ------------
"$M" dispatch --kubeconfig "$T/hub-muster-dispatch.kc" --interval 100ms --id d2 \
	--lease-namespace muster-system --lease-duration 4s --retry-period 1s >"$T/d2.out" 2>"$T/d2.log" &
D2PID=$!; PIDS="$PIDS $D2PID"
sleep 2
grep -q "waiting for the lease" "$T/d2.log" && ! grep -q "dispatching for" "$T/d2.log" && ok ||
	bad "standby: $(cat "$T/d2.log")"
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
leads() { grep -q "dispatching for" "$T/d2.log"; }
wait_for standby-takes-over 50 leads
job after 1 1 1s >"$T/x.yaml"; h apply -f "$T/x.yaml"
wait_for standby-dispatches 100 ann_is after dispatch-phase Succeeded
# fencing: the record carries d2's term; a write under d1's is refused
case "$(ann after lease-term)" in muster-system/muster-dispatch:d2:*) ok ;; *) bad "term: $(ann after lease-term)" ;; esac
expect fenced 1 h patch job after --type=merge -p \
	'{"metadata":{"annotations":{"muster.io/lease-term":"muster-system/muster-dispatch:d1:0"}}}'
has fenced-why "$T/out" "fenced: made under lease muster-system/muster-dispatch term 0 of d1"
expect current-term 0 h patch job after --type=merge -p \
	"{\"metadata\":{\"annotations\":{\"muster.io/lease-term\":\"$(ann after lease-term)\"}}}"
# a leader paused past its lease stops and exits (the hour soak's seed 5150: its
# renew thread took the lease back after SIGCONT, so the process lingered, holding
# the lease, and the standby never led)
kill -STOP "$D2PID"; sleep 6; kill -CONT "$D2PID"
gone() { s=$(ps -o stat= -p "$D2PID" 2>/dev/null); [ -z "$s" ] || [ "${s#Z}" != "$s" ]; }
wait_for paused-leader-exits 75 gone
has paused-leader-says "$T/d2.log" "lost the lease: stopping"
kill "$D2PID" 2>/dev/null; wait "$D2PID" 2>/dev/null
cat "$T/d2.log" >>"$T/d.log"
grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" && bad "sanitizer" || ok
grep -v "cluster tiny" "$T/d.log" >"$T/d403.log"
hasnt "no 403 for the dispatcher (but tiny's refusals)" "$T/d403.log" "HTTP 403"
hasnt "no 403 for the agent" "$T/agent.log" "HTTP 403\|forbidden"
# the Deployments run what the CLI has
for f in dispatch-deployment dispatch-agent-deployment; do
	for a in $(sed -n 's/^ *- \(--[a-z-]*\).*/\1/p' "$ROOT/deploy/$f.yaml"); do
		{ "$M" dispatch --help 2>&1; "$M" dispatch agent --help 2>&1; } | grep -q -- "  $a" &&
			ok || bad "$f.yaml: $a is not an option of muster dispatch"
	done
done
done_
