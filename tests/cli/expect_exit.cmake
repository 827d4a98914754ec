# cmake -DPROGRAM=<exe> -DARGS=<a|b|c> -DEXPECT=<status> -P expect_exit.cmake
# Runs the program and fails unless it exits with exactly EXPECT (CTest's WILL_FAIL only knows
# zero and non-zero; the CLI promises 0, 1 and 2).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status STREQUAL "${EXPECT}")
  message(FATAL_ERROR "expected exit status ${EXPECT}, got ${status}\nstdout:\n${out}\nstderr:\n${err}")
endif()
