#include "logging.hpp"

namespace nc {

ordo::Logger &logger() {
  static ordo::Logger *logger = new ordo::Logger("native_cpu"); // outlives static destructors
  return *logger;
}

} // namespace nc
