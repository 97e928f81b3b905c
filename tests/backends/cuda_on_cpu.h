// CUDA's built-ins for g++, so that a kernel file of kernels/ runs on the CPU (cuda_emulator.py).
//
// What it is for: checking a kernel's logic (indexing, tile edges, cut rows, the order of a
// row's sum) where no GPU is lent, with the host path's real launch arguments. What it is not:
// a model of speed, of the memory model between blocks, or of anything a warp does in lockstep.
//
// How a launch runs: blocks one after another (grids of x and y); a block's threads are fibers on one OS
// thread, each run until it waits at a barrier (__syncthreads, or a warp collective over the
// lanes of its mask) or returns. So the threads of a block interleave only at barriers, and the
// order in which they run between two barriers is a seeded shuffle: code whose result depends on
// that order (a race on shared memory, a lane reading another's write without __syncwarp) gives
// different bits under different seeds, which the tests compare. A barrier some threads can never
// reach (a lane of a warp collective's mask has returned) ends the launch with an error, as a hang
// on the GPU would. A block that waits on another block (a spin on a global flag) cannot finish
// here: blocks do not run at once. spla's SpMV and SpMM kernels do not.
#pragma once

#include <setjmp.h>
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static  // one block at a time: a function's static is its block's shared memory
#define __align__(n) alignas(n)

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

namespace spla_emu {

constexpr int WARP = 32;
constexpr std::size_t STACK_BYTES = 128 * 1024;  // a kernel's frame is small; 1,024 threads take 128 MB

// A fiber starts on its own stack through makecontext/swapcontext, and from then on switches
// with _setjmp/_longjmp, which save no signal mask: no system call a switch (swapcontext makes
// one, and a warp's shuffle takes 64 switches).
struct Fiber {
    ucontext_t context{};
    jmp_buf resume;
    std::vector<char> stack;
    dim3 index;
    bool started = false, done = false;
};

struct Warp {  // a warp collective in progress: its lanes' values, and who has arrived
    std::uint64_t slot[WARP] = {};
    unsigned arrived = 0;
    unsigned long long generation = 0;
};

struct Block {
    std::vector<Fiber> fibers;
    std::vector<Warp> warps;
    std::vector<unsigned char> dynamic_shared;
    unsigned arrived = 0, live = 0;  // at __syncthreads; threads that have not returned
    unsigned long long generation = 0;
    int or_flag = 0;                 // __syncthreads_or's
    bool progress = false;           // a thread passed a barrier or returned this round
    const char* error = nullptr;
};

inline Block block;
inline unsigned long long block_serial = 0;  // every block of every launch its own
inline Fiber* current = nullptr;
inline ucontext_t scheduler_context;
inline jmp_buf scheduler;
inline dim3 block_index, block_dim, grid_dim;
inline void (*body)(void*) = nullptr;  // the kernel call every fiber of a launch makes
inline void* body_arg = nullptr;

inline void yield() {
    if (!_setjmp(current->resume)) _longjmp(scheduler, 1);
}

inline int lane() { return static_cast<int>(current->index.x % WARP); }
inline Warp& my_warp() { return block.warps[current->index.x / WARP]; }

// Every thread of the block (that has not returned) arrives before any goes on.
inline void sync_block() {
    const unsigned long long generation = block.generation;
    if (++block.arrived == block.live) {
        block.arrived = 0;
        ++block.generation;
        block.progress = true;
        return;
    }
    while (block.generation == generation) yield();
}

// Every lane of `mask` (in this thread's warp) arrives before any goes on.
inline void sync_lanes(unsigned mask) {
    Warp& w = my_warp();
    const unsigned long long generation = w.generation;
    w.arrived |= 1u << lane();
    if ((w.arrived & mask) == mask) {
        w.arrived &= ~mask;
        ++w.generation;
        block.progress = true;
        return;
    }
    while (w.generation == generation) yield();
}

// A warp collective: each lane of `mask` posts v, then reads `read(slots, lane)` of what they posted.
template <typename T, typename Read>
auto collective(unsigned mask, T v, Read read) {
    static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
    Warp& w = my_warp();
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    w.slot[lane()] = bits;
    sync_lanes(mask);
    const auto out = read(w.slot, lane());
    sync_lanes(mask);  // every lane has read before any posts again
    return out;
}

// Lane `from(lane)`'s value of v.
template <typename T, typename From>
T exchange(unsigned mask, T v, From from) {
    return collective(mask, v, [&](const std::uint64_t* slots, int l) {
        T out;
        std::memcpy(&out, &slots[from(l)], sizeof(T));
        return out;
    });
}

inline void fiber_main() {
    body(body_arg);
    current->done = true;
    --block.live;
    block.progress = true;
    if (block.live > 0 && block.arrived == block.live) {  // the others wait on this one no longer
        block.arrived = 0;
        ++block.generation;
    }
    _longjmp(scheduler, 1);
}

inline unsigned next_random(unsigned long long& state) {  // xorshift64*
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<unsigned>((state * 2685821657736338717ULL) >> 32);
}

// Runs `call(arg)` as every thread of a grid of grid_x x grid_y blocks of `threads`; 0, or 1 with `error`.
inline int run_grid(void (*call)(void*), void* arg, unsigned grid_x, unsigned grid_y, unsigned threads,
                    unsigned shared_bytes, unsigned long long seed, const char** error) {
    body = call;
    body_arg = arg;
    grid_dim = dim3{grid_x, grid_y, 1};
    block_dim = dim3{threads, 1, 1};
    block.fibers.resize(threads);
    block.warps.assign((threads + WARP - 1) / WARP, Warp{});
    block.dynamic_shared.resize(shared_bytes);
    std::vector<unsigned> order(threads);
    unsigned long long state = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (unsigned b = 0; b < grid_x * grid_y; ++b) {
        block_index = dim3{b % grid_x, b / grid_x, 1};
        ++block_serial;
        std::fill(block.dynamic_shared.begin(), block.dynamic_shared.end(), 0xff);  // not zeroed on the GPU either
        block.arrived = 0;
        block.live = threads;
        block.or_flag = 0;
        for (unsigned t = 0; t < threads; ++t) {
            Fiber& f = block.fibers[t];
            f.stack.resize(STACK_BYTES);
            f.index = dim3{t, 1, 1};
            f.started = f.done = false;
            getcontext(&f.context);
            f.context.uc_stack.ss_sp = f.stack.data();
            f.context.uc_stack.ss_size = f.stack.size();
            f.context.uc_link = nullptr;
            makecontext(&f.context, fiber_main, 0);
            order[t] = t;
        }
        while (block.live > 0) {
            if (seed != 0)
                for (unsigned i = threads - 1; i > 0; --i) std::swap(order[i], order[next_random(state) % (i + 1)]);
            block.progress = false;
            for (unsigned t : order) {
                if (block.fibers[t].done) continue;
                current = &block.fibers[t];
                if (_setjmp(scheduler)) continue;  // the fiber has yielded or returned
                if (current->started) _longjmp(current->resume, 1);
                current->started = true;
                swapcontext(&scheduler_context, &current->context);
            }
            if (!block.progress && block.live > 0) {
                *error = "the block's threads wait at barriers that cannot complete (a warp collective "
                         "whose mask names a lane that has returned, or __syncthreads in divergent code)";
                return 1;
            }
        }
    }
    return 0;
}

// cuLaunchKernel's kernelParams: params[i] points at argument i, of the kernel's parameter type.
template <typename... A>
struct Call {
    void (*kernel)(A...);
    void** params;
};

template <typename... A, std::size_t... I>
void call_with(Call<A...>* c, std::index_sequence<I...>) {
    c->kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(c->params[I])...);
}

