// SPDX-License-Identifier: Apache-2.0
// The one way Ordo reads an environment variable that picks a library to load, a layer,
// or a file to write (docs/environment.md, "Secure execution"): in a program the kernel
// runs in secure-execution mode (AT_SECURE: setuid, setgid, file capabilities) the
// variable is treated as unset, because whoever set it may not be trusted with the
// program's privileges.
#pragma once
#include <sys/auxv.h>

#include <cstdlib>

namespace ordo {

// True when the kernel marked this process for secure execution.
inline bool secure_execution() { return getauxval(AT_SECURE) != 0; }

// getenv, except that it answers null in secure-execution mode.
inline const char *secure_env(const char *name) {
#if defined(__GLIBC__)
  return ::secure_getenv(name);
#else
  return secure_execution() ? nullptr : std::getenv(name);
#endif
}

} // namespace ordo
