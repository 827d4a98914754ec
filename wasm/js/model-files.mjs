// What the caller passed, as the model loader's host needs it: the entry the loader opens, and
// where each file it names comes from. No model rule lives here — which files exist, their order
// and every check are the loader's; this maps the loader's file names to URLs, paths and Files.
//
//   a URL or path          one file; a `*.index.json` URL/path is a sharded model (its shards
//                          beside it); a split GGUF's other splits are found beside it
//   a Response, Blob/File, stream, bytes, async iterable: one file
//   { index, shards }      a sharded model from local files (shards: list, directory, function)
//   { uqff: [sources] }    a UQFF directory
//   { gguf: [sources] }    a split GGUF model's splits, in any order
//   { ollama, blobs }      an Ollama manifest and where its blobs are
// The loader asks for config.json when the model's convention reads it (a plain safetensors model
// may be MLX, FP8, ... by its quantization section; the CLI reads it beside a path the same way).
// It is answered by the `quantization` option, else by the config.json beside a URL or path (the
// index's, for a sharded model), else by one among the files of `{ index, shards }`; a File,
// bytes or a stream given alone have nothing beside them. One that is not there is no error.
// `quantization: false` says there is none (no request: a cached model loads offline).
import { toSource, toUrl, readAll } from './sources.mjs';
import { makeError, inShard } from './errors.mjs';
import { Entry } from './loader.mjs';
import { configBytes } from './conventions.mjs';

const lastSegment = (s) => String(s).split(/[\\/]/).pop();

export const isUqffSource = (s) => s !== null && typeof s === 'object' && Array.isArray(s.uqff);
export const isSplitList = (s) => s !== null && typeof s === 'object' && Array.isArray(s.gguf);
export const isManifestSource = (s) => s !== null && typeof s === 'object' && !(s instanceof URL) && 'ollama' in s;
export const isShardedFiles = (s) => s !== null && typeof s === 'object' && !(s instanceof URL) && 'index' in s && 'shards' in s;

// A list entry's file name and input ({name, source}, a File, a path or URL).
function listEntry(e, i, what) {
  if (e && typeof e === 'object' && 'source' in e && !(e instanceof URL)) return { name: e.name ?? (what === 'uqff' ? `file-${i}` : null), input: e.source, sha256: e.sha256 ?? null };
  if (typeof e === 'string') return { name: lastSegment(e), input: e };
  if (e instanceof URL) return { name: lastSegment(e.pathname), input: e };
  if (typeof Blob !== 'undefined' && e instanceof Blob && e.name) return { name: e.name, input: e };
  if (what === 'uqff') return { name: `file-${i}`, input: e };
  throw new TypeError(`weightstream: shards[${i}] has no file name: give a File, a path, a URL or { name, source }`);
}

// Inputs that can only be read once, forward (streams, Responses, iterables) are read into memory
// for a model of several files, whose reads go back and forth between them.
async function seekableInput(input, options) {
  const src = await toSource(input, options);
  if (src.seekable || src.url) return input;
  return readAll(src, options.signal);
}

// (file) => input for a directory (path or URL), a list, or a function.
export async function resolver(spec, what) {
  if (typeof spec === 'function') return spec;
  if (typeof spec === 'string' || spec instanceof URL) {
    const dir = await toUrl(spec);
    const base = new URL(dir.href.endsWith('/') ? dir.href : `${dir.href}/`);
    return (file) => new URL(file, base);
  }
  if (Array.isArray(spec)) {
    const byName = new Map();
    spec.forEach((e, i) => { const { name, input } = listEntry(e, i, what); if (!byName.has(name)) byName.set(name, input); });
    return (file) => byName.get(file) ?? byName.get(lastSegment(file)) ?? null;
  }
  throw new TypeError('weightstream: { index, shards }: shards must be a list (Files, paths, { name, source }), a directory, or (file) => source');
}

