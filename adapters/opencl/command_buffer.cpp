// urCommandBuffer*Exp and urEnqueueCommandBufferExp on every OpenCL device: the shared
// layer records the commands and each enqueue replays them as OpenCL commands through
// this adapter's own entry points, each waiting for its sync points' events. This
// works the same with or without cl_khr_command_buffer (PoCL has none); the extension
// is not used (docs/opencl.md says why).
#include "command_buffer.hpp"

#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"

namespace ordo::ocl {

namespace {

ur_pfnDeviceGetInfo_t g_device_info = nullptr; // the adapter's own (device_info.cpp)

// The command-buffer queries, answered for the recorder; everything else as before.
ur_result_t UR_APICALL deviceGetInfo(ur_device_handle_t hDevice, ur_device_info_t propName, size_t propSize,
                                     void *pPropValue, size_t *pPropSizeRet) {
  switch (propName) {
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP:
  case UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP:
  case UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP:
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP: {
    // Handle and argument checks stay the adapter's: ask it the same question first.
    if (ur_result_t r = g_device_info(hDevice, propName, propSize, pPropValue, pPropSizeRet)) return r;
    ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
    if (propName == UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP) return out.boolean(true);
    if (propName == UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP) return out.boolean(ordo::cb::kEventSupport);
    if (propName == UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP) return out.boolean(ordo::cb::kSubgraphSupport);
    return out.value(ordo::cb::kUpdateCapabilities);
  }
  default: return g_device_info(hDevice, propName, propSize, pPropValue, pPropSizeRet);
  }
}

} // namespace

void fill_command_buffer_table(ur_dditable_t &t) {
  ordo::cb::adapter_hooks hooks;
  hooks.host_functions = true; // urEnqueueHostTaskExp (host_task.cpp)
  ordo::cb::install_entry_points(t, hooks);
  g_device_info = t.Device.pfnGetInfo;
  t.Device.pfnGetInfo = deviceGetInfo;
}

} // namespace ordo::ocl
