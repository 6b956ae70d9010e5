// js_client.js - drives `muster up` with the official JavaScript client
// (@kubernetes/client-node, installed into build/clients-js by
// tests/e2e/clients.sh) as ordinary code would, and checks the outcomes
// kube-apiserver documents.  Usage: node js_client.js MODULE_DIR KUBECONFIG
// [CSR_PEM] (a PKCS#10 request for CN=js-user: the CertificateSigningRequest checks).
// Prints one line per failed check and ends with
// "js client: N passed, N failed".
'use strict';
const path = require('path');
const k8s = require(path.join(process.argv[2], 'node_modules', '@kubernetes', 'client-node'));

let passed = 0, failed = 0;
function check(name, cond, detail) {
	if (cond) {
		passed++;
	} else {
		failed++;
		console.log('FAIL ' + name + ' ' + (detail || ''));
	}
}

async function code(p) {
	try {
		await p;
		return 200;
	} catch (e) {
		return e.code || (e.response && e.response.statusCode) || -1;
	}
}

async function main() {
	const kc = new k8s.KubeConfig();
	kc.loadFromFile(process.argv[3]);
	const core = kc.makeApiClient(k8s.CoreV1Api);
	const batch = kc.makeApiClient(k8s.BatchV1Api);
	const namespace = 'default';

	const nodes = await core.listNode();
	check('list_node', nodes.items.length > 0);
	check('node_info', !!(nodes.items[0].status.nodeInfo.bootID && nodes.items[0].status.nodeInfo.systemUUID));

	const pod = {metadata: {name: 'js-pod', labels: {app: 'js'}},
		spec: {containers: [{name: 'c', image: 'busybox'}]}};
	const created = await core.createNamespacedPod({namespace, body: pod});
	check('create_without_kind', created.metadata.name === 'js-pod' && created.kind === 'Pod');

	// the client's default patch type is JSON patch (RFC 6902)
	await core.patchNamespacedPod({name: 'js-pod', namespace,
		body: [{op: 'add', path: '/metadata/labels/extra', value: '1'}]});
	const got = await core.readNamespacedPod({name: 'js-pod', namespace});
	check('json_patch', got.metadata.labels.extra === '1', JSON.stringify(got.metadata.labels));
	check('json_patch_test_409_or_422', [422, 409].includes(await code(core.patchNamespacedPod({name: 'js-pod',
		namespace, body: [{op: 'test', path: '/metadata/labels/extra', value: '2'}]}))));

	const list = await core.listNamespacedPod({namespace, labelSelector: 'app=js'});
	check('list_selector', list.items.length === 1);
	check('invalid_422', await code(core.createNamespacedPod({namespace,
		body: {metadata: {name: 'Bad_Name'}, spec: {containers: [{name: 'c', image: 'x'}]}}})) === 422);
	// the client serializes through its models, so an unknown field never
	// leaves it; fieldValidation=Strict is accepted for a clean object
	check('strict_clean_object', await code(core.createNamespacedPod({namespace, fieldValidation: 'Strict',
		body: {metadata: {name: 'js-strict'}, spec: {schedulername: 'x', containers: [{name: 'c', image: 'x'}]}}})) === 200);
	check('exists_409', await code(core.createNamespacedPod({namespace, body: pod})) === 409);
	check('missing_404', await code(core.readNamespacedPod({name: 'nope', namespace})) === 404);

	await batch.createNamespacedJob({namespace, body: {metadata: {name: 'js-job'},
		spec: {template: {spec: {restartPolicy: 'Never', containers: [{name: 'c', image: 'x'}]}}}}});
	let jobPods = 0;
	for (let i = 0; i < 50 && jobPods === 0; i++) {
		jobPods = (await core.listNamespacedPod({namespace, labelSelector: 'job-name=js-job'})).items.length;
		if (!jobPods)
			await new Promise((r) => setTimeout(r, 100));
	}
	check('job_pods', jobPods === 1);

	// watch: the informer-style stream sees js-pod
	const seen = await new Promise((resolve) => {
		const names = new Set();
		const w = new k8s.Watch(kc);
		let req;
		const timer = setTimeout(() => { if (req) req.abort(); resolve(names); }, 3000);
		w.watch('/api/v1/namespaces/default/pods', {}, (type, obj) => {
			names.add(type + ':' + obj.metadata.name);
			if (names.has('ADDED:js-pod')) {
				clearTimeout(timer);
				if (req) req.abort();
				resolve(names);
			}
		}, () => {}).then((r) => { req = r; });
	});
	check('watch', seen.has('ADDED:js-pod'), JSON.stringify([...seen]));

	await core.deleteNamespacedPod({name: 'js-pod', namespace});
	check('deleted', await code(core.readNamespacedPod({name: 'js-pod', namespace})) === 404);

	// a CustomResourceDefinition makes a served type: defaults, 422, deletion
	const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
	const custom = kc.makeApiClient(k8s.CustomObjectsApi);
	const crd = await ext.createCustomResourceDefinition({body: {
		apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
		metadata: {name: 'gizmos.js.example.com'},
		spec: {group: 'js.example.com', scope: 'Namespaced', names: {plural: 'gizmos', kind: 'Gizmo'},
			versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object',
				properties: {spec: {type: 'object', properties: {
					size: {type: 'integer', _default: 3, maximum: 10}}}}}}}]}}}); // the model's name for "default"
	check('crd_established', (crd.status.conditions || []).some((c) => c.type === 'Established' && c.status === 'True'),
		JSON.stringify(crd.status));
	const gz = await custom.createNamespacedCustomObject({group: 'js.example.com', version: 'v1', namespace,
		plural: 'gizmos', body: {apiVersion: 'js.example.com/v1', kind: 'Gizmo', metadata: {name: 'z1'}, spec: {}}});
	check('crd_default', gz.spec.size === 3, JSON.stringify(gz));
	check('crd_invalid', await code(custom.createNamespacedCustomObject({group: 'js.example.com', version: 'v1',
		namespace, plural: 'gizmos', body: {apiVersion: 'js.example.com/v1', kind: 'Gizmo', metadata: {name: 'z2'},
			spec: {size: 11}}})) === 422);
	await ext.deleteCustomResourceDefinition({name: 'gizmos.js.example.com'});
	check('crd_deleted', await code(custom.getNamespacedCustomObject({group: 'js.example.com', version: 'v1',
		namespace, plural: 'gizmos', name: 'z1'})) === 404);

	// a CertificateSigningRequest (the PEM request made by clients.sh with
	// openssl): create, approve through /approval, read the certificate
	if (process.argv[4]) {
		const certs = kc.makeApiClient(k8s.CertificatesV1Api);
		const pem = require('fs').readFileSync(process.argv[4]);
		const made = await certs.createCertificateSigningRequest({body: {metadata: {name: 'js-csr'},
			spec: {request: pem.toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client',
				usages: ['client auth'], expirationSeconds: 3600, extra: {team: ['js']}}}});
		check('csr_create', made.spec.username === 'admin' && !made.spec.extra, JSON.stringify(made.spec.username));
		made.status = {conditions: [{type: 'Approved', status: 'True', reason: 'JsApprove', message: 'from js'}]};
		await certs.replaceCertificateSigningRequestApproval({name: 'js-csr', body: made});
		let got;
		for (let i = 0; i < 50; i++) {
			got = await certs.readCertificateSigningRequest({name: 'js-csr'});
			if (got.status && got.status.certificate)
				break;
			await new Promise((r) => setTimeout(r, 200));
		}
		const cert = got.status && got.status.certificate ? Buffer.from(got.status.certificate, 'base64').toString() : '';
		check('csr_approved', (got.status.conditions || []).some((c) => c.type === 'Approved' && c.reason === 'JsApprove'),
			JSON.stringify(got.status.conditions));
		check('csr_certificate', cert.startsWith('-----BEGIN CERTIFICATE-----'), cert.slice(0, 40));
		if (cert)
			check('csr_certificate_subject', new (require('crypto').X509Certificate)(cert).subject.includes('CN=js-user'));
	}
	console.log('js client: ' + passed + ' passed, ' + failed + ' failed');
	process.exit(failed ? 1 : 0);
}

main().catch((e) => {
	console.log('FAIL unexpected error: ' + (e.body || e.message || e));
	console.log('js client: ' + passed + ' passed, ' + (failed + 1) + ' failed');
	process.exit(1);
});
