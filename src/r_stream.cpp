// Glue for the streamed fit (stream.hpp): the core's driver calls back into
// R for each pass over the blocks, either to read one block at a time (the
// core updates it here) or to run a whole pass elsewhere (futures: each
// worker reads its blocks and calls r_stream_block()); the blocks' terms are
// summed here, in block order, either way.
#include <exception>
#include <optional>
#include <thread>

#include "r_convert.h"
#include "r_hooks.h"

using nmfkit::Index;
using nmfkit::Mat;

namespace {

Rcpp::List block_sums_list(const nmfkit::BlockSums& s) {
  return Rcpp::List::create(
      Rcpp::Named("viol") = s.viol, Rcpp::Named("cross") = s.cross,
      Rcpp::Named("pen") = s.pen, Rcpp::Named("hht") = s.hht,
      Rcpp::Named("bw") = s.bw, Rcpp::Named("hht_push") = s.hht_push,
      Rcpp::Named("bw_clamp") = s.bw_clamp, Rcpp::Named("div") = s.div,
      Rcpp::Named("wnum") = s.wnum, Rcpp::Named("wden") = s.wden,
      Rcpp::Named("wnum_push") = s.wnum_push,
      Rcpp::Named("wden_push") = s.wden_push);
}

nmfkit::BlockSums block_sums(const Rcpp::List& l) {
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
class RSource {
 public:
  RSource(Index m, Index n, double x2, double stored,
          Rcpp::IntegerVector start, Rcpp::IntegerVector len, SEXP read,
          SEXP pass, int threads, nmfkit_r::RHooks& hooks)
      : m_(m), n_(n), x2_(x2), stored_(stored), start_(start), len_(len),
        read_(read), pass_(pass), threads_(threads), hooks_(hooks) {}
  Index rows() const { return m_; }
  Index cols() const { return n_; }
  double sq_norm() const { return x2_; }
  double stored() const { return stored_; }

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
      std::optional<nmfkit_r::MapSp> sp;
      std::optional<nmfkit_r::MapMat> dn;
      if (sparse) {
        sp.emplace(Rcpp::as<nmfkit_r::MapSp>(cur));
      } else {
        dn.emplace(Rcpp::as<nmfkit_r::MapMat>(cur));
      }
      std::exception_ptr failed;
      std::thread worker([&]() {
        try {
          if (sparse) {
            const nmfkit::SparseData<nmfkit_r::MapSp> x(*sp, threads_, false);
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
        nmfkit_r::stream_plan_list(plan), Rcpp::wrap(h),
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

  Index m_, n_;
  double x2_, stored_;
  Rcpp::IntegerVector start_, len_;
  SEXP read_, pass_;
  int threads_;
  nmfkit_r::RHooks& hooks_;
};

}  // namespace

// One block's update (stream_block()): x the block (double matrix or
// dgCMatrix), plan from the pass, h its columns of H, h_plain (or NULL)
// those of the plain iterate when the plan pushes.
// [[Rcpp::export]]
Rcpp::List r_stream_block(SEXP x, Rcpp::List plan, Rcpp::NumericMatrix h,
                          SEXP h_plain, int threads) {
  const nmfkit::StreamPlan p = nmfkit_r::stream_plan(plan);
  Mat hb = Rcpp::as<Mat>(h), hp, hpush;
  if (p.push) {
    if (Rf_isNull(h_plain))
      throw std::invalid_argument("a push needs the plain iterate");
    hp = Rcpp::as<Mat>(h_plain);
  }
  const nmfkit::BlockSums s = nmfkit_r::with_data(
      x,
      [&](const auto& data) {
        return nmfkit::stream_block(data, p, hb, p.push ? &hp : nullptr,
                                    p.push ? &hpush : nullptr, threads);
      },
      threads, false);
  return Rcpp::List::create(Rcpp::Named("H") = hb,
                            Rcpp::Named("H_push") = hpush,
                            Rcpp::Named("sums") = block_sums_list(s));
}

// The streamed fit of an m x n matrix in column blocks (0-based `start`,
// `len`), ||X||^2 = x2 with `stored` stored entries: `read` or `pass` as for
// RSource; the rest as r_nmf(), and under a beta-divergence (beta != 2) as
// r_nmf_divergence() (method "cd" or "mu").
// [[Rcpp::export]]
Rcpp::List r_nmf_streamed(int m, int n, double x2, double stored,
                          Rcpp::IntegerVector start, Rcpp::IntegerVector len,
                          SEXP read, SEXP pass,
                          const Eigen::Map<Eigen::MatrixXd> w,
                          const Eigen::Map<Eigen::MatrixXd> h,
                          std::string method, Rcpp::List control,
                          SEXP callback, Rcpp::NumericVector penalty,
                          Rcpp::IntegerVector fixed, double beta) {
  nmfkit_r::RHooks hooks(callback);
  const int threads = nmfkit_r::ctrl_int(control, "threads");
  RSource source(m, n, x2, stored, start, len, read, pass, threads, hooks);
  if (beta != 2.0) {
    const nmfkit::DivParams p =
        nmfkit_r::div_params(control, method, beta, penalty, fixed);
    const nmfkit::DivResult r =
        nmfkit::nmf_divergence_streamed(source, w, h, p, hooks);
    hooks.finish();
    return nmfkit_r::div_result_list(r);
  }
  const nmfkit::NmfParams p =
      nmfkit_r::nmf_params(control, method, penalty, fixed);
  const nmfkit::NmfResult r = nmfkit::nmf_streamed(source, w, h, p, hooks);
  hooks.finish();
  return nmfkit_r::nmf_result_list(r);
}

// The online fit (nmf_online()) of the blocks read by `read` (as
// r_nmf_streamed()), forgetting factor `forget` per pass.
// [[Rcpp::export]]
Rcpp::List r_nmf_online(int m, int n, double x2, double stored,
                        Rcpp::IntegerVector start, Rcpp::IntegerVector len,
                        SEXP read, const Eigen::Map<Eigen::MatrixXd> w,
                        const Eigen::Map<Eigen::MatrixXd> h,
                        std::string method, Rcpp::List control,
                        SEXP callback, Rcpp::NumericVector penalty,
                        Rcpp::IntegerVector fixed, double forget) {
  nmfkit::OnlineParams p;
  p.base = nmfkit_r::nmf_params(control, method, penalty, fixed);
  p.forget = forget;
  nmfkit_r::RHooks hooks(callback);
  RSource source(m, n, x2, stored, start, len, read, R_NilValue,
                 p.base.threads, hooks);
  const nmfkit::NmfResult r = nmfkit::nmf_online(source, w, h, p, hooks);
  hooks.finish();
  return nmfkit_r::nmf_result_list(r);
}
