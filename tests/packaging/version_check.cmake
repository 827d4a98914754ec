# The version in VERSION, and every place that states it: the CLI (`weightstream version`), the
# CMake package version file and weightstream.pc of this build, wasm/package.json (npm reads it
# as it is, so it is written by hand and checked here) and CHANGELOG.md's newest entry.
# cmake -DSOURCE_DIR=... -DBINARY_DIR=... [-DCLI=...] -P version_check.cmake
file(STRINGS "${SOURCE_DIR}/VERSION" version LIMIT_COUNT 1)
if(NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "VERSION holds '${version}', not MAJOR.MINOR.PATCH")
endif()
set(failures "")
macro(expect what found)
  if(NOT "${found}" STREQUAL "${version}")
    string(APPEND failures "\n  ${what}: '${found}'")
  endif()
endmacro()

file(READ "${SOURCE_DIR}/wasm/package.json" package)
string(JSON npm GET "${package}" version)
expect("wasm/package.json" "${npm}")

file(STRINGS "${SOURCE_DIR}/CHANGELOG.md" headings REGEX "^## ")
list(GET headings 0 newest)
string(REGEX REPLACE "^## \\[?([^] ]*).*" "\\1" newest "${newest}")
expect("CHANGELOG.md's newest entry" "${newest}")

if(CLI)
  execute_process(COMMAND "${CLI}" version OUTPUT_VARIABLE out RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX REPLACE "^weightstream " "" out "${out}")
  expect("weightstream version (exit ${rc})" "${out}")
endif()

set(pc "${BINARY_DIR}/weightstream.pc")
set(cv "${BINARY_DIR}/weightstreamConfigVersion.cmake")
if(NOT EXISTS "${pc}" OR NOT EXISTS "${cv}")
  string(APPEND failures "\n  ${pc} or ${cv} missing (configured with WS_INSTALL=OFF?)")
else()
  file(STRINGS "${pc}" pc_version REGEX "^Version: ")
  string(REGEX REPLACE "^Version: " "" pc_version "${pc_version}")
  expect("weightstream.pc" "${pc_version}")
  include("${cv}")  # sets PACKAGE_VERSION
  expect("weightstreamConfigVersion.cmake" "${PACKAGE_VERSION}")
endif()

if(failures)
  message(FATAL_ERROR "VERSION says ${version}; these differ:${failures}")
endif()
message(STATUS "version ${version} everywhere")
