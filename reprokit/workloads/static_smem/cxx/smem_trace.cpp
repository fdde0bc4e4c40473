// The dynamic shared memory a kernel launch really asks for, seen from inside the CUDA driver API.
//
// A CUPTI injection library: load it with CUDA_INJECTION64_PATH=libsmem_trace.so (no change to the program).
// The CUDA runtime reaches the driver through cuGetProcAddress, not dynamic symbols, so an LD_PRELOAD shim of
// cuFuncSetAttribute sees nothing; CUPTI's driver-API callbacks do. Recorded, one JSON object per line, appended
// to $SMEM_TRACE_OUT (flushed per line, so a reader can take the lines after each step):
//   - cuKernelSetAttribute / cuFuncSetAttribute with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (attrib 8):
//     what cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, N) asks for, and the driver's answer;
//   - cuLaunchKernel(_ptsz) / cuLaunchKernelEx(_ptsz): sharedMemBytes of the launch, the grid and block, the
//     kernel's own attributes read back at launch (max dynamic and static shared bytes), and the launch's result.
// Kernel names are written mangled (only [A-Za-z0-9_$.] characters, so no JSON escaping is needed).
//
// The three driver functions it calls itself (names, attributes) are taken from libcuda.so.1 with dlsym, so it
// links against libcupti only and builds on a machine without a driver:
//   g++ -shared -fPIC -O2 -I$CUDA/targets/x86_64-linux/include smem_trace.cpp
//       -L$CUDA/targets/x86_64-linux/lib -lcupti -ldl -o libsmem_trace.so

#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

std::mutex g_lock;
FILE* g_out = nullptr;
unsigned long long g_seq = 0;
thread_local bool t_inside = false;  // driver calls made from the callback call it again; ignore those
decltype(&cuKernelGetName) p_kernel_name = nullptr;
decltype(&cuFuncGetName) p_func_name = nullptr;
decltype(&cuFuncGetAttribute) p_func_attribute = nullptr;

const char* safe_name(const char* name) {
  if (name == nullptr) return "";
  for (const char* p = name; *p; ++p) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
              c == '.';
    if (!ok) return "<unprintable>";
  }
  return name;
}

void emit(const char* line) {
  std::lock_guard<std::mutex> guard(g_lock);
  if (g_out == nullptr) return;
  std::fprintf(g_out, "{\"seq\":%llu,%s}\n", g_seq++, line);
  std::fflush(g_out);
}

int result_of(const CUpti_CallbackData* cb) {
  return cb->functionReturnValue ? static_cast<int>(*static_cast<CUresult*>(cb->functionReturnValue)) : -1;
}

void on_set_attribute(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  char line[4096];
  const char* name = nullptr;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuKernelSetAttribute) {
    auto* p = static_cast<const cuKernelSetAttribute_params*>(cb->functionParams);
    if (p->attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return;
    if (p_kernel_name) p_kernel_name(&name, p->kernel);
    std::snprintf(line, sizeof line,
                  "\"api\":\"cuKernelSetAttribute\",\"attrib\":%d,\"value\":%d,\"handle\":\"%p\",\"result\":%d,"
                  "\"name\":\"%.3500s\"",
                  static_cast<int>(p->attrib), p->val, static_cast<void*>(p->kernel), result_of(cb), safe_name(name));
  } else {
    auto* p = static_cast<const cuFuncSetAttribute_params*>(cb->functionParams);
    if (p->attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return;
    if (p_func_name) p_func_name(&name, p->hfunc);
    std::snprintf(line, sizeof line,
                  "\"api\":\"cuFuncSetAttribute\",\"attrib\":%d,\"value\":%d,\"handle\":\"%p\",\"result\":%d,"
                  "\"name\":\"%.3500s\"",
                  static_cast<int>(p->attrib), p->value, static_cast<void*>(p->hfunc), result_of(cb), safe_name(name));
  }
  emit(line);
}

void on_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  CUfunction f = nullptr;
  unsigned shared = 0, grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  const char* api = "cuLaunchKernel";
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz) {
    auto* p = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
    f = p->f;
    shared = p->sharedMemBytes;
    grid[0] = p->gridDimX, grid[1] = p->gridDimY, grid[2] = p->gridDimZ;
    block[0] = p->blockDimX, block[1] = p->blockDimY, block[2] = p->blockDimZ;
  } else {
    auto* p = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
    api = "cuLaunchKernelEx";
    f = p->f;
    if (p->config != nullptr) {
      shared = p->config->sharedMemBytes;
      grid[0] = p->config->gridDimX, grid[1] = p->config->gridDimY, grid[2] = p->config->gridDimZ;
      block[0] = p->config->blockDimX, block[1] = p->config->blockDimY, block[2] = p->config->blockDimZ;
    }
  }
  int max_dynamic = -1, static_bytes = -1;
  if (p_func_attribute) {
    p_func_attribute(&max_dynamic, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
    p_func_attribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
  }
  char line[4096];
  std::snprintf(line, sizeof line,
                "\"api\":\"%s\",\"shared_mem_bytes\":%u,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
                "\"func_max_dynamic_smem\":%d,\"func_static_smem\":%d,\"handle\":\"%p\",\"result\":%d,"
                "\"name\":\"%.3300s\"",
                api, shared, grid[0], grid[1], grid[2], block[0], block[1], block[2], max_dynamic, static_bytes,
                static_cast<void*>(f), result_of(cb), safe_name(cb->symbolName));
  emit(line);
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || t_inside) return;
  auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite != CUPTI_API_EXIT) return;  // at exit the driver's answer (the CUresult) is known
  t_inside = true;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuKernelSetAttribute:
    case CUPTI_DRIVER_TRACE_CBID_cuFuncSetAttribute:
      on_set_attribute(cbid, cb);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      on_launch(cbid, cb);
      break;
    default:
      break;
  }
  t_inside = false;
}

}  // namespace

extern "C" int InitializeInjection(void) {
  const char* path = std::getenv("SMEM_TRACE_OUT");
  g_out = std::fopen(path && *path ? path : "smem_trace.jsonl", "a");
  if (g_out == nullptr) return 0;
  if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    p_kernel_name = reinterpret_cast<decltype(p_kernel_name)>(dlsym(driver, "cuKernelGetName"));
    p_func_name = reinterpret_cast<decltype(p_func_name)>(dlsym(driver, "cuFuncGetName"));
    p_func_attribute = reinterpret_cast<decltype(p_func_attribute)>(dlsym(driver, "cuFuncGetAttribute"));
  }
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, callback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(g_out, "{\"seq\":-1,\"api\":\"cuptiSubscribe\",\"result\":1}\n");
    std::fflush(g_out);
    return 0;
  }
  const CUpti_CallbackId ids[] = {
      CUPTI_DRIVER_TRACE_CBID_cuKernelSetAttribute, CUPTI_DRIVER_TRACE_CBID_cuFuncSetAttribute,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
  };
  for (CUpti_CallbackId id : ids) cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  std::fprintf(g_out, "{\"seq\":-1,\"api\":\"InitializeInjection\",\"result\":0}\n");
  std::fflush(g_out);
  return 1;
}
