// The glue's data sources: R objects as the core's data (CountData with
// the R layer's entry weights) and RSource, the block source that reads a
// DelayedMatrix through R (source.hpp's contract). Shared by the fit export
// (r_fit.cpp), the divergence helpers (r_divergence.cpp) and the futures'
// block pass (r_stream.cpp).
#pragma once

#include <exception>
#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

#include "r_convert.h"
#include "r_hooks.h"

namespace nmfkit_r {

using nmfkit::Index;
using nmfkit::Mat;

/// The entry weights of the R layer's masked_setup() (base weight 0 or 1
/// and the exceptions as 0-based rows i, columns j, weight offsets delta
/// and data values, at the core's scale): r_nmf_fit()'s params$masked,
/// or r_divergence()'s arguments. `on`: weights were given (the Frobenius
/// engine then runs its masked solver); weighted(): some entry weighs
/// other than 1 (CountData then carries weights).
struct Masked {
  bool on = false;
  double base = 1.0;
  Rcpp::IntegerVector i, j;
  Rcpp::NumericVector delta, value;
  Masked() = default;
  explicit Masked(SEXP l) {
    if (Rf_isNull(l)) return;
    const Rcpp::List m(l);
    *this = Masked(Rcpp::as<double>(m["base"]), m["i"], m["j"], m["delta"],
                   m["value"]);
    on = true;
  }
  Masked(double b, Rcpp::IntegerVector ii, Rcpp::IntegerVector jj,
         Rcpp::NumericVector d, Rcpp::NumericVector v)
      : on(true), base(b), i(ii), j(jj), delta(d), value(v) {}
  bool weighted() const { return on && (i.size() > 0 || base != 1.0); }
  nmfkit::EntryWeights weights(Index m, Index n) const {
    const std::vector<Index> iv(i.begin(), i.end()), jv(j.begin(), j.end());
    const std::vector<double> dv(delta.begin(), delta.end()),
        vv(value.begin(), value.end());
    return nmfkit::entry_weights(m, n, base, iv, jv, dv, vv);
  }
};

/// The data as CountData (nonzero entries by column and by row) with the
/// entry weights `a`. With `hooks`, the set-up is interruptible (a masked
/// fit's weights take seconds on large data): an interrupt is re-raised
/// here.
inline nmfkit::CountData counts(SEXP x, const Masked& a_in, int threads,
                                RHooks* hooks = nullptr) {
  nmfkit::EntryWeights a;
  if (a_in.weighted()) {
    const Eigen::Index m = Rf_isS4(x) ? Rcpp::as<MapSp>(x).rows()
                                      : Rcpp::as<MapMat>(x).rows();
    const Eigen::Index n = Rf_isS4(x) ? Rcpp::as<MapSp>(x).cols()
                                      : Rcpp::as<MapMat>(x).cols();
    if (hooks != nullptr && hooks->check_interrupt()) hooks->finish();
    a = a_in.weights(m, n);
    if (hooks != nullptr && hooks->check_interrupt()) hooks->finish();
  }
  const nmfkit::EntryWeights* ap = a_in.weighted() ? &a : nullptr;
  nmfkit::CountData c;
  bool done;
  if (Rf_isS4(x)) {
    const MapSp xs = Rcpp::as<MapSp>(x);
    done = nmfkit::detail::fill_count_data(c, xs, ap, threads, hooks);
  } else {
    const MapMat xd = Rcpp::as<MapMat>(x);
    if (hooks != nullptr && hooks->check_interrupt()) hooks->finish();
    const nmfkit::SpMat s = nmfkit::DenseData(xd).dense().sparseView(0.0, 0.0);
    done = nmfkit::detail::fill_count_data(c, s, ap, threads, hooks);
  }
  if (!done && hooks != nullptr) hooks->finish();
  return c;
}


inline Rcpp::List block_sums_list(const nmfkit::BlockSums& s) {
  return Rcpp::List::create(
      Rcpp::Named("viol") = s.viol, Rcpp::Named("cross") = s.cross,
      Rcpp::Named("pen") = s.pen, Rcpp::Named("hht") = s.hht,
      Rcpp::Named("bw") = s.bw, Rcpp::Named("hht_push") = s.hht_push,
      Rcpp::Named("bw_clamp") = s.bw_clamp, Rcpp::Named("div") = s.div,
      Rcpp::Named("wnum") = s.wnum, Rcpp::Named("wden") = s.wden,
      Rcpp::Named("wnum_push") = s.wnum_push,
      Rcpp::Named("wden_push") = s.wden_push);
}

inline nmfkit::BlockSums block_sums(const Rcpp::List& l) {
  nmfkit::BlockSums s;
  s.viol = Rcpp::as<double>(l["viol"]);
  s.cross = Rcpp::as<double>(l["cross"]);
  s.pen = Rcpp::as<double>(l["pen"]);
  s.hht = Rcpp::as<Mat>(l["hht"]);
  s.bw = Rcpp::as<Mat>(l["bw"]);
  s.hht_push = Rcpp::as<Mat>(l["hht_push"]);
  s.bw_clamp = Rcpp::as<Mat>(l["bw_clamp"]);
  s.div = Rcpp::as<double>(l["div"]);
  s.wnum = Rcpp::as<Mat>(l["wnum"]);
  s.wden = Rcpp::as<Mat>(l["wden"]);
  s.wnum_push = Rcpp::as<Mat>(l["wnum_push"]);
  s.wden_push = Rcpp::as<Mat>(l["wden_push"]);
  return s;
}

/// A block of columns copied out of R into storage kept from block to
/// block and pass to pass. RSource copies each block as soon as R has read
/// it and drops R's object before R runs again: no collection sees the
/// object alive, so R's young collection (block_reader(), R/stream-read.R)
/// frees it. (Held while the next block was read, blocks were aged by that
/// read's collection and piled up until a full one: a KL fit at a 10 MB
/// budget peaked 105 MB above the baseline.) The storage only grows, to the
/// largest block: copies allocated afresh for every block stayed resident
/// (bench/README.md, "Memory").
class BlockCopy {
 public:
  /// Copies `block` (a double matrix or a dgCMatrix of the source's rows,
  /// len columns, checked by the caller) into the storage, keeping the rows
  /// `kept` (0-based, increasing; all when empty) with `row_of` mapping a
  /// source row to its kept row or -1. The rows are dropped here, in C++,
  /// as the block is copied, instead of by Matrix's `[` on R's one thread
  /// (which the pass waits on while it reads).
  void assign(SEXP block, Index len, const std::vector<int>& kept,
              const std::vector<int>& row_of) {
    const Index m_src = static_cast<Index>(row_of.size());
    const bool all = kept.empty();
    rows_ = all ? m_src : static_cast<Index>(kept.size());
    cols_ = len;
    sparse_ = Rf_isS4(block);
    if (!sparse_) {
      nnz_ = rows_ * len;
      const double* from = REAL(block);
      if (all) {
        put(x_, from, nnz_);
        return;
      }
      grow(x_, nnz_);
      for (Index j = 0; j < len; ++j)
        for (Index r = 0; r < rows_; ++r)
          x_[j * rows_ + r] = from[j * m_src + kept[r]];
      return;
    }
    const SEXP p = R_do_slot(block, Rf_install("p")),
               i = R_do_slot(block, Rf_install("i")),
               x = R_do_slot(block, Rf_install("x"));
    if (TYPEOF(p) != INTSXP || TYPEOF(i) != INTSXP || TYPEOF(x) != REALSXP ||
        Rf_xlength(p) != len + 1 || Rf_xlength(i) != Rf_xlength(x) ||
        INTEGER(p)[len] != Rf_xlength(x))
      throw std::invalid_argument("a sparse block is not a valid dgCMatrix");
    const Index stored = Rf_xlength(x);
    const int *pp = INTEGER(p), *ii = INTEGER(i);
    const double* xx = REAL(x);
    if (all) {
      nnz_ = stored;
      put(p_, pp, len + 1);
      put(i_, ii, nnz_);
      put(x_, xx, nnz_);
      return;
    }
    grow(p_, len + 1);
    grow(i_, stored);
    grow(x_, stored);
    Index q = 0;
    p_[0] = 0;
    for (Index j = 0; j < len; ++j) {
      for (Index e = pp[j]; e < pp[j + 1]; ++e) {
        if (ii[e] < 0 || ii[e] >= m_src)
          throw std::invalid_argument("a sparse block has a row out of range");
        const int r = row_of[ii[e]];
        if (r < 0) continue;
        i_[q] = r;
        x_[q++] = xx[e];
      }
      p_[j + 1] = static_cast<int>(q);
    }
    nnz_ = q;
  }

