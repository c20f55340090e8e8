// The glue's data sources: R objects as the core's data (CountData with
// the R layer's entry weights) and RSource, the block source that reads a
// DelayedMatrix through R (source.hpp's contract). Shared by the fit export
// (r_fit.cpp), the divergence helpers (r_divergence.cpp) and the futures'
// block pass (r_stream.cpp).
#pragma once

#include <exception>
#include <optional>
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

// The blocks of columns [start[b], start[b] + len[b]) of an m x n matrix,
// read through R: `read(b)` returns block b (1-based) as a double matrix or
// a dgCMatrix; `pass(plan, H, H_plain)`, when not NULL, runs a whole pass
// and returns, in block order, each block's list(H, H_push, sums).
class RSource : public nmfkit::SourceTotals {
 public:
  RSource(Index m, Index n, double x2, double stored,
          Rcpp::IntegerVector start, Rcpp::IntegerVector len, SEXP read,
          SEXP pass, int threads, RHooks& hooks)
      : SourceTotals(m, n, x2, stored), start_(start), len_(len),
        read_(read), pass_(pass), threads_(threads), hooks_(hooks) {}

  // f(j0, len, data) for every block, read through R in turn. Block b is
  // worked on in a second thread while this (R's) thread reads block b + 1:
  // reading and computing overlap. Only this thread calls R (reading,
  // interrupts); the worker gets Eigen views of the block, which stays
  // protected until the worker is joined.
  template <class F>
  bool for_blocks(F&& f) {
    Rcpp::Function read(read_);
    const R_xlen_t nb = start_.size();
    if (nb == 0) return true;
    if (hooks_.check_interrupt()) return false;
    Rcpp::RObject cur = read(1);
    check_block(cur, len_[0]);
    for (R_xlen_t b = 0; b < nb; ++b) {
      const Index j0 = start_[b], len = len_[b];
      const bool sparse = Rf_isS4(cur);
      std::optional<MapSp> sp;
      std::optional<MapMat> dn;
      if (sparse) {
        sp.emplace(Rcpp::as<MapSp>(cur));
      } else {
        dn.emplace(Rcpp::as<MapMat>(cur));
      }
      std::exception_ptr failed;
      std::thread worker([&]() {
        try {
          if (sparse) {
            const nmfkit::SparseData<MapSp> x(*sp, threads_, false);
            f(j0, len, x);
          } else {
            const nmfkit::DenseData x(*dn);
            f(j0, len, x);
          }
        } catch (...) {
          failed = std::current_exception();
        }
      });
      Rcpp::RObject next;
      bool stop = false;
      try {
        if (b + 1 < nb) {
          stop = hooks_.check_interrupt();
          if (!stop) {
            next = read(static_cast<int>(b + 2));
            check_block(next, len_[b + 1]);
          }
        }
      } catch (...) {
        worker.join();
        throw;
      }
      worker.join();
      if (failed) std::rethrow_exception(failed);
      if (stop) return false;
      cur = next;
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
  void check_block(SEXP block, Index len) const {
    const bool sparse = Rf_isS4(block);
    if (!sparse && !(Rf_isMatrix(block) && Rf_isReal(block)))
      throw std::invalid_argument(
          "a block must be a double matrix or a dgCMatrix");
    const Rcpp::IntegerVector dim =
        sparse ? Rcpp::IntegerVector(Rcpp::S4(block).slot("Dim"))
               : Rcpp::IntegerVector(Rf_getAttrib(block, R_DimSymbol));
    if (dim[0] != m_ || dim[1] != len)
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
};

}  // namespace nmfkit_r
