#!/usr/bin/env node
// gen-schemas.js - writes src/apiserver/schema_gen.c, the field tables of the
// built-in kinds that `muster up` serves, from a source of facts: the model
// classes of the official JavaScript client (@kubernetes/client-node), which
// are generated from kube-apiserver's published OpenAPI document.  Each class
// lists its fields (attributeTypeMap: JSON name, type, format).
//
// Usage: node scripts/gen-schemas.js DIR > src/apiserver/schema_gen.c
//        node scripts/gen-schemas.js --descriptions DIR > src/apiserver/schema_desc_gen.c
//   DIR holds node_modules/@kubernetes/client-node (tests/e2e/clients-js.sh
//   installs the pinned version into build/clients-js; see docs/apiserver.md).
//   With --descriptions it writes the descriptions of the same models and
//   fields (what `kubectl explain` prints), from the doc comments of the
//   client's model declarations (dist/gen/models/NAME.d.ts), which carry
//   the OpenAPI document's descriptions.
//
// Only the models reachable from ROOTS are written, each field as: JSON name,
// shape (scalar, array, map), element type, and the index of its model when
// the element is an object with a schema.  Fields are sorted by name so the C
// side can binary-search them.
'use strict';
const path = require('path');

const descMode = process.argv[2] === '--descriptions';
const dir = process.argv[descMode ? 3 : 2];
if (!dir) {
	process.stderr.write('usage: gen-schemas.js DIR (with node_modules/@kubernetes/client-node)\n');
	process.exit(2);
}
const pkgDir = path.join(path.resolve(dir), 'node_modules', '@kubernetes', 'client-node');
const k = require(pkgDir);
const pkg = require(path.join(pkgDir, 'package.json'));

// group, kind -> model class (the kinds muster serves, and request bodies)
const ROOTS = [
	['', 'Namespace', 'V1Namespace'],
	['', 'Node', 'V1Node'],
	['', 'Pod', 'V1Pod'],
	['', 'Event', 'CoreV1Event'],
	['', 'ConfigMap', 'V1ConfigMap'],
	['', 'Secret', 'V1Secret'],
	['', 'ServiceAccount', 'V1ServiceAccount'],
	['', 'Binding', 'V1Binding'],
	['coordination.k8s.io', 'Lease', 'V1Lease'],
	['batch', 'Job', 'V1Job'],
	['scheduling.k8s.io', 'PriorityClass', 'V1PriorityClass'],
	['policy', 'PodDisruptionBudget', 'V1PodDisruptionBudget'],
	['policy', 'Eviction', 'V1Eviction'],
	['events.k8s.io', 'Event', 'EventsV1Event'],
	['rbac.authorization.k8s.io', 'Role', 'V1Role'],
	['rbac.authorization.k8s.io', 'ClusterRole', 'V1ClusterRole'],
	['rbac.authorization.k8s.io', 'RoleBinding', 'V1RoleBinding'],
	['rbac.authorization.k8s.io', 'ClusterRoleBinding', 'V1ClusterRoleBinding'],
	['authorization.k8s.io', 'SelfSubjectAccessReview', 'V1SelfSubjectAccessReview'],
	['certificates.k8s.io', 'CertificateSigningRequest', 'V1CertificateSigningRequest'],
	['apps', 'Deployment', 'V1Deployment'],
	['apps', 'ReplicaSet', 'V1ReplicaSet'],
	['apps', 'StatefulSet', 'V1StatefulSet'],
	['autoscaling', 'Scale', 'V1Scale'],
];

const SCALARS = {
	'string': 'MU__ST_STRING', 'number': 'MU__ST_NUMBER', 'boolean': 'MU__ST_BOOL',
	'Date': 'MU__ST_TIME', 'V1MicroTime': 'MU__ST_TIME', 'IntOrString': 'MU__ST_INTSTR', 'any': 'MU__ST_ANY', 'object': 'MU__ST_ANY',
};

const order = [];
const index = new Map();
function visit(name) {
	if (index.has(name))
		return index.get(name);
	if (!k[name] || !k[name].getAttributeTypeMap)
		throw new Error('no model class ' + name);
	index.set(name, order.length);
	order.push(name);
	for (const a of k[name].getAttributeTypeMap())
		parse(a.type);
	return index.get(name);
}

