// An in-memory stand-in for the Origin Private File System (FileSystemDirectoryHandle and
// FileSystemFileHandle as the cache uses them), for the cache's tests in Node:
//   new FakeDir({ sync: true })   files get createSyncAccessHandle() (a worker), else only
//                                 createWritable() (the main thread: writes land at close()).
//   root.quota = n                writes that would take the stored bytes past n throw
//                                 QuotaExceededError.
//   root.log                      every write: {file, at, n, via}.
class FakeFile {
  constructor(root, name) { this.root = root; this.name = name; this.kind = 'file'; this.bytes = new Uint8Array(0); this.locked = false; }
  async getFile() { return new Blob([this.bytes.slice()]); }
  store(at, data, base = this.bytes) {
    const end = at + data.length;
    const out = new Uint8Array(Math.max(base.length, end));
    out.set(base);
    out.set(data, at);
    const grow = out.length - base.length;
    if (this.root.quota !== null && this.root.used() + grow > this.root.quota) throw new DOMException('quota exceeded', 'QuotaExceededError');
    return out;
  }
  async createWritable({ keepExistingData = false } = {}) {
    if (this.locked) throw new DOMException('locked', 'NoModificationAllowedError');
    const f = this;
    let swap = keepExistingData ? this.bytes.slice() : new Uint8Array(0);
    let pos = 0;
    let done = false;
    // The swap file counts against the quota while it is open, as Chromium's does.
    const held = { length: swap.length };
    f.root.swaps.add(held);
    return {
      async write(arg) {
        if (done) throw new TypeError('closed');
        let at = pos, data = arg;
        if (arg && typeof arg === 'object' && arg.type === 'write') { at = arg.position ?? pos; data = arg.data; }
        if (typeof data === 'string') data = new TextEncoder().encode(data);
        data = data instanceof Uint8Array ? data : new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength);
        swap = f.store(at, data, swap);
        held.length = swap.length;
        pos = at + data.length;
        f.root.log.push({ file: f.name, at, n: data.length, via: 'writable' });
      },
      async close() { if (!done) { done = true; f.bytes = swap; f.root.swaps.delete(held); } },
      async abort() { done = true; f.root.swaps.delete(held); },
    };
  }
  async createSyncAccessHandle() {
    if (!this.root.sync) throw new DOMException('only in dedicated workers', 'InvalidStateError');
    if (this.locked) throw new DOMException('locked', 'NoModificationAllowedError');
    this.locked = true;
    const f = this;
    let open = true;
    const live = () => { if (!open) throw new DOMException('closed', 'InvalidStateError'); };
    return {
      read(buf, { at = 0 } = {}) { live(); const n = Math.max(0, Math.min(buf.length, f.bytes.length - at)); buf.set(f.bytes.subarray(at, at + n)); return n; },
      write(data, { at = 0 } = {}) {
        live();
        const u8 = data instanceof Uint8Array ? data : new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength);
        f.bytes = f.store(at, u8);
        f.root.log.push({ file: f.name, at, n: u8.length, via: 'sync' });
        return u8.length;
      },
      truncate(n) { live(); if (f.bytes.length >= n) f.bytes = f.bytes.slice(0, n); else { const o = new Uint8Array(n); o.set(f.bytes); f.bytes = o; } },
      getSize() { live(); return f.bytes.length; },
      flush() { live(); },
      close() { if (open) { open = false; f.locked = false; } },
    };
  }
}

export class FakeDir {
  constructor(opts = {}, root = null, name = '') {
    this.kind = 'directory';
    this.name = name;
    this.children = new Map();
    this.root = root ?? this;
    if (!root) { this.sync = opts.sync ?? true; this.quota = opts.quota ?? null; this.log = []; this.swaps = new Set(); }
  }
  used() {
    let n = 0;
    const walk = (d) => { for (const c of d.children.values()) { if (c.kind === 'file') n += c.bytes.length; else walk(c); } };
    walk(this.root);
    for (const h of this.root.swaps) n += h.length;
    return n;
  }
  async getDirectoryHandle(name, { create = false } = {}) {
    let c = this.children.get(name);
    if (!c) {
      if (!create) throw new DOMException(`${name} not found`, 'NotFoundError');
      c = new FakeDir({}, this.root, name);
      this.children.set(name, c);
    }
    if (c.kind !== 'directory') throw new DOMException(`${name} is a file`, 'TypeMismatchError');
    return c;
  }
  async getFileHandle(name, { create = false } = {}) {
    let c = this.children.get(name);
    if (!c) {
      if (!create) throw new DOMException(`${name} not found`, 'NotFoundError');
      c = new FakeFile(this.root, name);
      this.children.set(name, c);
    }
    if (c.kind !== 'file') throw new DOMException(`${name} is a directory`, 'TypeMismatchError');
    return c;
  }
  async removeEntry(name) {
    const c = this.children.get(name);
    if (!c) throw new DOMException(`${name} not found`, 'NotFoundError');
    if (c.locked) throw new DOMException('locked', 'NoModificationAllowedError');
    this.children.delete(name);
  }
  async* entries() { for (const [k, v] of [...this.children]) yield [k, v]; }
  // The cache's files, for assertions: name -> bytes.
  files() { return this.children.get('weightstream-cache')?.children ?? new Map(); }
}
