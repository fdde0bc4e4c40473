/* Test double of the CUDA driver (libcuda.so.1): one kind of GPU, described by the environment.
 *
 * It answers the driver API calls reprokit's workloads make through ctypes (reprokit/workloads/smem_probe.py,
 * fingerprint.py) as the real driver does, and fails where the real driver fails: a function asking for more
 * dynamic shared memory than the opt-in limit (cuFuncSetAttribute), or a launch asking for more than the function
 * allows, is CUDA_ERROR_INVALID_VALUE. It runs no GPU code: a PTX module is read for its entries and target, and
 * the one kernel whose effect it knows (the smem-probe's touch_smem) is carried out on the host. See README.md.
 *
 *   LIBCUDA_DOUBLE_ARCH         sm120 (default), sm121, sm100 or sm90: the device and its limits
 *   LIBCUDA_DOUBLE_COUNT        devices (default 1; 0: cuInit answers CUDA_ERROR_NO_DEVICE)
 *   LIBCUDA_DOUBLE_OPTIN_BYTES  opt-in shared memory per block (default: the arch's)
 *   LIBCUDA_DOUBLE_SM_BYTES     shared memory per multiprocessor (default: the arch's)
 *   LIBCUDA_DOUBLE_NAME         the device's name (default: the arch's, marked as this double)
 *
 * Build: gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o libcuda.so.1 -Wl,-soname,libcuda.so.1 libcuda.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct { unsigned char bytes[16]; } CUuuid;

enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_NO_BINARY_FOR_GPU = 209, CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_NOT_SUPPORTED = 801,
};

static const struct { int code; const char *name, *text; } ERRORS[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

/* The devices this double can be: name, compute capability, multiprocessors, shared memory (cuda.h attributes). */
static const struct arch {
    const char *arch, *name;
    int major, minor, multiprocessors, optin_bytes, per_sm_bytes;
    long long total_bytes;
} ARCHES[] = {
    {"sm120", "NVIDIA RTX PRO 6000 Blackwell (reprokit test double)", 12, 0, 188, 101376, 102400, 97887Ull << 20},
    {"sm121", "NVIDIA GB10 (reprokit test double)", 12, 1, 48, 101376, 102400, 122572Ull << 20},
    {"sm100", "NVIDIA B200 (reprokit test double)", 10, 0, 148, 232448, 233472, 183359Ull << 20},
    {"sm90", "NVIDIA H200 (reprokit test double)", 9, 0, 132, 232448, 233472, 143771Ull << 20},
};

#define DRIVER_API_VERSION 13000 /* cuDriverGetVersion of the R580 driver */
#define STATIC_SMEM_PER_BLOCK 49152 /* without opt-in */
#define RESERVED_SMEM_PER_BLOCK 1024
#define MAX_THREADS_PER_BLOCK 1024
#define MAX_ENTRIES 16
#define MAX_ALLOCATIONS 64

static struct device {
    struct arch arch;
    int count;
} dev;
static int initialized;
static int sticky_error; /* as the real driver, an illegal access poisons the context until it is torn down */

struct function {
    char name[128];
    int max_dynamic_smem_bytes;
};
struct module {
    int entries;
    struct function functions[MAX_ENTRIES];
};
struct context { int device; };
static struct context contexts[8];
static struct context *current;
static struct { void *ptr; size_t bytes; } allocations[MAX_ALLOCATIONS];

static int env_int(const char *key, int fallback, int *ok) {
    const char *text = getenv(key);
    if (!text || !*text) return fallback;
    char *end;
    long value = strtol(text, &end, 10);
    if (*end || value < 0 || value > 1 << 30) {
        fprintf(stderr, "libcuda double: %s=%s: expected a whole number\n", key, text);
        *ok = 0;
    }
    return (int)value;
}

CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    const char *arch = getenv("LIBCUDA_DOUBLE_ARCH");
    const struct arch *found = NULL;
    for (size_t i = 0; i < sizeof ARCHES / sizeof *ARCHES; i++)
        if (!arch || !*arch ? i == 0 : strcmp(arch, ARCHES[i].arch) == 0) found = &ARCHES[i];
    if (!found) {
        fprintf(stderr, "libcuda double: LIBCUDA_DOUBLE_ARCH=%s: expected sm120, sm121, sm100 or sm90\n", arch);
        return CUDA_ERROR_INVALID_VALUE;
    }
    int ok = 1;
    dev.arch = *found;
    dev.count = env_int("LIBCUDA_DOUBLE_COUNT", 1, &ok);
    dev.arch.optin_bytes = env_int("LIBCUDA_DOUBLE_OPTIN_BYTES", found->optin_bytes, &ok);
    dev.arch.per_sm_bytes = env_int("LIBCUDA_DOUBLE_SM_BYTES", found->per_sm_bytes, &ok);
    if (getenv("LIBCUDA_DOUBLE_NAME") && *getenv("LIBCUDA_DOUBLE_NAME")) dev.arch.name = getenv("LIBCUDA_DOUBLE_NAME");
    if (!ok || dev.count > 8) return CUDA_ERROR_INVALID_VALUE;
    if (dev.count == 0) return CUDA_ERROR_NO_DEVICE;
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = DRIVER_API_VERSION; /* answered before cuInit, as the real driver does */
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == error) { *name = ERRORS[i].name; return CUDA_SUCCESS; }
    *name = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == error) { *text = ERRORS[i].text; return CUDA_SUCCESS; }
    *text = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

