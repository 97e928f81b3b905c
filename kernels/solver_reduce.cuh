// Shared pieces of the solver kernels (solver_blas1.cu, solver_pagerank.cu,
// solver_cg_product.cu): the deterministic single-launch grid reduction, the
// guarded step length, and the grid barrier and all-blocks reduction of
// cooperatively launched kernels (spla_cg_loop).
//
// Reductions: each block writes its partial sums (accumulated in double, also
// for float vectors), and the last block to finish (ticket from an atomic
// counter) adds the partials in a fixed order, writes the results and resets
// the counter for the next launch. One counter and one partials buffer serve
// every reduction of a solve because launches on one stream do not overlap.
// Constraints: blockDim.x == SOLVER_BLOCK; partials hold gridDim.x * NS doubles.
#pragma once
#include "common.cuh"

#include "launch_config.cuh"  // SPLA_SOLVER_BLOCK, as the host passes it

namespace spla {

constexpr int SOLVER_BLOCK = SPLA_SOLVER_BLOCK;

// Sums NS per-thread values over the grid; out[s] gets sum s. Every thread of
// every block must call it.
template <int NS>
__device__ __forceinline__ void grid_sum_last_block(double (&v)[NS], double* partials, unsigned* counter,
                                                    double* out) {
    __shared__ double scratch[SOLVER_BLOCK / WARP_SIZE];
    __shared__ bool is_last;
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        double total = block_reduce_sum<double, SOLVER_BLOCK>(v[s], scratch);
        if (threadIdx.x == 0) partials[static_cast<long long>(blockIdx.x) * NS + s] = total;
    }
    if (threadIdx.x == 0) {
        __threadfence();  // partials visible device-wide before the ticket is taken
        unsigned ticket = atomicAdd(counter, 1u);
        is_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (!is_last) return;
    // Partials were written by other SMs: __ldcg reads them from L2, never from a stale L1 line.
    // Plain (non-volatile) loads let the unrolled loop issue several before the first add waits,
    // so a grid of a few thousand blocks does not pay one L2 round trip per partial; the adds
    // keep their order.
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        double sum = 0.0;
#pragma unroll 8
        for (unsigned b = threadIdx.x; b < gridDim.x; b += SOLVER_BLOCK) sum += __ldcg(partials + b * NS + s);
        sum = block_reduce_sum<double, SOLVER_BLOCK>(sum, scratch);
        if (threadIdx.x == 0) out[s] = sum;
    }
    if (threadIdx.x == 0) *counter = 0u;
}

// A step length rho / pq, or 0 once the solve has broken down (flag set, or
// pq zero / non-finite). Every thread computes the same verdict.
__device__ __forceinline__ double guarded_step(double rho, double pq, double flag, bool* broke) {
    double step = rho / pq;
    bool bad = !(pq != 0.0) || !isfinite(step);
    *broke = bad && flag == 0.0;
    return (bad || flag != 0.0) ? 0.0 : step;
}

__device__ __forceinline__ double guarded_step(const double* rho, const double* pq, const double* flag, bool* broke) {
    return guarded_step(*rho, *pq, *flag, broke);
}

// An entry of a vector the kernel also writes: from L2 with COHERENT (other blocks of the same
// launch wrote it, and an L1 line this SM read before could be stale), else a plain load.
template <bool COHERENT, typename T>
__device__ __forceinline__ T load_written(const T* v) {
    if constexpr (COHERENT) {
        return __ldcg(v);
    } else {
        return *v;
    }
}

// CG's update, one grid-stride pass: x += alpha p, r -= alpha q and, with JACOBI, z = dinv r;
// adds r.z (r.r without JACOBI) to sums[0] and, with JACOBI, r.r to sums[1]. Serves the
// launch-per-step loop (spla_cg_step) and the one-launch loop (spla_cg_loop, COHERENT).
template <typename T, bool JACOBI, bool COHERENT>
__device__ __forceinline__ void cg_update(long long n, T alpha, T* x, T* r, T* z, const T* p, const T* q,
                                          const T* dinv, double (&sums)[JACOBI ? 2 : 1]) {
    for (long long i = global_thread_id(); i < n; i += grid_threads()) {
        x[i] += alpha * load_written<COHERENT>(p + i);
        const T ri = load_written<COHERENT>(r + i) - alpha * load_written<COHERENT>(q + i);
        r[i] = ri;
        if constexpr (JACOBI) {
            const T zi = dinv[i] * ri;
            z[i] = zi;
            sums[0] += static_cast<double>(ri) * static_cast<double>(zi);
            sums[1] += static_cast<double>(ri) * static_cast<double>(ri);
        } else {
            sums[0] += static_cast<double>(ri) * static_cast<double>(ri);
        }
    }
}

