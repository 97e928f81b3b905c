#include <stdint.h>
typedef int32_t I;
#define PLAIN(NAME, V) \
void NAME(int64_t b, int64_t e, const I *ip, const I *ix, const V *d, const V *x, V *y) { \
    for (int64_t i = b; i < e; ++i) { V s = 0; for (I p = ip[i]; p < ip[i+1]; ++p) s += d[p] * x[ix[p]]; y[i] = s; } }
PLAIN(plain_f64, double)
PLAIN(plain_f32, float)
/* two rows at once: each row's sum in its own order (the same bits); the common length first, then the longer row's tail */
#define PAIR(NAME, V) \
void NAME(int64_t b, int64_t e, const I *ip, const I *ix, const V *d, const V *x, V *y) { \
    int64_t i = b; \
    for (; i + 1 < e; i += 2) { \
        I p0 = ip[i], e0 = ip[i+1], p1 = e0, e1 = ip[i+2]; \
        V s0 = 0, s1 = 0; \
        I n = (e0 - p0) < (e1 - p1) ? (e0 - p0) : (e1 - p1); \
        for (I k = 0; k < n; ++k) { s0 += d[p0 + k] * x[ix[p0 + k]]; s1 += d[p1 + k] * x[ix[p1 + k]]; } \
        for (I p = p0 + n; p < e0; ++p) s0 += d[p] * x[ix[p]]; \
        for (I p = p1 + n; p < e1; ++p) s1 += d[p] * x[ix[p]]; \
        y[i] = s0; y[i+1] = s1; \
    } \
    for (; i < e; ++i) { V s = 0; for (I p = ip[i]; p < ip[i+1]; ++p) s += d[p] * x[ix[p]]; y[i] = s; } }
PAIR(pair_f64, double)
PAIR(pair_f32, float)
#define QUAD(NAME, V) \
void NAME(int64_t b, int64_t e, const I *ip, const I *ix, const V *d, const V *x, V *y) { \
    int64_t i = b; \
    for (; i + 3 < e; i += 4) { \
        I p[4], q[4]; V s[4] = {0, 0, 0, 0}; I n = 0x7fffffff; \
        for (int r = 0; r < 4; ++r) { p[r] = ip[i+r]; q[r] = ip[i+r+1]; if (q[r] - p[r] < n) n = q[r] - p[r]; } \
        for (I k = 0; k < n; ++k) { \
            s[0] += d[p[0]+k] * x[ix[p[0]+k]]; s[1] += d[p[1]+k] * x[ix[p[1]+k]]; \
            s[2] += d[p[2]+k] * x[ix[p[2]+k]]; s[3] += d[p[3]+k] * x[ix[p[3]+k]]; } \
        for (int r = 0; r < 4; ++r) { for (I t = p[r] + n; t < q[r]; ++t) s[r] += d[t] * x[ix[t]]; y[i+r] = s[r]; } \
    } \
    for (; i < e; ++i) { V s = 0; for (I t = ip[i]; t < ip[i+1]; ++t) s += d[t] * x[ix[t]]; y[i] = s; } }
QUAD(quad_f64, double)
QUAD(quad_f32, float)
