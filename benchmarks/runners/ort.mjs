// Times an ONNX model under ONNX Runtime (npm onnxruntime-node, CPU execution provider, every graph
// optimization on), the peer Kiln is measured against.
//
//   node benchmarks/runners/ort.mjs --model MODEL.onnx --inputs DIR [--warmup N] [--iterations N]
//        [--threads N] [--max-seconds S] [--json FILE] [--output-dir DIR]
//
// DIR holds one NAME.npy per model input. The JSON written has the same core fields as
// `kiln bench --json`: {"model", "device", "compile_s" (session creation: load + graph
// optimization), "latency_ms": {"p50", "p90", "p99", "min", "mean"}, "throughput_per_s",
// "peak_memory_bytes" (the process's peak resident set), "iterations", "samples_ms"}.
// --max-seconds S stops warming up after S/2 seconds and timing after S seconds, once at least one
// warm-up and three timed runs are done (default 0: no limit). --output-dir writes each output as DIR/NAME.npy (float32, int64, int32 or float64).
// onnxruntime-node is resolved from the repository root's node_modules.

import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(repoRoot, 'package.json'));

function usage(message) {
  process.stderr.write(`ort.mjs: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = { warmup: 3, iterations: 20, threads: 0, maxSeconds: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (value === undefined) usage(`missing value for ${key}`);
    switch (key) {
      case '--model': args.model = value; break;
      case '--inputs': args.inputs = value; break;
      case '--warmup': args.warmup = Number.parseInt(value, 10); break;
      case '--iterations': args.iterations = Number.parseInt(value, 10); break;
      case '--threads': args.threads = Number.parseInt(value, 10); break;
      case '--max-seconds': args.maxSeconds = Number.parseFloat(value); break;
      case '--json': args.json = value; break;
      case '--output-dir': args.outputDir = value; break;
      default: usage(`unknown option ${key}`);
    }
  }
  if (!args.model || !args.inputs) usage('--model and --inputs are required');
  if (!(args.iterations >= 1) || !(args.warmup >= 0)) usage('bad --warmup or --iterations');
  return args;
}

// NumPy .npy (format 1.x/2.x/3.x), C order, the dtypes the models use.
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array],
};

function readNpy(path, ort) {
  const bytes = readFileSync(path);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shapeText === undefined || fortran) throw new Error(`${path}: unsupported header ${header}`);
  const type = NPY_TYPES[descr];
  if (!type) throw new Error(`${path}: unsupported dtype ${descr}`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLength;
  // Copy into an aligned buffer: the data offset need not be a multiple of the element size.
  const data = new type[1](count);
  new Uint8Array(data.buffer).set(bytes.subarray(dataStart, dataStart + data.byteLength));
  return new ort.Tensor(type[0], type[0] === 'bool' ? Uint8Array.from(data) : data, dims);
}

function writeNpy(path, tensor) {
  const descr = Object.entries(NPY_TYPES).find(([, [name]]) => name === tensor.type)?.[0];
  if (!descr) throw new Error(`cannot write output of type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  writeFileSync(path, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

// The process's peak resident set. /proc's VmHWM, unlike getrusage's maxRSS, is not inherited from
// the process that exec'd this one.
function peakResidentBytes() {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'latin1'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall back to getrusage.
  }
  return process.resourceUsage().maxRSS * 1024;
}

function percentile(sorted, q) {
  // Linear interpolation between closest ranks, as numpy.percentile does by default.
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');

  const options = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
  if (args.threads > 0) options.intraOpNumThreads = args.threads;
  const createStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, options);
  const compileSeconds = Number(process.hrtime.bigint() - createStart) / 1e9;

  const feeds = {};
  const files = new Set(readdirSync(args.inputs));
  for (const name of session.inputNames) {
    if (!files.has(`${name}.npy`)) throw new Error(`no input ${name}.npy in ${args.inputs}`);
    feeds[name] = readNpy(join(args.inputs, `${name}.npy`), ort);
  }

  const secondsSince = (start) => Number(process.hrtime.bigint() - start) / 1e9;
  let warmups = 0;
  let begin = process.hrtime.bigint();
  while (warmups < args.warmup) {
    await session.run(feeds);
    warmups += 1;
    if (args.maxSeconds > 0 && secondsSince(begin) > args.maxSeconds / 2) break;
  }
  const samples = [];
  let outputs;
  begin = process.hrtime.bigint();
  while (samples.length < args.iterations) {
    const start = process.hrtime.bigint();
    outputs = await session.run(feeds);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (args.maxSeconds > 0 && samples.length >= 3 && secondsSince(begin) > args.maxSeconds) break;
  }

  if (args.outputDir) {
    mkdirSync(args.outputDir, { recursive: true });
    for (const name of session.outputNames) writeNpy(join(args.outputDir, `${name}.npy`), outputs[name]);
  }

  const sorted = [...samples].sort((a, b) => a - b);
  const batch = Object.values(feeds)[0]?.dims[0] ?? 1;
  const p50 = percentile(sorted, 0.5);
  const result = {
    model: args.model,
    device: 'cpu',
    runtime: `onnxruntime-node ${require('onnxruntime-node/package.json').version}`,
    compile_s: compileSeconds,
    latency_ms: {
      p50, p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99),
      min: sorted[0], mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    },
    throughput_per_s: (batch * 1000) / p50,
    peak_memory_bytes: peakResidentBytes(),
    threads: args.threads,
    warmup: warmups,
    iterations: samples.length,
    samples_ms: samples,
  };
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (args.json) writeFileSync(args.json, text); else process.stdout.write(text);
}

main().catch((error) => {
  process.stderr.write(`ort.mjs: ${error.message ?? error}\n`);
  process.exit(1);
});
