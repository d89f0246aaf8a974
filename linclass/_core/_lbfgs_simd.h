/* Column kernels of the L-BFGS history passes (linclass._core._lbfgs), vectorised,
 * with run-time dispatch: AVX2, else plain C (GCC's lowering of the 4-double
 * vectors to baseline SSE2 measured slower than the plain loops).
 *
 * The history is float32, everything else float64; the passes are
 *   lc_lb_dot2:  out[0] += s.g, out[1] += y.g
 *   lc_lb_dot4:  out[0..3] += s.g, y.g, s.z, y.z
 *   lc_lb_ydiff: y = float32(g - g_old) written, out[0] += s.y, out[1] += y.y
 *   lc_lb_axpy2: acc -= a s + b y
 *   lc_lb_trial: x_out = x + acc, s_out = float32(x_out - x) (optional); returns g.acc
 * Every sum has 8 lanes (lane = j mod 8 from the start of the range), the lanes
 * are added as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), then the tail (n mod 8
 * entries, in order).  All levels do the same operations in the same order and
 * no level contracts a*b+c into an FMA (AVX2 without the fma target), so every
 * level gives the same bits; the tests compare them.
 */
#ifndef LINCLASS_LBFGS_SIMD_H
#define LINCLASS_LBFGS_SIMD_H

#include <stddef.h>
#include <string.h>

#include "_simd_level.h"

/* lc_lb_level(), lc_lb_set_level(): 0 baseline, 2 AVX2 (_simd_level.h) */
LC_SIMD_FAMILY(lc_lb)

/* ---- plain C: 8 lanes in arrays, the order of the vector levels ---- */
#define LC_LB_HSUM8(v) ((((v)[0] + (v)[4]) + ((v)[2] + (v)[6])) \
                        + (((v)[1] + (v)[5]) + ((v)[3] + (v)[7])))

static void lc_lb_dot2_c(const float* s, const float* y, const double* g, ptrdiff_t n,
                         double* out)
{
    double a[8] = {0}, b[8] = {0}, ta = 0.0, tb = 0.0;
    ptrdiff_t j = 0, l;
    for (; j + 8 <= n; j += 8)
        for (l = 0; l < 8; l++) {
            a[l] += (double)s[j + l] * g[j + l];
            b[l] += (double)y[j + l] * g[j + l];
        }
    for (; j < n; j++) {
        ta += (double)s[j] * g[j];
        tb += (double)y[j] * g[j];
    }
    out[0] += LC_LB_HSUM8(a) + ta;
    out[1] += LC_LB_HSUM8(b) + tb;
}

static void lc_lb_dot4_c(const float* s, const float* y, const double* g, const float* z,
                         ptrdiff_t n, double* out)
{
    double a[8] = {0}, b[8] = {0}, c[8] = {0}, d[8] = {0};
    double ta = 0.0, tb = 0.0, tc = 0.0, td = 0.0;
    ptrdiff_t j = 0, l;
    for (; j + 8 <= n; j += 8)
        for (l = 0; l < 8; l++) {
            a[l] += (double)s[j + l] * g[j + l];
            b[l] += (double)y[j + l] * g[j + l];
            c[l] += (double)s[j + l] * (double)z[j + l];
            d[l] += (double)y[j + l] * (double)z[j + l];
        }
    for (; j < n; j++) {
        ta += (double)s[j] * g[j];
        tb += (double)y[j] * g[j];
        tc += (double)s[j] * (double)z[j];
        td += (double)y[j] * (double)z[j];
    }
    out[0] += LC_LB_HSUM8(a) + ta;
    out[1] += LC_LB_HSUM8(b) + tb;
    out[2] += LC_LB_HSUM8(c) + tc;
    out[3] += LC_LB_HSUM8(d) + td;
}

