// Small queries about this build.
import { init } from './module.mjs';
import { supportedFormats as formats } from './formats.mjs';

// Names of the quant formats this build decodes (the rest give UnsupportedFormat).
export async function supportedFormats(options = {}) {
  return formats(await init(options));
}
