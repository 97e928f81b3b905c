// CUDA's built-ins for g++, so that a kernel file of kernels/ runs on the CPU (cuda_emulator.py).
//
// What it is for: checking a kernel's logic (indexing, tile edges, cut rows, the order of a
// row's sum) where no GPU is lent, with the host path's real launch arguments. What it is not:
// a model of speed, of the memory model between blocks, or of anything a warp does in lockstep.
//
// How a launch runs: a few blocks at a time (RESIDENT_BLOCKS, as an SM holds several; every
// block of a cooperative launch), their threads fibers on one OS thread, each run until it waits
// at a barrier (__syncthreads, a warp collective over the lanes of its mask, a grid barrier's
// __nanosleep) or returns. Without a seed that is all, in order. With a seed, blocks start in a
// shuffled order, the resident threads run in a shuffled order each round, a thread sits out a
// round now and then (a slow SM), and a thread gives way before each atomic and fence: code
// whose result depends on the order (a race on shared memory, a lane reading another's write
// without __syncwarp, a last block or a grid barrier that lets go one arrival early, a cut row
// finished by a tile that is not the last to arrive) gives different bits or a wrong sum under
// some seed, which the tests look for. A barrier some threads can never reach (a lane of a warp
// collective's mask has returned) ends the launch with an error, as a hang on the GPU would.
// Shared memory is each block's own, 0xff bytes until written. cp.async (kernels/gemm's copies
// of tiles) lands only when the thread waits for its group, the latest the GPU allows: a tile
// read before its wait, or another thread's tile read without a barrier after it, reads stale
// bytes. Not modelled: a thread's own memory ordering (it runs alone until it waits), and speed.
#pragma once
#define SPLA_CPU_EMULATION 1  // kernels/gemm/gemm_common.cuh: cp.async through spla_emu, not inline PTX

#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

