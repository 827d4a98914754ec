// A model — one file, a sharded model's index and shards, a UQFF directory or an Ollama manifest — as decode events (decode.mjs),
// each tagged with the shard it comes from (null for a single file).
import { toSource, toUrl, isIndexUrl } from './sources.mjs';
import { scanFile } from './scan.mjs';
import { decodePipeline } from './decode.mjs';
import { toSelect } from './options.mjs';
import { shardedEvents, isShardedFiles } from './sharded.mjs';
import { isUqffSource, uqffEvents } from './uqff.mjs';
import { isManifestSource, manifestEvents } from './ollama-manifest.mjs';

export async function isShardedSource(source) {
  if (isShardedFiles(source)) return true;  // { index, shards }: local files
  if (typeof source !== 'string' && !(source instanceof URL)) return false;
  return isIndexUrl(await toUrl(source));
}

// Decode events of one file. `extra`: scanFile options (onHeader for shard checks, shard name).
export function fileEvents(wasm, src, options, progress, extra = {}) {
  const select = toSelect(options.filter);
  const o = { ...options, select, ...extra };
  return decodePipeline(wasm, (selection) => scanFile(wasm, src, {
    ...o,
    selection,
    onBytes: (n) => progress?.addBytes(n),
  }), o);
}

export async function* modelEvents(wasm, source, options, progress) {
  if (isUqffSource(source)) {
    yield* uqffEvents(wasm, source, options, progress);
    return;
  }
  if (isManifestSource(source)) {
    yield* manifestEvents(wasm, source, options, progress);
    return;
  }
  if (await isShardedSource(source)) {
    yield* shardedEvents(wasm, source, options, progress);
    return;
  }
  const src = await toSource(source, options);
  // The total is known once the source is open (Content-Length, file size), if at all.
  const open = src.open.bind(src);
  src.open = async (signal) => { await open(signal); progress?.setTotal(src.size); src.open = async () => {}; };
  yield* fileEvents(wasm, src, options, progress, { onPlanned: (n) => progress?.setTotal(n) });
}