// -> {shape, elem, model}
function parse(type) {
	let shape = 'MU__SS_SCALAR', t = type;
	let m = /^Array<(.*)>$/.exec(t);
	if (m) {
		shape = 'MU__SS_ARRAY';
		t = m[1];
	} else if ((m = /^\{ \[key: string\]: (.*); \}$/.exec(t))) {
		shape = 'MU__SS_MAP';
		t = m[1];
	}
	if (/^Array</.test(t) || /^\{/.test(t))
		return {shape, elem: 'MU__ST_ANY', model: -1}; // map of lists: free-form inside
	if (SCALARS[t])
		return {shape, elem: SCALARS[t], model: -1};
	return {shape, elem: 'MU__ST_OBJECT', model: visit(t)};
}

for (const r of ROOTS)
	visit(r[2]);

// The doc comments of model class name: {cls, fields: {tsName: text}}.
function docs(name) {
	const fs = require('fs');
	const file = path.join(pkgDir, 'dist', 'gen', 'models', name + '.d.ts');
	const src = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
	const clean = (c) => c.split('\n').map((l) => l.replace(/^\s*\*\s?/, '')).join('\n').trim()
		.replace(/\\"/g, '"').replace(/\\'/g, "'");
	const res = {cls: '', fields: {}};
	const re = /\/\*\*((?:[^*]|\*(?!\/))*?)\*\/\s*(export declare class|'([^']+)'\??:)/g;
	let m;
	while ((m = re.exec(src))) {
		if (m[2] === 'export declare class')
			res.cls = clean(m[1]);
		else
			res.fields[m[3]] = clean(m[1]);
	}
	return res;
}

// A C string literal of text (split in lines of about 100 characters).
function cstr(text) {
	if (!text)
		return 'NULL';
	const esc = JSON.stringify(text).slice(1, -1).replace(/\\u([0-9a-fA-F]{4})/g, (x, h) => {
		const b = Buffer.from(String.fromCharCode(parseInt(h, 16)), 'utf8');
		return Array.from(b).map((v) => '\\' + v.toString(8).padStart(3, '0')).join('');
	}).replace(/\?\?/g, '?\\?');
	const parts = [];
	for (let i = 0; i < esc.length; i += 100) {
		let j = Math.min(i + 100, esc.length);
		while (j < esc.length && j > i + 4 && esc.slice(j - 4, j).includes('\\'))
			j--; /* do not split an escape (octal ones are four characters) */
		parts.push('"' + esc.slice(i, j) + '"');
		i = j - 100;
	}
	return parts.join('\n\t\t');
}

if (descMode) {
	const out = [];
	out.push('/*');
	out.push(' * schema_desc_gen.c - GENERATED by scripts/gen-schemas.js --descriptions from');
	out.push(' * @kubernetes/client-node ' + pkg.version + ' (the doc comments of its model declarations,');
	out.push(' * from the Kubernetes OpenAPI document); do not edit.  The descriptions of');
	out.push(' * the models and fields of schema_gen.c, in the same order (NULL: none;');
	out.push(' * the client keeps none for fields whose type is a model); openapi.c');
	out.push(' * serves them, and kubectl explain prints them.');
	out.push(' */');
	out.push('#include "apiserver/schema.h"');
	out.push('');
	out.push('const char *const mu__smodel_desc[] = {');
	const all = order.map((name) => docs(name));
	order.forEach((name, i) => out.push('\t/* ' + name + ' */ ' + cstr(all[i].cls) + ','));
	out.push('};');
	out.push('');
	out.push('const char *const mu__sfield_desc[] = {');
	order.forEach((name, i) => {
		const fields = k[name].getAttributeTypeMap().slice().sort((a, b) => (a.baseName < b.baseName ? -1 : a.baseName > b.baseName ? 1 : 0));
		out.push('\t/* ' + name + ' */');
		for (const a of fields)
			out.push('\t' + cstr(all[i].fields[a.name]) + ',');
	});
	out.push('};');
	process.stdout.write(out.join('\n') + '\n');
	process.exit(0);
}

const out = [];
out.push('/*');
out.push(' * schema_gen.c - GENERATED by scripts/gen-schemas.js from @kubernetes/client-node ' + pkg.version);
out.push(' * (its models come from the Kubernetes OpenAPI document); do not edit.  The');
out.push(' * fields of every model reachable from the kinds muster serves, sorted by');
out.push(' * JSON name; schema.c reads them.');
out.push(' */');
out.push('#include "apiserver/schema.h"');
out.push('');
out.push('const char mu__schema_source[] = "@kubernetes/client-node ' + pkg.version + '";');
out.push('');
out.push('const mu__sfield_t mu__sfields[] = {');
const starts = [];
let nf = 0;
for (const name of order) {
	const fields = k[name].getAttributeTypeMap().slice().sort((a, b) => (a.baseName < b.baseName ? -1 : a.baseName > b.baseName ? 1 : 0));
	starts.push([nf, fields.length]);
	out.push('\t/* ' + name + ' */');
	for (const a of fields) {
		const p = parse(a.type);
		out.push('\t{"' + a.baseName + '", ' + p.shape + ', ' + p.elem + ', ' + p.model + '},');
		nf++;
	}
}
out.push('};');
out.push('');
out.push('const mu__smodel_t mu__smodels[] = {');
order.forEach((name, i) => out.push('\t{"' + name + '", ' + starts[i][0] + ', ' + starts[i][1] + '},'));
out.push('};');
out.push('const int mu__nsmodels = ' + order.length + ';');
out.push('');
out.push('const mu__sroot_t mu__sroots[] = {');
for (const r of ROOTS)
	out.push('\t{"' + r[0] + '", "' + r[1] + '", ' + index.get(r[2]) + '},');
out.push('};');
out.push('const int mu__nsroots = ' + ROOTS.length + ';');
process.stdout.write(out.join('\n') + '\n');