  /// f(data) with the copy as DenseData or SparseData (no transpose: a
  /// streamed block's products scatter).
  template <class F>
  void with(F&& f, int threads) {
    if (sparse_) {
      const MapSp xs(rows_, cols_, nnz_, p_.data(), i_.data(), x_.data());
      const nmfkit::SparseData<MapSp> data(xs, threads, false);
      f(data);
    } else {
      const MapMat xd(x_.data(), rows_, cols_);
      const nmfkit::DenseData data(xd);
      f(data);
    }
  }

 private:
  template <class T>
  static void grow(std::vector<T>& to, Index n) {
    if (static_cast<Index>(to.size()) < n) to.resize(n);
  }
  template <class T>
  static void put(std::vector<T>& to, const T* from, Index n) {
    grow(to, n);
    std::copy(from, from + n, to.begin());
  }

  bool sparse_ = false;
  Index rows_ = 0, cols_ = 0, nnz_ = 0;
  std::vector<int> p_, i_;
  std::vector<double> x_;
};

// The blocks of columns [start[b], start[b] + len[b]) of an m x n matrix,
// read through R: `read(b)` returns block b (1-based) as a double matrix or
// a dgCMatrix; `pass(plan, H, H_plain)`, when not NULL, runs a whole pass
// and returns, in block order, each block's list(H, H_push, sums).
class RSource : public nmfkit::SourceTotals {
 public:
  // `rows` (1-based, increasing) the source rows kept when `read` returns
  // all m_src of them, else NULL.
  RSource(Index m, Index n, double x2, double stored,
          Rcpp::IntegerVector start, Rcpp::IntegerVector len, SEXP read,
          SEXP pass, SEXP rows, Index m_src, int threads, RHooks& hooks)
      : SourceTotals(m, n, x2, stored), start_(start), len_(len),
        read_(read), pass_(pass), threads_(threads), hooks_(hooks),
        row_of_(static_cast<size_t>(m_src), -1) {
    if (Rf_isNull(rows)) {
      if (m_src != m) throw std::invalid_argument("RSource: rows");
      for (Index r = 0; r < m; ++r) row_of_[r] = static_cast<int>(r);
      return;
    }
    const Rcpp::IntegerVector kept(rows);
    if (kept.size() != m) throw std::invalid_argument("RSource: rows");
    for (R_xlen_t t = 0; t < kept.size(); ++t) {
      if (kept[t] < 1 || kept[t] > m_src || (t > 0 && kept[t] <= kept[t - 1]))
        throw std::invalid_argument("RSource: rows");
      kept_.push_back(kept[t] - 1);
      row_of_[kept[t] - 1] = static_cast<int>(t);
    }
  }

