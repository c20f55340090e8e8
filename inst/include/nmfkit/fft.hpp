// An RAII wrapper of FFTW for the shift groups of column-major images:
// real-to-complex transforms, circular cross-correlation and shifts applied in
// the Fourier domain. Plans are made once per image size, on one thread (the
// FFTW planner is not thread safe), and executed from any thread through the
// new-array interface on buffers from fftw_malloc (so their alignment equals
// that of the planning buffers).
#pragma once

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#include "types.hpp"

namespace nmfkit {

using Cplx = std::complex<double>;

/// The shift group acting on r x s images stored column-major (m = rs
/// pixels). A shift is an index g in [0, m) that moves the content forward:
///  * torus2d: g = a + r b, (S_g w)(i, j) = w((i - a) mod r, (j - b) mod s);
///  * circular1d: (S_g w)_q = w_{(q - g) mod m}, the paper's sigma_{-g}, a
///    2-D move by (a, b) whose rows wrap into the adjacent column.
enum class ShiftGroup { torus2d, circular1d };

/// How hard the FFTW planner works: estimate (instant) or measure (times
/// candidate algorithms once per size; FFTW's wisdom keeps the answer).
enum class FftPlanner { estimate, measure };

namespace detail {
// Complex products written out: std::complex's operator* calls the C99
// NaN/Inf recovery routine (__muldc3) unless -ffast-math, several times
// slower than these four multiplications.
inline Cplx mul(Cplx a, Cplx b) {
  return {a.real() * b.real() - a.imag() * b.imag(),
          a.real() * b.imag() + a.imag() * b.real()};
}
inline Cplx mul_conj(Cplx a, Cplx b) {  // a * conj(b)
  return {a.real() * b.real() + a.imag() * b.imag(),
          a.imag() * b.real() - a.real() * b.imag()};
}
struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};
struct PlanDestroy {
  void operator()(fftw_plan p) const;
};
/// The FFTW planner and plan destruction are not thread safe: serialise them.
inline std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}
inline void PlanDestroy::operator()(fftw_plan p) const {
  std::lock_guard<std::mutex> lock(planner_mutex());
  fftw_destroy_plan(p);
}
}  // namespace detail

/// A buffer of n T's from fftw_malloc, freed on destruction.
template <class T>
class FftBuffer {
 public:
  explicit FftBuffer(Index n)
      : n_(n),
        p_(static_cast<T*>(
            fftw_malloc(sizeof(T) * static_cast<size_t>(n > 0 ? n : 1)))) {
    if (!p_) throw std::bad_alloc();
  }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  Index size() const { return n_; }
  T& operator[](Index i) { return p_.get()[i]; }
  const T& operator[](Index i) const { return p_.get()[i]; }

 private:
  Index n_;
  std::unique_ptr<T, detail::FftwFree> p_;
};

/// Scratch space of one thread: a real image and two half spectra.
struct FftWork {
  explicit FftWork(Index m, Index nc) : real(m), spec(nc), spec2(nc) {}
  FftBuffer<double> real;
  FftBuffer<Cplx> spec;
  FftBuffer<Cplx> spec2;
};

/// Forward (r2c) and inverse (c2r) transforms of one image size and group.
/// The half spectrum has nc() entries: for torus2d a row-major s x (r/2 + 1)
/// array (FFTW sees the column-major r x s image as row-major s x r), for
/// circular1d m/2 + 1 entries. The inverse is unnormalised (FFTW's rule).
class Fft {
 public:
  Fft(Index rows, Index cols, ShiftGroup group,
      FftPlanner planner = FftPlanner::estimate)
      : r_(rows), s_(cols), group_(group) {
    require(rows >= 1 && cols >= 1, "Fft: image dimensions must be >= 1");
    nc_ = group == ShiftGroup::torus2d ? s_ * (r_ / 2 + 1) : pixels() / 2 + 1;
    FftWork w(pixels(), nc_);
    const unsigned flags =
        planner == FftPlanner::measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    auto* in = w.real.data();
    auto* out = reinterpret_cast<fftw_complex*>(w.spec.data());
    std::lock_guard<std::mutex> lock(detail::planner_mutex());
    if (group == ShiftGroup::torus2d) {
      fwd_.reset(fftw_plan_dft_r2c_2d(int(s_), int(r_), in, out, flags));
      inv_.reset(fftw_plan_dft_c2r_2d(int(s_), int(r_), out, in, flags));
    } else {
      fwd_.reset(fftw_plan_dft_r2c_1d(int(pixels()), in, out, flags));
      inv_.reset(fftw_plan_dft_c2r_1d(int(pixels()), out, in, flags));
    }
    require(fwd_ && inv_, "Fft: FFTW could not make a plan");
    // phase tables e^{-2 pi i m / len} for the shift theorem
    const Index len_a = group == ShiftGroup::torus2d ? r_ : pixels();
    phase_a_ = unit_roots(len_a);
    if (group == ShiftGroup::torus2d) phase_b_ = unit_roots(s_);
  }

