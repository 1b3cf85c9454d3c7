// SPDX-License-Identifier: Apache-2.0
// A mutex that spins briefly before it sleeps, for short critical sections that many
// threads enter (a pool core shared by every queue of a device, the ordering record).
// With std::mutex, 16 threads each freeing and allocating on their own queue spent most
// of their time handing the lock over through the kernel (docs/performance-history.md,
// "Thread scale and out-of-order queues"); glibc's adaptive mutex tries the lock a
// bounded number of times before it sleeps.
// Elsewhere it is an ordinary mutex. Meets Lockable, so std::lock_guard works.
#pragma once

#include <pthread.h>

namespace ordo::pool {

class adaptive_mutex {
public:
  adaptive_mutex() noexcept {
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&m_, &attr);
    pthread_mutexattr_destroy(&attr);
#else
    pthread_mutex_init(&m_, nullptr);
#endif
  }
  ~adaptive_mutex() { pthread_mutex_destroy(&m_); }
  adaptive_mutex(const adaptive_mutex &) = delete;
  adaptive_mutex &operator=(const adaptive_mutex &) = delete;

  void lock() noexcept { pthread_mutex_lock(&m_); }
  bool try_lock() noexcept { return pthread_mutex_trylock(&m_) == 0; }
  void unlock() noexcept { pthread_mutex_unlock(&m_); }

private:
  pthread_mutex_t m_;
};

} // namespace ordo::pool
