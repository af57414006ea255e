#!/usr/bin/env node
/* ort_bench.js: the second contender. Runs the ONNX model that
 * `nnnkit convert MODEL.nnn MODEL.onnx` writes in ONNX Runtime (the
 * onnxruntime-node package, CPU), for nnnbench (bench/suite/) to set nnnkit
 * against. The graph takes nnnkit's own channels-last input [N, H, W, C] and
 * gives what `nnnkit run` gives, so nothing is converted here.
 *
 *   NODE_PATH=build/ort/node_modules node bench/ort_bench.js --worker --threads T --shape 28,28,1 MODEL.onnx
 *       one line per request on stdin, one answer per line on stdout (the
 *       protocol of bench/torch_bench.py --worker):
 *         net B N        -> seconds for N session.run calls on a [B, h, w, c] batch
 *         check X Y      -> largest |ort(X) - Y| (X, Y: .npy files of nnnkit run)
 *         quit
 *       first line: "ready ort VERSION threads T", or "err ..." when it cannot start
 *
 * Session options: intraOpNumThreads T, interOpNumThreads 1,
 * graphOptimizationLevel 'all', executionMode 'sequential'. onnxruntime-node
 * comes from tests/ort (npm ci --ignore-scripts into build/ort), found
 * through NODE_PATH.
 */
'use strict';

const fs = require('fs');
const readline = require('readline');

const USAGE = 'usage: ort_bench.js --worker --threads T [--shape H,W,C] MODEL.onnx';

function say(line) {
	process.stdout.write(line + '\n');
}

/* A little-endian float32 .npy file (as nnnkit writes them): { shape, data }.
 * Anything else is refused with what was found. */
function readNpy(path) {
	const b = fs.readFileSync(path);
	if (b.length < 10 || b.toString('latin1', 0, 6) !== '\x93NUMPY')
		throw new Error(`${path}: not a .npy file (no \\x93NUMPY magic)`);
	const major = b[6];
	const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
	const start = (major === 1 ? 10 : 12) + hlen;
	const header = b.toString('latin1', major === 1 ? 10 : 12, start);
	const descr = /'descr':\s*'([^']*)'/.exec(header);
	const fortran = /'fortran_order':\s*(True|False)/.exec(header);
	const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
	if (!descr || descr[1] !== '<f4' || !fortran || fortran[1] !== 'False' || !shape)
		throw new Error(`${path}: header ${header.trim()}: expected '<f4', C order`);
	const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
	const n = dims.reduce((a, d) => a * d, 1);
	if (start + 4 * n > b.length)
		throw new Error(`${path}: ${b.length - start} data bytes, the shape [${dims}] needs ${4 * n}`);
	/* Copied so that the floats are aligned whatever the header's length. */
	const data = new Float32Array(n);
	Buffer.from(data.buffer).set(b.subarray(start, start + 4 * n));
	return { shape: dims, data };
}

/* printf's %.6g, as torch_bench.py answers. */
function g6(v) {
	if (!Number.isFinite(v) || v === 0)
		return v === 0 ? '0' : String(v);
	const e = Math.floor(Math.log10(Math.abs(v)));
	const strip = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
	if (e < -4 || e >= 6) {
		const [m, x] = v.toExponential(5).split('e');
		const n = Math.abs(parseInt(x, 10));
		return `${strip(m)}e${x[0] === '-' ? '-' : '+'}${n < 10 ? '0' : ''}${n}`;
	}
	return strip(v.toPrecision(6));
}

/* Pixels in [0, 1), the same for every run of a batch size (xorshift32). */
function pixels(n, seed) {
	const x = new Float32Array(n);
	let s = (seed * 2654435761) >>> 0 || 1;
	for (let i = 0; i < n; i++) {
		s ^= s << 13;
		s >>>= 0;
		s ^= s >>> 17;
		s ^= s << 5;
		s >>>= 0;
		x[i] = (s >>> 8) / 16777216;
	}
	return x;
}