// Where an Ollama manifest's blobs are: `blobs` (a directory or function), or for a manifest path
// the nearest ancestor's blobs/ (Ollama's models root, as the CLI finds it).
export async function blobResolver(source) {
  const { ollama: manifest, blobs } = source;
  if (typeof blobs === 'function' || typeof blobs === 'string' || blobs instanceof URL || Array.isArray(blobs)) return resolver(blobs, 'blobs');
  if (blobs === undefined && (typeof manifest === 'string' || manifest instanceof URL)) {
    const url = await toUrl(manifest);
    if (url.protocol === 'file:') {
      const { stat } = await import('node:fs/promises');
      for (let dir = new URL('.', url); ; dir = new URL('..', dir)) {
        const candidate = new URL('blobs/', dir);
        if (await stat(candidate).then((s) => s.isDirectory(), () => false)) return (file) => new URL(file, candidate);
        if (dir.pathname === '/') break;
      }
    }
  }
  throw makeError({ code: 'ManifestNoBlobs', offset: 0, detail: 'pass blobs: a directory or (file) => source' });
}

function base(options, o) {
  const config = configBytes(options.quantization);
  return {
    listing: null, seekable: true, remote: false, configFromOption: config !== null,
    // config.json beside the model (a URL or path): looked for unless the option gave one or none.
    configBeside: config === null && options.quantization !== false,
    // An I/O error of a file the model's documents name carries its name.
    place(e, file) { return file.kind === 'config' || this.shardName(file) === null ? e : inShard(e, this.shardName(file)); },
    config,
    ...o,
  };
}

// A config file the loader asks for: config.json is the quantization option's, else the one
// beside a URL or path (`beside`, null for a File or bytes); the other config files it may ask for
// in turn (hf_quant_config.json, quantize_config.json, quant_config.json) are read beside it too,
// as the CLI reads them. With the option given (or false), nothing is read beside.
function configOf(model, file, beside) {
  if (file.name === 'config.json' && model.config) return model.config;
  return model.configBeside && beside ? beside(file.name) : null;
}

const isRemote = (u) => u instanceof URL && u.protocol !== 'file:';

// The model behind `source`: { entry, name, listing, seekable, remote, input(file), shardName(file),
// kind ('file' | 'sharded' | 'uqff' | 'ollama') }.
export async function describeModel(source, options = {}) {
  const model = await describe(source, options);
  model.digests = [...model.digests ?? [], ...digestOption(options.sha256, model)];
  return model;
}

// options.sha256: 64 hex digits (the one file given), or { file name: hex } (names as the model's
// documents give them: a shard, a split, `blobs/sha256-...`).
function digestOption(sha256, model) {
  const bad = () => new TypeError('weightstream: sha256 must be 64 hex digits or { file name: 64 hex digits }');
  const hex = (h) => { if (typeof h !== 'string') throw bad(); return h; };  // the digits: the library's check
  if (sha256 === undefined || sha256 === null) return [];
  if (typeof sha256 === 'string') return [[model.name, hex(sha256)]];
  if (typeof sha256 === 'object') return Object.entries(sha256).map(([n, h]) => [n, hex(h)]);
  throw bad();
}

