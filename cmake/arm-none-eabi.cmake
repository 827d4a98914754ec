# Cross toolchain for bare-metal Cortex-M4F (Debian gcc-arm-none-eabi + libnewlib-arm-none-eabi).
#   cmake --preset mcu        (or: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake ...)
# Thumb-2, single-precision hard float, size-optimised, no exceptions/RTTI, every function and
# object in its own section so --gc-sections drops whatever the firmware does not reach.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(WS_ARM_PREFIX "arm-none-eabi-" CACHE STRING "Prefix of the arm-none-eabi binutils/gcc")
set(CMAKE_C_COMPILER ${WS_ARM_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${WS_ARM_PREFIX}g++)
set(CMAKE_ASM_COMPILER ${WS_ARM_PREFIX}gcc)
set(CMAKE_AR ${WS_ARM_PREFIX}ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${WS_ARM_PREFIX}ranlib CACHE FILEPATH "")
set(CMAKE_SIZE ${WS_ARM_PREFIX}size CACHE FILEPATH "")
set(CMAKE_NM ${WS_ARM_PREFIX}nm CACHE FILEPATH "")
set(CMAKE_OBJCOPY ${WS_ARM_PREFIX}objcopy CACHE FILEPATH "")

# No host program can run: try_compile builds a static library instead of linking an executable.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(WS_MCU_CPU_FLAGS "-mthumb -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(CMAKE_C_FLAGS_INIT "${WS_MCU_CPU_FLAGS} -ffunction-sections -fdata-sections")
# -Os still inlines small functions into every caller and duplicates blocks to thread jumps; off,
# the parser-only library code is 158 bytes smaller (tools/mcu-size.sh; tried one by one, the other
# -fno-* inlining/IPA/GCSE switches saved less or nothing).
set(WS_MCU_SIZE_FLAGS "-fno-inline-small-functions -fno-thread-jumps -fno-tree-dominator-opts")
set(CMAKE_CXX_FLAGS_INIT
    "${WS_MCU_CPU_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit ${WS_MCU_SIZE_FLAGS}")
set(CMAKE_ASM_FLAGS_INIT "${WS_MCU_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${WS_MCU_CPU_FLAGS} -Wl,--gc-sections")
# -Os for every build type: size is the point on a microcontroller.
foreach(lang C CXX)
  set(CMAKE_${lang}_FLAGS_RELEASE_INIT "-Os -DNDEBUG")
  set(CMAKE_${lang}_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
  set(CMAKE_${lang}_FLAGS_RELWITHDEBINFO_INIT "-Os -g -DNDEBUG")
  set(CMAKE_${lang}_FLAGS_DEBUG_INIT "-Os -g")
endforeach()

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
