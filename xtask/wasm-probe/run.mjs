// Reads every fixture array of tessera's testdata inside WebAssembly, in
// Node, as a browser would run tessera's read core: the module
// (`tessera_wasm_probe.wasm`, built for wasm32-unknown-unknown) reads every
// cell of each array with the push decoder twice, once given the array's
// files at once, once doing no I/O at all (each step's needs are read here
// and pushed back, as a page would fetch them). The two summaries must be
// equal, and match what libtiledb read (`expected.json`, query `all`): the
// number of cells, and the sum of every column of one number a cell and no
// nulls.
//
//   node run.mjs MODULE.wasm TESTDATA_DIR
//
// The module imports nothing it calls while reading: the imports a
// generated JavaScript binding would fill (for the Web Crypto API, which
// only writing encrypted tiles uses) are given as functions that fail the
// run if they are ever called.
import fs from 'fs';
import path from 'path';

const [wasmPath, testdata] = process.argv.slice(2);
const module = new WebAssembly.Module(fs.readFileSync(wasmPath));
const imports = {};
for (const imp of WebAssembly.Module.imports(module)) {
  if (imp.kind !== 'function') throw new Error(`unexpected import ${imp.module}.${imp.name}`);
  imports[imp.module] ??= {};
  imports[imp.module][imp.name] = () => {
    throw new Error(`the read called into JavaScript (${imp.module}.${imp.name})`);
  };
}
const { exports } = new WebAssembly.Instance(module, imports);

// Little-endian integers as the module reads them.
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };

// An array's files as the module takes them: per file, its path's length
// (u32), the path, its length (u64) and its bytes, little-endian.
function blobOf(dir) {
  const parts = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else {
        const name = Buffer.from(r);
        const data = fs.readFileSync(path.join(dir, r));
        parts.push(u32(name.length), name, u64(data.length), data);
      }
    }
  };
  walk('');
  return Buffer.concat(parts);
}

// Copies `bytes` into a buffer of the module's; its address.
function give(bytes) {
  const at = exports.probe_alloc(bytes.length);
  new Uint8Array(exports.memory.buffer, at, bytes.length).set(bytes);
  return at;
}

// Reads the array at `dir` from its files handed over at once: the summary.
function read(dir, key) {
  const blob = blobOf(dir);
  const at = give(blob);
  const keyAt = key ? give(key) : 0;
  const out = exports.probe_read(at, blob.length, keyAt);
  exports.probe_free(at, blob.length);
  if (keyAt) exports.probe_free(keyAt, 32);
  return taken(out);
}

// A JSON answer of the module's at `out`, freed.
function taken(out) {
  const len = new DataView(exports.memory.buffer).getUint32(out, true);
  const text = Buffer.from(new Uint8Array(exports.memory.buffer, out + 4, len)).toString();
  exports.probe_free(out, len + 4);
  return JSON.parse(text);
}

// The answers to `needs` (paths relative to the array at `dir`), as the
// module takes them: per need a status byte (0 answered, 1 missing), then
// the answer, little-endian.
function answersOf(dir, needs) {
  const parts = [];
  for (const need of needs) {
    const p = path.join(dir, need.path);
    const exists = fs.existsSync(p);
    if (need.kind === 'exists') {
      parts.push(Buffer.from([0, exists ? 1 : 0]));
    } else if (need.kind === 'list') {
      // A missing folder lists as empty.
      const entries = exists ? fs.readdirSync(p, { withFileTypes: true }) : [];
      parts.push(Buffer.from([0]), u32(entries.length));
      for (const e of entries) {
        const name = Buffer.from(e.name);
        const size = e.isDirectory() ? 0 : fs.statSync(path.join(p, e.name)).size;
        parts.push(u32(name.length), name, Buffer.from([e.isDirectory() ? 1 : 0]), u64(size));
      }
    } else if (!exists) {
      parts.push(Buffer.from([1]));
    } else if (need.kind === 'size') {
      parts.push(Buffer.from([0]), u64(fs.statSync(p).size));
    } else {
      const data = fs.readFileSync(p);
      const [start, end] = need.kind === 'range'
        ? [need.start, need.end]
        : [Math.max(0, data.length - need.max), data.length];
      const bytes = data.subarray(start, end);
      parts.push(Buffer.from([0]));
      if (need.kind === 'tail') parts.push(u64(data.length));
      parts.push(u64(bytes.length), bytes);
    }
  }
  return Buffer.concat(parts);
}

