// What the user gave (files from the picker or a drop, or the URL box's text) → the model the
// package loads, as a "spec":
//
//   { kind: 'file' | 'sharded' | 'uqff' | 'ollama' | 'splits',
//     source,                 what inspect/createReader/loadToWebGPU take ({ uqff: [...] } for UQFF,
//                             { ollama: manifest, blobs } for an Ollama model by its manifest,
//                             { index, shards } for a sharded model from files)
//     files: [{ name, size, url }],   every file of the model, in load order (size null when unknown)
//     quantization, configName,       a config.json given with the files, or null (beside a URL the
//                                     package reads it itself; the page names it from inspect())
//     missing: [names], notes: [text] shards the page looked for and did not find; what it did
//     layers, manifestName, blobsDir } an Ollama manifest's tensor layers ({name, digest, size,
//                                     source: the blob alone}), where its blobs were found
//
// UQFF (FORMATS §4) is a directory of `<stem>-<n>.uqff` shards and `residual.safetensors`. Static
// hosts list no directories, so one shard's URL is expanded by asking for its siblings (HEAD
// requests: `<stem>-0.uqff`, `<stem>-1.uqff`, … until one is missing, then `residual.safetensors`);
// a space/comma separated list of URLs is taken as given. An Ollama manifest's blobs are looked for
// in the nearest `blobs/` directory above it (Ollama's models root), as the CLI does.

