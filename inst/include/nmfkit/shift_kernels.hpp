// Kernels of permutation NMF: shifts of column-major images in real space,
// SinglePermNNLS (one atom, exact, by FFT cross-correlation) and
// MultPermNNLS (block coordinate descent over the atoms of one image).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "fft.hpp"
#include "types.hpp"

namespace nmfkit {

/// One term rho S_g w of the model.
struct PermTerm {
  double rho;
  int g;
};

namespace detail {

/// dst += alpha * S_g src on r x s column-major images (real space).
inline void add_shifted_real(Index r, Index s, ShiftGroup grp,
                             const double* src, Index g, double alpha,
                             double* dst) {
  if (alpha == 0.0) return;
  if (grp == ShiftGroup::circular1d) {
    const Index m = r * s;
    for (Index q = g; q < m; ++q) dst[q] += alpha * src[q - g];
    for (Index q = 0; q < g; ++q) dst[q] += alpha * src[q - g + m];
    return;
  }
  const Index a = g % r, b = g / r;
  for (Index j = 0; j < s; ++j) {
    const Index jj = j >= b ? j - b : j - b + s;
    const double* sc = src + jj * r;
    double* dc = dst + j * r;
    for (Index i = a; i < r; ++i) dc[i] += alpha * sc[i - a];
    for (Index i = 0; i < a; ++i) dc[i] += alpha * sc[i - a + r];
  }
}

/// The shift undoing g.
inline Index inverse_shift(Index r, Index s, ShiftGroup grp, Index g) {
  if (grp == ShiftGroup::circular1d) return (r * s - g) % (r * s);
  const Index a = g % r, b = g / r;
  return (r - a) % r + r * ((s - b) % s);
}

}  // namespace detail

namespace detail {
/// The term maximising c(g) = <v, S_g w> (m values): g* = argmax, ties (up
/// to the FFT's rounding) to the smallest index, rho = c(g*) / ||w||^2; when
/// no c(g) is positive, rho = 0 and g_prev is kept.
inline PermTerm best_term(const double* c, Index m, double w_sq, int g_prev) {
  Index best = 0;
  for (Index i = 1; i < m; ++i)
    if (c[i] > c[best]) best = i;
  if (!(c[best] > 0.0)) return {0.0, g_prev};
  const double tie = c[best] * (1.0 - 1e-12);
  for (Index i = 0; i < best; ++i)
    if (c[i] >= tie) {
      best = i;
      break;
    }
  return {c[best] / w_sq, int(best)};
}
}  // namespace detail

/// SinglePermNNLS: argmin over rho >= 0 and g of ||v - rho S_g w||^2, from
/// v_hat = FFT(v), w_hat = FFT(w) and w_sq = ||w||^2: the best g maximises
/// <v, S_g w>, computed for every g by one cross-correlation (see
/// detail::best_term for ties and the case of no positive correlation).
inline PermTerm single_perm_nnls(const Fft& fft, const Cplx* v_hat,
                                 const Cplx* w_hat, double w_sq,
                                 FftWork& work, int g_prev) {
  if (!(w_sq > 0.0)) return {0.0, g_prev};
  fft.correlate(v_hat, w_hat, work);
  return detail::best_term(work.real.data(), fft.pixels(), w_sq, g_prev);
}

/// The spectra an H step shares between images: per atom its FFT (nc each,
/// contiguous), ||w||^2 and its autocorrelation ac(h) = <w, S_h w> (m each).
struct AtomSpectra {
  std::vector<Cplx> w_hat;
  Vec w_sq;
  Mat autocorr;  // m x k

  AtomSpectra(const Fft& fft, const Mat& w) {
    const Index k = w.cols(), nc = fft.nc();
    w_hat.resize(size_t(k * nc));
    w_sq.resize(k);
    autocorr.resize(fft.pixels(), k);
    FftWork work = fft.make_work();
    for (Index t = 0; t < k; ++t) {
      Cplx* wt = &w_hat[size_t(t * nc)];
      fft.forward_copy(w.col(t).data(), work, wt);
      w_sq[t] = w.col(t).squaredNorm();
      fft.correlate(wt, wt, work);
      std::copy(work.real.data(), work.real.data() + fft.pixels(),
                autocorr.col(t).data());
    }
  }
  const Cplx* atom(Index t, Index nc) const { return &w_hat[size_t(t * nc)]; }
};

namespace detail {
/// c(g) += rho * ac(g - g0) for every g (group subtraction).
inline void add_autocorr(const Fft& fft, const double* ac, Index g0,
                         double rho, double* c) {
  if (rho == 0.0) return;
  const Index r = fft.rows(), s = fft.cols(), m = fft.pixels();
  if (fft.group() == ShiftGroup::circular1d) {
    for (Index g = 0; g < g0; ++g) c[g] += rho * ac[g - g0 + m];
    for (Index g = g0; g < m; ++g) c[g] += rho * ac[g - g0];
    return;
  }
  const Index a0 = g0 % r, b0 = g0 / r;
  for (Index b = 0; b < s; ++b) {
    const double* acol = ac + r * (b >= b0 ? b - b0 : b - b0 + s);
    double* ccol = c + r * b;
    for (Index a = a0; a < r; ++a) ccol[a] += rho * acol[a - a0];
    for (Index a = 0; a < a0; ++a) ccol[a] += rho * acol[a - a0 + r];
  }
}
}  // namespace detail

/// MultPermNNLS: up to `inner` sweeps of block coordinate descent over the k
/// atoms for one image, warm-started at (rho, g) (k entries each). v_hat is
/// the image's spectrum (it may point to work.spec2, where the residual is
/// kept in the Fourier domain). A block needs one inverse FFT: the
/// correlation of the atom with the image minus the other atoms is that with
/// the full residual plus rho_t times the atom's autocorrelation, shifted.
/// Stops early once a sweep moves no shift and no coefficient by more than
/// 1e-9 of the largest.
inline void mult_perm_nnls(const Fft& fft, const Cplx* v_hat,
                           const AtomSpectra& at, int inner, double* rho,
                           int* g, FftWork& work) {
  constexpr double kRhoTol = 1e-9;
  const Index nc = fft.nc(), m = fft.pixels(), k = at.w_sq.size();
  Cplx* res = work.spec2.data();
  if (v_hat != res) std::copy(v_hat, v_hat + nc, res);
  for (Index t = 0; t < k; ++t)
    fft.add_shifted(at.atom(t, nc), g[t], -rho[t], res);
  for (int sweep = 0; sweep < inner; ++sweep) {
    bool moved = false;
    double rho_max = 0.0, change = 0.0;
    for (Index t = 0; t < k; ++t) {
      const Cplx* wt = at.atom(t, nc);
      PermTerm p{0.0, g[t]};
      if (at.w_sq[t] > 0.0) {
        fft.correlate(res, wt, work);
        double* c = work.real.data();
        detail::add_autocorr(fft, at.autocorr.col(t).data(), g[t], rho[t], c);
        p = detail::best_term(c, m, at.w_sq[t], g[t]);
      }
      if (p.g == g[t]) {
        fft.add_shifted(wt, g[t], rho[t] - p.rho, res);
      } else {
        fft.add_shifted(wt, g[t], rho[t], res);
        fft.add_shifted(wt, p.g, -p.rho, res);
        moved = true;
      }
      change = std::max(change, std::abs(p.rho - rho[t]));
      rho_max = std::max(rho_max, p.rho);
      rho[t] = p.rho;
      g[t] = p.g;
    }
    if (!moved && change <= kRhoTol * rho_max) break;
  }
}

}  // namespace nmfkit