  // f(j0, len, data) for every block, read through R in turn. Block b is
  // worked on in a second thread, from its copy (BlockCopy), while this
  // (R's) thread reads block b + 1 into the other copy: reading and
  // computing overlap, and R holds no block between reads. Only this
  // thread calls R (reading, interrupts).
  template <class F>
  bool for_blocks(F&& f) {
    Rcpp::Function read(read_);
    const R_xlen_t nb = start_.size();
    if (nb == 0) return true;
    if (hooks_.check_interrupt()) return false;
    fetch(read, 0, copies_[0]);
    for (R_xlen_t b = 0; b < nb; ++b) {
      const Index j0 = start_[b], len = len_[b];
      BlockCopy& cur = copies_[b % 2];
      std::exception_ptr failed;
      std::thread worker([&]() {
        try {
          cur.with([&](const auto& x) { f(j0, len, x); }, threads_);
        } catch (...) {
          failed = std::current_exception();
        }
      });
      bool stop = false;
      try {
        if (b + 1 < nb) {
          stop = hooks_.check_interrupt();
          if (!stop) fetch(read, b + 1, copies_[(b + 1) % 2]);
        }
      } catch (...) {
        worker.join();
        throw;
      }
      worker.join();
      if (failed) std::rethrow_exception(failed);
      if (stop) return false;
    }
    return true;
  }

