// SPDX-License-Identifier: Apache-2.0
// The conformance suite's fixtures and helpers (docs/conformance.md).
//
// Every test is parameterized over the devices the loader finds through
// urAdapterGet / urPlatformGet / urDeviceGetSelected, so ONEAPI_DEVICE_SELECTOR decides
// what runs. Fixtures build up the objects a test needs: a device, a context, a queue,
// the test-kernel program. Each fixture's SetUp first skips a test listed in
// known_failures.cpp for the device's adapter.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "discovery.hpp"
#include "info_tables.hpp"
#include "test_program.hpp"
#include "ur_api.h"

// gtest prints results by name through this (found by argument-dependent lookup).
inline void PrintTo(ur_result_t r, std::ostream *os) { *os << urinfo::result_name(r); }

namespace urinfo {
inline void PrintTo(const FoundDevice &d, std::ostream *os) { *os << d.label(); }
inline void PrintTo(const InfoQuery *q, std::ostream *os) { *os << (q ? q->name : "null"); }
} // namespace urinfo

#define ASSERT_SUCCESS(expr) ASSERT_EQ(UR_RESULT_SUCCESS, (expr))
#define EXPECT_SUCCESS(expr) EXPECT_EQ(UR_RESULT_SUCCESS, (expr))
#define ASSERT_EQ_RESULT(expected, expr) ASSERT_EQ((expected), (expr))
#define EXPECT_EQ_RESULT(expected, expr) EXPECT_EQ((expected), (expr))

// An optional entry point: UNSUPPORTED_FEATURE skips the test with the reason.
#define ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(expr)                                                                       \
  do {                                                                                                                 \
    ur_result_t conf_r_ = (expr);                                                                                      \
    if (conf_r_ == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)                                                                \
      GTEST_SKIP() << #expr " is not supported on " << this->found().label();                                          \
    ASSERT_EQ(UR_RESULT_SUCCESS, conf_r_);                                                                             \
  } while (0)

// `expr` must give one of the listed results.
#define ASSERT_RESULT_IN(expr, ...)                                                                                    \
  do {                                                                                                                 \
    ur_result_t conf_r_ = (expr);                                                                                      \
    ASSERT_TRUE(::conf::result_in(conf_r_, {__VA_ARGS__}))                                                             \
        << #expr " gave " << urinfo::result_name(conf_r_) << ", expected one of "                                      \
        << ::conf::results_text({__VA_ARGS__});                                                                        \
  } while (0)

// Negative tests of the parameter rules need the validation layer.
#define CONF_REQUIRE_VALIDATION()                                                                                      \
  do {                                                                                                                 \
    if (!::conf::validation_enabled())                                                                                 \
      GTEST_SKIP() << "needs UR_LAYER_PARAMETER_VALIDATION: " << ::conf::validation_status();                          \
  } while (0)

// A derived fixture's SetUp starts with this.
#define CONF_BASE_SETUP(Base)                                                                                          \
  do {                                                                                                                 \
    Base::SetUp();                                                                                                     \
    if (this->IsSkipped() || this->HasFatalFailure()) return;                                                          \
  } while (0)

namespace conf {

// The devices under test, found once (the first call initialises the loader).
const std::vector<urinfo::FoundDevice> &devices();
// Why the list is empty, for the skip message.
std::string why_no_devices();
bool validation_enabled();
std::string validation_status();
// The build tree's test-kernel folder (ORDO_KERNEL_DIR, or the environment's).
const std::string &kernel_dir();

bool result_in(ur_result_t r, std::initializer_list<ur_result_t> allowed);
std::string results_text(std::initializer_list<ur_result_t> allowed);

// The known-failure list (known_failures.cpp): the reason a test is listed for this
// backend, or nullptr. `test` is "Suite.Test/param" (gtest's names, no instantiation prefix).
const char *known_failure(const std::string &backend, const std::string &test);
// Every entry, for the docs check and the report.
struct KnownFailure {
  const char *backend; // "native_cpu", ... or "*"
  const char *pattern; // glob over "Suite.Test" or "Suite.Test/param"
  const char *reason;
};
const std::vector<KnownFailure> &known_failures();

// gtest names may hold only letters, digits and '_'.
std::string sanitize(const std::string &s);
std::string device_param_name(const urinfo::FoundDevice &d);

// ---- parameters -----------------------------------------------------------------

inline const urinfo::FoundDevice &device_of(const urinfo::FoundDevice &d) { return d; }
template <class T> const urinfo::FoundDevice &device_of(const std::tuple<urinfo::FoundDevice, T> &p) {
  return std::get<0>(p);
}

struct DeviceName {
  std::string operator()(const ::testing::TestParamInfo<urinfo::FoundDevice> &info) const {
    return device_param_name(info.param);
  }
};

// For (device, value) parameters: the value's name comes from `Namer`.
template <class T, class Namer> struct DeviceAndName {
  std::string operator()(const ::testing::TestParamInfo<std::tuple<urinfo::FoundDevice, T>> &info) const {
    return device_param_name(std::get<0>(info.param)) + "__" + sanitize(Namer()(std::get<1>(info.param)));
  }
};

struct QueryNamer {
  std::string operator()(const urinfo::InfoQuery *q) const { return q->name; }
};

// All queries of one *_info_t table, as parameters.
std::vector<const urinfo::InfoQuery *> queries_of(const char *info_enum);

// ---- fixtures ---------------------------------------------------------------------

template <class Param> class DeviceFixture : public ::testing::TestWithParam<Param> {
public:
  const urinfo::FoundDevice &found() const { return device_of(this->GetParam()); }
  ur_device_handle_t device() const { return found().device; }
  ur_platform_handle_t platform() const { return found().platform; }
  ur_adapter_handle_t adapter() const { return found().adapter; }
  ur_backend_t backend() const { return found().backend; }

protected:
  void SetUp() override;
};

template <class Param> class ContextFixture : public DeviceFixture<Param> {
public:
  ur_context_handle_t context = nullptr;

protected:
  void SetUp() override {
    CONF_BASE_SETUP(DeviceFixture<Param>);
    ur_device_handle_t dev = this->device();
    ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &context));
  }
  void TearDown() override {
    if (context) {
      EXPECT_SUCCESS(urContextRelease(context));
    }
    DeviceFixture<Param>::TearDown();
  }
};

