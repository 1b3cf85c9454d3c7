// Ordo's test kernels in OpenCL C (see ../README.md for what each one does).
// Built twice at build time: SPIR bitcode (for devices with cl_khr_spir, e.g. PoCL)
// and SPIR-V (for devices that take IL).

kernel void empty(void) {}

kernel void fill(global uint *out, uint value) {
  out[get_global_id(0)] = value;
}

kernel void increment(global uint *data) {
  data[get_global_id(0)] += 1u;
}

kernel void vector_add(global const float *a, global const float *b, global float *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}

kernel void saxpy(float a, global const float *x, global float *y) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}

// Each work-group sums its slice of `in` into out[group id], through local memory.
kernel void local_sum(global const uint *in, global uint *out, local uint *scratch) {
  size_t lid = get_local_id(0);
  size_t n = get_local_size(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint total = 0;
    for (size_t i = 0; i < n; ++i) total += scratch[i];
    out[get_group_id(0)] = total;
  }
}

kernel void fill_2d(global uint *out, uint width) {
  size_t x = get_global_id(0);
  size_t y = get_global_id(1);
  out[y * width + x] = (uint)(y * width + x);
}
