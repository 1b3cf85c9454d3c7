// The adapter's log: UR_LOG_NATIVE_CPU (ordo::Logger) plus the callback a user sets
// with urAdapterSetLoggerCallback (its second sink: ordo/adapter_logging.hpp).
#pragma once
#include "ordo/logger.hpp"

namespace nc {

ordo::Logger &logger();

} // namespace nc

#define NC_LOG(lvl, ...) ORDO_LOG(::nc::logger(), lvl, __VA_ARGS__)
