// weightstream CLI — one command line, parsed and dispatched (main() is this and nothing else).
#include "run_cli.h"

#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "cli_args.h"
#include "inspect.h"
#include "model_convert.h"
#include "model_dequant.h"
#include "model_path.h"
#include "validate.h"

#ifndef WS_VERSION
#define WS_VERSION "unknown"
#endif

namespace wscli {

int run_cli(int argc, char** argv) {
  wscli::CliOptions options;
  std::string error;
  if (!wscli::parse_args(argc, argv, &options, &error)) {
    fprintf(stderr, "weightstream: %s\n\n%s", error.c_str(), wscli::usage_text().c_str());
    return 2;
  }
  // Tokens for URLs from the environment (an option given wins): a token in the environment stays
  // out of the process list and the shell history.
  if (options.scan.http.token.empty())
    if (const char* t = getenv("WEIGHTSTREAM_TOKEN")) options.scan.http.token = t;
  if (const char* t = getenv("HF_TOKEN")) options.scan.http.hf_token = t;
  // A model directory stands for its index, its first .uqff, or its one model file.
  if (options.command == wscli::Command::Inspect || options.command == wscli::Command::Validate ||
      options.command == wscli::Command::Dequant || options.command == wscli::Command::Convert) {
    for (std::string& file : options.files) {
      std::string resolved, why;
      if (!wscli::resolve_model_dir(file, &resolved, &why)) continue;
      if (resolved.empty()) {
        // validate reports every input on its own line (an unreadable one as IoError); inspect and
        // dequant have one input and say what the directory holds instead.
        if (options.command == wscli::Command::Validate) continue;
        fprintf(stderr, "weightstream: %s: %s\n", file.c_str(), why.c_str());
        return 2;
      }
      file = resolved;
    }
  }
  int status = 2;
  switch (options.command) {
    case wscli::Command::Help:
      fputs(wscli::usage_text().c_str(), stdout);
      return 0;
    case wscli::Command::Version:
      puts("weightstream " WS_VERSION);
      return 0;
    case wscli::Command::Inspect:
      status = wscli::run_inspect(options);
      break;
    case wscli::Command::Validate:
      status = wscli::run_validate(options);
      break;
    case wscli::Command::Dequant:
      status = wscli::run_dequant(options);
      break;
    case wscli::Command::Convert:
      status = wscli::run_convert(options);
      break;
  }
  // A --sha256 FILE that no model had checked nothing: when everything else succeeded, that is the
  // outcome to report (a misspelt name must not pass for a verified file).
  if (status == 0) {
    for (const auto& d : options.scan.sha256) {
      if (options.scan.sha256_used->count(d.first)) continue;
      fprintf(stderr, "weightstream: --sha256 %s: no file of the model is named so: nothing was verified against it\n",
              d.first.c_str());
      status = 2;
    }
  }
  return status;
}

}  // namespace wscli