template <typename... A>
void call_kernel(void* arg) {
    call_with(static_cast<Call<A...>*>(arg), std::index_sequence_for<A...>{});
}

template <typename... A>
int launch(void (*kernel)(A...), unsigned grid_x, unsigned grid_y, unsigned threads, unsigned shared_bytes,
           void** params, unsigned long long seed, const char** error) {
    Call<A...> c{kernel, params};
    return run_grid(call_kernel<A...>, &c, grid_x, grid_y, threads, shared_bytes, seed, error);
}

inline void* dynamic_shared() { return block.dynamic_shared.data(); }

// A block's shared variable (cuda_emulator.py writes each `__shared__ T name[N];` of a kernel file
// as a static and this): filled with 0xff bytes by the first thread of each block that reaches it.
inline void fresh(void* p, std::size_t bytes, unsigned long long& filled_in) {
    if (filled_in != block_serial) {
        filled_in = block_serial;
        std::memset(p, 0xff, bytes);
    }
}

}  // namespace spla_emu

#define threadIdx (spla_emu::current->index)
#define blockIdx (spla_emu::block_index)
#define blockDim (spla_emu::block_dim)
#define gridDim (spla_emu::grid_dim)
#define SPLA_EMU_FRESH(name)                                   \
    static unsigned long long name##_filled_in = ~0ULL;        \
    spla_emu::fresh(&name, sizeof(name), name##_filled_in)

// ---- barriers and warp collectives
inline void __syncthreads() { spla_emu::sync_block(); }
inline int __syncthreads_or(int predicate) {
    spla_emu::sync_block();  // the flag of the last call is read by all before it is reset
    if (predicate) spla_emu::block.or_flag = 1;
    spla_emu::sync_block();
    const int any = spla_emu::block.or_flag;
    spla_emu::sync_block();
    spla_emu::block.or_flag = 0;
    return any;
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { spla_emu::sync_lanes(mask); }
inline unsigned __activemask() {  // the warp's lanes that have not returned
    unsigned mask = 0;
    const unsigned first = threadIdx.x / spla_emu::WARP * spla_emu::WARP;
    for (unsigned l = 0; l < spla_emu::WARP && first + l < blockDim.x; ++l)
        if (!spla_emu::block.fibers[first + l].done) mask |= 1u << l;
    return mask;
}

template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    return spla_emu::exchange(mask, v, [&](int l) { return (l & ~(width - 1)) + (src & (width - 1)); });
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return spla_emu::exchange(mask, v, [&](int l) {
        return (l & (width - 1)) + static_cast<int>(delta) < width ? l + static_cast<int>(delta) : l;
    });
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return spla_emu::exchange(mask, v, [&](int l) {
        return (l & (width - 1)) >= static_cast<int>(delta) ? l - static_cast<int>(delta) : l;
    });
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    return spla_emu::exchange(mask, v, [&](int l) {
        const int other = l ^ lane_mask;
        return (other & ~(width - 1)) == (l & ~(width - 1)) ? other : l;
    });
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
    return spla_emu::collective(mask, predicate != 0 ? 1u : 0u, [&](const std::uint64_t* slots, int) {
        unsigned bits = 0;
        for (int l = 0; l < spla_emu::WARP; ++l)
            if ((mask >> l & 1u) && slots[l]) bits |= 1u << l;
        return bits;
    });
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) == mask; }

