// SPDX-License-Identifier: Apache-2.0
// The loader tests log at info level, so that tests can see the lines for adapters
// that were not found; UR_LOG_LOADER is read once, when the loader first logs.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char **argv) {
  setenv("UR_LOG_LOADER", "level:info;output:stderr", 0);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