// Reads the array at `dir` with the module doing no I/O: each step's needs
// are read here and pushed back. The summary, with the rounds of needs.
function readDriven(dir, key) {
  const keyAt = key ? give(key) : 0;
  const read = exports.probe_open(keyAt);
  if (keyAt) exports.probe_free(keyAt, 32);
  try {
    for (let rounds = 0; ; rounds++) {
      // A read asks a round a fragment and a batch at most, with a few
      // more to open: far fewer than this.
      if (rounds > 10000) return { error: `still asking after ${rounds} rounds` };
      const step = taken(exports.probe_step(read));
      if (step.error) return step;
      if (step.summary) return { ...step.summary, rounds };
      const blob = answersOf(dir, step.needs);
      const at = give(blob);
      const pushed = taken(exports.probe_push(read, at, blob.length));
      exports.probe_free(at, blob.length);
      if (pushed.error) return pushed;
    }
  } finally {
    exports.probe_close(read);
  }
}

function close(a, b) {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

const failures = [];
let checked = 0, sums = 0, rounds = 0;
for (const release of fs.readdirSync(testdata).sort()) {
  const root = path.join(testdata, release);
  if (!fs.statSync(root).isDirectory()) continue;
  for (const name of fs.readdirSync(root).sort()) {
    const expectedPath = path.join(root, name, 'expected.json');
    if (!fs.existsSync(expectedPath)) continue;
    const expected = JSON.parse(fs.readFileSync(expectedPath));
    const all = (expected.queries ?? []).find((q) => q.name === 'all');
    // Cases without a plain read of everything (only subarrays asked)
    // and those libtiledb failed to read are checked natively only.
    if (!all || !all.rows) continue;
    const key = expected.case?.key ? Buffer.from(expected.case.key, 'hex') : null;
    const dir = path.join(root, name, 'array');
    const got = read(dir, key);
    const label = `${release}/${name}`;
    if (got.error) {
      failures.push(`${label}: ${got.error}`);
      continue;
    }
    // The same read, its I/O done here, step by step.
    const driven = readDriven(dir, key);
    const same = JSON.stringify({ ...driven, rounds: undefined }) === JSON.stringify(got);
    if (!same) {
      failures.push(`${label}: read step by step ${JSON.stringify(driven)}, from its files ${JSON.stringify(got)}`);
      continue;
    }
    rounds += driven.rounds;
    if (got.cells !== all.rows.length) {
      failures.push(`${label}: ${got.cells} cells, libtiledb read ${all.rows.length}`);
      continue;
    }
    for (const [column, { sum, float32 }] of Object.entries(got.columns)) {
      const values = all.rows.map((r) => r[column]);
      if (sum === null || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) continue;
      // expected.json prints FLOAT32 values as their shortest decimals.
      const want = values.reduce((a, b) => a + (float32 ? Math.fround(b) : b), 0);
      if (!close(sum, want)) failures.push(`${label}: column ${column} sums to ${sum}, libtiledb's to ${want}`);
      sums += 1;
    }
    checked += 1;
  }
}
console.log(`read ${checked} fixture arrays inside WebAssembly, from their files handed over and step by step (${rounds} rounds of needs answered here); ${sums} column sums checked`);
if (failures.length) {
  console.log(failures.join('\n'));
  process.exit(1);
}
if (checked < 100) {
  console.log('expected more than 100 fixture arrays');
  process.exit(1);
}
