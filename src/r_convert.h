// Shared conversions between R objects and the core's types: the one place
// where control lists become Params and Results become named lists.
#pragma once

#include <RcppEigen.h>

#include <initializer_list>
#include <nmfkit.hpp>
#include <stdexcept>
#include <string>
#include <utility>

namespace nmfkit_r {

using MapMat = Eigen::Map<Eigen::MatrixXd>;
using MapSp = Eigen::Map<Eigen::SparseMatrix<double>>;

/// The value named `value` in `table`. An unknown string throws
/// std::invalid_argument naming the setting and the valid names: R checks
/// every choice first, so this fires only on a bug, never silently picks a
/// default. The one string-to-enum mapping of the glue.
template <class E>
E lookup(const std::string& value,
         std::initializer_list<std::pair<const char*, E>> table,
         const char* what) {
  std::string valid;
  for (const auto& entry : table) {
    if (value == entry.first) return entry.second;
    valid += (valid.empty() ? "\"" : ", \"") + std::string(entry.first) + "\"";
  }
  throw std::invalid_argument(std::string("unknown ") + what + " \"" + value +
                              "\" (expected one of " + valid + ")");
}

/// Reads an integer / double / logical setting of a control list.
inline int ctrl_int(const Rcpp::List& c, const char* name) {
  return Rcpp::as<int>(c[name]);
}
inline double ctrl_dbl(const Rcpp::List& c, const char* name) {
  return Rcpp::as<double>(c[name]);
}

/// Whether the control list holds a (non-NULL) setting `name`: the R layer
/// leaves a setting NULL, or out, for the solver's own default.
inline bool ctrl_has(const Rcpp::List& c, const char* name) {
  return c.containsElementNamed(name) && !Rf_isNull(c[name]);
}

/// nmf_control() and nmf()'s loss arguments -> NmfParams, for every loss
/// (`beta`, 2: Frobenius) and `method` ("hals", "mu", "anls"; "cd": KL's
/// coordinate descent). `inner` is a count of passes, "auto" (the passes
/// chosen per factor by the cost rule: nmf()'s method "auto" on sparse
/// data; a beta-divergence fit then makes one), or NULL/absent for the
/// default; `extrapolate` is read when present (nmf() fills it in,
/// nmf_joint() leaves it out; the masked solver does not extrapolate).
/// `penalty` is c(l1_W, l1_H, l2_W, l2_H), relative to the data
/// (NmfParams::pen_w), and `fixed` c(fixed_w, fixed_h), the leading
/// components held fixed; `tol_reference`, when set, the violation the
/// stopping rule is relative to (at the scale of the data the core sees).
inline nmfkit::NmfParams nmf_params(const Rcpp::List& control,
                                    const std::string& method,
                                    const Rcpp::NumericVector& penalty,
                                    const Rcpp::IntegerVector& fixed,
                                    double beta = 2.0) {
  if (penalty.size() != 4 || fixed.size() != 2)
    throw std::invalid_argument(
        "penalty must have length 4 and fixed length 2");
  nmfkit::NmfParams p;
  p.beta = beta;
  p.method = lookup<nmfkit::Method>(method,
                                    {{"hals", nmfkit::Method::hals},
                                     {"mu", nmfkit::Method::mu},
                                     {"anls", nmfkit::Method::anls},
                                     {"cd", nmfkit::Method::cd}},
                                    "method");
  p.max_iter = ctrl_int(control, "max_iter");
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  if (ctrl_has(control, "inner")) {
    if (Rf_isString(control["inner"])) {
      p.passes = lookup<nmfkit::InnerPasses>(
          Rcpp::as<std::string>(control["inner"]),
          {{"auto", nmfkit::InnerPasses::automatic}}, "inner");
    } else {
      p.inner = ctrl_int(control, "inner");
    }
  }
  if (ctrl_has(control, "extrapolate"))
    p.extrapolate = Rcpp::as<bool>(control["extrapolate"]);
  p.pen_w = {penalty[0], penalty[2]};
  p.pen_h = {penalty[1], penalty[3]};
  p.fixed_w = fixed[0];
  p.fixed_h = fixed[1];
  if (ctrl_has(control, "tol_reference"))
    p.reference_violation = ctrl_dbl(control, "tol_reference");
  return p;
}

/// nmf_control() -> StratifiedParams; eps is the denominators' guard (the R
/// layer fills in 1e-9) and tol 0 runs max_iter iterations (the R layer
/// passes 0 unless the user set tol, as the reference code runs a fixed
/// number of iterations).
inline nmfkit::StratifiedParams stratified_params(const Rcpp::List& control,
                                                  const std::string& order,
                                                  int v_updates) {
  nmfkit::StratifiedParams p;
  p.order = lookup<nmfkit::UpdateOrder>(
      order,
      {{"gauss_seidel", nmfkit::UpdateOrder::gauss_seidel},
       {"jacobi", nmfkit::UpdateOrder::jacobi}},
      "update_order");
  p.v_updates = v_updates;
  p.max_iter = ctrl_int(control, "max_iter");
  p.tol = ctrl_dbl(control, "tol");
  p.eps = ctrl_dbl(control, "eps");
  p.threads = ctrl_int(control, "threads");
  p.rule = lookup<nmfkit::StratifiedRule>(
      Rcpp::as<std::string>(control["update"]),
      {{"multiplicative", nmfkit::StratifiedRule::multiplicative},
       {"hals", nmfkit::StratifiedRule::hals}},
      "update");
  if (ctrl_has(control, "inner")) p.inner = ctrl_int(control, "inner");
  return p;
}

/// The shift group named by nmf_shift()'s `shift`.
inline nmfkit::ShiftGroup shift_group(const std::string& group) {
  return lookup<nmfkit::ShiftGroup>(
      group,
      {{"torus2d", nmfkit::ShiftGroup::torus2d},
       {"circular1d", nmfkit::ShiftGroup::circular1d}},
      "shift");
}

/// The FFTW planner named by control$fft_planner.
inline nmfkit::FftPlanner fft_planner(const std::string& planner) {
  return lookup<nmfkit::FftPlanner>(
      planner,
      {{"estimate", nmfkit::FftPlanner::estimate},
       {"measure", nmfkit::FftPlanner::measure}},
      "fft_planner");
}

/// nmf_control() -> ShiftParams, with nmf_shift()'s own arguments.
inline nmfkit::ShiftParams shift_params(const Rcpp::List& control,
                                        const std::string& group,
                                        const std::string& w_step,
                                        int inner) {
  nmfkit::ShiftParams p;
  p.group = shift_group(group);
  p.w_step = lookup<nmfkit::WStep>(
      w_step, {{"hals", nmfkit::WStep::hals}, {"pg", nmfkit::WStep::pg}},
      "w_step");
  p.inner = inner;
  p.max_iter = ctrl_int(control, "max_iter");
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  p.planner = fft_planner(ctrl_has(control, "fft_planner")
                              ? Rcpp::as<std::string>(control["fft_planner"])
                              : "estimate");
  return p;
}

/// nmf_control() -> WassersteinParams, with nmf_wasserstein()'s own
/// arguments (`max_iter` and `tol` are those of each dual subproblem).
inline nmfkit::WassersteinParams wasserstein_params(const Rcpp::List& control,
                                                    double rho_weights,
                                                    double rho_dict,
                                                    int outer) {
  nmfkit::WassersteinParams p;
  p.rho_weights = rho_weights;
  p.rho_dict = rho_dict;
  p.outer = outer;
  p.max_iter = ctrl_int(control, "max_iter");
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  return p;
}

/// Reads a setting of a control list, or `def` when it is absent or NULL.
inline double ctrl_dbl_or(const Rcpp::List& c, const char* name, double def) {
  return ctrl_has(c, name) ? Rcpp::as<double>(c[name]) : def;
}

/// nmf_control() -> GnmfParams; the R layer has filled in tol (1e-5 unless
/// set) and min_iter.
inline nmfkit::GnmfParams gnmf_params(const Rcpp::List& control,
                                      double lambda) {
  nmfkit::GnmfParams p;
  p.lambda = lambda;
  p.max_iter = ctrl_int(control, "max_iter");
  p.min_iter = static_cast<int>(ctrl_dbl_or(control, "min_iter", 30));
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  return p;
}

/// nmf_control() -> AlmParams (RMNMF and the SMRMF family); the R layer has
/// filled in the variant's knobs (mu0, rho, mu_max, sign_compat).
inline nmfkit::AlmParams alm_params(const Rcpp::List& control, double lambda) {
  nmfkit::AlmParams p;
  p.lambda = lambda;
  p.max_iter = ctrl_int(control, "max_iter");
  p.min_iter = static_cast<int>(ctrl_dbl_or(control, "min_iter", 30));
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  p.mu0 = ctrl_dbl(control, "mu0");
  p.rho = ctrl_dbl(control, "rho");
  p.mu_max = ctrl_dbl(control, "mu_max");
  p.sign_compat = Rcpp::as<bool>(control["sign_compat"]);
  return p;
}

/// nmf_control() -> SmrmfParams (SMRMF, f-SMRMF, SMRMF-NS, SMRMF-Euc); the
/// R layer has filled in every knob.
inline nmfkit::SmrmfParams smrmf_params(const Rcpp::List& control,
                                        double lambda, bool fast, int k,
                                        int exemplars) {
  nmfkit::SmrmfParams p;
  p.alm = alm_params(control, lambda);
  const bool split = Rcpp::as<bool>(control["split"]);
  p.kind = fast ? nmfkit::SmrmfKind::fast
                : (split ? nmfkit::SmrmfKind::smrmf : nmfkit::SmrmfKind::ns);
  p.kernel = lookup<nmfkit::ZKernel>(
      Rcpp::as<std::string>(control["kernel"]),
      {{"selftune", nmfkit::ZKernel::selftune},
       {"sigma_i2", nmfkit::ZKernel::sigma_i2},
       {"sigma_i", nmfkit::ZKernel::sigma_i},
       {"euclidean", nmfkit::ZKernel::euclidean}},
      "kernel");
  p.neighbours = k;
  p.exemplars = exemplars;
  p.beta = ctrl_dbl(control, "beta");
  // w_g and gamma are NULL (absent) unless the user set them: the core
  // then derives them (nmfkit::SmrmfParams)
  if (control.containsElementNamed("w_g") && !Rf_isNull(control["w_g"]))
    p.w_g = ctrl_dbl(control, "w_g");
  p.mu_z = ctrl_dbl(control, "mu_z");
  if (control.containsElementNamed("gamma") && !Rf_isNull(control["gamma"]))
    p.gamma = ctrl_dbl(control, "gamma");
  p.ds3_max_iter = ctrl_int(control, "ds3_max_iter");
  p.rank_linf = Rcpp::as<std::string>(control["rank_norm"]) == "linf";
  p.rank_on_c = Rcpp::as<std::string>(control["rank_on"]) == "c";
  p.nbr = lookup<nmfkit::ZNeighbours>(
      Rcpp::as<std::string>(control["nbr"]),
      {{"zrow", nmfkit::ZNeighbours::zrow},
       {"knn", nmfkit::ZNeighbours::knn},
       {"knn_kernel", nmfkit::ZNeighbours::knn_kernel}},
      "nbr");
  p.inner_z_iter = ctrl_int(control, "inner_z_iter");
  p.connect = Rcpp::as<bool>(control["connect"]);
  p.keep_z = Rcpp::as<bool>(control["keep_z"]);
  return p;
}

/// A streamed fit's StreamPlan as an R list (what travels to the workers
/// that read blocks) and back.
inline Rcpp::List stream_plan_list(const nmfkit::StreamPlan& p) {
  return Rcpp::List::create(
      Rcpp::Named("wt") = p.wt, Rcpp::Named("wtw") = p.wtw,
      Rcpp::Named("method") = static_cast<int>(p.h.method),
      Rcpp::Named("inner") = p.h.inner,
      Rcpp::Named("inner_tol") = p.h.inner_tol,
      Rcpp::Named("chunk") = static_cast<double>(p.h.chunk),
      Rcpp::Named("mu_eps") = p.mu_eps,
      Rcpp::Named("terms") = Rcpp::NumericVector::create(
          p.terms.l1, p.terms.l2, static_cast<double>(p.terms.fixed)),
      Rcpp::Named("update") = p.update, Rcpp::Named("push") = p.push,
      Rcpp::Named("beta") = p.beta,
      Rcpp::Named("divergence") = p.loss.kind == nmfkit::LossKind::divergence,
      Rcpp::Named("loss_beta") = p.loss.beta,
      Rcpp::Named("loss_method") = static_cast<int>(p.loss.method),
      Rcpp::Named("loss_inner") = p.loss.inner,
      Rcpp::Named("wt_push") = p.wt_push);
}
inline nmfkit::StreamPlan stream_plan(const Rcpp::List& l) {
  nmfkit::StreamPlan p;
  p.wt = Rcpp::as<nmfkit::Mat>(l["wt"]);
  p.wtw = Rcpp::as<nmfkit::Mat>(l["wtw"]);
  const int method = Rcpp::as<int>(l["method"]);
  if (method < 0 || method > 3)
    throw std::invalid_argument("stream plan: unknown method");
  p.h.method = static_cast<nmfkit::Method>(method);
  p.h.inner = Rcpp::as<int>(l["inner"]);
  p.h.inner_tol = Rcpp::as<double>(l["inner_tol"]);
  p.h.chunk = static_cast<nmfkit::Index>(Rcpp::as<double>(l["chunk"]));
  p.mu_eps = Rcpp::as<double>(l["mu_eps"]);
  const Rcpp::NumericVector t = l["terms"];
  p.terms = {t[0], t[1], static_cast<nmfkit::Index>(t[2])};
  p.update = Rcpp::as<bool>(l["update"]);
  p.push = Rcpp::as<bool>(l["push"]);
  p.beta = Rcpp::as<double>(l["beta"]);
  p.loss.kind = Rcpp::as<bool>(l["divergence"])
                    ? nmfkit::LossKind::divergence
                    : nmfkit::LossKind::frobenius;
  p.loss.beta = Rcpp::as<double>(l["loss_beta"]);
  const int loss_method = Rcpp::as<int>(l["loss_method"]);
  if (loss_method < 0 || loss_method > 3)
    throw std::invalid_argument("stream plan: unknown method");
  p.loss.method = static_cast<nmfkit::Method>(loss_method);
  p.loss.inner = Rcpp::as<int>(l["loss_inner"]);
  p.wt_push = Rcpp::as<nmfkit::Mat>(l["wt_push"]);
  return p;
}

/// Calls f(data) with x wrapped as DenseData (a double matrix) or SparseData
/// (a dgCMatrix), without copying x; `threads` build the sparse transpose
/// (none with `transpose` false: a streamed block).
template <class F>
auto with_data(SEXP x, F&& f, int threads = 1, bool transpose = true) {
  if (Rf_isS4(x)) {
    const MapSp xs = Rcpp::as<MapSp>(x);
    const nmfkit::SparseData<MapSp> data(xs, threads, transpose);
    return f(data);
  }
  const MapMat xd = Rcpp::as<MapMat>(x);
  const nmfkit::DenseData data(xd);
  return f(data);
}

/// The fields every Result has, as a named list.
inline Rcpp::List result_list(const nmfkit::Result& r) {
  return Rcpp::List::create(
      Rcpp::Named("W") = r.W, Rcpp::Named("H") = r.H,
      Rcpp::Named("loss") = r.loss, Rcpp::Named("iterations") = r.iterations,
      Rcpp::Named("status") = std::string(nmfkit::status_name(r.status)));
}

/// result_list() of a divergence fit, with its divergence, objective and
/// baseline.
inline Rcpp::List div_result_list(const nmfkit::DivResult& r) {
  Rcpp::List out = result_list(r);
  out["divergence"] = r.divergence;
  out["objective"] = r.objective;
  out["baseline"] = r.baseline;
  out["first_violation"] = r.first_violation;
  return out;
}

/// result_list() of nmf() and nmf_masked(), with the penalised objective.
inline Rcpp::List nmf_result_list(const nmfkit::NmfResult& r) {
  Rcpp::List out = result_list(r);
  out["objective"] = r.objective;
  out["first_violation"] = r.first_violation;
  return out;
}

}  // namespace nmfkit_r
