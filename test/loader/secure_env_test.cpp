// SPDX-License-Identifier: Apache-2.0
// Item 4 of issue 22: every variable that picks a library, a layer or a log file is read
// with ordo::secure_env, which a setuid or setgid program does not obey
// (docs/environment.md, "Secure execution").
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <initializer_list>
#include <filesystem>

#include "helpers.hpp"
#include "ordo/secure_env.hpp"

using namespace loader_test;
namespace fs = std::filesystem;

TEST(SecureEnv, ReadsTheEnvironmentOfAnOrdinaryProcess) {
  ASSERT_FALSE(ordo::secure_execution()) << "the test itself runs setuid or setgid";
  {
    EnvVar set("ORDO_TEST_SECURE_ENV", "value");
    ASSERT_NE(ordo::secure_env("ORDO_TEST_SECURE_ENV"), nullptr);
    EXPECT_STREQ(ordo::secure_env("ORDO_TEST_SECURE_ENV"), "value");
  }
  EXPECT_EQ(ordo::secure_env("ORDO_TEST_SECURE_ENV"), nullptr);
}

namespace {

std::string run(const std::string &command) {
  std::string out;
  if (FILE *p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// A directory every user can read, with the probe, a loader copy that finds no adapter
// beside itself, a mock adapter to force-load, and a directory anyone may write the log
// file into (so that a privileged probe that obeyed UR_LOG_LOADER could create it).
struct World {
  std::string root, loader, mock, log_dir;
  World() {
    std::string tmpl = (fs::temp_directory_path() / "ordo-secure-env-XXXXXX").string();
    if (!mkdtemp(&tmpl[0])) return;
    root = tmpl;
    chmod(root.c_str(), 0755);
    fs::create_directories(root + "/loader");
    loader = copy_to(loader_library(), root + "/loader", "libur_loader.so.0");
    mock = copy_to(mock_library(), root, "libur_adapter_planted.so.0");
    log_dir = root + "/logs";
    fs::create_directories(log_dir);
    chmod(log_dir.c_str(), 01777);
  }
  ~World() {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
  // A copy of the probe, owned by uid:gid with `mode`.
  std::string probe(const std::string &name, uid_t uid, gid_t gid, mode_t mode) {
    std::string path = copy_to(ORDO_TEST_SECURE_ENV_PROBE, root, name);
    if (chown(path.c_str(), uid, gid) != 0 || chmod(path.c_str(), mode) != 0) return "";
    return path;
  }
};

struct Outcome {
  std::string out;
  bool secure, planted_loaded, log_written, traced;
};

Outcome run_probe(World &w, const std::string &probe, const std::string &tag) {
  std::string log = w.log_dir + "/" + tag + ".log";
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", w.mock.c_str());
  EnvVar logging("UR_LOG_LOADER", ("level:info;output:file," + log).c_str());
  EnvVar layers("UR_ENABLE_LAYERS", "UR_LAYER_TRACING");
  EnvVar search("UR_ADAPTERS_SEARCH_PATH", w.root.c_str());
  EnvVar selector("ONEAPI_DEVICE_SELECTOR", "native_cpu:*");
  EnvVar opencl("ORDO_OPENCL_LIBRARY", w.mock.c_str());
  EnvVar hip("ORDO_HIP_LIBRARY", w.mock.c_str());
  Outcome o;
  o.out = run(probe + " " + w.loader);
  o.secure = o.out.find("secure=1") != std::string::npos;
  o.planted_loaded = o.out.find("adapter " + w.mock) != std::string::npos;
  o.log_written = fs::exists(log);
  o.traced = o.out.find("urAdapterGet(") != std::string::npos;
  return o;
}

void expect_ignored(World &w, const std::string &probe, const char *what) {
  Outcome o = run_probe(w, probe, what);
  if (!o.secure)
    GTEST_SKIP() << "the " << what << " probe did not run in secure-execution mode (a nosuid "
                 << "file system, or no_new_privs?):\n"
                 << o.out;
  for (const char *name : {"UR_ADAPTERS_FORCE_LOAD", "UR_ADAPTERS_SEARCH_PATH", "UR_ENABLE_LAYERS", "UR_LOG_LOADER",
                           "ONEAPI_DEVICE_SELECTOR", "ORDO_OPENCL_LIBRARY", "ORDO_HIP_LIBRARY"})
    EXPECT_NE(o.out.find(std::string("env ") + name + "=(unset)"), std::string::npos) << name << "\n" << o.out;
  EXPECT_FALSE(o.planted_loaded) << o.out;
  EXPECT_FALSE(o.log_written) << o.out;
  EXPECT_FALSE(o.traced) << o.out;
}

} // namespace

// The same environment, obeyed by a plain copy: what the privileged copies must not do.
TEST(SecureEnv, OrdinaryProbeObeysTheVariables) {
  World w;
  ASSERT_FALSE(w.root.empty());
  std::string probe = w.probe("probe_plain", geteuid(), getegid(), 0755);
  ASSERT_FALSE(probe.empty());
  Outcome o = run_probe(w, probe, "plain");
  EXPECT_FALSE(o.secure) << o.out;
  EXPECT_TRUE(o.planted_loaded) << o.out;
  EXPECT_TRUE(o.log_written) << o.out;
  EXPECT_TRUE(o.traced) << o.out;
}

TEST(SecureEnv, SetuidProbeIgnoresTheVariables) {
  if (geteuid() != 0) GTEST_SKIP() << "making a setuid copy for another user needs root";
  const passwd *nobody = getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user 'nobody' to own the setuid copy";
  World w;
  ASSERT_FALSE(w.root.empty());
  std::string probe = w.probe("probe_setuid", nobody->pw_uid, getegid(), 04755);
  ASSERT_FALSE(probe.empty()) << "chown/chmod of the setuid copy failed";
  expect_ignored(w, probe, "setuid");
}

TEST(SecureEnv, SetgidProbeIgnoresTheVariables) {
  if (geteuid() != 0) GTEST_SKIP() << "making a setgid copy for another group needs root";
  const group *other = getgrnam("nogroup");
  if (!other) other = getgrnam("nobody");
  if (!other) GTEST_SKIP() << "no group 'nogroup' or 'nobody' to own the setgid copy";
  if (other->gr_gid == getgid()) GTEST_SKIP() << "the test already runs in group " << other->gr_name;
  World w;
  ASSERT_FALSE(w.root.empty());
  std::string probe = w.probe("probe_setgid", geteuid(), other->gr_gid, 02755);
  ASSERT_FALSE(probe.empty()) << "chown/chmod of the setgid copy failed";
  expect_ignored(w, probe, "setgid");
}