template <class Param> class QueueFixture : public ContextFixture<Param> {
public:
  ur_queue_handle_t queue = nullptr;

protected:
  // Flags of the fixture's queue; a derived fixture may ask for more.
  virtual ur_queue_flags_t queue_flags() const { return 0; }
  void SetUp() override;
  void TearDown() override {
    if (queue) {
      EXPECT_SUCCESS(urQueueFinish(queue));
      EXPECT_SUCCESS(urQueueRelease(queue));
    }
    ContextFixture<Param>::TearDown();
  }
};

// A queue that runs commands in any order their dependencies allow.
template <class Param> class OutOfOrderQueueFixture : public QueueFixture<Param> {
protected:
  ur_queue_flags_t queue_flags() const override { return UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE; }
};

// The built test-kernel program (test/kernels/README.md) and an in-order queue.
template <class Param> class ProgramFixture : public QueueFixture<Param> {
public:
  ur_program_handle_t program = nullptr;
  std::string program_path;

protected:
  void SetUp() override {
    CONF_BASE_SETUP(QueueFixture<Param>);
    urinfo::TestProgram p = urinfo::load_test_program(kernel_dir(), this->context, this->found());
    if (!p.skip_reason.empty()) GTEST_SKIP() << p.skip_reason;
    ASSERT_TRUE(p.ok()) << p.problem();
    program = p.program;
    program_path = p.path;
  }
  void TearDown() override {
    if (program) {
      EXPECT_SUCCESS(urProgramRelease(program));
    }
    QueueFixture<Param>::TearDown();
  }

public:
  // A kernel of the program; the caller releases it.
  ur_kernel_handle_t make_kernel(const char *name) {
    ur_kernel_handle_t k = nullptr;
    ur_result_t r = urKernelCreate(program, name, &k);
    EXPECT_EQ(UR_RESULT_SUCCESS, r) << "urKernelCreate(" << name << ")";
    return k;
  }
};

using DeviceTest = DeviceFixture<urinfo::FoundDevice>;
using ContextTest = ContextFixture<urinfo::FoundDevice>;
using QueueTest = QueueFixture<urinfo::FoundDevice>;
using OutOfOrderQueueTest = OutOfOrderQueueFixture<urinfo::FoundDevice>;
using ProgramTest = ProgramFixture<urinfo::FoundDevice>;
template <class T> using DeviceTestWith = DeviceFixture<std::tuple<urinfo::FoundDevice, T>>;
template <class T> using ContextTestWith = ContextFixture<std::tuple<urinfo::FoundDevice, T>>;
template <class T> using QueueTestWith = QueueFixture<std::tuple<urinfo::FoundDevice, T>>;
template <class T> using ProgramTestWith = ProgramFixture<std::tuple<urinfo::FoundDevice, T>>;

// ---- small helpers ----------------------------------------------------------------

// Skips unless the device runs out-of-order queues; returns false when skipping.
bool device_has_queue_flag(ur_device_handle_t device, ur_queue_flag_t flag);

// Queue creation with flags (0: in-order, no profiling).
ur_result_t make_queue(ur_context_handle_t context, ur_device_handle_t device, ur_queue_flags_t flags,
                       ur_queue_handle_t *queue);

