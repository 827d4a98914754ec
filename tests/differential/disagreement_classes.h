// The deliberate differences between weightstream's and ggml's readings of a GGUF file: every
// disagreement the differential test sees must be one of these, each checked against the file
// itself (not only against our own error code). The table, with the rule each class comes from,
// is documented in tests/differential/README.md; keep the two together.
#pragma once

#include <string>

#include "gguf_writer.h"
#include "readers.h"

namespace wsdiff {

// One file read by both readers.
struct Outcome {
  const std::string& bytes;
  const WsReading& ws;
  const GgmlReading& ggml;
  bool described;               // the tests' own reading of the header (read_seed) succeeded
  const wsgguf::Spec& spec;     // ... and found this
};

enum class Verdict {
  AgreeAccept,   // both accept, and every fact is equal
  AgreeReject,   // both reject
  Disagree,      // anything else
};
Verdict compare(const Outcome& o);
// What differs, in words (for reports), when compare() says Disagree.
std::string difference(const Outcome& o);

struct DisagreementClass {
  const char* name;
  const char* rule;  // where our side of it is decided
  bool (*matches)(const Outcome&);
};

// The classes (class_count() of them), in the order they are tried.
const DisagreementClass* classes();
int class_count();
// Index of the first class that explains the disagreement, or -1 (a failure of the test).
int classify(const Outcome& o);

}  // namespace wsdiff
