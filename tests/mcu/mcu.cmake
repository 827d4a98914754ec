# Included right after the top-level project() by the mcu preset
# (CMAKE_PROJECT_weightstream_INCLUDE), so the top-level CMakeLists.txt needs no change: adds
# tests/mcu, whose firmware links the library target lib/ defines later (targets resolve at
# generate time). tests/mcu sets its own standard and warning flags for that reason.
enable_testing()
add_subdirectory("${CMAKE_CURRENT_LIST_DIR}" "${CMAKE_BINARY_DIR}/mcu")
