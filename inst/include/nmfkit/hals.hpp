// HALS organised by component: the factor is stored m x k (column-major), and
// component t of every row moves at once,
//   W[:, t] <- max(W[:, t] - (W G[:, t] - B[:, t]) / G(t, t), 0),
// a matrix-vector product over contiguous memory. Each row still sees its own
// latest coordinates, so this is the same cyclic coordinate descent as
// cd_pass (nnls.hpp) on the transposed layout: the same iterates up to
// rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// Updates W (m x k) for min_{W >= 0} 1/2 tr(W G W') - tr(B' W), with G
/// (k x k) symmetric, e.g. G = H H' and B = X H' (m x k): `inner` cyclic
/// passes over the k components. Rows are cut into fixed chunks
/// (parallel.hpp); each chunk runs all its passes inside one parallel region,
/// its block of W staying in cache. A chunk stops early once a pass's
/// violation falls to inner_tol times its first pass's (inner_tol = 0: only
/// at an exact fixed point), so the result never depends on the thread count.
/// Returns the first pass's projected-gradient violation (the sum of |pg| at
/// the entry point of each coordinate, as cd_pass reports), summed over the
/// chunks in order. Components with G(t, t) <= 0 are left as they are.
inline double hals_update(Mat& w, const Mat& g, const Mat& b, int threads,
                          int inner = 1, double inner_tol = 0.0) {
  const Index m = w.rows(), k = w.cols();
  require(g.rows() == k && g.cols() == k, "hals_update: G must be k x k");
  require(b.rows() == m && b.cols() == k, "hals_update: B must be m x k");
  require(inner >= 1 && inner_tol >= 0.0, "hals_update: inner passes");
  const Index clen = detail::chunk_length(m);
  const Index chunks = (m + clen - 1) / clen;
  std::vector<double> first(static_cast<size_t>(chunks), 0.0);
  detail::for_chunks(
      m, threads,
      [&](Index r0, Index len) {
        auto wc = w.middleRows(r0, len);
        auto bc = b.middleRows(r0, len);
        Vec grad(len);
        double viol0 = 0.0;
        for (int pass = 1; pass <= inner; ++pass) {
          double viol = 0.0;
          for (Index t = 0; t < k; ++t) {
            grad.noalias() = wc * g.col(t);
            grad -= bc.col(t);
            auto wt = wc.col(t);
            for (Index i = 0; i < len; ++i) {
              const double gr = grad[i];
              viol += std::abs(wt[i] == 0.0 ? std::min(0.0, gr) : gr);
            }
            const double gtt = g(t, t);
            if (gtt > 0.0) wt = (wt - grad / gtt).cwiseMax(0.0);
          }
          if (pass == 1) viol0 = viol;
          // as nmf(): a further pass runs unless this one (after the first)
          // removed little; a zero first violation is a fixed point already
          if (viol0 == 0.0 || (pass > 1 && viol <= inner_tol * viol0)) break;
        }
        first[static_cast<size_t>(r0 / clen)] = viol0;
      },
      2.0 * static_cast<double>(k) * k * m * inner);
  double viol = 0.0;
  for (double v : first) viol += v;
  return viol;
}

}  // namespace nmfkit
