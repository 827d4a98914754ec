// Mutants of GGUF files for the differential test against ggml: structure-aware changes made on
// the file's description (wsgguf::Spec) and written again with the tests' GGUF writer, then
// byte-level changes on the written bytes through the writer's field map. Aimed at the places
// where two readers of the format can differ: counts and lengths at their boundaries, value and
// tensor type ids, general.alignment (keys spelled with NUL bytes or in other case, every value and
// type), NUL bytes in keys, names and values, duplicate keys and names, the BitNet architecture,
// shapes, offsets, truncations and trailing bytes.
//
// Deterministic: mutant i of a campaign comes from (campaign seed, i) alone, so any mutant can be
// made again by its index.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "gguf_writer.h"

namespace wsdiff {

struct Seed {
  std::string name;    // file name, for reports
  std::string bytes;
  bool described = false;  // read_seed() understood it: structural mutations apply
  wsgguf::Spec spec;
};

// Reads the seed files and directories (every *.gguf below a directory, in name order).
std::vector<Seed> load_seeds(const std::vector<std::string>& paths, std::string* err);

struct Mutant {
  std::string bytes;
  std::string what;  // the mutations applied, e.g. "alignment-key(general.alignment\0=64) trunc@812"
};

// Mutant `index` of the campaign `campaign_seed`: a seed picked by the index, one to three
// mutations. Never larger than 4 MiB (ggml would read larger tensor sections for nothing).
Mutant make_mutant(const std::vector<Seed>& seeds, uint64_t campaign_seed, uint64_t index);

}  // namespace wsdiff
