// The JS bindings' own codes (not ws::Status values) with their fixes, and the content guess.
// The fix for every ws::Status is the library's (ws::status_hint, lib/src/core/status_hint.cpp,
// through ws_status_hint: errors.mjs), the CLI's words too: no copy of that table lives here.

// Codes of the JS bindings themselves (not ws::Status values), with their hints.
export const JS_CODES = Object.freeze({
  IoError: 'Check the URL or file and the network; HTTP errors carry the status in the message.',
  BufferTooLarge: 'Request a device with a larger maxBufferSize (requestDevice({requiredLimits})), or pass split: true to spread the tensor over several buffers.',
  GpuError: 'The GPU device refused the buffer: it may be out of memory or lost.',
  // Resuming a URL's download after a network failure (sources.mjs UrlSource).
  SourceChanged: 'The file on the server changed during the download (a new ETag or size): load it again from the start.',
  ResumeUnsupported: 'The server does not answer Range requests, so an interrupted download cannot continue: load it again, or serve the file from a host with Range support.',
  // Ollama manifests ({ ollama, blobs }): the CLI's codes for the same problems.
  InternalError: 'This is a bug in weightstream (the WebAssembly module trapped): please report it with the file. The module was reset; the next call starts afresh.',
  ManifestNoBlobs: 'Ollama keeps manifests/ and blobs/ in one models directory: pass blobs (the directory that holds the sha256-* blobs, or (file) => source).',
});

// What the first bytes of a rejected input look like, as advice (the CLI's content_guess).
export function contentGuess(prefix) {
  if (!prefix || prefix.length === 0) return '';
  const ascii = String.fromCharCode(...prefix.subarray(0, 8));
  if (ascii.startsWith('version ')) return 'This looks like a Git LFS pointer, not the model: run `git lfs pull` in the repository.';
  if (ascii.startsWith('<')) return 'This looks like an HTML or XML page: did the download save an error page instead of the model?';
  if (ascii.startsWith('{')) return 'This looks like JSON, not a safetensors file (an index must be named *.index.json).';
  if (ascii.startsWith('PK\x03\x04')) return 'This is a zip archive (a PyTorch .bin/.pt checkpoint?), not a safetensors file.';
  if (prefix.length >= 2 && prefix[0] === 0x80 && prefix[1] >= 2 && prefix[1] <= 5)
    return 'This looks like a Python pickle (a PyTorch checkpoint?), not a safetensors file.';
  return '';
}