namespace spla_emu {

constexpr int WARP = 32;
constexpr std::size_t STACK_BYTES = 64 * 1024;  // a kernel's frame is small; an overflow hits a guard page
constexpr unsigned RESIDENT_BLOCKS = 4;          // blocks whose threads interleave, as an SM's would

struct Block;

struct AsyncCopy {  // a cp.async of 16 bytes, or 16 zero bytes where not valid
    void* dst;
    const void* src;
    bool valid;
};

// A fiber starts on its own stack through makecontext/swapcontext, and from then on switches
// with _setjmp/_longjmp, which save no signal mask: no system call a switch (swapcontext makes
// one, and a warp's shuffle takes 64 switches).
struct Fiber {
    ucontext_t context{};
    jmp_buf resume;
    char* stack = nullptr;  // STACK_BYTES above a guard page (mmap: pages are taken only as used)
    dim3 index;           // threadIdx: x fastest, then y (a block of block_dim.x x block_dim.y threads)
    unsigned linear = 0;  // x + y * block_dim.x: its warp and lane, as on the GPU
    Block* block = nullptr;
    bool started = false, done = false;
    std::vector<AsyncCopy> open;                  // cp.async issued since the last commit
    std::vector<std::vector<AsyncCopy>> groups;   // committed groups not yet waited for, oldest first
};

struct Warp {  // warp collectives in progress: the lanes' values, who has arrived, who was let go
    std::uint64_t slot[WARP] = {};
    unsigned arrived = 0;
    unsigned long long released[WARP] = {};  // a lane's count: groups of a warp (masks) sync apart
};

struct Block {  // a resident block: its barriers, warps and shared memory
    dim3 index;
    std::vector<Fiber*> fibers;
    std::vector<Warp> warps;
    std::vector<unsigned char> dynamic_shared;
    std::map<const void*, std::vector<unsigned char>> shared;  // each __shared__ declaration's bytes
    unsigned arrived = 0, live = 0;  // at __syncthreads; threads that have not returned
    unsigned long long generation = 0;
    int or_flag = 0;                 // __syncthreads_or's
};

inline Fiber* current = nullptr;
inline ucontext_t scheduler_context;
inline jmp_buf scheduler;
inline dim3 block_dim, grid_dim;
inline void (*body)(void*) = nullptr;  // the kernel call every fiber of a launch makes
inline void* body_arg = nullptr;
inline bool progress = false;           // a thread passed a barrier or returned this round

inline void yield() {
    if (!_setjmp(current->resume)) _longjmp(scheduler, 1);
}

inline bool preempt = false;  // a launch with a seed: threads give way at atomics and fences

// Let the other threads run a round first (with a seed): progress, not a wait.
inline void give_way() {
    if (!preempt) return;
    progress = true;
    yield();
}

inline int lane() { return static_cast<int>(current->linear % WARP); }
inline Block& my_block() { return *current->block; }
inline Warp& my_warp() { return my_block().warps[current->linear / WARP]; }

// Every thread of the block (that has not returned) arrives before any goes on.
inline void sync_block() {
    Block& b = my_block();
    const unsigned long long generation = b.generation;
    if (++b.arrived == b.live) {
        b.arrived = 0;
        ++b.generation;
        progress = true;
        return;
    }
    while (b.generation == generation) yield();
}

// Every lane of `mask` (in this thread's warp) arrives before any goes on.
inline void sync_lanes(unsigned mask) {
    Warp& w = my_warp();
    const int me = lane();
    const unsigned long long released = w.released[me];
    w.arrived |= 1u << me;
    if ((w.arrived & mask) == mask) {
        w.arrived &= ~mask;
        for (int l = 0; l < WARP; ++l)
            if (mask >> l & 1u) ++w.released[l];
        progress = true;
        return;
    }
    while (w.released[me] == released) yield();
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

// The current block's copy of the __shared__ variable declared at `tag` (cuda_emulator.py writes
// each `__shared__ T name[N];` of a kernel file as `auto& name = block_shared<T[N]>(&tag)`): made
// by the first of the block's threads to reach it, as 0xff bytes (NaN, -1), since shared memory
// is not cleared on the GPU either.
template <typename T>
T& block_shared(const void* tag) {
    auto& bytes = my_block().shared[tag];
    if (bytes.empty()) bytes.assign(sizeof(T) + alignof(T), 0xff);
    const auto at = reinterpret_cast<std::uintptr_t>(bytes.data());
    return *reinterpret_cast<T*>((at + alignof(T) - 1) / alignof(T) * alignof(T));
}

inline void* dynamic_shared() { return my_block().dynamic_shared.data(); }

inline void fiber_main() {
    body(body_arg);
    Block& b = my_block();
    current->done = true;
    --b.live;
    progress = true;
    if (b.live > 0 && b.arrived == b.live) {  // the others wait on this one no longer
        b.arrived = 0;
        ++b.generation;
    }
    _longjmp(scheduler, 1);
}

inline unsigned next_random(unsigned long long& state) {  // xorshift64*
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<unsigned>((state * 2685821657736338717ULL) >> 32);
}

template <typename T>
void shuffle(std::vector<T>& items, unsigned long long& state) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[next_random(state) % i]);
}

// Stacks for up to `count` fibers, kept between launches.
inline std::vector<char*>& stacks(std::size_t count) {
    static std::vector<char*> all;
    const long page = sysconf(_SC_PAGESIZE);
    while (all.size() < count) {
        void* region = mmap(nullptr, STACK_BYTES + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED) break;
        mprotect(region, page, PROT_NONE);  // the guard page under the stack
        all.push_back(static_cast<char*>(region) + page);
    }
    return all;
}

