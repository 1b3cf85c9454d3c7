// The Ordo test kernels (test/kernels/README.md) in CUDA C++, with C names so a
// UR program finds them by the same names on every backend.
//
// Local memory: a `local` argument is passed as a size_t byte offset into the
// launch's dynamic shared memory (how the Ordo CUDA adapter lays out local
// arguments; see docs/cuda.md).
#include <cstddef>
#include <cstdint>

extern __shared__ unsigned char ordo_local_memory[];

__device__ inline size_t global_id_x() { return size_t(blockIdx.x) * blockDim.x + threadIdx.x; }

extern "C" __global__ void empty() {}

extern "C" __global__ void fill(uint32_t *out, uint32_t value) { out[global_id_x()] = value; }

extern "C" __global__ void increment(uint32_t *data) { data[global_id_x()] += 1; }

extern "C" __global__ void vector_add(const float *a, const float *b, float *c) {
  size_t i = global_id_x();
  c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(float a, const float *x, float *y) {
  size_t i = global_id_x();
  y[i] = a * x[i] + y[i];
}

extern "C" __global__ void local_sum(const uint32_t *in, uint32_t *out, size_t scratch_offset) {
  uint32_t *scratch = reinterpret_cast<uint32_t *>(ordo_local_memory + scratch_offset);
  scratch[threadIdx.x] = in[global_id_x()];
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
    out[blockIdx.x] = sum;
  }
}

extern "C" __global__ void fill_2d(uint32_t *out, uint32_t width) {
  size_t x = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t y = size_t(blockIdx.y) * blockDim.y + threadIdx.y;
  out[y * width + x] = uint32_t(y * width + x);
}