// Device-scope atomics and loads with the orderings a grid barrier needs (PTX, sm_70+): cheaper
// than a full __threadfence around relaxed ones, which would put several fences on the path
// from the last arrival to the release.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__device__ __forceinline__ unsigned atomic_add_acq_rel(unsigned* p, unsigned v) {
    unsigned old;
    asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}
#else  // a host compiler: the tests' CPU emulator (tests/backends/cuda_on_cpu.h), no PTX
__device__ __forceinline__ unsigned atomic_add_acq_rel(unsigned* p, unsigned v) {
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
#endif

// A barrier across the whole grid, for kernels launched cooperatively (every block resident at
// once, or blocks would wait for ones that never start). Arrivals go up a two-level tree so that
// no counter takes more than ~32 atomics a barrier (a thousand blocks on one counter queue for
// microseconds): a block arrives at its group's counter, the last of each group at the top one,
// and the last there moves the generation on, which releases everyone. Each counter is reset by
// its last arrival before the release, so nothing is reset between barriers or launches. Every
// word sits in its own 128-byte line (the waiting blocks' polls of the generation do not queue
// behind the atomics): sync holds 32 (2 + ceil(gridDim.x / 32)) unsigned, zero before the first
// launch (solvers.py, barrier_words).
//
// Ordering: __syncthreads orders the block's writes before thread 0's arrival; the arrivals are
// acquire-release read-modify-writes, so each last arrival has acquired the writes of all that
// arrived before it and releases them on with its own; the generation is stored with release and
// polled with acquire, and the closing __syncthreads passes that on to the block's threads. Data
// written before the barrier by other blocks must still be read from L2 (__ldcg or volatile),
// never through an L1 line this SM read before.
constexpr unsigned BARRIER_GROUP = 32;  // blocks a group counter takes
constexpr unsigned BARRIER_LINE = 32;   // unsigned a 128-byte line
// sync[0] the top counter, sync[LINE] the generation, sync[(2 + g) LINE] group g's counter

__device__ __forceinline__ void grid_barrier(unsigned* sync) {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned* generation = sync + BARRIER_LINE;
        const unsigned seen = load_acquire(generation);  // read before arriving: cannot move until we have
        const unsigned group = blockIdx.x / BARRIER_GROUP;
        const unsigned groups = (gridDim.x + BARRIER_GROUP - 1u) / BARRIER_GROUP;
        const unsigned in_group = min(BARRIER_GROUP, gridDim.x - group * BARRIER_GROUP);
        unsigned* group_count = sync + BARRIER_LINE * (2u + group);
        bool release = false;
        if (atomic_add_acq_rel(group_count, 1u) == in_group - 1u) {  // the last of its group
            atomicExch(group_count, 0u);  // ordered before the release by the next acq_rel
            if (atomic_add_acq_rel(sync, 1u) == groups - 1u) {  // the last of all
                atomicExch(sync, 0u);
                release = true;
            }
        }
        if (release) {
            store_release(generation, seen + 1u);
        } else {
            while (load_acquire(generation) == seen) {
                __nanosleep(32);
            }
        }
    }
    __syncthreads();
}

// Sums NS per-thread values over a cooperatively launched grid and gives every thread of every
// block the totals (the same bits everywhere: each block adds the per-block partials in the same
// fixed order, all its threads reading a few each). partials hold NS * gridDim.x doubles, not
// read or written by anyone else until the next grid barrier after this call.
template <int NS>
__device__ __forceinline__ void grid_sum_everywhere(double (&v)[NS], double* partials, unsigned* sync) {
    __shared__ double scratch[SOLVER_BLOCK / WARP_SIZE];
    __shared__ double totals[NS];
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        const double total = block_reduce_sum<double, SOLVER_BLOCK>(v[s], scratch);
        if (threadIdx.x == 0) partials[static_cast<long long>(s) * gridDim.x + blockIdx.x] = total;
    }
    grid_barrier(sync);
#pragma unroll
    for (int s = 0; s < NS; ++s) {
        double sum = 0.0;
#pragma unroll 4
        for (unsigned b = threadIdx.x; b < gridDim.x; b += SOLVER_BLOCK) {
            sum += __ldcg(partials + static_cast<long long>(s) * gridDim.x + b);
        }
        sum = block_reduce_sum<double, SOLVER_BLOCK>(sum, scratch);
        if (threadIdx.x == 0) totals[s] = sum;
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < NS; ++s) v[s] = totals[s];
}

}  // namespace spla