// ---- memory: one thread runs at a time, so an atomic is a plain read-modify-write
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __nanosleep(unsigned) { spla_emu::yield(); }
template <typename T> T __ldg(const T* p) { return *p; }
template <typename T> T __ldcs(const T* p) { return *p; }
template <typename T> T __ldcg(const T* p) { return *p; }
template <typename T> T __ldca(const T* p) { return *p; }
template <typename T> T __ldlu(const T* p) { return *p; }
template <typename T> void __stcs(T* p, T v) { *p = v; }
template <typename T> void __stcg(T* p, T v) { *p = v; }
template <typename T, typename U> T atomicAdd(T* p, U v) { const T old = *p; *p = old + static_cast<T>(v); return old; }
template <typename T, typename U> T atomicSub(T* p, U v) { const T old = *p; *p = old - static_cast<T>(v); return old; }
template <typename T, typename U> T atomicOr(T* p, U v) { const T old = *p; *p = old | static_cast<T>(v); return old; }
template <typename T, typename U> T atomicAnd(T* p, U v) { const T old = *p; *p = old & static_cast<T>(v); return old; }
template <typename T, typename U> T atomicMax(T* p, U v) { const T old = *p; *p = std::max(old, static_cast<T>(v)); return old; }
template <typename T, typename U> T atomicMin(T* p, U v) { const T old = *p; *p = std::min(old, static_cast<T>(v)); return old; }
template <typename T, typename U> T atomicExch(T* p, U v) { const T old = *p; *p = static_cast<T>(v); return old; }
template <typename T> T atomicCAS(T* p, T compare, T v) { const T old = *p; if (old == compare) *p = v; return old; }

// ---- integer and float intrinsics
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz(static_cast<unsigned>(v)); }
inline int __clzll(long long v) { return v == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(v)); }
template <typename To, typename From> To spla_emu_bits(From v) { To out; std::memcpy(&out, &v, sizeof(To)); return out; }
inline float __int_as_float(int v) { return spla_emu_bits<float>(v); }
inline int __float_as_int(float v) { return spla_emu_bits<int>(v); }
inline unsigned __float_as_uint(float v) { return spla_emu_bits<unsigned>(v); }
inline float __uint_as_float(unsigned v) { return spla_emu_bits<float>(v); }
inline long long __double_as_longlong(double v) { return spla_emu_bits<long long>(v); }
inline double __longlong_as_double(long long v) { return spla_emu_bits<double>(v); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }  // CUDA's float overload: one rounding
template <typename A, typename B> std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <typename A, typename B> std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }

// ---- vector types (16-byte packs are read whole, as on the GPU)
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
struct alignas(8) int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(16) longlong2 { long long x, y; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
