/* CG's iterations on the CPU, several threads at once: the host twin of the GPU's one-launch
 * loop (spla_cg_loop in kernels/solver_cg_product.cu), run by spla/backends/cpu.py (CgLoop).
 *
 * Why: NumPy runs CG's vector steps (two dot products, three axpys) on one thread, a pass over
 * memory each, with the SpMV between them; on a machine with several cores the loop is bound by
 * one core's bandwidth. Here each thread owns a range of rows (cut by nonzeros) and does every
 * step for those rows, so all cores stream at once, in the GPU loop's order:
 *   direction: p = z + beta p_prev over the thread's rows, then a barrier;
 *   product:   q = A p and p.q;
 *   update:    x += alpha p, r -= alpha q, with Jacobi z = dinv r, and r.z and r.r.
 * Three barriers an iteration: after the direction and after each step's partial sums. (The GPU
 * loop forms p at each nonzero from z and p_prev instead, saving a grid barrier; on the CPU that
 * second gather a nonzero cost more than the pass and its barrier: 0.67-0.92x the time on one
 * thread, 0.37-0.95x on two, over 44 systems, docs/lab/cpu-2026-12-05-session30.) Every thread sums the
 * partials in thread order, so all of them take the same alpha, beta and convergence verdict,
 * and a run's iterates depend on the thread count (the partial sums' order), not on timing.
 *
 * Scalars and the state layout are the GPU loop's: sums in double, alpha and beta rounded to
 * the value type; state[0] the breakdown flag, state[1] p.q, state[2 + 2 (k % 2)] rho_k (r.z, or
 * r.r without Jacobi), with Jacobi state[3 + 2 (k % 2)] r.r, state[6] = 1 once sqrt(r.r) < atol,
 * state[7] the last iteration run. The loop stops after the iteration that converged or broke
 * down, and a call that finds either set does nothing. Without Jacobi the caller passes r as z.
 *
 * The barrier spins (an iteration is tens of microseconds on small systems), yielding the core
 * after a while. Threads are made for a call and joined at its end: nothing outlives it. On
 * Linux each new thread is bound, for its short life, to a CPU of its own among those the caller
 * may use, other than the caller's: left to the scheduler, a new thread often started on the
 * caller's CPU and stayed there for the whole call (seen with sched_getcpu on a 2-core VM), and
 * two spinning threads on one CPU ran 3x slower than one thread.
 */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np, sched_getcpu */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#define SPIN_BEFORE_YIELD 128
/* 64 bytes between two threads' partial sums: each writes at most 16 bytes at the start of its
 * slot, and calloc's 16-byte alignment keeps those inside one line, a line a thread */
#define LINE_DOUBLES 8

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

typedef struct {
    unsigned arrived;
    unsigned generation;
    unsigned parties;
} spin_barrier;

static void barrier_wait(spin_barrier *b) {
    const unsigned generation = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == b->parties) {
        __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->generation, generation + 1, __ATOMIC_RELEASE);
        return;
    }
    for (unsigned spins = 0; __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) == generation; ++spins) {
        if (spins < SPIN_BEFORE_YIELD) {
            cpu_relax();
        } else {
            sched_yield();
        }
    }
}

/* One call's work, shared by its threads; vectors as void pointers, typed in the thread body. */
typedef struct {
    int64_t n;
    const void *indptr, *indices, *data;
    void *x, *r, *z;
    const void *dinv; /* NULL: no Jacobi */
    void *p_even, *p_odd, *q;
    double *state;
    int64_t first, count;
    double atol;
    const int64_t *cuts; /* thread t owns rows [cuts[t], cuts[t + 1]) */
    double *partials;    /* 2 groups (product, update) x threads x LINE_DOUBLES */
    int64_t threads;
    spin_barrier barrier;
    int go; /* 0 wait, 1 run, -1 give up (a thread could not be made) */
} cg_job;

/* The sums of `count` values each thread left in group `group`, added in thread order. */
static void gather(const cg_job *job, int group, int count, double *out) {
    for (int s = 0; s < count; ++s) out[s] = 0.0;
    for (int64_t t = 0; t < job->threads; ++t) {
        const double *mine = job->partials + (group * job->threads + t) * LINE_DOUBLES;
        for (int s = 0; s < count; ++s) out[s] += mine[s];
    }
}

static void publish(cg_job *job, int group, int64_t thread, int count, const double *values) {
    double *mine = job->partials + (group * job->threads + thread) * LINE_DOUBLES;
    for (int s = 0; s < count; ++s) mine[s] = values[s];
}

