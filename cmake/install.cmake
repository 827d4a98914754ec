# Install rules (WS_INSTALL): the library, its public headers, the CLI (tools/CMakeLists.txt), a
# relocatable CMake package (find_package(weightstream) -> weightstream::weightstream) and
# weightstream.pc. tools/test-stages/45-install.sh builds projects against an install.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WS_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/weightstream")

# The public headers, and the detail/ headers they include (reader.h and the JSON readers hold
# their parsers by value). The other detail/ headers are the library's own and stay private; the
# install stage compiles every installed header on its own, so a missing one fails there.
set(WS_PUBLIC_HEADERS
  canonical_names.h conventions.h convert_plan.h dequant.h dtype.h event.h file_kind.h ggml_types.h gguf.h
  gguf_split.h limits.h load_plan.h manifest_blobs.h mlx_config.h model_facts.h model_loader.h
  ollama_manifest.h ollama_quant.h quant_params.h reader.h safetensors_writer.h sha256.h shard_index.h
  status.h tensor_table.h uqff.h warning.h weightstream.h)
set(WS_PUBLIC_DETAIL_HEADERS
  arena.h gguf_header_parser.h json_document.h json_lexer.h json_skipper.h safetensors_header_parser.h)
list(TRANSFORM WS_PUBLIC_HEADERS PREPEND "${PROJECT_SOURCE_DIR}/lib/include/weightstream/")
list(TRANSFORM WS_PUBLIC_DETAIL_HEADERS PREPEND "${PROJECT_SOURCE_DIR}/lib/include/weightstream/detail/")
install(FILES ${WS_PUBLIC_HEADERS} "${WS_GENERATED_INCLUDE}/weightstream/version.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/weightstream" COMPONENT dev)
install(FILES ${WS_PUBLIC_DETAIL_HEADERS}
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/weightstream/detail" COMPONENT dev)

install(TARGETS weightstream EXPORT weightstreamTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT dev
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
install(EXPORT weightstreamTargets NAMESPACE weightstream:: DESTINATION "${WS_CMAKE_DIR}" COMPONENT dev)

# The build options a consumer links, as package variables (weightstream_KERNELS_SIMD128, ...;
# the target carries them as WEIGHTSTREAM_* compile definitions too).
foreach(opt KERNELS_SIMD128 SAFETENSORS_FAST_PATH)
  if(WS_${opt})
    set(WS_PKG_${opt} ON)
  else()
    set(WS_PKG_${opt} OFF)
  endif()
endforeach()
if(BUILD_SHARED_LIBS)
  set(WS_PKG_SHARED ON)
else()
  set(WS_PKG_SHARED OFF)
endif()
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/weightstreamConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/weightstreamConfig.cmake" INSTALL_DESTINATION "${WS_CMAKE_DIR}")
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/weightstreamConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/weightstreamConfig.cmake" "${PROJECT_BINARY_DIR}/weightstreamConfigVersion.cmake"
        DESTINATION "${WS_CMAKE_DIR}" COMPONENT dev)

# weightstream.pc, relocatable: the prefix is found from the .pc file's own directory.
file(RELATIVE_PATH WS_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" WS_PC_TO_PREFIX "${WS_PC_TO_PREFIX}")
foreach(opt KERNELS_SIMD128 SAFETENSORS_FAST_PATH)
  if(WS_PKG_${opt})
    set(WS_PC_${opt} 1)
  else()
    set(WS_PC_${opt} 0)
  endif()
endforeach()
configure_file("${PROJECT_SOURCE_DIR}/cmake/weightstream.pc.in" "${PROJECT_BINARY_DIR}/weightstream.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/weightstream.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT dev)
