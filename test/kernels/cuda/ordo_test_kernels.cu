// SPDX-License-Identifier: Apache-2.0
// The Ordo test kernels (test/kernels/README.md) in CUDA C++, with C names so a
// UR program finds them by the same names on every backend.
//
// Two conventions of the Ordo CUDA adapter (docs/cuda.md):
// - Local memory: a `local` argument is a size_t byte offset into the launch's
//   dynamic shared memory.
// - Global offsets: CUDA has none, so each kernel K also exists as K_with_offset,
//   taking one more argument (struct ordo_offset, by value); the adapter launches
//   that variant when a launch names a non-zero offset, and leaves the variants
//   out of the program's kernel list.
#include <cstddef>
#include <cstdint>

extern __shared__ unsigned char ordo_local_memory[];

struct ordo_offset {
  size_t x, y, z;
};

__device__ inline size_t global_x(ordo_offset o) { return size_t(blockIdx.x) * blockDim.x + threadIdx.x + o.x; }
__device__ inline size_t global_y(ordo_offset o) { return size_t(blockIdx.y) * blockDim.y + threadIdx.y + o.y; }

__device__ inline void fill_body(uint32_t *out, uint32_t value, ordo_offset o) { out[global_x(o)] = value; }

__device__ inline void increment_body(uint32_t *data, ordo_offset o) { data[global_x(o)] += 1; }

__device__ inline void vector_add_body(const float *a, const float *b, float *c, ordo_offset o) {
  size_t i = global_x(o);
  c[i] = a[i] + b[i];
}

__device__ inline void saxpy_body(float a, const float *x, float *y, ordo_offset o) {
  size_t i = global_x(o);
  y[i] = a * x[i] + y[i];
}

__device__ inline void local_sum_body(const uint32_t *in, uint32_t *out, size_t scratch_offset, ordo_offset o) {
  uint32_t *scratch = reinterpret_cast<uint32_t *>(ordo_local_memory + scratch_offset);
  scratch[threadIdx.x] = in[global_x(o)];
  __syncthreads();
  // Any work-group size: halve while even, then the first thread adds what is left.
  unsigned n = blockDim.x;
  while (n > 1 && n % 2 == 0) {
    n /= 2;
    if (threadIdx.x < n) scratch[threadIdx.x] += scratch[threadIdx.x + n];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    uint32_t sum = 0;
    for (unsigned i = 0; i < n; ++i) sum += scratch[i];
    out[blockIdx.x] = sum; // the group id, as in OpenCL, does not include the offset
  }
}

__device__ inline void fill_2d_body(uint32_t *out, uint32_t width, ordo_offset o) {
  size_t x = global_x(o), y = global_y(o);
  out[y * width + x] = uint32_t(y * width + x);
}

#define ORDO_NO_OFFSET ordo_offset{0, 0, 0}

// A device global (urProgramGetGlobalVariablePointer, urEnqueueDeviceGlobalVariable*):
// 16 words holding 1 to 16 when the module is loaded, as in native CPU's program.
extern "C" __device__ uint32_t ordo_test_global[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

extern "C" __global__ void empty() {}
extern "C" __global__ void empty_with_offset(ordo_offset) {}

extern "C" __global__ void fill(uint32_t *out, uint32_t value) { fill_body(out, value, ORDO_NO_OFFSET); }
extern "C" __global__ void fill_with_offset(uint32_t *out, uint32_t value, ordo_offset o) { fill_body(out, value, o); }

extern "C" __global__ void increment(uint32_t *data) { increment_body(data, ORDO_NO_OFFSET); }
extern "C" __global__ void increment_with_offset(uint32_t *data, ordo_offset o) { increment_body(data, o); }

extern "C" __global__ void vector_add(const float *a, const float *b, float *c) {
  vector_add_body(a, b, c, ORDO_NO_OFFSET);
}
extern "C" __global__ void vector_add_with_offset(const float *a, const float *b, float *c, ordo_offset o) {
  vector_add_body(a, b, c, o);
}

extern "C" __global__ void saxpy(float a, const float *x, float *y) { saxpy_body(a, x, y, ORDO_NO_OFFSET); }
extern "C" __global__ void saxpy_with_offset(float a, const float *x, float *y, ordo_offset o) {
  saxpy_body(a, x, y, o);
}

extern "C" __global__ void local_sum(const uint32_t *in, uint32_t *out, size_t scratch_offset) {
  local_sum_body(in, out, scratch_offset, ORDO_NO_OFFSET);
}
extern "C" __global__ void local_sum_with_offset(const uint32_t *in, uint32_t *out, size_t scratch_offset,
                                                 ordo_offset o) {
  local_sum_body(in, out, scratch_offset, o);
}

extern "C" __global__ void fill_2d(uint32_t *out, uint32_t width) { fill_2d_body(out, width, ORDO_NO_OFFSET); }
extern "C" __global__ void fill_2d_with_offset(uint32_t *out, uint32_t width, ordo_offset o) {
  fill_2d_body(out, width, o);
}
