# Regenerates a corpus (safetensors or GGUF: whichever GENERATOR writes) into OUT_DIR and compares
# it, file by file and byte for byte, with the committed copy in REF_DIR. Fails on any missing,
# extra or different file.
file(REMOVE_RECURSE "${OUT_DIR}")
execute_process(COMMAND "${GENERATOR}" "${OUT_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GENERATOR} failed (${rc})")
endif()

file(GLOB generated RELATIVE "${OUT_DIR}" "${OUT_DIR}/*")
file(GLOB committed RELATIVE "${REF_DIR}" "${REF_DIR}/*")
list(SORT generated)
list(SORT committed)
if(NOT generated STREQUAL committed)
  set(only_new ${generated})
  list(REMOVE_ITEM only_new ${committed})
  set(only_old ${committed})
  list(REMOVE_ITEM only_old ${generated})
  message(FATAL_ERROR "corpus file lists differ; only generated: ${only_new}; only committed: "
                      "${only_old}. Run the ws-update-corpus target and commit.")
endif()

set(differ "")
foreach(f IN LISTS generated)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${OUT_DIR}/${f}" "${REF_DIR}/${f}"
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    list(APPEND differ "${f}")
  endif()
endforeach()
if(differ)
  message(FATAL_ERROR "corpus files differ from the generator's output: ${differ}. "
                      "Run the ws-update-corpus target and commit.")
endif()
list(LENGTH generated n)
message(STATUS "corpus up to date: ${n} files")
