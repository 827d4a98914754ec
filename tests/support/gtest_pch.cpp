// The translation unit that builds the precompiled <gtest/gtest.h> every test binary reuses
// (tests/CMakeLists.txt, ws_use_gtest_pch): it has nothing of its own.