  bool pass(const nmfkit::StreamPlan& plan, Mat& h, const Mat* h_plain,
            Mat* h_push, nmfkit::BlockSums& total) {
    if (Rf_isFunction(pass_)) return remote(plan, h, h_plain, h_push, total);
    return nmfkit::detail::block_pass(*this, plan, h, h_plain, h_push, total,
                                      threads_);
  }

 private:
  // Block b (0-based) read through R and copied; R's object is released
  // on return, before R runs again.
  void fetch(Rcpp::Function& read, R_xlen_t b, BlockCopy& into) {
    const Rcpp::RObject block = read(static_cast<int>(b + 1));
    check_block(block, len_[b]);
    into.assign(block, len_[b], kept_, row_of_);
  }

  void check_block(SEXP block, Index len) const {
    const bool sparse = Rf_isS4(block);
    if (!sparse && !(Rf_isMatrix(block) && Rf_isReal(block)))
      throw std::invalid_argument(
          "a block must be a double matrix or a dgCMatrix");
    const Rcpp::IntegerVector dim =
        sparse ? Rcpp::IntegerVector(Rcpp::S4(block).slot("Dim"))
               : Rcpp::IntegerVector(Rf_getAttrib(block, R_DimSymbol));
    if (dim[0] != static_cast<Index>(row_of_.size()) || dim[1] != len)
      throw std::invalid_argument("a block has the wrong dimensions");
  }

  bool remote(const nmfkit::StreamPlan& plan, Mat& h, const Mat* h_plain,
              Mat* h_push, nmfkit::BlockSums& total) {
    if (hooks_.check_interrupt()) return false;
    if (h_push != nullptr) h_push->resize(h.rows(), h.cols());
    Rcpp::Function run(pass_);
    const Rcpp::List out = run(
        stream_plan_list(plan), Rcpp::wrap(h),
        h_plain != nullptr ? SEXP(Rcpp::wrap(*h_plain)) : R_NilValue);
    if (out.size() != start_.size())
      throw std::invalid_argument("a pass must return one result per block");
    for (R_xlen_t b = 0; b < out.size(); ++b) {
      const Rcpp::List one = out[b];
      const Index j0 = start_[b], len = len_[b];
      const Mat hb = Rcpp::as<Mat>(one["H"]);
      if (hb.rows() != h.rows() || hb.cols() != len)
        throw std::invalid_argument("a block's H has the wrong dimensions");
      h.middleCols(j0, len) = hb;
      if (h_push != nullptr)
        h_push->middleCols(j0, len) = Rcpp::as<Mat>(one["H_push"]);
      total.add(block_sums(one["sums"]));
    }
    return true;
  }

  Rcpp::IntegerVector start_, len_;
  SEXP read_, pass_;
  int threads_;
  RHooks& hooks_;
  std::vector<int> kept_, row_of_;  // the kept rows; a source row's, or -1
  BlockCopy copies_[2];  // the block computed and the next, read meanwhile
};

}  // namespace nmfkit_r
