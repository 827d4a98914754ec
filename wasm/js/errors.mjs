// WeightstreamError and the messages it carries: "what is wrong (the numbers behind it). How to
// fix it." — the CLI's sentence (tools/cli/error_text.cpp), prefixed with the code, the offset,
// the shard and the tensor, so that the message alone names all of them. The fix is the library's
// (ws::status_hint), as the CLI's is.
import { JS_CODES, contentGuess } from './hints.mjs';

// The library's fix for a ws::Status (ws::status_hint through the wasm module, module.mjs sets it
// when it loads): (name, conventionId | null) => text, or null for a name that is no status.
let statusHint = () => null;
export function useStatusHints(fn) { statusHint = fn; }

const JS_DESCRIPTIONS = {
  IoError: 'the input could not be read',
  UnsafeShardPath: 'the index names a shard outside its own directory',
  ShardNotGiven: 'a shard the index names is not among the files given',
  BufferTooLarge: "a tensor is larger than the device's maxBufferSize",
  GpuError: 'creating or writing a GPU buffer failed',
  SourceChanged: 'the file changed on the server while it was read',
  ResumeUnsupported: 'an interrupted download could not be resumed',
  Aborted: 'the caller aborted the stream',
  InternalError: 'the WebAssembly module trapped',
};

export class WeightstreamError extends Error {
  // fields: code (a ws::Status name or a JS code), offset (absolute byte offset, or null), tensor
  // (name or null), shard (file name within a sharded model, or null), and optionally found /
  // expected (BigInt: the values behind the rejection), description and hint.
  constructor(message, fields = {}) {
    super(message, fields.cause !== undefined ? { cause: fields.cause } : undefined);
    this.name = fields.code === 'Aborted' ? 'AbortError' : 'WeightstreamError';
    this.code = fields.code ?? 'UsageError';
    this.offset = fields.offset ?? null;
    this.tensor = fields.tensor ?? null;
    this.shard = fields.shard ?? null;
    this.found = fields.found ?? null;
    this.expected = fields.expected ?? null;
    this.description = fields.description ?? '';
    this.hint = fields.hint ?? '';
  }

  // The shape validate() reports: {code, offset, tensor, message} (+ shard for sharded models).
  toJSON() {
    const o = { code: this.code, offset: this.offset, tensor: this.tensor, message: this.message };
    if (this.shard !== null) o.shard = this.shard;
    return o;
  }
}

const n = (v) => (v === null || v === undefined ? null : BigInt(v));

// The numbers that explain a rejection, or '' (the CLI's details(), with the found/expected values
// ws::Error carries).
function details(f) {
  const found = n(f.found), expected = n(f.expected), size = n(f.inputSize);
  switch (f.code) {
    case 'TruncatedHeader':
      return size !== null && f.inputSizeExact ? `the file is ${size} bytes` : '';
    case 'HeaderTooSmall':
      return size !== null ? `the file is ${size} bytes; a safetensors file starts with an 8-byte header length` : '';
    case 'HeaderTooLarge':
      return found !== null && expected !== null ? `header says ${found} bytes; the limit is ${expected}` : '';
    case 'InvalidHeaderLength': {
      const declared = found ?? n(f.declaredHeader);
      return declared !== null && size !== null
        ? `header says ${declared} bytes, ending at byte ${declared + 8n}; the file is ${size} bytes` : '';
    }
    case 'TruncatedData': {
      const end = expected ?? n(f.dataEnd);
      const have = found ?? size;
      if (end === null || have === null) return '';
      // The reader saturates a data end past 2^64 (a crafted header) to 2^64 - 1.
      const at = end === 0xFFFFFFFFFFFFFFFFn ? 'past byte 2^64' : `at byte ${end}`;
      return `the tensors end ${at}; the file is ${have} bytes`;
    }
    case 'TrailingBytes': {
      const total = found ?? (f.inputSizeExact ? size : null);
      const at = BigInt(f.offset);
      return total !== null && total > at ? `${total - at} bytes follow the end of the data at byte ${at}` : `the data ends at byte ${at}`;
    }
    case 'ArenaExhausted':
      return f.arenaNeeded ? `${f.arenaNeeded} bytes needed; the arena has ${f.arenaSize}` : '';
    case 'ShardTensorWrongShard': case 'ShardTensorMissing': case 'ShardTensorDuplicate':
      return f.indexShard ? `the index places it in ${f.indexShard}` : '';
    case 'GgufByteSwapped':
      if (found === null) return '';
      return `the version field reads ${found}, which is version ${bswap32(Number(found))} written big-endian`;
    case 'GgufVersionTooNew':
      return found !== null ? `version ${found}` : '';
    case 'GgufInvalidType':
      return found !== null ? `type id ${found}` : '';
    case 'GgufRetiredType': {
      if (found === null) return '';
      let d = `type id ${found}`;
      if (f.retiredName) d += ` was ${f.retiredName}`;
      if (f.bitnetName) d += `; BitNet's llama.cpp fork uses it for ${f.bitnetName}, but general.architecture does not name bitnet`;
      return d;
    }
    case 'GgufInvalidTensorOffset': {
      if (found === null || expected === null) return '';
      let d = `expected ${expected}, found ${found}`;
      if (expected === 0n) d += ': the first tensor starts the data section';
      else if (f.alignment) d += `: the end of the tensor before it, rounded up to a multiple of ${f.alignment}`;
      return d;
    }
    case 'GgufDuplicateKey':
      if (!f.ggufKey) return '';
      return `key "${f.ggufKey}"` + (f.ggufKeyOther !== undefined && f.ggufKeyOther !== null ? `, also at byte ${f.ggufKeyOther}` : '');
    case 'GgufBlockMisaligned':
      return found !== null && expected !== null ? `ne[0] = ${found} is not a multiple of the block's ${expected} elements` : '';
    case 'GgufTensorNameTooLong':
      return found !== null ? `the name is ${found} bytes` : '';
    case 'GgufTooManyDims':
      return found !== null ? `${found} dimensions` : '';
    case 'GgufInvalidAlignment':
      return found !== null ? `general.alignment is ${found}` : '';
    case 'TensorSizeMismatch':
      return found !== null && expected !== null ? `data_offsets span ${found} bytes; dtype and shape need ${expected}` : '';
    case 'DataOffsetGap': case 'DataOffsetOverlap':
      return found !== null && expected !== null ? `the tensor starts at data offset ${found}; the tensor before it ends at ${expected}` : '';
    case 'NestingTooDeep':
      return expected !== null ? `the limit is ${expected} levels` : '';
    case 'TooManyTensors': case 'NameTooLong': case 'RankTooLarge':
      return expected !== null ? `the limit is ${expected}` : '';
    case 'ConventionGroupNotInferable':
      return found !== null && expected !== null ? `${found} words and ${expected} scales per row` : '';
    case 'UqffVersionMismatch':
      return found !== null && expected !== null ? `this copy says ${found}; the first copy says ${expected}` : '';
    case 'UqffNumBlocksMismatch':
      return found !== null && expected !== null ? `num_blocks is ${found}; the shape's values take ${expected}` : '';
    case 'IndexTotalSizeMismatch':
      return found !== null && expected !== null ? `the index says ${found} bytes; the tensors hold ${expected}` : '';
    case 'DigestMismatch':
      return f.digestExpected ? `its SHA-256 is ${f.digestActual ?? 'unknown (the file was not read in full)'}, expected ${f.digestExpected}` : '';
    case 'GgufSplitFirstNotZero':
      return found !== null ? `its split.no is ${found}` : '';
    case 'GgufSplitNoMismatch':
      return found !== null && expected !== null ? `its split.no is ${found}; its place in the model is ${expected}` : '';
    case 'GgufSplitCountMismatch': case 'GgufSplitTensorCountMismatch':
      return found !== null && expected !== null ? `found ${found}, expected ${expected}` : '';
    case 'GgufSplitKeyType':
      return found !== null && expected !== null ? `a ${f.ggufTypeFound}, not a ${f.ggufTypeExpected}` : '';
    case 'GgufSplitNameMismatch':
      return f.detail ? `its keys make it a split whose name ends in ${f.detail}` : '';
    case 'BufferTooLarge':
      return f.detail ?? '';
    default:
      return f.detail ?? '';
  }
}