// Runs `call(arg)` as every thread of a grid of grid_x x grid_y blocks of block_x x block_y threads; 0, or 1 with
// `error`. The blocks run RESIDENT_BLOCKS at a time (all at once where `cooperative`: a
// cooperative launch has every block resident, and its grid barriers need them), their threads
// interleaved at barriers; with a seed (not 0), in a shuffled block order and a shuffled thread
// order each round.
inline int run_grid(void (*call)(void*), void* arg, unsigned grid_x, unsigned grid_y, unsigned block_x,
                    unsigned block_y, unsigned shared_bytes, bool cooperative, unsigned long long seed,
                    const char** error) {
    body = call;
    body_arg = arg;
    preempt = seed != 0;
    grid_dim = dim3{grid_x, grid_y, 1};
    block_dim = dim3{block_x, block_y, 1};
    const unsigned threads = block_x * block_y;
    const unsigned n_blocks = grid_x * grid_y;
    const unsigned resident = cooperative ? n_blocks : std::min(n_blocks, RESIDENT_BLOCKS);
    std::vector<char*>& stack = stacks(static_cast<std::size_t>(resident) * threads);
    if (stack.size() < static_cast<std::size_t>(resident) * threads) {
        *error = "no memory for the fibers' stacks";
        return 1;
    }
    unsigned long long state = seed * 0x9E3779B97F4A7C15ULL + 1;
    std::vector<unsigned> queue(n_blocks);
    for (unsigned b = 0; b < n_blocks; ++b) queue[b] = b;
    if (seed != 0) shuffle(queue, state);
    std::vector<Block> blocks(resident);
    std::vector<Fiber> fibers(static_cast<std::size_t>(resident) * threads);
    std::vector<Fiber*> order;
    for (unsigned first = 0; first < n_blocks; first += resident) {
        const unsigned wave = std::min(resident, n_blocks - first);
        order.clear();
        for (unsigned w = 0; w < wave; ++w) {
            Block& b = blocks[w];
            b = Block{};
            b.index = dim3{queue[first + w] % grid_x, queue[first + w] / grid_x, 0};
            b.warps.assign((threads + WARP - 1) / WARP, Warp{});
            b.dynamic_shared.assign(shared_bytes, 0xff);  // not zeroed on the GPU either
            b.live = threads;
            for (unsigned t = 0; t < threads; ++t) {
                Fiber& f = fibers[static_cast<std::size_t>(w) * threads + t];
                f.stack = stack[static_cast<std::size_t>(w) * threads + t];
                f.index = dim3{t % block_x, t / block_x, 0};
                f.linear = t;
                f.block = &b;
                f.started = f.done = false;
                f.open.clear();
                f.groups.clear();
                getcontext(&f.context);
                f.context.uc_stack.ss_sp = f.stack;
                f.context.uc_stack.ss_size = STACK_BYTES;
                f.context.uc_link = nullptr;
                makecontext(&f.context, fiber_main, 0);
                b.fibers.push_back(&f);
                order.push_back(&f);
            }
        }
        // rounds without progress before the launch is called stuck: 1 in order; with a seed a
        // thread may sit a round out (a slow SM), and 64 rounds of it all but never happen
        const unsigned patience = seed != 0 ? 64 : 1;
        for (std::size_t live = order.size(), stalled = 0; live > 0;) {
            if (seed != 0) shuffle(order, state);
            progress = false;
            for (Fiber* f : order) {
                if (f->done || (seed != 0 && next_random(state) % 4 == 0)) continue;
                current = f;
                if (_setjmp(scheduler)) continue;  // the fiber has yielded or returned
                if (f->started) _longjmp(f->resume, 1);
                f->started = true;
                swapcontext(&scheduler_context, &f->context);
            }
            live = static_cast<std::size_t>(std::count_if(order.begin(), order.end(), [](Fiber* f) { return !f->done; }));
            stalled = progress ? 0 : stalled + 1;
            if (stalled >= patience && live > 0) {
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
int launch(void (*kernel)(A...), unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
           unsigned shared_bytes, void** params, int cooperative, unsigned long long seed, const char** error) {
    Call<A...> c{kernel, params};
    return run_grid(call_kernel<A...>, &c, grid_x, grid_y, block_x, block_y, shared_bytes, cooperative != 0, seed,
                    error);
}

}  // namespace spla_emu

#define threadIdx (spla_emu::current->index)
#define blockIdx (spla_emu::current->block->index)
#define blockDim (spla_emu::block_dim)
#define gridDim (spla_emu::grid_dim)
// ---- barriers and warp collectives
inline void __syncthreads() { spla_emu::sync_block(); }
inline int __syncthreads_or(int predicate) {
    spla_emu::Block& b = spla_emu::my_block();
    spla_emu::sync_block();  // the flag of the last call is read by all before it is reset
    if (predicate) b.or_flag = 1;
    spla_emu::sync_block();
    const int any = b.or_flag;
    spla_emu::sync_block();
    b.or_flag = 0;
    return any;
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { spla_emu::sync_lanes(mask); }
inline unsigned __activemask() {  // the warp's lanes that have not returned
    unsigned mask = 0;
    const unsigned first = spla_emu::current->linear / spla_emu::WARP * spla_emu::WARP;
    for (unsigned l = 0; l < spla_emu::WARP && first + l < blockDim.x * blockDim.y; ++l)
        if (!spla_emu::my_block().fibers[first + l]->done) mask |= 1u << l;
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

// ---- memory: one thread runs at a time, so an atomic is a plain read-modify-write. With a seed,
// a thread also gives way before each atomic and fence (the other threads run on, as other SMs
// would between a thread's write and its atomic: a "last block" that takes its ticket before
// another block's partial is in then shows).
inline void __threadfence() { spla_emu::give_way(); }

inline void __threadfence_block() {}
inline void __nanosleep(unsigned) { spla_emu::yield(); }
template <typename T> T __ldg(const T* p) { return *p; }
template <typename T> T __ldcs(const T* p) { return *p; }
template <typename T> T __ldcg(const T* p) { return *p; }
template <typename T> T __ldca(const T* p) { return *p; }
template <typename T> T __ldlu(const T* p) { return *p; }
template <typename T> void __stcs(T* p, T v) { *p = v; }
template <typename T> void __stcg(T* p, T v) { *p = v; }
// an atomic: give way, then one read-modify-write that nothing interrupts
template <typename T, typename F> T spla_emu_atomic(T* p, F update) {
    spla_emu::give_way();
    const T old = *p;
    *p = update(old);
    return old;
}
template <typename T, typename U> T atomicAdd(T* p, U v) { return spla_emu_atomic(p, [&](T o) { return T(o + T(v)); }); }
template <typename T, typename U> T atomicSub(T* p, U v) { return spla_emu_atomic(p, [&](T o) { return T(o - T(v)); }); }
template <typename T, typename U> T atomicOr(T* p, U v) { return spla_emu_atomic(p, [&](T o) { return T(o | T(v)); }); }
template <typename T, typename U> T atomicAnd(T* p, U v) { return spla_emu_atomic(p, [&](T o) { return T(o & T(v)); }); }
template <typename T, typename U> T atomicMax(T* p, U v) { return spla_emu_atomic(p, [&](T o) { return std::max(o, T(v)); }); }
template <typename T, typename U> T atomicMin(T* p, U v) { return spla_emu_atomic(p, [&](T o) { return std::min(o, T(v)); }); }
template <typename T, typename U> T atomicExch(T* p, U v) { return spla_emu_atomic(p, [&](T) { return T(v); }); }
template <typename T> T atomicCAS(T* p, T compare, T v) {
    return spla_emu_atomic(p, [&](T o) { return o == compare ? v : o; });
}

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
using std::isfinite;  // global functions in CUDA
using std::isinf;
using std::isnan;
template <typename A, typename B> std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <typename A, typename B> std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }

// ---- cp.async: issue, commit a group, wait until at most `pending` groups are in flight
namespace spla_emu {
inline void cp_async16(void* dst, const void* src, bool valid) { current->open.push_back({dst, src, valid}); }
inline void cp_async_commit() {
    current->groups.push_back(std::move(current->open));
    current->open.clear();
}
inline void cp_async_wait(std::size_t pending) {
    auto& groups = current->groups;
    std::size_t landed = 0;
    for (; groups.size() - landed > pending; ++landed)
        for (const AsyncCopy& c : groups[landed]) {
            if (c.valid) std::memcpy(c.dst, c.src, 16);
            else std::memset(c.dst, 0, 16);
        }
    groups.erase(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(landed));
}
}  // namespace spla_emu

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
