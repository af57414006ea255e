#!/usr/bin/env node
// ort_run.js: runs an ONNX model in ONNX Runtime (onnxruntime-node), the
// outside truth the ONNX tests compare `nnnkit run` with (tests/lib/onnxtools.c).
//
//   node ort_run.js MODEL.onnx IN.npy OUT.npy [THREADS]
//   node ort_run.js --version
//
// IN.npy: float32, little-endian, C order (.npy format versions 1 to 3); it
// feeds the model's single input. OUT.npy: the model's first output, float32
// (.npy version 1, or 2 when the header needs it). THREADS: ONNX Runtime's
// intra-op threads (default 1); every graph optimization is on. onnxruntime-
// node is found through NODE_PATH (make installs it into build/ort/node_modules:
// tests/ort/install.sh). Any error: a message on stderr, exit status 1.
'use strict';
const fs = require('fs');

function fail(msg) {
	process.stderr.write(`ort_run: ${msg}\n`);
	process.exit(1);
}

function loadOrt() {
	try {
		return require('onnxruntime-node');
	} catch (e) {
		fail(`cannot load onnxruntime-node (NODE_PATH=${process.env.NODE_PATH || ''}): ${e.message.split('\n')[0]}; ` +
			'make installs it into build/ort (tests/ort/install.sh)');
	}
}

// The header dict of a .npy file: {descr, fortran_order, shape}, parsed by
// hand (it is a Python literal, not JSON) and checked strictly.
function readNpy(path) {
	let buf;
	try {
		buf = fs.readFileSync(path);
	} catch (e) {
		fail(`${path}: ${e.message}`);
	}
	const where = (what) => fail(`${path}: ${what}`);
	if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY')
		where('not a .npy file (no \\x93NUMPY magic)');
	const major = buf[6];
	let hlen, start;
	if (major === 1) {
		hlen = buf.readUInt16LE(8);
		start = 10;
	} else if (major === 2 || major === 3) {
		if (buf.length < 12)
			where('the file ends inside its header length');
		hlen = buf.readUInt32LE(8);
		start = 12;
	} else {
		where(`.npy format version ${major}.${buf[7]}: only versions 1 to 3 are read`);
	}
	if (start + hlen > buf.length)
		where(`the header (${hlen} bytes at offset ${start}) runs past the end of the file (${buf.length} bytes)`);
	const header = buf.toString(major === 3 ? 'utf8' : 'latin1', start, start + hlen);
	const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
	const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
	const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
	if (!descr || !fortran || !shape)
		where(`header ${JSON.stringify(header.trim())}: expected 'descr', 'fortran_order' and 'shape'`);
	if (descr[1] !== '<f4')
		where(`dtype '${descr[1]}': expected '<f4' (float32, little-endian)`);
	if (fortran[1] !== 'False')
		where('fortran_order is True: expected C order (np.ascontiguousarray)');
	const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => {
		if (!/^\d+$/.test(s))
			where(`shape (${shape[1]}): '${s}' is not a dimension`);
		return Number(s);
	});
	const count = dims.reduce((a, b) => a * b, 1);
	const off = start + hlen;
	if (buf.length - off !== count * 4)
		where(`shape (${dims.join(', ')}) needs ${count * 4} data bytes, the file has ${buf.length - off}`);
	// Copied: the data offset need not be 4-byte aligned in the Buffer's pool.
	const data = new Float32Array(count);
	for (let i = 0; i < count; i++)
		data[i] = buf.readFloatLE(off + 4 * i);
	return { dims, data };
}

function writeNpy(path, dims, data) {
	const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
	let dict = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
	// numpy pads the header with spaces and a newline so the data starts on a
	// multiple of 64 bytes.
	const v2 = dict.length + 1 + 10 > 65535;
	const pre = v2 ? 12 : 10;
	const total = Math.ceil((pre + dict.length + 1) / 64) * 64;
	dict = dict + ' '.repeat(total - pre - dict.length - 1) + '\n';
	const head = Buffer.alloc(pre);
	head.write('\x93NUMPY', 0, 'latin1');
	head[6] = v2 ? 2 : 1;
	head[7] = 0;
	if (v2)
		head.writeUInt32LE(dict.length, 8);
	else
		head.writeUInt16LE(dict.length, 8);
	const body = Buffer.alloc(4 * data.length);
	for (let i = 0; i < data.length; i++)
		body.writeFloatLE(data[i], 4 * i);
	try {
		fs.writeFileSync(path, Buffer.concat([head, Buffer.from(dict, 'latin1'), body]));
	} catch (e) {
		fail(`${path}: ${e.message}`);
	}
}

async function main() {
	const args = process.argv.slice(2);
	if (args.length === 1 && args[0] === '--version') {
		const ort = loadOrt();
		process.stdout.write(`onnxruntime-node ${ort.env.versions.node}\n`);
		return;
	}
	if (args.length < 3 || args.length > 4)
		fail('usage: node ort_run.js MODEL.onnx IN.npy OUT.npy [THREADS]');
	const [model, inPath, outPath] = args;
	const threads = args.length === 4 ? Number(args[3]) : 1;
	if (!Number.isInteger(threads) || threads < 1 || threads > 256)
		fail(`THREADS '${args[3]}': expected a whole number from 1 to 256`);
	const ort = loadOrt();
	const x = readNpy(inPath);
	let session;
	try {
		session = await ort.InferenceSession.create(model, {
			intraOpNumThreads: threads,
			interOpNumThreads: 1,
			executionMode: 'sequential',
			graphOptimizationLevel: 'all',
		});
	} catch (e) {
		fail(`${model}: ONNX Runtime cannot load it: ${e.message}`);
	}
	if (session.inputNames.length !== 1)
		fail(`${model}: the graph has ${session.inputNames.length} inputs (${session.inputNames.join(', ')}): expected one`);
	if (session.outputNames.length < 1)
		fail(`${model}: the graph has no output`);
	let out;
	try {
		const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.dims) };
		const res = await session.run(feeds);
		out = res[session.outputNames[0]];
	} catch (e) {
		fail(`${model}: run on ${inPath} (shape [${x.dims.join(', ')}]): ${e.message}`);
	}
	if (out.type !== 'float32')
		fail(`${model}: output '${session.outputNames[0]}' is ${out.type}: expected float32`);
	writeNpy(outPath, out.dims.map(Number), out.data);
	if (session.release)
		await session.release();
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