static void lc_lb_ydiff_c(const double* g, const double* gp, const float* s, float* y,
                          ptrdiff_t n, double* out)
{
    double a[8] = {0}, b[8] = {0}, ta = 0.0, tb = 0.0, yd;
    ptrdiff_t j = 0, l;
    for (; j + 8 <= n; j += 8)
        for (l = 0; l < 8; l++) {
            y[j + l] = (float)(g[j + l] - gp[j + l]);
            yd = (double)y[j + l];
            a[l] += (double)s[j + l] * yd;
            b[l] += yd * yd;
        }
    for (; j < n; j++) {
        y[j] = (float)(g[j] - gp[j]);
        yd = (double)y[j];
        ta += (double)s[j] * yd;
        tb += yd * yd;
    }
    out[0] += LC_LB_HSUM8(a) + ta;
    out[1] += LC_LB_HSUM8(b) + tb;
}

static void lc_lb_axpy2_c(double* acc, const float* s, const float* y, double a, double b,
                          ptrdiff_t n)
{
    ptrdiff_t j;
    for (j = 0; j < n; j++)
        acc[j] -= a * (double)s[j] + b * (double)y[j];
}

static double lc_lb_trial_c(const double* acc, const double* g, const double* x,
                            double* x_out, float* s_out, ptrdiff_t n)
{
    double a[8] = {0}, t = 0.0;
    ptrdiff_t j = 0, l;
    for (; j + 8 <= n; j += 8)
        for (l = 0; l < 8; l++) {
            a[l] += g[j + l] * acc[j + l];
            x_out[j + l] = x[j + l] + acc[j + l];
        }
    for (; j < n; j++) {
        t += g[j] * acc[j];
        x_out[j] = x[j] + acc[j];
    }
    if (s_out != NULL)
        for (j = 0; j < n; j++)
            s_out[j] = (float)(x_out[j] - x[j]);
    return LC_LB_HSUM8(a) + t;
}

#ifdef LC_SIMD_X86
typedef double lc_v4d __attribute__((vector_size(32)));
typedef float lc_v4f __attribute__((vector_size(16)));

#define LC_LD4F(dst, p) do { lc_v4f t_; memcpy(&t_, (p), 16); \
                             dst = __builtin_convertvector(t_, lc_v4d); } while (0)
#define LC_LD4D(dst, p) memcpy(&(dst), (p), 32)
#define LC_ST4D(p, v) memcpy((p), &(v), 32)
#define LC_ST4F(p, v) do { lc_v4f t_ = __builtin_convertvector((v), lc_v4f); \
                           memcpy((p), &t_, 16); } while (0)
/* lanes lo = j..j+3, hi = j+4..j+7: the plain-C order ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) */
#define LC_HSUM(lo, hi) ({ lc_v4d v_ = (lo) + (hi); (v_[0] + v_[2]) + (v_[1] + v_[3]); })

