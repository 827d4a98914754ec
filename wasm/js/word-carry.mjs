// GPUQueue.writeBuffer takes whole 4-byte words (its size and offsets are multiples of 4): pieces
// of any length become whole-word writes, the 1-3 bytes past the last whole word waiting for the
// next piece, or padded with zeros at the end. Shared by the buffer writer (gpu-writer.mjs) and the
// GPU decode pass's staging ring (gpu-decode/pass.mjs).
export class WordCarry {
  constructor() {
    this.bytes = new Uint8Array(4);
    this.length = 0;  // bytes waiting (0-3)
  }

  // Hands emit(src, at, n) the whole words of the waiting bytes and mem[at, at + len), in order;
  // keeps what is left past the last whole word.
  push(mem, at, len, emit) {
    if (this.length) {
      const take = Math.min(4 - this.length, len);
      this.bytes.set(mem.subarray(at, at + take), this.length);
      this.length += take;
      at += take;
      len -= take;
      if (this.length < 4) return;
      emit(this.bytes, 0, 4);
      this.length = 0;
    }
    const aligned = len & ~3;
    if (aligned) emit(mem, at, aligned);
    if (len > aligned) {
      this.bytes.set(mem.subarray(at + aligned, at + len), 0);
      this.length = len - aligned;
    }
  }

  // The waiting 1-3 bytes padded with zeros to one word, through emit; nothing when none wait.
  pad(emit) {
    if (!this.length) return;
    this.bytes.fill(0, this.length);
    emit(this.bytes, 0, 4);
    this.length = 0;
  }
}
