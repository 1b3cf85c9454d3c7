// SPDX-License-Identifier: Apache-2.0
// The adapter's log: UR_LOG_NATIVE_CPU (ordo::Logger) plus the callback a user sets
// with urAdapterSetLoggerCallback (its second sink: ordo/adapter_logging.hpp).
#pragma once
#include "ordo/logger.hpp"

namespace ordo::native_cpu {

ordo::Logger &logger(); // adapter.cpp

} // namespace ordo::native_cpu

#define NC_LOG(lvl, ...) ORDO_LOG(::ordo::native_cpu::logger(), lvl, __VA_ARGS__)
