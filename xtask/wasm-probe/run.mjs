// Reads every fixture array of tessera's testdata inside WebAssembly, in
// Node, as a browser would run tessera's read core: the module
// (`tessera_wasm_probe.wasm`, built for wasm32-unknown-unknown) is given
// each array's files and reads every cell with the push decoder; its
// summary is checked against what libtiledb read (`expected.json`, query
// `all`): the number of cells, and the sum of every column of one number
// a cell and no nulls.
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
        const head = Buffer.alloc(4 + name.length + 8);
        head.writeUInt32LE(name.length, 0);
        name.copy(head, 4);
        head.writeBigUInt64LE(BigInt(data.length), 4 + name.length);
        parts.push(head, data);
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

function read(dir, key) {
  const blob = blobOf(dir);
  const at = give(blob);
  const keyAt = key ? give(key) : 0;
  const out = exports.probe_read(at, blob.length, keyAt);
  exports.probe_free(at, blob.length);
  if (keyAt) exports.probe_free(keyAt, 32);
  const len = new DataView(exports.memory.buffer).getUint32(out, true);
  const text = Buffer.from(new Uint8Array(exports.memory.buffer, out + 4, len)).toString();
  exports.probe_free(out, len + 4);
  return JSON.parse(text);
}

function close(a, b) {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

const failures = [];
let checked = 0, sums = 0;
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
    const got = read(path.join(root, name, 'array'), key);
    const label = `${release}/${name}`;
    if (got.error) {
      failures.push(`${label}: ${got.error}`);
      continue;
    }
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
console.log(`read ${checked} fixture arrays inside WebAssembly; ${sums} column sums checked`);
if (failures.length) {
  console.log(failures.join('\n'));
  process.exit(1);
}
if (checked < 100) {
  console.log('expected more than 100 fixture arrays');
  process.exit(1);
}
