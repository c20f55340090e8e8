// Starting factors: a randomized truncated SVD and the NNDSVD family.
// The Gaussian test matrix and any random fill come from the caller (R's RNG).
#pragma once

#include <algorithm>
#include <cmath>

#include "hooks.hpp"
#include "types.hpp"

namespace nmfkit {

/// A truncated SVD X ~ U diag(d) V^T with k components.
struct Svd {
  Mat u;  // m x k
  Vec d;  // k
  Mat v;  // n x k
};

namespace detail {
/// The thin Q of y's Householder QR: stable for any y.
inline Mat householder_thin_q(const Mat& y) {
  Eigen::HouseholderQR<Mat> qr(y);
  return qr.householderQ() * Mat::Identity(y.rows(), y.cols());
}

/// Orthonormal basis of the columns of y (m x l, m >= l), as the thin Q of
/// a QR factorisation up to the signs of its columns.
/// CholeskyQR2 (Fukaya et al. 2014): Q1 = y R1^-1 with R1 the Cholesky factor
/// of y^T y, then the same once more on Q1. Both passes are a Gram product
/// and a triangular solve, level-3 work; an unblocked Householder QR of a
/// tall, narrow y and the product forming its Q are level-2 and cost a fifth
/// of a small joint-NMF fit (15 QRs per randomized SVD). One pass leaves
/// Q1^T Q1 - I of order cond(y)^2 eps; when that is not small (y nearly
/// rank-deficient, as for data of lower rank than l) or a Cholesky fails,
/// Householder QR is used instead.
inline Mat thin_q(const Mat& y) {
  const Eigen::Index l = y.cols();
  if (y.rows() < l || l == 0) return householder_thin_q(y);
  Mat q = y;
  Mat g(l, l);
  for (int pass = 0; pass < 2; ++pass) {
    g.setZero();
    g.selfadjointView<Eigen::Lower>().rankUpdate(q.transpose());
    if (pass == 1) {
      // the first pass must be near orthonormal for the second to finish
      // the job (and for its Cholesky to be accurate)
      const double dev =
          (g - Mat::Identity(l, l)).cwiseAbs().maxCoeff();
      if (!(dev < 0.1)) return householder_thin_q(y);
    }
    const Eigen::LLT<Mat, Eigen::Lower> llt(g);
    if (llt.info() != Eigen::Success) return householder_thin_q(y);
    if (!(llt.matrixLLT().diagonal().minCoeff() > 0.0))
      return householder_thin_q(y);
    llt.matrixU().solveInPlace<Eigen::OnTheRight>(q);
  }
  return q;
}
}  // namespace detail

/// Randomized SVD (Halko, Martinsson & Tropp) of X through the two products of
/// a data class (DenseData or SparseData): cost O(mnl) or O(nnz l) per pass.
/// omega (n x l, l >= k) is the Gaussian test matrix; power_iter passes of
/// X X^T with re-orthonormalisation sharpen the spectrum.
/// With v_by_columns, V is formed as X^T U diag(1/d) (see below), so that
/// identical columns of X get bitwise identical rows of V.
/// The host may interrupt between chunks of every product with X; the Svd
/// is then empty (no columns in u).
template <class DataT, class Hooks = NullHooks>
Svd rsvd(const DataT& x, const Mat& omega, int k, int power_iter,
         int threads, bool v_by_columns = false, Hooks&& hooks = Hooks()) {
  require(omega.rows() == x.cols() && omega.cols() >= k && k >= 1,
          "rsvd: omega must be n x l with l >= k");
  Mat tmp;
  // (X omega)^T, l x m
  if (!x.left_mult_t(omega.transpose(), tmp, threads, &hooks)) return Svd{};
  Mat q = detail::thin_q(tmp.transpose());
  for (int it = 0; it < power_iter; ++it) {
    // (X^T q)^T, l x n
    if (!x.left_mult(q.transpose(), tmp, threads, &hooks)) return Svd{};
    const Mat p = detail::thin_q(tmp.transpose());
    // (X p)^T, l x m
    if (!x.left_mult_t(p.transpose(), tmp, threads, &hooks)) return Svd{};
    q = detail::thin_q(tmp.transpose());
  }
  // B = q^T X, l x n
  if (!x.left_mult(q.transpose(), tmp, threads, &hooks)) return Svd{};
  Eigen::BDCSVD<Mat> svd(tmp, Eigen::ComputeThinU | Eigen::ComputeThinV);
  Svd out;
  out.u = q * svd.matrixU().leftCols(k);
  out.d = svd.singularValues().head(k);
  out.v = svd.matrixV().leftCols(k);
  if (!v_by_columns) return out;
  // V = X^T U diag(1/d) equals the SVD's own V in exact arithmetic (since
  // B = q^T X), but computed one column of X at a time it gives identical
  // columns of X bitwise identical rows of V, whatever their position. So
  // NNDSVD starts identical samples identically, and HALS keeps them so:
  // joint NMF of [X, X P] then gives p-bar exactly 0. Directions with a
  // negligible singular value keep the SVD's V (dividing would amplify
  // rounding; any V is right there).
  // U^T X, k x n
  if (!x.left_mult(out.u.transpose(), tmp, threads, &hooks)) return Svd{};
  constexpr double kRelTol = 1e-8;
  for (int j = 0; j < k; ++j) {
    if (out.d[j] > kRelTol * out.d[0])
      out.v.col(j) = tmp.row(j).transpose() / out.d[j];
  }
  return out;
}

/// How NNDSVD fills the entries it leaves at zero.
enum class ZeroFill { none, mean, random };

/// NNDSVD (Boutsidis & Gallopoulos) from a truncated SVD. `scale` is the
/// typical size of a factor entry, sqrt(mean(X) / k): a product of k such
/// entries is mean(X), and it scales like the NNDSVD factors themselves
/// (sqrt of X). Entries below 1e-6 * scale become 0 (scikit-learn's absolute
/// 1e-6, made relative so that c * X starts from sqrt(c) times the factors);
/// "mean" (NNDSVDa) then sets them to scale, "random" (NNDSVDar) to
/// scale * r / 100 with r the matching entries of rw (m x k) and rh (k x n),
/// uniform draws made by the caller. (scikit-learn fills with mean(X), which
/// scales like X, not like the factors: the first violation is then inflated
/// and the relative stopping rule fires at once on large data.)
inline void nndsvd(const Svd& s, double scale, ZeroFill fill, const Mat* rw,
                   const Mat* rh, Mat& w, Mat& h) {
  const Index m = s.u.rows(), n = s.v.rows(), k = s.d.size();
  w.setZero(m, k);
  h.setZero(k, n);
  for (Index j = 0; j < k; ++j) {
    const double sigma = s.d[j];
    if (j == 0) {
      w.col(0) = std::sqrt(sigma) * s.u.col(0).cwiseAbs();
      h.row(0) = std::sqrt(sigma) * s.v.col(0).cwiseAbs().transpose();
      continue;
    }
    const Vec xp = s.u.col(j).cwiseMax(0.0), xn = (-s.u.col(j)).cwiseMax(0.0);
    const Vec yp = s.v.col(j).cwiseMax(0.0), yn = (-s.v.col(j)).cwiseMax(0.0);
    const double xpn = xp.norm(), ypn = yp.norm();
    const double xnn = xn.norm(), ynn = yn.norm();
    const double mp = xpn * ypn, mn = xnn * ynn;
    // scikit-learn divides unguarded; a zero norm only occurs with a zero
    // product, and then that factor pair contributes nothing.
    if (mp > mn) {
      const double lbd = std::sqrt(sigma * mp);
      if (xpn > 0.0) w.col(j) = lbd * xp / xpn;
      if (ypn > 0.0) h.row(j) = (lbd * yp / ypn).transpose();
    } else {
      const double lbd = std::sqrt(sigma * mn);
      if (xnn > 0.0) w.col(j) = lbd * xn / xnn;
      if (ynn > 0.0) h.row(j) = (lbd * yn / ynn).transpose();
    }
  }
  const double cut = 1e-6 * scale;
  w = (w.array() < cut).select(0.0, w);
  h = (h.array() < cut).select(0.0, h);
  if (fill == ZeroFill::mean) {
    w = (w.array() == 0.0).select(scale, w);
    h = (h.array() == 0.0).select(scale, h);
  } else if (fill == ZeroFill::random) {
    require(rw && rh && rw->rows() == m && rw->cols() == k && rh->rows() == k &&
                rh->cols() == n,
            "nndsvd: random fill needs rw (m x k) and rh (k x n)");
    w = (w.array() == 0.0).select(scale * rw->array() / 100.0, w);
    h = (h.array() == 0.0).select(scale * rh->array() / 100.0, h);
  }
}

}  // namespace nmfkit
