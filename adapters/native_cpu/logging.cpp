// SPDX-License-Identifier: Apache-2.0
#include "logging.hpp"

namespace ordo::native_cpu {

ordo::Logger &logger() {
  static ordo::Logger *logger = new ordo::Logger("native_cpu"); // outlives static destructors
  return *logger;
}

} // namespace ordo::native_cpu
