#!/bin/sh
# copy_latency.sh - the latency of one dispatched copy on one worker: a
# `muster up` (NODES nodes of 8 GPUs, queue team-a) and its `muster
# scheduler`; N Jobs made as the dispatcher makes its copies
# (src/dispatch/dutil.c mu__dcopy) are POSTed one at a time GAP seconds
# apart, and a pods watch stamps each pod's changes as they come.  Prints,
# in ms from each POST's start (median, p90, min, max): the POST answered,
# its pod created (first seen), bound (spec.nodeName) and Running.  Needs
# python3 with PyYAML.  Prints figures only.
# Usage: sh bench/copy_latency.sh [MUSTER] [N] [GAP] [NODES]  (build/muster 40 0.1 64)
set -u
B=${1:-build/muster}; N=${2:-40}; G=${3:-0.1}; NODES=${4:-64}
O=$(mktemp -d /tmp/copy_latency.XXXXXX)
UP=""; SP=""
trap 'kill $SP $UP 2>/dev/null; rm -rf "$O"' EXIT
printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  count: %d\n  namePrefix: w-\n  gpuModel: A100\n  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}\n---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {resources: {gpu: {deserved: 100000}}}\n' "$NODES" >"$O/c.yaml"
"$B" up --cluster "$O/c.yaml" --listen 127.0.0.1:0 --data "$O/d" --no-fsync --quiet >"$O/up.out" 2>&1 &
UP=$!
i=0
while ! grep -q "serving the Kubernetes API" "$O/up.out"; do
	sleep 0.2; i=$((i + 1))
	[ $i -gt 300 ] && { echo "copy_latency: muster up did not start"; exit 1; }
done
"$B" scheduler --kubeconfig "$O/d/kubeconfig" --no-leader-elect --min-runtime 0 >"$O/s.log" 2>&1 &
SP=$!
i=0
while ! grep -q "every resource listed" "$O/s.log"; do
	sleep 0.2; i=$((i + 1))
	[ $i -gt 300 ] && { echo "copy_latency: the scheduler did not list"; exit 1; }
done
python3 - "$O/d/kubeconfig" "$N" "$G" <<'PY'
# (the watch and the POSTs; argv: kubeconfig, N, GAP)
import base64, json, ssl, sys, threading, time, http.client, yaml, tempfile, os, statistics
kc, n, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
c = yaml.safe_load(open(kc))
srv = c['clusters'][0]['cluster']['server'][len('https://'):]
host, port = srv.split(':')
u = c['users'][0]['user']
td = os.path.dirname(os.path.abspath(kc))  # removed with the run
def w(name, data):
    p = os.path.join(td, name); open(p, 'wb').write(base64.b64decode(data)); return p
ctx = ssl.create_default_context(cafile=w('ca', c['clusters'][0]['cluster']['certificate-authority-data']))
ctx.load_cert_chain(w('crt', u['client-certificate-data']), w('key', u['client-key-data']))
seen = {}
def watch():
    h = http.client.HTTPSConnection(host, int(port), context=ctx)
    h.request('GET', '/api/v1/namespaces/default/pods?watch=1')
    r = h.getresponse()
    while True:
        line = r.readline()
        if not line: return
        t = time.monotonic()
        ev = json.loads(line); o = ev['object']
        job = o['metadata'].get('labels', {}).get('job-name')
        if not job: continue
        d = seen.setdefault(job, {})
        d.setdefault('created', t)
        if o['spec'].get('nodeName'): d.setdefault('bound', t)
        if o.get('status', {}).get('phase') == 'Running': d.setdefault('running', t)
threading.Thread(target=watch, daemon=True).start()
time.sleep(1)
h = http.client.HTTPSConnection(host, int(port), context=ctx)
t0 = {}
for i in range(n):
    name = 'l-%d' % i
    job = {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': name, 'namespace': 'default',
        'labels': {'muster.io/queue': 'team-a', 'muster.io/hub-uid': 'u%d' % i},
        'annotations': {'muster.io/dispatch-generation': '1', 'muster.io/hub-job': 'default/' + name, 'muster.io/admitted': 'true'}},
        'spec': {'suspend': False, 'template': {'metadata': {'labels': {'muster.io/hub-uid': 'u%d' % i, 'muster.io/dispatch-generation': '1'}},
        'spec': {'schedulerName': 'muster', 'restartPolicy': 'Never', 'containers': [{'name': 'c', 'image': 'x',
        'resources': {'limits': {'nvidia.com/gpu': '1'}}}]}}}}
    t0[name] = time.monotonic()
    h.request('POST', '/apis/batch/v1/namespaces/default/jobs', body=json.dumps(job), headers={'Content-Type': 'application/json'})
    r = h.getresponse(); r.read()
    if r.status != 201: print('POST', r.status); sys.exit(1)
    t0[name + '/done'] = time.monotonic()
    time.sleep(gap)
time.sleep(2)
res = {'post': [], 'created': [], 'bound': [], 'running': []}
for i in range(n):
    name = 'l-%d' % i; d = seen.get(name, {})
    res['post'].append((t0[name + '/done'] - t0[name]) * 1000)
    for k in ('created', 'bound', 'running'):
        if k in d: res[k].append((d[k] - t0[name]) * 1000)
for k, v in res.items():
    v.sort()
    print('%-8s n=%3d  median %6.1f ms  p90 %6.1f ms  min %6.1f  max %6.1f' % (k, len(v), statistics.median(v), v[int(len(v) * 0.9) - 1], v[0], v[-1]) if v else k + ' none')
PY