const base = (s) => String(s).split(/[\\/]/).pop().split(/[?#]/)[0];
const uqffNumber = (name) => { const m = /(?:-(\d+))?\.uqff$/i.exec(name); return m ? Number(m[1] ?? 0) : null; };
const isUqff = (name) => /\.uqff$/i.test(name);
const isConfig = (name) => /^config\.json$/i.test(name);
const isIndex = (name) => /\.index\.json$/i.test(name);

// The order mistral.rs reads a directory in (and the package uses): shards by number, then the rest.
export function uqffOrder(entries, nameOf = (e) => e.name) {
  const shards = entries.filter((e) => isUqff(nameOf(e))).sort((a, b) => uqffNumber(nameOf(a)) - uqffNumber(nameOf(b)));
  return [...shards, ...entries.filter((e) => !isUqff(nameOf(e)))];
}

// Shard numbers below the highest one given that are not among the files (mistral.rs writes the
// version tensors at the start of each shard set, in the first shard, so a missing shard 0 is the
// usual reason for UqffMissingVersion).
export function missingShards(names) {
  const shards = names.filter(isUqff);
  const nums = new Set(shards.map(uqffNumber));
  const top = Math.max(-1, ...nums);
  const stem = shards.length ? shards[0].replace(/(?:-\d+)?\.uqff$/i, '') : '';
  const out = [];
  for (let n = 0; n < top; n++) if (!nums.has(n)) out.push(`${stem}-${n}.uqff`);
  return out;
}

async function exists(url, fetchFn) {
  try {
    const r = await fetchFn(url, { method: 'HEAD', cache: 'no-store' });
    return r.ok;
  } catch {
    return false;
  }
}

async function fetchJson(url, fetchFn) {
  try {
    const r = await fetchFn(url, { cache: 'no-store' });
    if (!r.ok) return null;
    return JSON.parse(await r.text());
  } catch {
    return null;
  }
}

// A config.json's quantization, if it has one (MLX: `quantization`, or its copy `quantization_config`).
function quantizationOf(config) {
  if (!config || typeof config !== 'object') return null;
  const q = config.quantization ?? config.quantization_config;
  return q && typeof q === 'object' ? config : null;
}

// An Ollama manifest: `layers` of media type application/vnd.ollama.image.tensor.
function manifestLayers(json) {
  if (!json || !Array.isArray(json.layers)) return null;
  const layers = json.layers.filter((l) => l && l.mediaType === 'application/vnd.ollama.image.tensor' && /^sha256:[0-9a-f]+$/i.test(l.digest ?? ''));
  return layers.length ? layers : null;
}
const blobName = (digest) => digest.replace(':', '-');

// ---------------- URLs ----------------

// The URL box: one URL, or several separated by spaces, commas or new lines (a UQFF directory).
export async function fromUrlText(text, { fetch: fetchFn = globalThis.fetch.bind(globalThis), location = globalThis.location } = {}) {
  const tokens = text.split(/[\s,]+/).filter(Boolean);
  if (!tokens.length) throw new Error('Give a URL.');
  const abs = (u) => new URL(u, location?.href).href;
  if (tokens.length > 1) {
    if (!tokens.some((t) => isUqff(base(t)))) {
      throw new Error('Several URLs are read as one UQFF directory (its .uqff shards and residual.safetensors). '
        + 'For a sharded safetensors model give its model.safetensors.index.json; otherwise give one URL.');
    }
    const files = uqffOrder(tokens.map((t) => ({ name: base(t), size: null, url: abs(t) })));
    return uqffSpec(files, missingShards(files.map((f) => f.name)), ['UQFF files: the URLs given, in shard order (no search for others)']);
  }
  const url = abs(tokens[0]);
  const name = base(url);
  if (isUqff(name)) return discoverUqff(url, fetchFn);
  if (isIndex(name)) {
    // Its config.json, if the model's convention reads one, is the package's to fetch.
    return { kind: 'sharded', source: tokens[0], files: [{ name, size: null, url }], quantization: null, configName: null, missing: [], notes: [] };
  }
  if (/\.json$/i.test(name) || /\/manifests\//.test(new URL(url).pathname)) {
    const json = await fetchJson(url, fetchFn);
    const layers = manifestLayers(json);
    if (layers) {
      const dir = await findBlobs(url, blobName(layers[0].digest), fetchFn);
      if (!dir) throw new Error(`No blobs/ directory with ${blobName(layers[0].digest)} above ${url}: an Ollama manifest's blobs are in the models root's blobs/.`);
      const spec = manifestSpec(name, layers.map((l) => ({ name: l.name, digest: l.digest, size: l.size ?? null, source: new URL(blobName(l.digest), dir).href })));
      spec.source = { ollama: tokens[0], blobs: dir };
      spec.blobsDir = dir;
      return spec;
    }
  }
  return { kind: 'file', source: tokens[0], files: [{ name, size: null, url }], quantization: null, configName: null, missing: [], notes: [] };
}

// One shard's URL → the directory: `<stem>-0.uqff`, `<stem>-1.uqff`, … while they exist (the
// given one always counts), then `residual.safetensors` if it exists.
async function discoverUqff(url, fetchFn) {
  const u = new URL(url);
  const name = base(u.pathname);
  const m = /^(.*)-(\d+)\.uqff$/i.exec(name);
  const files = [];
  const missing = [];
  if (m) {
    const given = Number(m[2]);
    for (let n = 0; n < 4096; n++) {
      const shard = new URL(`${m[1]}-${n}.uqff`, u).href;
      if (n === given || await exists(shard, fetchFn)) files.push({ name: `${m[1]}-${n}.uqff`, size: null, url: shard });
      else if (n < given) missing.push(`${m[1]}-${n}.uqff`);
      else break;
    }
  } else {
    files.push({ name, size: null, url: u.href });
  }
  const residual = new URL('residual.safetensors', u).href;
  if (await exists(residual, fetchFn)) files.push({ name: 'residual.safetensors', size: null, url: residual });
  const notes = [`found beside ${name}: ${files.map((f) => f.name).join(', ')}`];
  return uqffSpec(files, missing, notes);
}

// `files`: [{name, size, url}] or, from the picker, [{name, size, file}] (a File keeps its name).
function uqffSpec(files, missing, notes) {
  return {
    kind: 'uqff', source: { uqff: files.map((f) => f.url ?? f.file) },
    files, quantization: null, configName: null, missing, notes,
  };
}

// The nearest `blobs/` directory above a manifest URL that has the blob `file` (HEAD requests).
async function findBlobs(url, file, fetchFn) {
  for (let dir = new URL('.', url); ; dir = new URL('..', dir)) {
    const blobs = new URL('blobs/', dir);
    if (await exists(new URL(file, blobs).href, fetchFn)) return blobs.href;
    if (dir.pathname === '/') return null;
  }
}

function manifestSpec(name, layers) {
  return {
    kind: 'ollama', source: null, manifestName: name, layers,
    files: layers.map((l) => ({ name: blobName(l.digest), size: l.size, url: typeof l.source === 'string' ? l.source : null })),
    quantization: null, configName: null, missing: [], notes: [],
  };
}

// ---------------- files (picker, drop) ----------------

// A config.json File's quantization onto the spec (a note when it has none).
async function attachConfigFile(spec, configs) {
  if (!configs.length) return;
  const config = await configs[0].text().then(JSON.parse).catch(() => null);
  const q = quantizationOf(config);
  // (spec.config: the File itself, the config.json convert() writes edited beside its output.)
  if (q) { spec.quantization = q; spec.configName = configs[0].name; spec.config = configs[0]; } else spec.notes.push('config.json has no quantization section');
}

// A sharded model from files: its index, the .safetensors files (the package takes the ones the
// index names, by file name, and names any shard that is missing: ShardNotGiven), config.json.
async function shardedFilesSpec(files, configs) {
  const indexes = files.filter((f) => isIndex(f.name));
  if (indexes.length > 1) throw new Error(`Several indexes (${indexes.map((f) => f.name).join(', ')}): open one sharded model at a time.`);
  const index = indexes[0];
  const shards = files.filter((f) => /\.safetensors$/i.test(f.name));
  const spec = {
    kind: 'sharded', source: { index, shards },
    files: [index, ...shards].map((f) => ({ name: f.name, size: f.size, url: null })),
    quantization: null, configName: null, missing: [], notes: [],
  };
  const ignored = files.filter((f) => f !== index && !shards.includes(f) && !configs.includes(f)).map((f) => f.name);
  if (ignored.length) spec.notes.push(`not model files, ignored: ${ignored.join(', ')}`);
  await attachConfigFile(spec, configs);
  return spec;
}

// Several files: `.uqff` shards (+ residual.safetensors, config.json) are a UQFF directory; a
// `*.index.json` with its shards (+ config.json) a sharded model; one model file with a
// config.json is an MLX model with its quantization; an Ollama manifest with its blobs.
export async function fromFiles(list) {
  const files = [...list];
  if (!files.length) throw new Error('No file.');
  const names = files.map((f) => f.name);
  if (files.some((f) => isUqff(f.name))) {
    const model = uqffOrder(files.filter((f) => !isConfig(f.name) && /\.(uqff|safetensors)$/i.test(f.name)));
    const spec = uqffSpec(model.map((f) => ({ name: f.name, size: f.size, url: null, file: f })), missingShards(model.map((f) => f.name)), []);
    const ignored = names.filter((n) => !model.some((f) => f.name === n));
    if (ignored.length) spec.notes.push(`not model files, ignored: ${ignored.join(', ')}`);
    return spec;
  }
  const configs = files.filter((f) => isConfig(f.name));
  if (files.some((f) => isIndex(f.name))) return shardedFilesSpec(files, configs);
  const ggufs = files.filter((f) => /\.gguf$/i.test(f.name));
  if (ggufs.length > 1) {
    // A split GGUF model's splits: the package orders and checks them (llama.cpp's rules).
    const spec = { kind: 'splits', source: { gguf: ggufs }, files: ggufs.map((f) => ({ name: f.name, size: f.size, url: null })), quantization: null, configName: null, missing: [], notes: [] };
    const ignored = names.filter((n) => !ggufs.some((f) => f.name === n));
    if (ignored.length) spec.notes.push(`not model files, ignored: ${ignored.join(', ')}`);
    return spec;
  }
  const jsons = files.filter((f) => /\.json$/i.test(f.name) && !isConfig(f.name));
  const rest = files.filter((f) => !/\.json$/i.test(f.name));
  for (const j of jsons) {
    const layers = manifestLayers(await j.text().then(JSON.parse).catch(() => null));
    if (layers) {
      const byName = new Map(rest.map((f) => [f.name, f]));
      const spec = manifestSpec(j.name, layers.map((l) => ({ name: l.name, digest: l.digest, size: l.size ?? null, source: byName.get(blobName(l.digest)) ?? null })));
      spec.source = {
        ollama: j,
        blobs: (file) => {
          const f = byName.get(file);
          if (!f) throw new Error(`${file} (a blob the manifest names) is not among the files given: pick the manifest with its blobs.`);
          return f;
        },
      };
      return spec;
    }
  }
  if (rest.length !== 1 || jsons.length) {
    throw new Error(`Several files (${names.join(', ')}): open one model file (with its config.json for MLX), or the .uqff shards of a UQFF directory with its residual.safetensors.`);
  }
  const f = rest[0];
  const spec = { kind: 'file', source: f, files: [{ name: f.name, size: f.size, url: null }], quantization: null, configName: null, missing: [], notes: [] };
  await attachConfigFile(spec, configs);
  return spec;
}
