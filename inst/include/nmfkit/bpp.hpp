// Exact nonnegative least squares for many right-hand sides sharing one Gram
// matrix, by block principal pivoting (Kim & Park, "Fast nonnegative matrix
// factorization: an active-set-like method and comparisons", SIAM J. Sci.
// Comput. 33(6), 2011): the ANLS subproblem of NMF solved exactly in a few
// steps, each one Cholesky solve per distinct passive set.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// What nnls_bpp did, for benchmarks and diagnostics.
struct BppStats {
  int max_steps = 0;        // most pivoting steps any column needed
  long factorisations = 0;  // Cholesky factorisations of a G_FF
  long column_solves = 0;   // columns solved, summed over steps
  int fallback = 0;         // columns finished by coordinate descent
};

namespace detail {

/// A Cholesky pivot L_ii^2 below this fraction of G_ii means column i of the
/// passive block is numerically a combination of the others (G_FF condition
/// beyond ~1e12): the block is then solved with a ridge (kBppRidge).
constexpr double kBppSingular = 1e-12;
/// The ridge added to a numerically singular G_FF, relative to G's largest
/// diagonal entry: scale-free, so scaling the data changes no decision.
constexpr double kBppRidge = 1e-10;
/// A dual y_i = (Gz - b)_i counts as negative below -kBppDualTol times the
/// column's largest |b_i|: degenerate coordinates (z_i = y_i = 0 exactly)
/// then do not flip back and forth on rounding.
constexpr double kBppDualTol = 1e-13;
/// Backup rule: full exchanges allowed without progress (Kim & Park's p-bar).
constexpr int kBppAlpha = 3;

/// Coordinate descent on one column until no coordinate moves by more than
/// 1e-14 of the column's largest entry (or 10000 passes): the fallback for
/// a column that exhausted its pivoting steps (only conceivable with a
/// singular G, where the backup rule's finiteness guarantee does not hold).
inline void bpp_cd_finish(Eigen::Ref<Vec> z, const Mat& g,
                          const Eigen::Ref<const Vec>& b) {
  const Index k = z.size();
  for (int pass = 0; pass < 10000; ++pass) {
    double moved = 0.0;
    for (Index t = 0; t < k; ++t) {
      const double gtt = g(t, t);
      if (gtt <= 0.0) continue;
      const double next = std::max(z[t] - (g.col(t).dot(z) - b[t]) / gtt, 0.0);
      moved = std::max(moved, std::abs(next - z[t]));
      z[t] = next;
    }
    if (moved <= 1e-14 * std::max(z.maxCoeff(), 1e-300)) break;
  }
}

/// Block principal pivoting on the columns [c0, c0 + len) of Z.
inline void bpp_chunk(Mat& z, const Mat& g, const Mat& b, Index c0, Index len,
                      bool warm, int max_steps, double ridge, BppStats& st) {
  const Index k = g.rows();
  // passive[j * k + i]: coordinate i of column c0 + j is free (in F).
  std::vector<char> passive(static_cast<size_t>(k * len), 0);
  std::vector<int> ninf(len, static_cast<int>(k) + 1), p(len, kBppAlpha),
      steps(len, 0);
  std::vector<char> done(len, 0);
  std::vector<double> ytol(len);
  Mat y(k, len);
  for (Index j = 0; j < len; ++j) {
    ytol[j] = kBppDualTol * b.col(c0 + j).cwiseAbs().maxCoeff();
    for (Index i = 0; i < k; ++i)
      passive[j * k + i] = warm && g(i, i) > 0.0 && z(i, c0 + j) > 0.0;
  }
  auto key = [&](Index j) { return &passive[static_cast<size_t>(j * k)]; };
  std::vector<Index> todo(len), f, a, cols;
  std::iota(todo.begin(), todo.end(), Index{0});
  // Work space sized once: the factorisation and solves run in place in
  // its corners, so a step allocates nothing (most groups are 1-2 columns).
  Mat gbuf(k, k), gabuf(k, k), sbuf(k, len);
  auto fill_gff = [&](Index nf, double shift) {
    for (Index c = 0; c < nf; ++c) {
      for (Index r = 0; r < nf; ++r) gbuf(r, c) = g(f[r], f[c]);
      gbuf(c, c) += shift;
    }
  };
  while (!todo.empty()) {
    // Columns with the same passive set share one factorisation of G_FF.
    std::stable_sort(todo.begin(), todo.end(), [&](Index u, Index v) {
      return std::memcmp(key(u), key(v), static_cast<size_t>(k)) < 0;
    });
    for (size_t s = 0; s < todo.size();) {
      size_t e = s + 1;
      while (e < todo.size() && std::memcmp(key(todo[s]), key(todo[e]),
                                            static_cast<size_t>(k)) == 0)
        ++e;
      cols.assign(todo.begin() + s, todo.begin() + e);
      f.clear();
      a.clear();
      for (Index i = 0; i < k; ++i) (key(cols[0])[i] ? f : a).push_back(i);
      const Index nf = f.size(), na = a.size(), nc = cols.size();
      auto sol = sbuf.topLeftCorner(nf, nc);
      for (Index c = 0; c < nc; ++c)
        for (Index r = 0; r < nf; ++r) sol(r, c) = b(f[r], c0 + cols[c]);
      if (nf > 0) {
        fill_gff(nf, 0.0);
        Eigen::Ref<Mat> gff(gbuf.topLeftCorner(nf, nf));
        Eigen::LLT<Eigen::Ref<Mat>> llt(gff);  // in place
        bool singular = llt.info() != Eigen::Success;
        for (Index r = 0; r < nf && !singular; ++r)
          singular = gff(r, r) * gff(r, r) < kBppSingular * g(f[r], f[r]);
        if (singular) {
          fill_gff(nf, ridge);
          llt.compute(gff);
        }
        llt.solveInPlace(sol);
        ++st.factorisations;
      }
      auto gaf = gabuf.topLeftCorner(na, nf);
      for (Index c = 0; c < nf; ++c)
        for (Index r = 0; r < na; ++r) gaf(r, c) = g(a[r], f[c]);
      st.column_solves += nc;
      for (Index c = 0; c < nc; ++c) {
        const Index j = cols[c];
        auto zj = z.col(c0 + j);
        auto yj = y.col(j);
        for (Index r = 0; r < nf; ++r) {
          zj[f[r]] = sol(r, c);
          yj[f[r]] = 0.0;
        }
        for (Index r = 0; r < na; ++r) {
          double v = -b(a[r], c0 + j);
          for (Index q = 0; q < nf; ++q) v += gaf(r, q) * sol(q, c);
          zj[a[r]] = 0.0;
          yj[a[r]] = v;
        }
      }
      s = e;
    }
    // Exchange infeasible coordinates: full exchange while the number of
    // infeasibilities falls, at most kBppAlpha times without progress, then
    // one at a time (the largest index), which guarantees termination.
    std::vector<Index> next;
    for (Index j : todo) {
      char* pj = &passive[static_cast<size_t>(j * k)];
      int nv = 0;
      Index last = -1;
      auto infeasible = [&](Index i) {
        if (g(i, i) <= 0.0) return false;  // pinned at 0, as cd_pass does
        return pj[i] ? z(i, c0 + j) < 0.0 : y(i, j) < -ytol[j];
      };
      for (Index i = 0; i < k; ++i)
        if (infeasible(i)) {
          ++nv;
          last = i;
        }
      ++steps[j];
      if (nv == 0) {
        done[j] = 1;
        continue;
      }
      if (steps[j] >= max_steps) {
        ++st.fallback;
        auto zj = z.col(c0 + j);
        zj = zj.cwiseMax(0.0);
        bpp_cd_finish(zj, g, b.col(c0 + j));
        done[j] = 1;
        continue;
      }
      if (nv < ninf[j]) {
        ninf[j] = nv;
        p[j] = kBppAlpha;
      } else if (p[j] >= 1) {
        --p[j];
      } else {
        pj[last] = !pj[last];
        next.push_back(j);
        continue;
      }
      for (Index i = 0; i < k; ++i)
        if (infeasible(i)) pj[i] = !pj[i];
      next.push_back(j);
    }
    todo.swap(next);
  }
  for (Index j = 0; j < len; ++j)
    st.max_steps = std::max(st.max_steps, steps[j]);
}

}  // namespace detail

