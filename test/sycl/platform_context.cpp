// SPDX-License-Identifier: Apache-2.0
// Platforms, devices and contexts as a SYCL program sees them: the info queries common
// programs make, the aspects that decide what they may do, and context construction.
#include "sycl_check.hpp"

#include <algorithm>

using namespace ordo_sycl;
namespace info = sycl::info;

template <class Desc> void show(Checker &c, const sycl::device &d, const std::string &name) {
  c.section("device." + name, [&] { c.info("device." + name, d.get_info<Desc>()); });
}

template <class Desc> void show_list(Checker &c, const sycl::device &d, const std::string &name) {
  c.section("device." + name, [&] {
    std::ostringstream os;
    for (const auto &v : d.get_info<Desc>()) os << v << ' ';
    c.info("device." + name, os.str());
  });
}

int main() {
  Checker c("ordo-sycl-platform-context");
  sycl::device dev = pick_device(c);
  sycl::platform plat = dev.get_platform();

  c.section("platform", [&] {
    c.check(!plat.get_info<info::platform::name>().empty(), "platform.name");
    c.check(!plat.get_info<info::platform::vendor>().empty(), "platform.vendor");
    c.info("platform.version", plat.get_info<info::platform::version>());
    std::vector<sycl::device> devs = plat.get_devices();
    c.check(std::find(devs.begin(), devs.end(), dev) != devs.end(), "platform.get_devices holds the device");
    c.check(dev.get_platform() == plat, "device.get_platform equals the platform");
    c.check(plat.get_backend() == dev.get_backend(), "platform.backend equals device.backend");
    std::vector<sycl::platform> plats = sycl::platform::get_platforms();
    c.check(std::find(plats.begin(), plats.end(), plat) != plats.end(), "platform::get_platforms holds it");
  });

  c.section("device.strings", [&] {
    c.check(!dev.get_info<info::device::name>().empty(), "device.name");
    c.check(!dev.get_info<info::device::vendor>().empty(), "device.vendor");
    c.check(!dev.get_info<info::device::driver_version>().empty(), "device.driver_version");
    c.info("device.version", dev.get_info<info::device::version>());
    c.info("device.driver_version", dev.get_info<info::device::driver_version>());
  });

  c.section("device.limits", [&] {
    const auto type = dev.get_info<info::device::device_type>();
    c.check(type == info::device_type::cpu || type == info::device_type::gpu || type == info::device_type::accelerator,
            "device.device_type is cpu, gpu or accelerator");
    c.info("device.is_cpu", dev.is_cpu());
    c.info("device.is_gpu", dev.is_gpu());
    const auto cus = dev.get_info<info::device::max_compute_units>();
    c.check(cus > 0, "device.max_compute_units > 0", std::to_string(cus));
    c.info("device.max_compute_units", cus);
    const auto global = dev.get_info<info::device::global_mem_size>();
    const auto max_alloc = dev.get_info<info::device::max_mem_alloc_size>();
    c.check(global > 0, "device.global_mem_size > 0");
    c.check(max_alloc > 0 && max_alloc <= global, "device.max_mem_alloc_size in (0, global_mem_size]",
            std::to_string(max_alloc) + " of " + std::to_string(global));
    c.info("device.global_mem_size", global);
    c.info("device.max_mem_alloc_size", max_alloc);
    c.check(dev.get_info<info::device::max_work_item_dimensions>() >= 3, "device.max_work_item_dimensions >= 3");
    const auto wg = dev.get_info<info::device::max_work_group_size>();
    c.check(wg > 0, "device.max_work_group_size > 0");
    const auto sizes = dev.get_info<info::device::max_work_item_sizes<3>>();
    c.check(sizes[0] > 0 && sizes[1] > 0 && sizes[2] > 0, "device.max_work_item_sizes<3> all > 0");
    c.info("device.max_work_group_size", wg);
    c.info("device.local_mem_size", dev.get_info<info::device::local_mem_size>());
    const auto addr_bits = dev.get_info<info::device::address_bits>();
    c.check(addr_bits == 64, "device.address_bits == 64", std::to_string(addr_bits));
    c.info("device.mem_base_addr_align", dev.get_info<info::device::mem_base_addr_align>());
    c.check(dev.get_info<info::device::is_available>(), "device.is_available");
  });

  // Queries the runtime answers from the adapter on first use; a refusal here is what a
  // program sees as an exception. Printed, not judged, except for the usual ones above.
  show<info::device::vendor_id>(c, dev, "vendor_id");
  show<info::device::max_clock_frequency>(c, dev, "max_clock_frequency");
  show<info::device::global_mem_cache_size>(c, dev, "global_mem_cache_size");
  show<info::device::max_num_sub_groups>(c, dev, "max_num_sub_groups");
  show_list<info::device::sub_group_sizes>(c, dev, "sub_group_sizes");
  c.section("device.sub_groups", [&] {
    // SYCL 2020: max_num_sub_groups is at least 1, and every device has a sub-group size.
    const auto most = dev.get_info<info::device::max_num_sub_groups>();
    c.check(most >= 1, "device.max_num_sub_groups >= 1", std::to_string(most));
    c.check(!dev.get_info<info::device::sub_group_sizes>().empty(), "device.sub_group_sizes is not empty");
  });
  show<info::device::partition_max_sub_devices>(c, dev, "partition_max_sub_devices");
  show<info::device::profiling_timer_resolution>(c, dev, "profiling_timer_resolution");
  show<info::device::printf_buffer_size>(c, dev, "printf_buffer_size");
  show<info::device::image_support>(c, dev, "image_support");

  c.section("device.aspects", [&] {
    c.check(dev.has(sycl::aspect::usm_device_allocations), "aspect usm_device_allocations");
    c.check(dev.has(sycl::aspect::usm_host_allocations), "aspect usm_host_allocations");
    c.check(dev.has(sycl::aspect::usm_shared_allocations), "aspect usm_shared_allocations");
    c.info("aspect.queue_profiling", dev.has(sycl::aspect::queue_profiling));
    c.info("aspect.ext_oneapi_async_memory_alloc", dev.has(sycl::aspect::ext_oneapi_async_memory_alloc));
    c.info("aspect.fp64", dev.has(sycl::aspect::fp64));
    c.info("aspect.fp16", dev.has(sycl::aspect::fp16));
    c.info("aspect.atomic64", dev.has(sycl::aspect::atomic64));
    c.info("aspect.online_compiler", dev.has(sycl::aspect::online_compiler));
  });

  c.section("device.root", [&] {
    c.expect_throw("device.parent_device of a root device throws",
                   [&] { (void)dev.get_info<info::device::parent_device>(); });
  });

  // Sub-devices (urDevicePartition) where the device offers equal partitions: each is a
  // device of its own, with its parent, a queue and USM.
  c.section("device.sub_devices", [&] {
    const auto kinds = dev.get_info<info::device::partition_properties>();
    const bool equally =
        std::find(kinds.begin(), kinds.end(), info::partition_property::partition_equally) != kinds.end();
    if (!equally || dev.get_info<info::device::max_compute_units>() < 2) {
      c.skip("device.create_sub_devices", "the device offers no equal partition of 2 or more compute units");
      return;
    }
    std::vector<sycl::device> subs = dev.create_sub_devices<info::partition_property::partition_equally>(1);
    c.check(subs.size() >= 2, "create_sub_devices<partition_equally>(1) gives one per compute unit",
            std::to_string(subs.size()));
    for (const sycl::device &s : subs) {
      c.check(s.get_info<info::device::parent_device>() == dev, "sub-device's parent_device is the device");
      c.check(s.get_info<info::device::max_compute_units>() == 1, "sub-device has 1 compute unit");
    }
    sycl::queue sq(subs.back());
    int *p = sycl::malloc_device<int>(256, sq);
    std::vector<int> host(256, 0);
    sq.fill(p, 42, 256).wait();
    sq.memcpy(host.data(), p, 256 * sizeof(int)).wait();
    c.check(std::all_of(host.begin(), host.end(), [](int v) { return v == 42; }),
            "fill and memcpy on a sub-device's queue");
    sycl::free(p, sq);
  });

  c.section("context", [&] {
    sycl::context one(dev);
    std::vector<sycl::device> in = one.get_devices();
    c.check(in.size() == 1 && in[0] == dev, "context(device).get_devices is {device}");
    c.check(one.get_platform() == plat, "context(device).get_platform");
    c.check(one.get_backend() == dev.get_backend(), "context(device).get_backend");
    c.check(one.get_info<info::context::devices>().size() == 1, "context info devices");
    c.check(one.get_info<info::context::platform>() == plat, "context info platform");

    sycl::context from_list(std::vector<sycl::device>{dev});
    c.check(from_list != one, "two contexts are different objects");
    sycl::context copy = one;
    c.check(copy == one, "a copied context compares equal");

    sycl::queue q(one, dev);
    c.check(q.get_context() == one, "queue(context, device).get_context");
    c.check(q.get_device() == dev, "queue(context, device).get_device");
    sycl::queue q2(dev);
    c.check(q2.get_context().get_devices().size() >= 1, "queue(device) has a context");
    c.info("queue(device) uses the platform default context", q2.get_context() == plat.khr_get_default_context());
  });

  return c.finish();
}