// USM capability of the device for one kind (host/device/shared): access bit set.
bool usm_supported(ur_device_handle_t device, ur_usm_type_t kind);
ur_result_t usm_alloc(ur_context_handle_t context, ur_device_handle_t device, ur_usm_type_t kind, size_t size,
                      void **ptr, uint32_t align = 0);
const char *usm_kind_name(ur_usm_type_t kind);

// Reads a fixed-size info value; the result of the call.
template <class T> ur_result_t info(ur_device_handle_t d, ur_device_info_t q, T &out) {
  return urDeviceGetInfo(d, q, sizeof(T), &out, nullptr);
}
uint32_t reference_count(ur_context_handle_t h);
uint32_t reference_count(ur_queue_handle_t h);
uint32_t reference_count(ur_event_handle_t h);
uint32_t reference_count(ur_program_handle_t h);
uint32_t reference_count(ur_kernel_handle_t h);
uint32_t reference_count(ur_device_handle_t h);
uint32_t reference_count(ur_adapter_handle_t h);
ur_event_status_t event_status(ur_event_handle_t e);

// Kernel arguments for urEnqueueKernelLaunchWithArgsExp.
ur_exp_kernel_arg_properties_t arg_pointer(uint32_t index, const void *ptr);
ur_exp_kernel_arg_properties_t arg_value(uint32_t index, size_t size, const void *value);
ur_exp_kernel_arg_properties_t arg_local(uint32_t index, size_t size);

// ---- the generic *GetInfo check ---------------------------------------------------

// Any *GetInfo call bound to its object.
using InfoCall = std::function<ur_result_t(uint32_t id, size_t size, void *value, size_t *size_ret)>;

struct InfoCheckOptions {
  // Results besides SUCCESS that are a correct answer for this query (e.g.
  // UNSUPPORTED_ENUMERATION, or INVALID_QUEUE for an on-device-only queue query).
  std::vector<ur_result_t> also_allowed{UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION};
  // A null handle is a correct answer (a root device's parent, a host allocation's device).
  bool null_handle_ok = false;
  // A char[] that is bytes, not a string: no terminator, possibly empty (UR_PROGRAM_INFO_IL).
  bool raw_bytes = false;
};

// Checks one query end to end: the size query, the value query with the exact size and
// with a larger buffer, a buffer one byte short (INVALID_SIZE, buffer untouched), the
// size reported against the query's type, and the value against the type (known
// enumerators, known flag bits, 0/1 booleans, terminated strings, non-null handles).
// `value` receives the bytes; `result` the first call's result.
void check_info_query(const urinfo::InfoQuery &q, const InfoCall &call, const InfoCheckOptions &options,
                      std::vector<unsigned char> *value = nullptr, ur_result_t *result = nullptr);

// ---- fixture bodies ----------------------------------------------------------------

// Set ORDO_CONFORMANCE_RUN_KNOWN_FAILURES=1 to run listed tests anyway (to see whether
// one has been fixed).
bool run_known_failures();

template <class Param> void DeviceFixture<Param>::SetUp() {
  const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string suite = info->test_suite_name();
  // Drop the instantiation prefix ("Prefix/Suite"), if any.
  size_t slash = suite.rfind('/');
  if (slash != std::string::npos) suite = suite.substr(slash + 1);
  const char *why = known_failure(found().backend_name, suite + "." + info->name());
  if (why && !run_known_failures()) GTEST_SKIP() << "known failure on " << found().backend_name << ": " << why;
}

template <class Param> void QueueFixture<Param>::SetUp() {
  CONF_BASE_SETUP(ContextFixture<Param>);
  const ur_queue_flags_t flags = queue_flags();
  for (ur_queue_flag_t f : {UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, UR_QUEUE_FLAG_PROFILING_ENABLE})
    if ((flags & f) && !device_has_queue_flag(this->device(), f))
      GTEST_SKIP() << this->found().label() << " does not offer " << urinfo::enumerator_name("ur_queue_flags_t", f)
                   << " (UR_DEVICE_INFO_QUEUE_PROPERTIES)";
  ASSERT_SUCCESS(make_queue(this->context, this->device(), flags, &queue));
}

} // namespace conf

// Instantiates a device-parameterized suite over every device found.
#define CONF_INSTANTIATE_DEVICE_SUITE(Suite)                                                                           \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite);                                                                \
  INSTANTIATE_TEST_SUITE_P(, Suite, ::testing::ValuesIn(::conf::devices()), ::conf::DeviceName{})

// ... over every (device, value) pair; Namer turns a value into a name.
#define CONF_INSTANTIATE_DEVICE_SUITE_WITH(Suite, T, Values, Namer)                                                    \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite);                                                                \
  INSTANTIATE_TEST_SUITE_P(, Suite, ::testing::Combine(::testing::ValuesIn(::conf::devices()), Values),                \
                           (::conf::DeviceAndName<T, Namer>{}))