#define SPLA_CG_THREAD(NAME, V, I)                                                                      \
    static void NAME(cg_job *job, int64_t thread) {                                                     \
        const I *indptr = job->indptr, *indices = job->indices;                                         \
        const V *data = job->data, *dinv = job->dinv;                                                   \
        V *x = job->x, *r = job->r, *z = job->z, *q = job->q;                                           \
        double *state = job->state;                                                                     \
        const int64_t lo = job->cuts[thread], hi = job->cuts[thread + 1];                               \
        const int jacobi = dinv != NULL, sums_count = jacobi ? 2 : 1;                                   \
        double flag = state[0];                                                                         \
        double rho = state[2 + 2 * ((job->first - 1) & 1)]; /* rho_{k-1} */                             \
        double rho_old = state[2 + 2 * (job->first & 1)];   /* rho_{k-2}, not read when first == 1 */   \
        for (int64_t k = job->first; k < job->first + job->count; ++k) {                                \
            V *p = (k & 1) ? job->p_odd : job->p_even;                                                  \
            const V *p_prev = (k & 1) ? job->p_even : job->p_odd;                                       \
            double pq = 0.0;                                                                            \
            if (k > 1) {                                                                                \
                const V beta = (V)(rho_old != 0.0 ? rho / rho_old : 0.0);                               \
                for (int64_t i = lo; i < hi; ++i) p[i] = z[i] + beta * p_prev[i];                       \
                barrier_wait(&job->barrier); /* every entry of p is set before any row reads it */      \
            }                                                                                           \
            for (int64_t i = lo; i < hi; ++i) {                                                         \
                V sum = 0;                                                                              \
                for (I j = indptr[i]; j < indptr[i + 1]; ++j) sum += data[j] * p[indices[j]];           \
                q[i] = sum;                                                                             \
                pq += (double)p[i] * (double)sum;                                                       \
            }                                                                                           \
            publish(job, 0, thread, 1, &pq);                                                            \
            barrier_wait(&job->barrier);                                                                \
            gather(job, 0, 1, &pq);                                                                     \
            const double step = rho / pq;                                                               \
            const int bad = !(pq != 0.0) || !isfinite(step);                                            \
            const V alpha = (V)((bad || flag != 0.0) ? 0.0 : step);                                     \
            if (bad) flag = 1.0;                                                                        \
            double sums[2] = {0.0, 0.0};                                                                \
            for (int64_t i = lo; i < hi; ++i) {                                                         \
                x[i] += alpha * p[i];                                                                   \
                const V r_i = r[i] - alpha * q[i];                                                      \
                r[i] = r_i;                                                                             \
                if (jacobi) {                                                                           \
                    const V z_i = dinv[i] * r_i;                                                        \
                    z[i] = z_i;                                                                         \
                    sums[0] += (double)r_i * (double)z_i;                                               \
                    sums[1] += (double)r_i * (double)r_i;                                               \
                } else {                                                                                \
                    sums[0] += (double)r_i * (double)r_i;                                               \
                }                                                                                       \
            }                                                                                           \
            publish(job, 1, thread, sums_count, sums);                                                  \
            barrier_wait(&job->barrier);                                                                \
            gather(job, 1, sums_count, sums);                                                           \
            rho_old = rho;                                                                              \
            rho = sums[0];                                                                              \
            const double rr = sums[sums_count - 1];                                                     \
            const int converged = sqrt(0.0 > rr ? 0.0 : rr) < job->atol; /* NaN does not converge */   \
            if (thread == 0) {                                                                          \
                state[0] = flag;                                                                        \
                state[1] = pq;                                                                          \
                for (int s = 0; s < sums_count; ++s) state[2 + 2 * (k & 1) + s] = sums[s];              \
                state[6] = converged ? 1.0 : 0.0;                                                       \
                state[7] = (double)k;                                                                   \
            }                                                                                           \
            if (converged || flag != 0.0) break;                                                        \
        }                                                                                               \
    }

SPLA_CG_THREAD(cg_thread_f32_i32, float, int32_t)
SPLA_CG_THREAD(cg_thread_f64_i32, double, int32_t)
SPLA_CG_THREAD(cg_thread_f32_i64, float, int64_t)
SPLA_CG_THREAD(cg_thread_f64_i64, double, int64_t)

typedef void (*cg_body)(cg_job *, int64_t);

/* What a new thread runs: `body` for thread number `thread` of `job`, once the caller says go. */
typedef struct {
    cg_job *job;
    int64_t thread;
    cg_body body;
} cg_start;

