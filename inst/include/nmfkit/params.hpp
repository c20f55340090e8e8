// The settings of the nmf() fits: one struct for every loss, method and
// source (ARCHITECTURE.md, "The core's fit").
#pragma once

#include <optional>

#include "types.hpp"

namespace nmfkit {

/// The method of a fit under its loss (NmfParams::beta).
/// hals: cyclic coordinate descent, `inner` passes per factor update
///   (Frobenius).
/// mu: multiplicative updates: Lee-Seung under Frobenius, Fevotte &
///   Idier's with exponent gamma(beta) under a beta-divergence.
/// anls: alternating nonnegative least squares, each factor solved exactly
///   (block principal pivoting, warm-started from the previous iterate;
///   Frobenius).
/// cd: coordinate descent with safeguarded Newton steps (KL, beta = 1).
enum class Method { hals, mu, anls, cd };

/// How many passes each factor update makes: `inner` (fixed), or as many as
/// pay off by Gillis and Glineur's cost rule, chosen per factor from the
/// problem's shape (automatic; see detail::cost_rule_passes()).
enum class InnerPasses { fixed, automatic };

/// Penalty weights on one factor Z: l1 ||Z||_1 + l2 ||Z||_F^2 / 2, both
/// relative to the data (see NmfParams::pen_w).
struct Penalty {
  double l1 = 0.0, l2 = 0.0;
};

/// Settings of every nmf() fit: the Frobenius engines (nmf.hpp, masked.hpp,
/// stream.hpp, online.hpp), the beta-divergence engines (divergence.hpp,
/// stream_divergence.hpp) and ARD (ard.hpp, which extends them). The loss
/// is `beta` (2: Frobenius, 1: KL, 0: Itakura-Saito), the solver `method`.
struct NmfParams {
  double beta = 2.0;
  Method method = Method::hals;
  int max_iter = 200;
  double tol = 1e-4;  // stop when violation / first violation <= tol
  int threads = 1;
  /// Added to multiplicative-update denominators, relative to the data: the
  /// denominators scale like rms(X)^1.5, so the guard is mu_eps * rms^1.5
  /// and fitting c * X takes the same steps as fitting X.
  double mu_eps = 1e-10;
  /// Passes over each factor per outer iteration (Gillis & Glineur's
  /// accelerated HALS): the Gram system is built once and the cheap passes
  /// repeat while a pass still removes more than inner_tol of the first
  /// pass's violation. inner = 1 is plain HALS (scikit-learn's cd solver).
  /// Read only when `passes` is InnerPasses::fixed.
  int inner = 1;
  InnerPasses passes = InnerPasses::fixed;
  double inner_tol = 0.1;
  /// Columns per chunk of a HALS update, whose inner passes stop per chunk;
  /// 0: chosen from the factor's width (detail::chunk_length()). A streamed
  /// fit (stream.hpp) updates H a block of columns at a time with the
  /// chunks of the whole H, so its passes stop where the in-memory fit's do.
  Index chunk = 0;
  /// Extrapolation between outer iterations (Ang & Gillis, Neural
  /// Computation 2019, their parameters): W and H are pushed along their last
  /// move by beta; an iteration whose objective (the error, plus the
  /// penalties) rises restarts from the plain iterate with a smaller beta,
  /// so the objective never rises (nor, without penalties, the traced loss).
  bool extrapolate = false;
  /// Penalties: the objective is
  ///   D(X | WH) + s1 (pen_w.l1 ||W||_1 + pen_h.l1 ||H||_1)
  ///             + s2 (pen_w.l2 ||W||^2 + pen_h.l2 ||H||^2) / 2
  /// (D = 1/2 ||X - WH||^2 under Frobenius) with the loss's scales s1 =
  /// len rms^(beta - 1/2), s2 = len rms^(beta - 1), rms = sqrt(||X||^2 /
  /// (m n)), len = n for W and m for H (absolute_penalty(), loss.hpp): the
  /// weights are relative to the data, so fitting c X from sqrt(c) times the
  /// start runs the same iterations (each term scales as c^beta), as mu_eps.
  Penalty pen_w, pen_h;
  /// Components held at their starting values: the first fixed_w columns of
  /// W and the first fixed_h rows of H never change (bit for bit). fixed_w =
  /// k fixes W: the fit then solves H alone, the NNLS projection of X on W.
  Index fixed_w = 0, fixed_h = 0;
  /// false: W is not updated at all (the projection of the columns of X on
  /// a fixed basis: predict(); the beta-divergence engine).
  bool update_w = true;
  /// The violation the stopping rule is relative to (RelativeTest); none:
  /// the first iteration's.
  std::optional<double> reference_violation;
};

}  // namespace nmfkit