function bswap32(v) {
  return (((v & 0xFF) << 24) | ((v & 0xFF00) << 8) | ((v >>> 8) & 0xFF00) | (v >>> 24)) >>> 0;
}

// "description (details). Hint" — the CLI's error_message().
export function errorBody(f, description) {
  let msg = description || JS_DESCRIPTIONS[f.code] || f.code;
  const d = details(f);
  if (d) msg += ` (${d})`;
  msg += '.';
  let hint = '';
  if (f.code === 'UnknownFormat' || f.code === 'HeaderTooLarge' || f.code === 'InvalidHeaderLength') hint = contentGuess(f.prefix);
  if (!hint && f.code === 'ArenaExhausted' && f.arenaNeeded) hint = `Retry with arenaSize: ${f.arenaNeeded}.`;
  if (!hint) hint = f.hint ?? statusHint(f.code, f.convention ?? null) ?? JS_CODES[f.code] ?? '';
  if (hint) msg += ` ${hint}`;
  return { message: msg, hint };
}

// A WeightstreamError from facts: {code, offset, tensor, shard, found, expected, ...details}.
export function makeError(f, description) {
  const { message: body, hint } = errorBody(f, description);
  let head = f.code;
  if (f.offset !== null && f.offset !== undefined) head += ` at byte ${f.offset}`;
  if (f.shard) head += ` of ${f.shard}`;
  if (f.tensor !== null && f.tensor !== undefined) head += ` in tensor ${JSON.stringify(f.tensor)}`;
  const err = new WeightstreamError(`${head}: ${body}`, {
    code: f.code, offset: f.offset ?? null, tensor: f.tensor ?? null, shard: f.shard ?? null,
    found: f.found ?? null, expected: f.expected ?? null, description: description || JS_DESCRIPTIONS[f.code] || '',
    hint, cause: f.cause,
  });
  if (f.code === 'DigestMismatch') { err.expectedSha256 = f.digestExpected ?? null; err.actualSha256 = f.digestActual ?? null; }
  return err;
}

export function abortError(signal, offset) {
  const err = makeError({ code: 'Aborted', offset, cause: signal?.reason });
  return err;
}

export function ioError(detail, offset, cause, extra = {}) {
  return makeError({ code: 'IoError', offset, cause, detail, ...extra });
}

// The same error, placed in a shard of a sharded model (I/O errors of a shard the index names).
export function inShard(e, shard) {
  if (!(e instanceof WeightstreamError) || e.shard !== null || !shard) return e;
  e.shard = shard;
  const head = e.offset !== null ? `${e.code} at byte ${e.offset}` : e.code;
  if (e.message.startsWith(head)) e.message = `${head} of ${shard}${e.message.slice(head.length)}`;
  if (e.code === 'IoError') e.message += ' The index names this shard: is the download complete?';
  return e;
}