#define LC_LB_DEFINE(SFX, ATTR)                                                         \
ATTR static void lc_lb_dot2_##SFX(const float* s, const float* y, const double* g,     \
                                  ptrdiff_t n, double* out)                            \
{                                                                                       \
    lc_v4d a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, s0, s1, y0, y1, g0, g1;              \
    double ta = 0.0, tb = 0.0;                                                          \
    ptrdiff_t j = 0;                                                                    \
    for (; j + 8 <= n; j += 8) {                                                        \
        LC_LD4F(s0, s + j); LC_LD4F(s1, s + j + 4);                                     \
        LC_LD4F(y0, y + j); LC_LD4F(y1, y + j + 4);                                     \
        LC_LD4D(g0, g + j); LC_LD4D(g1, g + j + 4);                                     \
        a0 += s0 * g0; a1 += s1 * g1;                                                   \
        b0 += y0 * g0; b1 += y1 * g1;                                                   \
    }                                                                                   \
    for (; j < n; j++) {                                                                \
        ta += (double)s[j] * g[j];                                                      \
        tb += (double)y[j] * g[j];                                                      \
    }                                                                                   \
    out[0] += LC_HSUM(a0, a1) + ta;                                                     \
    out[1] += LC_HSUM(b0, b1) + tb;                                                     \
}                                                                                       \
ATTR static void lc_lb_dot4_##SFX(const float* s, const float* y, const double* g,     \
                                  const float* z, ptrdiff_t n, double* out)             \
{                                                                                       \
    lc_v4d a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, c0 = {0}, c1 = {0}, d0 = {0},        \
           d1 = {0}, s0, s1, y0, y1, g0, g1, z0, z1;                                    \
    double ta = 0.0, tb = 0.0, tc = 0.0, td = 0.0;                                      \
    ptrdiff_t j = 0;                                                                    \
    for (; j + 8 <= n; j += 8) {                                                        \
        LC_LD4F(s0, s + j); LC_LD4F(s1, s + j + 4);                                     \
        LC_LD4F(y0, y + j); LC_LD4F(y1, y + j + 4);                                     \
        LC_LD4F(z0, z + j); LC_LD4F(z1, z + j + 4);                                     \
        LC_LD4D(g0, g + j); LC_LD4D(g1, g + j + 4);                                     \
        a0 += s0 * g0; a1 += s1 * g1;                                                   \
        b0 += y0 * g0; b1 += y1 * g1;                                                   \
        c0 += s0 * z0; c1 += s1 * z1;                                                   \
        d0 += y0 * z0; d1 += y1 * z1;                                                   \
    }                                                                                   \
    for (; j < n; j++) {                                                                \
        ta += (double)s[j] * g[j];                                                      \
        tb += (double)y[j] * g[j];                                                      \
        tc += (double)s[j] * (double)z[j];                                              \
        td += (double)y[j] * (double)z[j];                                              \
    }                                                                                   \
    out[0] += LC_HSUM(a0, a1) + ta;                                                     \
    out[1] += LC_HSUM(b0, b1) + tb;                                                     \
    out[2] += LC_HSUM(c0, c1) + tc;                                                     \
    out[3] += LC_HSUM(d0, d1) + td;                                                     \
}                                                                                       \
ATTR static void lc_lb_ydiff_##SFX(const double* g, const double* gp, const float* s,  \
                                   float* y, ptrdiff_t n, double* out)                  \
{                                                                                       \
    lc_v4d a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, s0, s1, u0, u1, v0, v1;              \
    lc_v4f f0, f1;                                                                      \
    double ta = 0.0, tb = 0.0, yd;                                                      \
    ptrdiff_t j = 0;                                                                    \
    for (; j + 8 <= n; j += 8) {                                                        \
        LC_LD4D(u0, g + j); LC_LD4D(u1, g + j + 4);                                     \
        LC_LD4D(v0, gp + j); LC_LD4D(v1, gp + j + 4);                                   \
        f0 = __builtin_convertvector(u0 - v0, lc_v4f);                                  \
        f1 = __builtin_convertvector(u1 - v1, lc_v4f);                                  \
        memcpy(y + j, &f0, 16); memcpy(y + j + 4, &f1, 16);                             \
        u0 = __builtin_convertvector(f0, lc_v4d);                                       \
        u1 = __builtin_convertvector(f1, lc_v4d);                                       \
        LC_LD4F(s0, s + j); LC_LD4F(s1, s + j + 4);                                     \
        a0 += s0 * u0; a1 += s1 * u1;                                                   \
        b0 += u0 * u0; b1 += u1 * u1;                                                   \
    }                                                                                   \
    for (; j < n; j++) {                                                                \
        y[j] = (float)(g[j] - gp[j]);                                                   \
        yd = (double)y[j];                                                              \
        ta += (double)s[j] * yd;                                                        \
        tb += yd * yd;                                                                  \
    }                                                                                   \
    out[0] += LC_HSUM(a0, a1) + ta;                                                     \
    out[1] += LC_HSUM(b0, b1) + tb;                                                     \
}                                                                                       \
ATTR static void lc_lb_axpy2_##SFX(double* acc, const float* s, const float* y,        \
                                   double a, double b, ptrdiff_t n)                     \
{                                                                                       \
    lc_v4d va = {a, a, a, a}, vb = {b, b, b, b}, s0, y0, c0;                            \
    ptrdiff_t j = 0;                                                                    \
    for (; j + 4 <= n; j += 4) {                                                        \
        LC_LD4F(s0, s + j); LC_LD4F(y0, y + j); LC_LD4D(c0, acc + j);                   \
        c0 -= va * s0 + vb * y0;                                                        \
        LC_ST4D(acc + j, c0);                                                           \
    }                                                                                   \
    for (; j < n; j++)                                                                  \
        acc[j] -= a * (double)s[j] + b * (double)y[j];                                  \
}                                                                                       \
ATTR static double lc_lb_trial_##SFX(const double* acc, const double* g,               \
                                     const double* x, double* x_out, float* s_out,      \
                                     ptrdiff_t n)                                       \
{                                                                                       \
    lc_v4d a0 = {0}, a1 = {0}, c0, c1, g0, g1, x0, x1, o0, o1;                          \
    double t = 0.0;                                                                     \
    ptrdiff_t j = 0;                                                                    \
    for (; j + 8 <= n; j += 8) {                                                        \
        LC_LD4D(c0, acc + j); LC_LD4D(c1, acc + j + 4);                                 \
        LC_LD4D(g0, g + j); LC_LD4D(g1, g + j + 4);                                     \
        LC_LD4D(x0, x + j); LC_LD4D(x1, x + j + 4);                                     \
        a0 += g0 * c0; a1 += g1 * c1;                                                   \
        o0 = x0 + c0; o1 = x1 + c1;                                                     \
        LC_ST4D(x_out + j, o0); LC_ST4D(x_out + j + 4, o1);                             \
        if (s_out != NULL) {                                                            \
            LC_ST4F(s_out + j, o0 - x0); LC_ST4F(s_out + j + 4, o1 - x1);               \
        }                                                                               \
    }                                                                                   \
    for (; j < n; j++) {                                                                \
        t += g[j] * acc[j];                                                             \
        x_out[j] = x[j] + acc[j];                                                       \
        if (s_out != NULL)                                                              \
            s_out[j] = (float)(x_out[j] - x[j]);                                        \
    }                                                                                   \
    return LC_HSUM(a0, a1) + t;                                                         \
}

