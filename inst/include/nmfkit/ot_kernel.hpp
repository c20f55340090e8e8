// The ground cost of entropic OT and its Gibbs kernel, applied in the log
// domain (max-shifted, with an exact log-sum-exp fallback) or as a plain
// matrix product; dense, or separable on a 1-D / 2-D grid.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "types.hpp"

namespace nmfkit {

namespace detail {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Below this a shifted kernel sum has lost (or may lose) relative accuracy to
// underflow; such entries are recomputed by an exact log-sum-exp.
constexpr double kTiny = 1e-290;

/// out(i, j) = LSE_k( z(k, j) - cost(i, k) / eps ) for every column j of z,
/// where gibbs = exp(-cost / eps). Fast path: per-column max shift and one
/// matrix product; entries whose shifted sum is below kTiny are recomputed
/// exactly. With `need`, only entries with need(i, j) > 0 are recomputed (the
/// others may then hold -inf or an inexact value).
inline void log_apply(const Mat& cost, const Mat& gibbs, double eps,
                      const Eigen::Ref<const Mat>& z, Eigen::Ref<Mat> out,
                      const Mat* need = nullptr) {
  const Index rows = cost.rows(), inner = cost.cols(), cols = z.cols();
  Vec shift(cols);
  Mat u(inner, cols);
  for (Index j = 0; j < cols; ++j) {
    shift[j] = z.col(j).maxCoeff();
    if (shift[j] == kNegInf) {
      u.col(j).setZero();
    } else {
      u.col(j) = (z.col(j).array() - shift[j]).exp();
    }
  }
  out.noalias() = gibbs * u;
  for (Index j = 0; j < cols; ++j) {
    if (shift[j] == kNegInf) {
      out.col(j).setConstant(kNegInf);
      continue;
    }
    // flag the entries to redo as NaN before the (vectorised) log
    const bool all_ok = (out.col(j).array() >= kTiny).all() &&
                        out.col(j).allFinite();
    if (!all_ok) {
      for (Index i = 0; i < rows; ++i) {
        const double q = out(i, j);
        if (!(q >= kTiny && std::isfinite(q))) out(i, j) = -1.0;
      }
    }
    out.col(j) = out.col(j).array().log() + shift[j];
    if (all_ok) continue;
    for (Index i = 0; i < rows; ++i) {
      if (!std::isnan(out(i, j))) {
        continue;
      } else if (need == nullptr || (*need)(i, j) > 0) {
        double mx = kNegInf;
        for (Index k = 0; k < inner; ++k)
          mx = std::max(mx, z(k, j) - cost(i, k) / eps);
        double s = 0.0;
        if (mx != kNegInf) {
          for (Index k = 0; k < inner; ++k)
            s += std::exp(z(k, j) - cost(i, k) / eps - mx);
        }
        out(i, j) = mx == kNegInf ? kNegInf : mx + std::log(s);
      } else {
        out(i, j) = kNegInf;
      }
    }
  }
}

}  // namespace detail

/// The ground cost of entropic OT on m bins at one epsilon, with its Gibbs
/// kernel. Dense: any m x m cost. Separable: a squared-Euclidean cost on an
/// r x s grid (bins in column-major order, s = 1 for a 1-D grid), given by
/// its per-axis factors c1 (r x r) and c2 (s x s), C = c1 (+) c2; applying
/// the kernel then costs O(m (r + s)) per column instead of O(m^2).
class OtKernel {
 public:
  /// A dense cost matrix (finite, nonnegative; need not be symmetric).
  static OtKernel dense(const Mat& cost, double eps) {
    require(cost.rows() == cost.cols() && cost.rows() > 0,
            "cost must be a square matrix");
    require(eps > 0, "epsilon must be positive");
    OtKernel k;
    k.eps_ = eps;
    k.separable_ = false;
    k.c1_ = cost;
    k.k1_ = (-cost.array() / eps).exp();
    k.symmetric_ = cost == cost.transpose();
    if (!k.symmetric_) {
      k.c1t_ = cost.transpose();
      k.k1t_ = k.k1_.transpose();
    }
    return k;
  }
  /// A separable cost C((i,j),(k,l)) = c1(i,k) + c2(j,l) (both symmetric).
  static OtKernel separable(const Mat& c1, const Mat& c2, double eps) {
    require(c1.rows() == c1.cols() && c2.rows() == c2.cols() &&
                c1.rows() > 0 && c2.rows() > 0,
            "axis costs must be square");
    require(eps > 0, "epsilon must be positive");
    OtKernel k;
    k.eps_ = eps;
    k.separable_ = c2.rows() > 1;
    k.symmetric_ = true;
    if (k.separable_) {
      k.c1_ = c1;
      k.c2_ = c2;
      k.k1_ = (-c1.array() / eps).exp();
      k.k2_ = (-c2.array() / eps).exp();
    } else {  // 1-D: the axis factor is the whole (dense) kernel
      k.c1_ = (c1.array() + c2(0, 0)).matrix();
      k.k1_ = (-k.c1_.array() / eps).exp();
    }
    return k;
  }

