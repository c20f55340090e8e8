// Glue for the manifold-regularised factorisations, their graphs and the
// clustering scores.
#include "r_convert.h"
#include "r_hooks.h"

namespace {

nmfkit::GraphWeight graph_weight(const std::string& w) {
  return nmfkit_r::lookup<nmfkit::GraphWeight>(
      w,
      {{"binary", nmfkit::GraphWeight::binary},
       {"heat", nmfkit::GraphWeight::heat},
       {"selftune", nmfkit::GraphWeight::selftune}},
      "weight");
}

Rcpp::List manifold_list(const nmfkit::ManifoldResult& r) {
  Rcpp::List out = nmfkit_r::result_list(r);
  out["G"] = r.G;
  out["residual"] = r.residual;
  out["mu"] = r.mu;
  out["graph"] = Rcpp::wrap(r.graph);
  out["labels"] = nmfkit::argmax_rows(r.G);
  return out;
}

}  // namespace

// Exact k-NN affinity of the columns of x (a dense matrix or a dgCMatrix,
// kept sparse), symmetrised, as a dgCMatrix; Ctrl-C stops it.
// [[Rcpp::export]]
SEXP r_knn_graph(SEXP x, int k, std::string weight, int threads) {
  nmfkit_r::RHooks hooks;
  const nmfkit::GraphWeight w = graph_weight(weight);
  nmfkit::SpMat g;
  if (Rf_isS4(x)) {
    const nmfkit::SpMat xs = Rcpp::as<nmfkit_r::MapSp>(x);
    g = nmfkit::knn_graph(xs, k, w, threads, &hooks);
  } else {
    const nmfkit_r::MapMat xd = Rcpp::as<nmfkit_r::MapMat>(x);
    g = nmfkit::knn_graph(xd, k, w, threads, &hooks);
  }
  hooks.finish();
  return Rcpp::wrap(g);
}

// The k-NN affinity from neighbours found elsewhere (the approximate search
// for large n): idx (k x n, 1-based), their squared distances, and the mean
// pairwise distance of the heat kernel.
// [[Rcpp::export]]
SEXP r_knn_affinity(const Eigen::Map<Eigen::MatrixXi> idx,
                    const Eigen::Map<Eigen::MatrixXd> dist2, double mean_dist,
                    std::string weight) {
  nmfkit::Knn nb;
  nb.idx = idx.array() - 1;
  nb.dist2 = dist2;
  nb.mean_dist = mean_dist;
  return Rcpp::wrap(nmfkit::knn_affinity(nb, graph_weight(weight)));
}

// [[Rcpp::export]]
Rcpp::List r_gnmf(SEXP x, const Eigen::Map<Eigen::SparseMatrix<double>> graph,
                  const Eigen::Map<Eigen::MatrixXd> w,
                  const Eigen::Map<Eigen::MatrixXd> h, double lambda,
                  Rcpp::List control, SEXP callback) {
  nmfkit::GnmfParams p = nmfkit_r::gnmf_params(control, lambda);
  p.solver = Rcpp::as<std::string>(control["solver"]) == "mu"
                 ? nmfkit::GnmfSolver::mu
                 : nmfkit::GnmfSolver::hals;
  const nmfkit::SpMat g = graph;
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::ManifoldResult r =
      nmfkit_r::with_data(x, [&](const auto& data) {
        return nmfkit::gnmf(data, g, w, h, p, hooks);
      }, p.threads);
  hooks.finish();
  return manifold_list(r);
}

// [[Rcpp::export]]
Rcpp::List r_rmnmf(const Eigen::Map<Eigen::MatrixXd> x,
                   const Eigen::Map<Eigen::SparseMatrix<double>> graph,
                   const Eigen::Map<Eigen::MatrixXd> f,
                   const Eigen::Map<Eigen::MatrixXd> g, double lambda,
                   Rcpp::List control, SEXP callback) {
  const nmfkit::AlmParams p = nmfkit_r::alm_params(control, lambda);
  const nmfkit::SpMat gr = graph;
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::ManifoldResult r = nmfkit::rmnmf(x, gr, f, g, p, hooks);
  hooks.finish();
  return manifold_list(r);
}

// Column assigned to each row (1-based) maximising the total profit.
// [[Rcpp::export]]
std::vector<int> r_max_assignment(const Eigen::Map<Eigen::MatrixXd> profit) {
  std::vector<int> perm = nmfkit::max_assignment(profit);
  for (int& v : perm) ++v;
  return perm;
}

// [[Rcpp::export]]
Rcpp::List r_smrmf(const Eigen::Map<Eigen::MatrixXd> x,
                   const Eigen::Map<Eigen::MatrixXd> f,
                   const Eigen::Map<Eigen::MatrixXd> g, double lambda,
                   bool fast, int k, int exemplars, Rcpp::List control,
                   SEXP callback) {
  const nmfkit::SmrmfParams p =
      nmfkit_r::smrmf_params(control, lambda, fast, k, exemplars);
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::ManifoldResult r = nmfkit::smrmf(x, f, g, p, hooks);
  hooks.finish();
  Rcpp::List out = manifold_list(r);
  std::vector<int> ex = r.exemplars;
  for (int& v : ex) ++v;
  out["exemplars"] = ex;
  if (p.keep_z) {
    out["Z"] = r.Z;
    if (r.C.size() > 0) out["C"] = r.C;
  }
  return out;
}
