// Launches one kernel of a PTX file on one CTA through the driver API, for the hardware
// cross-check of weft's sample verdicts (scripts/hw/README.md).  Built and run on a GPU
// machine only; CI never compiles it.
//
//   launch FILE.ptx KERNEL BX BY BZ SPEC...
//
// One SPEC per kernel parameter, in order:
//   p                  a fresh 16 MiB device buffer, zero-filled
//   i4:V  i8:V  f4:V   a 32-bit integer, 64-bit integer or float
//   z:N                N zero bytes
//   t1:ES:N:BOX        a 1-D tiled tensor map over a fresh buffer of N elements of ES bytes
//                      (ES 2, 4 or 8), box BOX elements, no swizzle
//   t2:ES:W:H:BW:BH:S  a 2-D tiled tensor map, W x H elements, box BW x BH, swizzle S bytes
//                      (0 or 128)
// Prints the launch's and the synchronization's result and exits 0 only when both succeed;
// with LAUNCH_DUMP=N in the environment, also the first N 32-bit words of the last pointer
// parameter's buffer (what the kernel wrote there).
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static const char *name_of(CUresult r) {
    const char *s = nullptr;
    cuGetErrorName(r, &s);
    return s ? s : "unknown";
}

#define CHECK(call)                                                              \
    do {                                                                         \
        CUresult r_ = (call);                                                    \
        if (r_ != CUDA_SUCCESS) {                                                \
            std::printf("launch: %s failed: %s\n", #call, name_of(r_));          \
            return 2;                                                            \
        }                                                                        \
    } while (0)

static std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ':')) out.push_back(part);
    return out;
}

static CUtensorMapDataType dtype_of(int es) {
    switch (es) {
    case 2: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case 8: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    default: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    }
}

struct alignas(64) Slot {
    unsigned char bytes[128];
};

int main(int argc, char **argv) {
    if (argc < 6) {
        std::printf("usage: launch FILE.ptx KERNEL BX BY BZ SPEC...\n");
        return 2;
    }
    std::ifstream file(argv[1]);
    std::stringstream text;
    text << file.rdbuf();
    std::string ptx = text.str();

    CHECK(cuInit(0));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));

    char log[8192] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, reinterpret_cast<void *>(sizeof(log))};
    CUmodule module;
    // The samples come from a newer nvcc than a CUDA 13.0 driver knows (PTX ISA 9.0): its
    // JIT accepts the same text under the ISA version it knows.
    int driver = 0;
    CHECK(cuDriverGetVersion(&driver));
    size_t at = ptx.find(".version ");
    size_t eol = ptx.find('\n', at);
    if (driver < 13010 && at != std::string::npos && eol != std::string::npos) {
        std::string version = ptx.substr(at + 9, eol - at - 9);
        if (std::strtod(version.c_str(), nullptr) > 9.0) {
            std::printf("launch: .version %s lowered to 9.0 for driver %d\n", version.c_str(), driver);
            ptx.replace(at, eol - at, ".version 9.0");
        }
    }
    CUresult loaded = cuModuleLoadDataEx(&module, ptx.c_str(), 2, opts, vals);
    if (loaded != CUDA_SUCCESS) {
        std::printf("launch: module load failed: %s\n%s\n", name_of(loaded), log);
        return 2;
    }
    CUfunction fn;
    CHECK(cuModuleGetFunction(&fn, module, argv[2]));

    const int nparams = argc - 6;
    CUdeviceptr last_buffer = 0;
    std::vector<Slot> slots(nparams > 0 ? nparams : 1);
    std::vector<void *> params(nparams);
    for (int k = 0; k < nparams; ++k) {
        std::vector<std::string> spec = split(argv[6 + k]);
        Slot &slot = slots[k];
        std::memset(slot.bytes, 0, sizeof(slot.bytes));
        params[k] = slot.bytes;
        const std::string &kind = spec[0];
        if (kind == "p") {
            CUdeviceptr buf;
            CHECK(cuMemAlloc(&buf, 16 << 20));
            CHECK(cuMemsetD8(buf, 0, 16 << 20));
            std::memcpy(slot.bytes, &buf, sizeof(buf));
            last_buffer = buf;
        } else if (kind == "i4") {
            int v = std::atoi(spec.at(1).c_str());
            std::memcpy(slot.bytes, &v, 4);
        } else if (kind == "i8") {
            long long v = std::atoll(spec.at(1).c_str());
            std::memcpy(slot.bytes, &v, 8);
        } else if (kind == "f4") {
            float v = std::strtof(spec.at(1).c_str(), nullptr);
            std::memcpy(slot.bytes, &v, 4);
        } else if (kind == "z") {
            // already zero
        } else if (kind == "t1" || kind == "t2") {
            const bool two = kind == "t2";
            int es = std::atoi(spec.at(1).c_str());
            cuuint64_t dims[2] = {std::strtoull(spec.at(2).c_str(), nullptr, 10),
                                  two ? std::strtoull(spec.at(3).c_str(), nullptr, 10) : 1};
            cuuint32_t box[2] = {(cuuint32_t)std::atoi(spec.at(two ? 4 : 3).c_str()),
                                 two ? (cuuint32_t)std::atoi(spec.at(5).c_str()) : 1};
            int swizzle = two ? std::atoi(spec.at(6).c_str()) : 0;
            CUdeviceptr buf;
            size_t bytes = dims[0] * dims[1] * es;
            CHECK(cuMemAlloc(&buf, bytes));
            CHECK(cuMemsetD8(buf, 0, bytes));
            cuuint64_t strides[1] = {dims[0] * es};
            cuuint32_t element_strides[2] = {1, 1};
            CUtensorMap map;
            CHECK(cuTensorMapEncodeTiled(&map, dtype_of(es), two ? 2 : 1, reinterpret_cast<void *>(buf), dims,
                                         strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                         swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
            static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");
            std::memcpy(slot.bytes, &map, sizeof(map));
        } else {
            std::printf("launch: unknown parameter spec %s\n", argv[6 + k]);
            return 2;
        }
    }

    CUresult launched = cuLaunchKernel(fn, 1, 1, 1, std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), 0,
                                       nullptr, nparams ? params.data() : nullptr, nullptr);
    std::printf("launch: %s\n", name_of(launched));
    if (launched != CUDA_SUCCESS) return 1;
    CUresult synced = cuCtxSynchronize();
    std::printf("sync: %s\n", name_of(synced));
    const char *dump = std::getenv("LAUNCH_DUMP");
    if (synced == CUDA_SUCCESS && dump && last_buffer) {
        int n = std::atoi(dump);
        std::vector<unsigned> words(n > 0 ? n : 0);
        if (n > 0 && cuMemcpyDtoH(words.data(), last_buffer, n * sizeof(unsigned)) == CUDA_SUCCESS) {
            std::printf("out:");
            for (unsigned w : words) std::printf(" %#x", w);
            std::printf("\n");
        }
    }
    return synced == CUDA_SUCCESS ? 0 : 1;
}