/// Solves min_{Z >= 0} 1/2 tr(Z'GZ) - tr(B'Z) exactly, column by column, by
/// block principal pivoting with Kim & Park's backup rule. G (k x k) is
/// symmetric positive semidefinite, B and Z are k x n. With `warm`, each
/// column starts from the support of the given Z (the previous iterate of an
/// alternating scheme: usually 1-2 steps then); otherwise from Z = 0.
/// Columns run in fixed chunks (parallel.hpp); within a chunk, columns with
/// the same passive set share one Cholesky factorisation of G_FF. So 1 and N
/// threads give the same bits.
/// Singular G: coordinates with G(t,t) <= 0 stay at 0 (as in cd_pass); a
/// passive block whose Cholesky pivot falls below 1e-12 of its diagonal is
/// solved with a ridge of 1e-10 max(diag G), which returns a minimiser up to
/// that ridge (one of the many when G is rank deficient; KKT holds to about
/// 1e-10 relative). A column still infeasible after max_steps pivoting steps
/// (default 5k + 50; never seen with G positive definite) is finished by
/// coordinate descent from its clipped iterate. Returns the number of such
/// columns (0 normally); `stats`, when given, receives the counts.
inline int nnls_bpp(Mat& z, const Mat& g, const Mat& b, int threads,
                    bool warm = false, int max_steps = 0,
                    BppStats* stats = nullptr) {
  const Index k = g.rows(), n = b.cols();
  require(g.cols() == k && b.rows() == k, "nnls_bpp: G k x k, B k x n");
  require(!warm || (z.rows() == k && z.cols() == n),
          "nnls_bpp: a warm start needs Z of B's shape");
  if (!warm) z.setZero(k, n);
  if (max_steps <= 0) max_steps = 5 * static_cast<int>(k) + 50;
  const double ridge =
      k > 0 ? detail::kBppRidge * std::max(g.diagonal().maxCoeff(), 0.0) : 0.0;
  const Index clen = detail::chunk_length(n);
  const Index chunks = (n + clen - 1) / clen;
  std::vector<BppStats> part(static_cast<size_t>(chunks));
  if (k > 0) {
    Parallel(threads).for_chunks(
        n,
        [&](Index c0, Index len) {
          detail::bpp_chunk(z, g, b, c0, len, warm, max_steps, ridge,
                            part[static_cast<size_t>(c0 / clen)]);
        },
        // about three steps of a k^3/3 factorisation and 2k^2 solve each
        3.0 * (static_cast<double>(k) * k * k / 3.0 + 2.0 * k * k) * n);
  }
  BppStats total;
  for (const BppStats& s : part) {
    total.max_steps = std::max(total.max_steps, s.max_steps);
    total.factorisations += s.factorisations;
    total.column_solves += s.column_solves;
    total.fallback += s.fallback;
  }
  if (stats) *stats = total;
  return total.fallback;
}

}  // namespace nmfkit