#define NEEDS_INIT() do { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define NEEDS_DEVICE(d) do { NEEDS_INIT(); if ((d) < 0 || (d) >= dev.count) return CUDA_ERROR_INVALID_DEVICE; } while (0)
#define NEEDS_CONTEXT() do { NEEDS_INIT(); if (!current) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

CUresult cuDeviceGetCount(int *count) {
    NEEDS_INIT();
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = dev.count;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    NEEDS_DEVICE(ordinal);
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice device) {
    NEEDS_DEVICE(device);
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", dev.arch.name);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
    NEEDS_DEVICE(device);
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    *bytes = (size_t)dev.arch.total_bytes;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice device) {
    NEEDS_DEVICE(device);
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    /* a version-4 UUID, the same for a device on every run: "reprokitdouble" + the ordinal */
    memcpy(uuid->bytes, "reprokitdouble\0\0", 16);
    uuid->bytes[6] = (uuid->bytes[6] & 0x0f) | 0x40;
    uuid->bytes[8] = (uuid->bytes[8] & 0x3f) | 0x80;
    uuid->bytes[15] = (unsigned char)device;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice device) { return cuDeviceGetUuid(uuid, device); }

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
    NEEDS_DEVICE(device);
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case 1: *value = MAX_THREADS_PER_BLOCK; break;             /* MAX_THREADS_PER_BLOCK */
    case 2: case 3: *value = 1024; break;                      /* MAX_BLOCK_DIM_X, _Y */
    case 4: *value = 64; break;                                /* MAX_BLOCK_DIM_Z */
    case 5: *value = 2147483647; break;                        /* MAX_GRID_DIM_X */
    case 6: case 7: *value = 65535; break;                     /* MAX_GRID_DIM_Y, _Z */
    case 8: *value = STATIC_SMEM_PER_BLOCK; break;             /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 10: *value = 32; break;                               /* WARP_SIZE */
    case 16: *value = dev.arch.multiprocessors; break;         /* MULTIPROCESSOR_COUNT */
    case 39: *value = dev.arch.major >= 10 ? 1536 : 2048; break; /* MAX_THREADS_PER_MULTIPROCESSOR */
    case 75: *value = dev.arch.major; break;                   /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = dev.arch.minor; break;                   /* COMPUTE_CAPABILITY_MINOR */
    case 81: *value = dev.arch.per_sm_bytes; break;            /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    case 97: *value = dev.arch.optin_bytes; break;             /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    case 111: *value = RESERVED_SMEM_PER_BLOCK; break;         /* RESERVED_SHARED_MEMORY_PER_BLOCK */
    default: return CUDA_ERROR_INVALID_VALUE;                  /* an attribute this double does not describe */
    }
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(struct context **ctx, CUdevice device) {
    NEEDS_DEVICE(device);
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    contexts[device].device = device;
    *ctx = &contexts[device];
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
    NEEDS_DEVICE(device);
    if (current == &contexts[device]) current = NULL;
    sticky_error = 0;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) { return cuDevicePrimaryCtxRelease(device); }

CUresult cuCtxSetCurrent(struct context *ctx) {
    NEEDS_INIT();
    if (ctx && (ctx < contexts || ctx >= contexts + dev.count)) return CUDA_ERROR_INVALID_CONTEXT;
    current = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) {
    NEEDS_CONTEXT();
    return sticky_error;
}