async function worker(modelPath, shape, threads) {
	let ort;
	try {
		ort = require('onnxruntime-node');
	} catch (e) {
		say(`err cannot load onnxruntime-node (NODE_PATH=${process.env.NODE_PATH || ''}): ${e.message.split('\n')[0]}`);
		return 1;
	}
	let session;
	const options = {
		executionProviders: ['cpu'],
		intraOpNumThreads: threads,
		interOpNumThreads: 1,
		graphOptimizationLevel: 'all',
		executionMode: 'sequential',
	};
	/* nnnbench runs every contender with OMP_WAIT_POLICY=PASSIVE (unless
	 * --keep-env): threads waiting for work sleep rather than spin, which on
	 * a shared machine steals the core a sibling needs. ORT's own thread
	 * pool ignores OpenMP's variable; this is its switch for the same. */
	const passive = (process.env.OMP_WAIT_POLICY || '').toUpperCase() === 'PASSIVE';
	if (passive)
		options.extra = { session: { intra_op: { allow_spinning: '0' } } };
	try {
		session = await ort.InferenceSession.create(modelPath, options);
	} catch (e) {
		say(`err cannot load ${modelPath}: ${String(e.message).replace(/\n/g, ' ')}`);
		return 1;
	}
	const input = session.inputNames[0], output = session.outputNames[0];
	const per = shape.reduce((a, d) => a * d, 1);
	const feeds = new Map(); /* by batch */
	say(`ready ort ${ort.env.versions.node} threads ${threads}${passive ? ' no-spin' : ''}`);

	const rl = readline.createInterface({ input: process.stdin, terminal: false });
	for await (const line of rl) {
		const w = line.trim().split(/\s+/);
		if (!w[0] || w[0] === 'quit')
			break;
		try {
			if (w[0] === 'net') {
				const b = parseInt(w[1], 10), n = parseInt(w[2], 10);
				if (!(b > 0) || !(n > 0))
					throw new Error(`net wants a batch and a count, got "${line}"`);
				if (!feeds.has(b))
					feeds.set(b, { [input]: new ort.Tensor('float32', pixels(b * per, b), [b, ...shape]) });
				const f = feeds.get(b);
				const t0 = process.hrtime.bigint();
				for (let i = 0; i < n; i++)
					await session.run(f);
				say((Number(process.hrtime.bigint() - t0) / 1e9).toFixed(9));
			} else if (w[0] === 'check') {
				const x = readNpy(w[1]), y = readNpy(w[2]);
				const rows = x.shape[0], inPer = x.data.length / rows, outPer = y.data.length / y.shape[0];
				if (y.shape[0] !== rows)
					throw new Error(`${w[1]} has ${rows} samples, ${w[2]} ${y.shape[0]}`);
				let worst = 0;
				for (let i = 0; i < rows; i += 1024) {
					const m = Math.min(1024, rows - i);
					const t = new ort.Tensor('float32', x.data.subarray(i * inPer, (i + m) * inPer), [m, ...x.shape.slice(1)]);
					const out = (await session.run({ [input]: t }))[output].data;
					if (out.length !== m * outPer)
						throw new Error(`ORT gave ${out.length / m} values per sample, nnnkit ${outPer}`);
					for (let j = 0; j < out.length; j++) {
						const d = Math.abs(out[j] - y.data[i * outPer + j]);
						/* NaN on either side is a disagreement, not a 0. */
						worst = Number.isNaN(d) ? Infinity : Math.max(worst, d);
					}
				}
				say(g6(worst));
			} else {
				say(`err unknown request ${w[0]}`);
			}
		} catch (e) {
			/* the driver shows it and goes on without ORT */
			say(`err ${String(e.message).replace(/\n/g, ' ')}`);
		}
	}
	return 0;
}

async function main(argv) {
	let threads = 1, mode = null, shape = [28, 28, 1];
	const files = [];
	for (let i = 2; i < argv.length; i++) {
		const a = argv[i];
		if (a === '--worker')
			mode = 'worker';
		else if ((a === '--threads' || a === '--shape') && i + 1 < argv.length) {
			const v = argv[++i];
			if (a === '--threads')
				threads = parseInt(v, 10);
			else
				shape = v.split(',').map(Number);
		} else if (a.startsWith('-')) {
			process.stderr.write(`ort_bench.js: unknown option ${a}\n${USAGE}\n`);
			return 2;
		} else
			files.push(a);
	}
	if (mode !== 'worker' || files.length !== 1 || !(threads >= 1) || shape.some((d) => !(d >= 1))) {
		process.stderr.write(USAGE + '\n');
		return 2;
	}
	return worker(files[0], shape, threads);
}

main(process.argv).then((rc) => process.exit(rc), (e) => {
	say(`err ${e.message}`);
	process.exit(1);
});
