#include <stdint.h>
void data_f64(int64_t b, int64_t e, const int32_t *ip, const int32_t *ix, const double *d, const double *x, double *y) {
    for (int64_t i = b; i < e; ++i) { double s = 0; for (int32_t p = ip[i]; p < ip[i+1]; ++p) s += d[p] * x[ix[p]]; y[i] = s; } }
void uni_f64(int64_t b, int64_t e, const int32_t *ip, const int32_t *ix, double c, const double *x, double *y) {
    for (int64_t i = b; i < e; ++i) { double s = 0; for (int32_t p = ip[i]; p < ip[i+1]; ++p) s += c * x[ix[p]]; y[i] = s; } }
void data_f32(int64_t b, int64_t e, const int32_t *ip, const int32_t *ix, const float *d, const float *x, float *y) {
    for (int64_t i = b; i < e; ++i) { float s = 0; for (int32_t p = ip[i]; p < ip[i+1]; ++p) s += d[p] * x[ix[p]]; y[i] = s; } }
void uni_f32(int64_t b, int64_t e, const int32_t *ip, const int32_t *ix, float c, const float *x, float *y) {
    for (int64_t i = b; i < e; ++i) { float s = 0; for (int32_t p = ip[i]; p < ip[i+1]; ++p) s += c * x[ix[p]]; y[i] = s; } }