LC_LB_DEFINE(avx2, LC_TARGET_AVX2)
#endif

#ifdef LC_SIMD_X86
#define LC_LB_DISPATCH(name, args) do { int lv_ = lc_lb_level();                       \
    if (lv_ == 2) { name##_avx2 args; } else { name##_c args; } } while (0)
#define LC_LB_DISPATCH_RET(name, args) do { int lv_ = lc_lb_level();                   \
    if (lv_ == 2) return name##_avx2 args;                                              \
    return name##_c args; } while (0)
#else
#define LC_LB_DISPATCH(name, args) name##_c args
#define LC_LB_DISPATCH_RET(name, args) return name##_c args
#endif

static void lc_lb_dot2(const float* s, const float* y, const double* g, ptrdiff_t n,
                       double* out)
{ LC_LB_DISPATCH(lc_lb_dot2, (s, y, g, n, out)); }

static void lc_lb_dot4(const float* s, const float* y, const double* g, const float* z,
                       ptrdiff_t n, double* out)
{ LC_LB_DISPATCH(lc_lb_dot4, (s, y, g, z, n, out)); }

static void lc_lb_ydiff(const double* g, const double* gp, const float* s, float* y,
                        ptrdiff_t n, double* out)
{ LC_LB_DISPATCH(lc_lb_ydiff, (g, gp, s, y, n, out)); }

static void lc_lb_axpy2(double* acc, const float* s, const float* y, double a, double b,
                        ptrdiff_t n)
{ LC_LB_DISPATCH(lc_lb_axpy2, (acc, s, y, a, b, n)); }

static double lc_lb_trial(const double* acc, const double* g, const double* x,
                          double* x_out, float* s_out, ptrdiff_t n)
{ LC_LB_DISPATCH_RET(lc_lb_trial, (acc, g, x, x_out, s_out, n)); }

#endif
