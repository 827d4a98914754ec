// weightstream CLI — a small JSON document (index.json, an Ollama manifest, config.json) read
// from an open file into its streaming reader, which lives on a vector arena.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <memory>
#include <vector>

#include "weightstream/status.h"

namespace wscli {

// Doc is ws::ShardIndex, ws::OllamaManifest or ws::MlxQuantConfig (feed / finish / arena_needed,
// constructed on an arena). `arena_size` is the first try; when the reader runs out it says how
// much it needs, and the file is read once more with exactly that (rounded to 8). Returns the
// final status; *doc holds the reader (its error() and arena_needed() for the caller's problem).
template <class Doc>
ws::Status read_json_doc(FILE* f, size_t arena_size, std::vector<uint64_t>* arena, std::unique_ptr<Doc>* doc) {
  ws::Status s = ws::Status::Ok;
  for (int attempt = 0; attempt < 2; ++attempt) {
    rewind(f);
    arena->assign((arena_size + 7) / 8, 0);
    doc->reset(new Doc(arena->data(), arena->size() * 8));
    s = ws::Status::Ok;
    char buf[65536];
    size_t n;
    while (s == ws::Status::Ok && (n = fread(buf, 1, sizeof buf, f)) > 0) s = (*doc)->feed(buf, n);
    if (s == ws::Status::Ok) s = (*doc)->finish();
    if (s != ws::Status::ArenaExhausted || attempt == 1) break;
    arena_size = ((*doc)->arena_needed() + 7) & ~size_t(7);
  }
  return s;
}

}  // namespace wscli
