// weightstream CLI — entry point (the command line's work is run_cli.cpp's).
#include "run_cli.h"

int main(int argc, char** argv) { return wscli::run_cli(argc, argv); }