async function describe(source, options) {
  if (isUqffSource(source) || isSplitList(source)) {
    // A UQFF directory's files, or a split GGUF model's splits (`{ gguf: [...] }`): the loader
    // picks and orders them by name.
    const uqff = isUqffSource(source);
    const list = uqff ? source.uqff : source.gguf;
    if (!list.length) throw new TypeError(`weightstream: { ${uqff ? 'uqff' : 'gguf'}: [...] } needs at least one file`);
    const byName = new Map();
    const listing = [], digests = [];
    for (let i = 0; i < list.length; i++) {
      const { name, input, sha256 } = listEntry(list[i], i, 'uqff');
      if (!byName.has(name)) byName.set(name, await seekableInput(input, options));
      listing.push(name);
      if (sha256) digests.push([name, sha256]);
    }
    return base(options, {
      kind: uqff ? 'uqff' : 'splits', entry: uqff ? Entry.uqffFiles : Entry.ggufSplits, name: uqff ? 'model' : listing[0], listing, digests,
      input: (file) => byName.get(file.name) ?? null,
      shardName: (file) => file.name,
    });
  }
  if (isManifestSource(source)) {
    const manifestName = typeof source.ollama === 'string' || source.ollama instanceof URL ? lastSegment(source.ollama) : source.ollama?.name ?? null;
    let blobs = null;
    return base(options, {
      kind: 'ollama', entry: Entry.ollamaManifest, name: manifestName ?? 'manifest',
      async input(file) {
        if (file.kind === 'manifest') return source.ollama;
        if (file.kind !== 'blob') return null;
        blobs ??= await blobResolver(source);
        const input = await blobs(file.name.replace(/^blobs\//, ''));
        return input === null || input === undefined ? null : seekableInput(input, options);
      },
      shardName: (file) => (file.kind === 'blob' ? file.name.replace(/^blobs\//, '') : file.kind === 'manifest' ? manifestName : null),
      // A blob that is not there is the loader's ManifestBlobMissing.
      missingIsFine: (file) => file.kind === 'blob',
    });
  }
  if (isShardedFiles(source)) {
    const indexName = listEntryName(source.index) ?? 'model.safetensors.index.json';
    const digests = Array.isArray(source.shards)
      ? source.shards.map((e, i) => listEntry(e, i, 'shards')).filter((e) => e.sha256).map((e) => [e.name, e.sha256]) : [];
    let shards = null, checked = false;
    const model = base(options, {
      kind: 'sharded', entry: Entry.shardIndex, name: indexName, digests,
      async input(file, L) {
        if (file.kind === 'index') return source.index;
        shards ??= await resolver(source.shards, 'shards');
        // config.json from the option, else among the files; the other config files the loader may
        // ask for (hf_quant_config.json, quantize_config.json, quant_config.json) among the files.
        if (file.kind === 'config') return file.name === 'config.json' ? this.config ?? shards('config.json') : shards(file.name);
        if (!checked) {
          // Every shard the index names must be among the files given: said before any is read,
          // naming all that are not (the caller picks or drops files; only it can add them).
          checked = true;
          const names = [], missing = [];
          for (let f = 0, n = L.fileCount(); f < n; f++) {
            const x = L.file(f);
            if (x.kind !== 'shard') continue;
            names.push(x.name);
            if (((await shards(x.name)) ?? null) === null) missing.push(x.name);
          }
          if (missing.length) {
            throw makeError({
              code: 'ShardNotGiven', offset: null, shard: missing[0],
              detail: `the index names ${names.length} shard${names.length === 1 ? '' : 's'}; not given: ${missing.join(', ')}`,
              hint: `Pass every shard the index names: add ${missing.join(', ')} to shards (pick or drop them with the index).`,
            });
          }
        }
        const input = await shards(file.name);
        return input === null || input === undefined ? null : seekableInput(input, options);
      },
      shardName: (file) => (file.kind === 'shard' ? file.name : null),
    });
    return model;
  }
  if (typeof source === 'string' || source instanceof URL) {
    const url = await toUrl(source);
    const name = lastSegment(url.pathname);
    if (url.pathname.endsWith('.index.json')) {
      // The index's server says whether the model can be read by range: without Range support
      // every shard is streamed forward (the loader keeps early companions).
      const index = await toSource(url, options);
      await index.open(options.signal);
      return base(options, {
        kind: 'sharded', entry: Entry.shardIndex, name, remote: isRemote(url), seekable: !!index.seekable && !!index.range,
        opened: index,
        input(file) { return file.kind === 'config' ? configOf(this, file, (n) => new URL(n, url)) : file.kind === 'index' ? index : new URL(file.name, url); },
        shardName: (file) => (file.kind === 'shard' ? file.name : null),
      });
    }
    const src = await toSource(url, options);
    await src.open(options.signal);
    return single(options, src, name, isRemote(url), (file) => new URL(file, url));
  }
  const src = await toSource(source, options);
  await src.open(options.signal);
  return single(options, src, src.name ? lastSegment(src.name) : 'model', false, null);
}

function listEntryName(input) {
  if (typeof input === 'string') return lastSegment(input);
  if (input instanceof URL) return lastSegment(input.pathname);
  if (typeof Blob !== 'undefined' && input instanceof Blob && input.name) return input.name;
  return null;
}

// One file, opened already (its first response says whether it can seek). A split GGUF model's
// other splits, which the loader names from it, and config.json are found beside a URL or path
// (`sibling`); a File or bytes given alone have none (GgufSplitMissing names the first).
function single(options, src, name, remote, sibling) {
  return base(options, {
    kind: 'file', entry: Entry.file, name: name || 'model', seekable: !!src.seekable && !!src.range, remote,
    input(file) {
      if (file.kind === 'config') return configOf(this, file, sibling);
      if (file.kind === 'split' && file.name !== this.name) return sibling ? sibling(file.name) : null;
      return src;
    },
    shardName(file) { return file.kind === 'split' ? file.name : null; },
    missingIsFine: (file) => file.kind === 'split',
    opened: src,
  });
}