static void *worker(void *argument) {
    cg_start *start = argument;
    int go;
    while ((go = __atomic_load_n(&start->job->go, __ATOMIC_ACQUIRE)) == 0) sched_yield();
    if (go > 0) start->body(start->job, start->thread);
    return NULL;
}

/* Binds `attr` to the CPU worker number `worker` (from 0) takes: the caller's allowed CPUs other
 * than the one it runs on, in order, round robin. Leaves it unbound where that cannot be known. */
static void place(pthread_attr_t *attr, int64_t worker) {
#ifdef __linux__
    cpu_set_t allowed, one;
    const int here = sched_getcpu();
    if (here < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    CPU_CLR(here, &allowed);
    const int others = CPU_COUNT(&allowed);
    if (others == 0) return;
    int skip = (int)(worker % others);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &allowed) && skip-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            pthread_attr_setaffinity_np(attr, sizeof one, &one);
            return;
        }
    }
#else
    (void)attr;
    (void)worker;
#endif
}

/* Runs iterations first .. first + count - 1 (or fewer, see above) on `threads` threads: the
 * caller's and threads - 1 new ones. Returns 0, or -1 when a thread could not be made (nothing
 * was run; the caller may retry with one thread). */
static int64_t run(cg_body body, cg_job *job) {
    if (job->state[0] != 0.0 || job->state[6] != 0.0 || job->count < 1) return 0;
    const int64_t threads = job->threads;
    double *partials = calloc((size_t)(2 * threads * LINE_DOUBLES), sizeof(double));
    pthread_t *handles = calloc((size_t)threads, sizeof(pthread_t));
    cg_start *starts = calloc((size_t)threads, sizeof(cg_start));
    int64_t made = 0;
    int64_t result = 0;
    if (partials == NULL || handles == NULL || starts == NULL) {
        result = -1;
        goto done;
    }
    job->partials = partials;
    job->barrier = (spin_barrier){0, 0, (unsigned)threads};
    job->go = 0;
    for (made = 1; made < threads; ++made) {
        starts[made] = (cg_start){job, made, body};
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0) break;
        place(&attr, made - 1);
        const int failed = pthread_create(&handles[made], &attr, worker, &starts[made]) != 0;
        pthread_attr_destroy(&attr);
        if (failed) break;
    }
    if (made < threads) {
        __atomic_store_n(&job->go, -1, __ATOMIC_RELEASE);
        result = -1;
    } else {
        __atomic_store_n(&job->go, 1, __ATOMIC_RELEASE);
        body(job, 0);
    }
    for (int64_t t = 1; t < made; ++t) pthread_join(handles[t], NULL);
done:
    free(partials);
    free(handles);
    free(starts);
    return result;
}

#define SPLA_CG_LOOP(NAME, BODY)                                                                        \
    int64_t NAME(int64_t n, const void *indptr, const void *indices, const void *data, void *x, void *r, \
                 void *z, const void *dinv, void *p_even, void *p_odd, void *q, double *state,          \
                 int64_t first, int64_t count, double atol, int64_t threads, const int64_t *cuts) {     \
        cg_job job = {n, indptr, indices, data, x, r, z, dinv, p_even, p_odd, q, state, first, count,   \
                      atol, cuts, NULL, threads, {0, 0, 0}, 0};                                         \
        return run(BODY, &job);                                                                         \
    }

SPLA_CG_LOOP(spla_cg_loop_f32_i32, cg_thread_f32_i32)
SPLA_CG_LOOP(spla_cg_loop_f64_i32, cg_thread_f64_i32)
SPLA_CG_LOOP(spla_cg_loop_f32_i64, cg_thread_f32_i64)
SPLA_CG_LOOP(spla_cg_loop_f64_i64, cg_thread_f64_i64)

/* a.b in double on the calling thread, for the solvers' norms and CG's first rho (cpu.dot):
 * NumPy's dot calls BLAS, whose idle threads then spin for ~0.1 s on the cores the loop's
 * threads need. Eight running sums, then added pairwise. */
#define SPLA_DOT(NAME, V)                                                                               \
    double NAME(int64_t n, const V *a, const V *b) {                                                    \
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, tail = 0.0;                                             \
        int64_t i = 0;                                                                                  \
        for (; i + 8 <= n; i += 8)                                                                      \
            for (int k = 0; k < 8; ++k) s[k] += (double)a[i + k] * (double)b[i + k];                    \
        for (; i < n; ++i) tail += (double)a[i] * (double)b[i];                                         \
        return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) + tail;              \
    }

SPLA_DOT(spla_dot_f32, float)
SPLA_DOT(spla_dot_f64, double)