  Index rows() const { return r_; }
  Index cols() const { return s_; }
  /// m: the pixels of an image, the length of a transform.
  Index pixels() const { return r_ * s_; }
  Index nc() const { return nc_; }
  ShiftGroup group() const { return group_; }
  FftWork make_work() const { return FftWork(pixels(), nc_); }

  /// out = FFT(in); in (m reals) and out (nc) from FftBuffer. in is kept.
  void forward(double* in, Cplx* out) const {
    fftw_execute_dft_r2c(fwd_.get(), in,
                         reinterpret_cast<fftw_complex*>(out));
  }
  /// out = m * IFFT(in); in is destroyed (FFTW's c2r rule).
  void inverse(Cplx* in, double* out) const {
    fftw_execute_dft_c2r(inv_.get(), reinterpret_cast<fftw_complex*>(in),
                         out);
  }
  /// FFT of an image held anywhere (copied to the aligned work buffer).
  void forward_copy(const double* image, FftWork& work, Cplx* out) const {
    std::copy(image, image + pixels(), work.real.data());
    forward(work.real.data(), work.spec.data());
    std::copy(work.spec.data(), work.spec.data() + nc_, out);
  }

  /// c(g) = <v, S_g w> for every shift g, from the spectra of v and w:
  /// c = IFFT(FFT(v) conj(FFT(w))). Writes m values to work.real.
  void correlate(const Cplx* v_hat, const Cplx* w_hat, FftWork& work) const {
    const double scale = 1.0 / double(pixels());
    Cplx* p = work.spec.data();
    for (Index i = 0; i < nc_; ++i)
      p[i] = scale * detail::mul_conj(v_hat[i], w_hat[i]);
    inverse(p, work.real.data());
  }

  /// dst += alpha * FFT(S_g w), given src = FFT(w): the shift theorem
  /// multiplies frequency (kappa, lambda) by
  /// e^{-2 pi i (a kappa / r + b lambda / s)}.
  void add_shifted(const Cplx* src, Index g, double alpha, Cplx* dst) const {
    if (alpha == 0.0) return;
    if (group_ == ShiftGroup::circular1d) {
      const Index len = pixels();
      Index m = 0;
      for (Index k = 0; k < nc_; ++k) {
        dst[k] += alpha * detail::mul(phase_a_[m], src[k]);
        m += g;
        if (m >= len) m -= len;
      }
      return;
    }
    const Index a = g % r_, b = g / r_, half = r_ / 2 + 1;
    Index mb = 0;
    for (Index lam = 0; lam < s_; ++lam) {
      const Cplx pb = alpha * phase_b_[mb];
      const Cplx* s = src + lam * half;
      Cplx* d = dst + lam * half;
      Index ma = 0;
      for (Index kap = 0; kap < half; ++kap) {
        d[kap] += detail::mul(detail::mul(pb, phase_a_[ma]), s[kap]);
        ma += a;
        if (ma >= r_) ma -= r_;
      }
      mb += b;
      if (mb >= s_) mb -= s_;
    }
  }

 private:
  static std::vector<Cplx> unit_roots(Index len) {
    std::vector<Cplx> out(static_cast<size_t>(len));
    const double two_pi = 6.283185307179586476925286766559;
    for (Index m = 0; m < len; ++m)
      out[size_t(m)] = std::polar(1.0, -two_pi * double(m) / double(len));
    return out;
  }

  Index r_, s_, nc_;
  ShiftGroup group_;
  std::unique_ptr<std::remove_pointer_t<fftw_plan>, detail::PlanDestroy> fwd_,
      inv_;
  std::vector<Cplx> phase_a_, phase_b_;
};

}  // namespace nmfkit