/* A PTX module: its `.target sm_NN` must not be newer than the device, its `.entry` names are its functions. */
CUresult cuModuleLoadData(struct module **module, const void *image) {
    NEEDS_CONTEXT();
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    const char *text = image;
    if (memcmp(text, "\177ELF", 4) == 0) return CUDA_ERROR_NO_BINARY_FOR_GPU; /* a cubin: this double runs no SASS */
    const char *target = strstr(text, ".target sm_");
    if (!strstr(text, ".version") || !target) return CUDA_ERROR_INVALID_IMAGE;
    int target_cc = atoi(target + strlen(".target sm_"));
    if (target_cc <= 0 || target_cc > dev.arch.major * 10 + dev.arch.minor) return CUDA_ERROR_INVALID_PTX;
    struct module *loaded = calloc(1, sizeof *loaded);
    if (!loaded) return CUDA_ERROR_OUT_OF_MEMORY;
    for (const char *at = strstr(text, ".entry "); at && loaded->entries < MAX_ENTRIES; at = strstr(at + 1, ".entry ")) {
        struct function *fn = &loaded->functions[loaded->entries++];
        sscanf(at + strlen(".entry "), "%127[A-Za-z0-9_$]", fn->name);
        fn->max_dynamic_smem_bytes = STATIC_SMEM_PER_BLOCK;
    }
    if (loaded->entries == 0) { free(loaded); return CUDA_ERROR_INVALID_PTX; }
    *module = loaded;
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(struct module *module) {
    NEEDS_INIT();
    if (!module) return CUDA_ERROR_INVALID_HANDLE;
    free(module);
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(struct function **function, struct module *module, const char *name) {
    NEEDS_CONTEXT();
    if (!function || !module || !name) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < module->entries; i++)
        if (strcmp(module->functions[i].name, name) == 0) { *function = &module->functions[i]; return CUDA_SUCCESS; }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncSetAttribute(struct function *function, int attribute, int value) {
    NEEDS_CONTEXT();
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    if (attribute != 8) return CUDA_ERROR_NOT_SUPPORTED; /* only CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    if (value < 0 || value > dev.arch.optin_bytes) return CUDA_ERROR_INVALID_VALUE; /* the kernels declare no static smem */
    function->max_dynamic_smem_bytes = value;
    return CUDA_SUCCESS;
}

static int find_allocation(CUdeviceptr at, size_t bytes) {
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        uintptr_t base = (uintptr_t)allocations[i].ptr;
        if (base && at >= base && at + bytes <= base + allocations[i].bytes) return 1;
    }
    return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t bytes) {
    NEEDS_CONTEXT();
    if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        if (allocations[i].ptr) continue;
        if (!(allocations[i].ptr = calloc(1, bytes))) return CUDA_ERROR_OUT_OF_MEMORY;
        allocations[i].bytes = bytes;
        *out = (CUdeviceptr)(uintptr_t)allocations[i].ptr;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemFree_v2(CUdeviceptr at) {
    NEEDS_CONTEXT();
    for (int i = 0; i < MAX_ALLOCATIONS; i++)
        if ((uintptr_t)allocations[i].ptr == at && at) { free(allocations[i].ptr); allocations[i].ptr = NULL; return CUDA_SUCCESS; }
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemsetD8_v2(CUdeviceptr at, unsigned char value, size_t count) {
    NEEDS_CONTEXT();
    if (!find_allocation(at, count)) return CUDA_ERROR_INVALID_VALUE;
    memset((void *)(uintptr_t)at, value, count);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
    NEEDS_CONTEXT();
    if (sticky_error) return sticky_error;
    if (!dst || !find_allocation(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, (void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

/* touch_smem(out_ptr, nbytes) of the smem-probe: thread 0 writes a marker into the first and the last byte of the
 * dynamic shared memory, reads both back and stores them to out_ptr[0], out_ptr[1]. Past the launch's dynamic shared
 * memory, the GPU's access is illegal. */
static CUresult touch_smem(void **params, unsigned int dynamic_bytes) {
    CUdeviceptr out = *(CUdeviceptr *)params[0];
    uint32_t nbytes = *(uint32_t *)params[1];
    if (nbytes == 0 || nbytes > dynamic_bytes || !find_allocation(out, 2 * sizeof(uint32_t))) {
        sticky_error = CUDA_ERROR_ILLEGAL_ADDRESS; /* reported by the next synchronising call, as on the GPU */
        return CUDA_SUCCESS;
    }
    unsigned char *smem = calloc(1, dynamic_bytes);
    if (!smem) return CUDA_ERROR_OUT_OF_MEMORY;
    smem[0] = 165;
    smem[nbytes - 1] = 90;
    uint32_t *global = (uint32_t *)(uintptr_t)out;
    global[0] = smem[0];
    global[1] = smem[nbytes - 1];
    free(smem);
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(struct function *function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int dynamic_bytes,
                        void *stream, void **params, void **extra) {
    NEEDS_CONTEXT();
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    if (sticky_error) return sticky_error;
    if (stream || extra) return CUDA_ERROR_NOT_SUPPORTED; /* the default stream, parameters as an array */
    if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z
        || (unsigned long)block_x * block_y * block_z > MAX_THREADS_PER_BLOCK)
        return CUDA_ERROR_INVALID_VALUE;
    if (dynamic_bytes > (unsigned int)function->max_dynamic_smem_bytes) return CUDA_ERROR_INVALID_VALUE;
    if (strcmp(function->name, "touch_smem") == 0 && params) return touch_smem(params, dynamic_bytes);
    return CUDA_ERROR_NOT_SUPPORTED; /* a kernel this double cannot carry out */
}