  /// Number of bins m.
  Index size() const {
    return separable_ ? c1_.rows() * c2_.rows() : c1_.rows();
  }
  double epsilon() const { return eps_; }

  /// Rough floating-point work of one semi-dual or Sinkhorn pass over one
  /// column: two kernel products plus a few exp/log per bin.
  double work_per_column() const {
    const double m = static_cast<double>(size());
    const double prod = separable_
        ? m * static_cast<double>(c1_.rows() + c2_.rows())
        : m * m;
    return 4.0 * prod + 60.0 * m;
  }
  /// Whether C(a, b) == C(b, a) (always so for a separable cost).
  bool is_symmetric() const { return symmetric_; }

  /// The full m x m cost matrix (for tests and small problems).
  Mat dense_cost() const {
    if (!separable_) return c1_;
    const Index r = c1_.rows(), s = c2_.rows();
    Mat c(r * s, r * s);
    for (Index j = 0; j < s; ++j)
      for (Index i = 0; i < r; ++i)
        for (Index l = 0; l < s; ++l)
          for (Index k = 0; k < r; ++k)
            c(i + r * j, k + r * l) = c1_(i, k) + c2_(j, l);
    return c;
  }

  /// out = K u, or K' u when `transpose`: the plain Gibbs kernel product.
  void apply(const Eigen::Ref<const Mat>& u, Eigen::Ref<Mat> out,
             bool transpose = false) const {
    if (!separable_) {
      if (transpose && !symmetric_) {
        out.noalias() = k1t_ * u;
      } else {
        out.noalias() = k1_ * u;
      }
      return;
    }
    const Index r = c1_.rows(), s = c2_.rows();
    Mat y(r, s);
    for (Index j = 0; j < u.cols(); ++j) {
      y.noalias() = k1_ * Eigen::Map<const Mat>(u.col(j).data(), r, s);
      Eigen::Map<Mat>(out.col(j).data(), r, s).noalias() = y * k2_;
    }
  }

  /// out(a, j) = LSE_b( z(b, j) - C(a, b) / eps ), or with C(b, a) when
  /// `transpose`. z may hold -inf (zero mass). With `need`, entries where
  /// need(a, j) == 0 are not required to be exact.
  void log_conv(const Eigen::Ref<const Mat>& z, Eigen::Ref<Mat> out,
                bool transpose = false, const Mat* need = nullptr) const {
    if (!separable_) {
      const bool t = transpose && !symmetric_;
      detail::log_apply(t ? c1t_ : c1_, t ? k1t_ : k1_, eps_, z, out, need);
      return;
    }
    const Index r = c1_.rows(), s = c2_.rows();
    Mat zt(s, r), yt(s, r), y(r, s), o(r, s), nd;
    for (Index j = 0; j < z.cols(); ++j) {
      // along the second axis: rows of the r x s image are columns of zt
      zt = Eigen::Map<const Mat>(z.col(j).data(), r, s).transpose();
      detail::log_apply(c2_, k2_, eps_, zt, yt);
      y = yt.transpose();
      const Mat* nd_ptr = nullptr;
      if (need != nullptr) {
        nd = Eigen::Map<const Mat>(need->col(j).data(), r, s);
        nd_ptr = &nd;
      }
      detail::log_apply(c1_, k1_, eps_, y, o, nd_ptr);
      out.col(j) = Eigen::Map<const Vec>(o.data(), r * s);
    }
  }

 private:
  double eps_ = 1.0;
  bool separable_ = false;
  bool symmetric_ = true;
  Mat c1_, k1_, c2_, k2_, c1t_, k1t_;
};

}  // namespace nmfkit
