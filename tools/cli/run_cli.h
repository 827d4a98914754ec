// One command line of the CLI, run in this process.
#pragma once

namespace wscli {

// Parses argv (argv[0] is the program) and runs the command: output on stdout and stderr, the
// exit status returned (0 success, 1 an invalid input, 2 a usage or I/O problem). It keeps no
// state between calls, so a process may run several command lines one after another (the test
// suite's batch runner, tests/golden/cli_batch.cpp, does).
int run_cli(int argc, char** argv);

}  // namespace wscli
