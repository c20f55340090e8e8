# The bad-input table: every exported function and S3 method, each with bad
# calls and the class of the error they must give. A row is
# list(name, call, class); the name is the function or method, or
# "function$argument" for a choice argument.

test_that("the bad-input table gives classed errors", {
  f <- contract_fixtures()
  x <- f$x
  cons <- withr::with_seed(1, nmf_consensus(x, 1:2, nrun = 2,
                                            control = nmf_control(max_iter = 5)))
  kl <- withr::with_seed(1, nmf(x, 2, loss = "kl",
                                control = nmf_control(max_iter = 5)))
  bt <- suppressWarnings(withr::with_seed(1, nmf_bootstrap(kl, B = 2)))
  bi <- predict(bt, x[, 1:2])
  rows <- list(
    # nmf()
    list("nmf", quote(nmf(x)), "nmfkit_error_missing"),
    list("nmf", quote(nmf(rank = 2)), "nmfkit_error_missing"),
    list("nmf", quote(nmf(NULL, 2)), "nmfkit_error_type"),
    list("nmf", quote(nmf(x, Inf)), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, 2, nrun = 1e10)), "nmfkit_error_count"),
    list("nmf", quote(nmf(x, 2, init = "nndsvdaa")), "nmfkit_error_init"),
    list("nmf", quote(nmf(x, 2, control = list(maxiter = 1))),
         "nmfkit_error_control"),
    list("nmf", quote(nmf(x, 2, control = nmf_control(eps = 0))),
         "nmfkit_error_control"),
    list("nmf", quote(nmf(x, 2, keep_data = NA)), "nmfkit_error_flag"),
    list("nmf$method", quote(nmf(x, 2, method = "hal")),
         "nmfkit_error_choice"),
    list("nmf$na", quote(nmf(x, 2, na = "drop")), "nmfkit_error_choice"),
    list("nmf", quote(nmf(x, 2, weights = x[, -1])), "nmfkit_error_weights"),
    list("nmf", quote(nmf(x, 2, weights = -x)), "nmfkit_error_weights"),
    list("nmf", quote(nmf(x, 2, weights = x * NA)), "nmfkit_error_weights"),
    list("nmf", quote(nmf(x, 2, mask = "zero")), "nmfkit_error_choice"),
    list("nmf", quote(nmf(x, 2, mask = 1 * (x > 0.5))), "nmfkit_error_mask"),
    list("nmf", quote(nmf(x, 2, mask = (x > 0.5)[-1, ])), "nmfkit_error_mask"),
    list("nmf", quote(nmf(x, 2, mask = row(x) == 1)), "nmfkit_error_mask"),
    list("nmf", quote(nmf(replace(x, 1, NA), 2)), "nmfkit_error_nonfinite"),
    list("nmf", quote(nmf(x, 2, loss = "poisson-ish")), "nmfkit_error_loss"),
    list("nmf", quote(nmf(x, 2, loss = "kl", method = "anls")),
         "nmfkit_error_method"),
    list("nmf", quote(nmf(x, 2, penalty = c(l1 = -1))),
         "nmfkit_error_penalty"),
    list("nmf", quote(nmf(x, 2, fixed = list(W = x))), "nmfkit_error_fixed"),
    # rank = "auto" and its ranges; ARD
    list("nmf", quote(nmf(x, "aut")), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, c(3, 2))), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, c(0, 2))), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, c(1.5, 2))), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, c(2, 11))), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, c(2, NA))), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, "auto", mask = x > 0.5)), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, "auto", ard = "l1")), "nmfkit_error_rank"),
    list("nmf", quote(nmf(x, 2, ard = "l3")), "nmfkit_error_ard"),
    list("nmf", quote(nmf(x, 2, ard = "l1", penalty = c(l1 = 1))),
         "nmfkit_error_ard"),
    list("nmf", quote(nmf(x, 2, ard = "l2", na = "omit",
                          weights = x)), "nmfkit_error_ard"),
    list("auto_rank", quote(auto_rank(3, 2)), "nmfkit_error_rank"),
    list("auto_rank", quote(auto_rank(0)), "nmfkit_error_count"),
    list("auto_rank", quote(auto_rank(hi = 1.5)), "nmfkit_error_count"),
    list("auto_rank", quote(auto_rank(nfolds = 1)), "nmfkit_error_count"),
    list("auto_rank", quote(auto_rank(fraction = 0.7)), "nmfkit_error_value"),
    list("auto_rank", quote(auto_rank(tol = -1)), "nmfkit_error_value"),
    list("auto_rank", quote(auto_rank(tol = c(1e-3, 1e-4))),
         "nmfkit_error_value"),
    list("auto_rank", quote(auto_rank(nfolds = 5, fraction = 0.5)),
         "nmfkit_error_count"),
    list("ard_prior$prior", quote(ard_prior("l3")), "nmfkit_error_choice"),
    list("ard_prior", quote(ard_prior(shape = 2)), "nmfkit_error_ard"),
    list("ard_prior", quote(ard_prior("l2", shape = 1)), "nmfkit_error_ard"),
    list("ard_prior", quote(ard_prior(dispersion = 0)), "nmfkit_error_ard"),
    list("ard_prior", quote(ard_prior(max_iter = 0)), "nmfkit_error_count"),
    list("ard_prior", quote(ard_prior(tol = -1)), "nmfkit_error_ard"),
    list("ard_prior", quote(ard_prior(prune = 1)), "nmfkit_error_ard"),
    list("plot.nmfkit_rank_search",
         quote(plot(withr::with_seed(1, nmf(x, c(1, 3)))$rank_search,
                    bogus = 1)), "nmfkit_error_dots"),
    list("plot.nmfkit_ard",
         quote(plot(withr::with_seed(1, nmf(x, 3, ard = "l1"))$ard,
                    bogus = 1)), "nmfkit_error_dots"),
    list("nmf_consensus", quote(nmf_consensus(x, c("auto", "x"))),
         "nmfkit_error_rank"),
    list("nmf_signatures", quote(nmf_signatures(x, "aut")),
         "nmfkit_error_rank"),
    list("nmf_signatures", quote(nmf_signatures(x, c("auto", "x"))),
         "nmfkit_error_rank"),
    # predict() and residuals() of a fit under KL
    list("predict.nmfkit_nmf", quote(predict(kl, x[1:3, ])),
         "nmfkit_error_dimension"),
    list("predict.nmfkit_nmf$type", quote(predict(kl, x, type = "klass")),
         "nmfkit_error_choice"),
    list("predict.nmfkit_nmf", quote(predict(kl, x, tol = -1)),
         "nmfkit_error_value"),
    list("predict.nmfkit_nmf", quote(predict(kl, x, max_passes = 0)),
         "nmfkit_error_count"),
    list("predict.nmfkit_nmf", quote(predict(object = kl, newdata = -x)),
         "nmfkit_error_negative"),
    list("residuals.nmfkit", quote(residuals(kl, type = "pearson")),
         "nmfkit_error_choice"),
    # nmf_bootstrap() and its methods; intervals of predict()
    list("nmf_bootstrap", quote(nmf_bootstrap(x)), "nmfkit_error_type"),
    list("nmf_bootstrap", quote(nmf_bootstrap(fit = kl, B = 1)),
         "nmfkit_error_count"),
    list("nmf_bootstrap", quote(nmf_bootstrap(kl, level = 1)),
         "nmfkit_error_value"),
    list("nmf_bootstrap$type", quote(nmf_bootstrap(kl, type = "cols")),
         "nmfkit_error_choice"),
    list("nmf_bootstrap", quote(nmf_bootstrap(kl, x = x[, -1])),
         "nmfkit_error_dimension"),
    list("nmf_bootstrap", quote(nmf_bootstrap(kl, control = list(maxiter = 1))),
         "nmfkit_error_control"),
    list("nmf_bootstrap", quote(nmf_bootstrap(kl, min_cosine = 2)),
         "nmfkit_error_value"),
    list("summary.nmfkit_bootstrap", quote(summary(bt, level = -1)),
         "nmfkit_error_value"),
    list("summary.nmfkit_bootstrap", quote(summary(object = bt, top = 0)),
         "nmfkit_error_count"),
    list("summary.nmfkit_bootstrap$score", quote(summary(bt, score = "kim")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_bootstrap$score", quote(plot(bt, score = "weigth")),
         "nmfkit_error_choice"),
    list("glance.nmfkit_bootstrap", quote(glance(bt, 1)), "nmfkit_error_dots"),
    list("augment.nmfkit_bootstrap", quote(augment(bt, data = 1)),
         "nmfkit_error_data"),
    list("augment.nmfkit_bootstrap", quote(augment(bt, newdata = x)),
         "nmfkit_error_dots"),
    list("nmf_bootstrap", quote(nmf_bootstrap(kl, 2, typo = 1)),
         "nmfkit_error_dots"),
    list("tidy.nmfkit_bootstrap$matrix", quote(tidy(bt, matrix = "V")),
         "nmfkit_error_choice"),
    list("tidy.nmfkit_bootstrap", quote(tidy(x = bt, "H")),
         "nmfkit_error_choice"),
    list("tidy.nmfkit_bootstrap", quote(tidy(bt, level = 1)),
         "nmfkit_error_value"),
    list("plot.nmfkit_bootstrap", quote(plot(x = bt, top = 0)),
         "nmfkit_error_count"),
    list("plot.nmfkit_bootstrap", quote(plot(bt, components = 9)),
         "nmfkit_error_components"),
    list("plot.nmfkit_bootstrap", quote(plot(bt, level = 0)),
         "nmfkit_error_value"),
    list("predict.nmfkit_bootstrap", quote(predict(object = bt)),
         "nmfkit_error_missing"),
    list("predict.nmfkit_bootstrap", quote(predict(bt, newdata = -x)),
         "nmfkit_error_negative"),
    list("predict.nmfkit_bootstrap", quote(predict(bt, x, level = 2)),
         "nmfkit_error_value"),
    list("predict.nmfkit_bootstrap", quote(predict(bt, x[-1, ], assay = "counts")),
         "nmfkit_error_dimension"),
    list("tidy.nmfkit_interval", quote(tidy(x = bi, 1)), "nmfkit_error_dots"),
    list("predict.nmfkit_nmf$interval",
         quote(predict(kl, x, interval = "boot")), "nmfkit_error_choice"),
    list("predict.nmfkit_nmf", quote(predict(kl, x, interval = "bootstrap",
                                             level = 0)),
         "nmfkit_error_value"),
    list("predict.nmfkit_nmf", quote(predict(kl, x, interval = "bootstrap",
                                             bootstrap = kl)),
         "nmfkit_error_bootstrap"),
    list("example_counts$name", quote(example_counts("iris")),
         "nmfkit_error_choice"),
    list("example_counts", quote(example_counts(dir = tempfile())),
         "nmfkit_error_missing"),
    list("example_counts", quote(example_counts(dir = NULL)),
         "nmfkit_error_filepath"),
    list("example_counts_available",
         quote(example_counts_available(dir = NULL)), "nmfkit_error_filepath"),
    list("example_counts_available$name",
         quote(example_counts_available("iris", dir = tempdir())),
         "nmfkit_error_choice"),
    # nmf_control()
    list("nmf_control", quote(nmf_control(maxiter = 1)),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(max_iter = 1e10)),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(threads = "a")),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(tol = NA)), "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(verbose = "yes")),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(eps = -1)), "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(block_size = -1)),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(batch_size = 0)),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(forget = 0)),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(tol_reference = 0)),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(extrapolate = NA)),
         "nmfkit_error_control"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 10,
                                      control = list(extrapolate = TRUE))),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(h_start = "zeros")),
         "nmfkit_error_control"),
    list("nmf_control", quote(nmf_control(1e-4, 10, 1, FALSE, NULL, 3)),
         "nmfkit_error_control"),
    # nmf_joint(), nmf_joint_test(), chamfer_distance()
    list("nmf_joint", quote(nmf_joint(x)), "nmfkit_error_missing"),
    list("nmf_joint", quote(nmf_joint(x, x[1:3, ], rank = 10)),
         "nmfkit_error_dimension"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 0)),
         "nmfkit_error_rank"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 10, control = list(eps = 1))),
         "nmfkit_error_control"),
    list("nmf_joint$pbar", quote(nmf_joint(x, f$x2, rank = 10, pbar = "exac")),
         "nmfkit_error_choice"),
    list("nmf_joint$labels", quote(nmf_joint(x, f$x2, rank = 10, labels = c("a", "a"))),
         "nmfkit_error_labels"),
    list("nmf_joint_test", quote(nmf_joint_test(x, f$x2, rank = 10, pbarr = "exact")),
         "nmfkit_error_dots"),
    list("nmf_joint_test", quote(nmf_joint_test(x, f$x2, rank = 10, B = 1e10)),
         "nmfkit_error_count"),
    list("chamfer_distance", quote(chamfer_distance(x)),
         "nmfkit_error_missing"),
    list("chamfer_distance$variant",
         quote(chamfer_distance(x, x, variant = "papers")),
         "nmfkit_error_choice"),
    # nmf_distance() and its methods
    list("nmf_distance", quote(nmf_distance(1:3)), "nmfkit_error_type"),
    list("nmf_distance.default", quote(nmf_distance("a")),
         "nmfkit_error_type"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 10, trails = 5)),
         "nmfkit_error_dots"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 10, trials = 1e10)),
         "nmfkit_error_count"),
    list("nmf_distance.list$method",
         quote(nmf_distance(f$sets, rank = 10, method = "jnm")), "nmfkit_error_choice"),
    list("nmf_distance.list$pbar",
         quote(nmf_distance(f$sets, rank = 10, pbar = "exact ")), "nmfkit_error_choice"),
    list("nmf_distance.list$variant",
         quote(nmf_distance(f$sets, method = "chamfer", variant = "x")),
         "nmfkit_error_choice"),
    list("nmf_distance.nmfkit", quote(nmf_distance(f$fit, bogus = 1)),
         "nmfkit_error_dots"),
    list("nmf_distance.nmfkit$metric",
         quote(nmf_distance(f$fit, metric = "cos")), "nmfkit_error_choice"),
    list("nmf_distance.nmfkit_wasserstein",
         quote(nmf_distance(f$wfit, bogus = 1)), "nmfkit_error_dots"),
    list("nmf_distance.nmfkit_wasserstein$space",
         quote(nmf_distance(f$wfit, space = "coefs")), "nmfkit_error_choice"),
    list("nmf_distance.nmfkit_wasserstein$method",
         quote(nmf_distance(f$wfit, method = "lbfg")), "nmfkit_error_choice"),
    # nmf_stratified() and its methods
    list("nmf_stratified", quote(nmf_stratified(f$sets)),
         "nmfkit_error_missing"),
    list("nmf_stratified", quote(nmf_stratified(f$sets, rank = 2,
                                                v_updates = 1e10)),
         "nmfkit_error_count"),
    list("nmf_stratified",
         quote(nmf_stratified(f$sets, rank = 2, control = list(eps = -1))),
         "nmfkit_error_control"),
    list("nmf_stratified",
         quote(nmf_stratified(f$sets, rank = 2,
                              control = nmf_control(h_start = "zero"))),
         "nmfkit_error_control"),
    list("nmf_stratified$update_order",
         quote(nmf_stratified(f$sets, rank = 2, update_order = "gauss")),
         "nmfkit_error_choice"),
    list("predict.nmfkit_stratified",
         quote(predict(f$sfit, x, strata = rep("a", 10), bogus = 1)),
         "nmfkit_error_dots"),
    list("predict.nmfkit_stratified",
         quote(predict(f$sfit, x, strata = rep("a", 10), max_passes = 1e10)),
         "nmfkit_error_count"),
    list("fitted.nmfkit_stratified", quote(fitted(f$sfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("summary.nmfkit_stratified", quote(summary(f$sfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_stratified$type", quote(plot(f$sfit, type = "stratum")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_stratified", quote(plot(f$sfit, image_dim = c(5, 5))),
         "nmfkit_error_image_dim"),
    list("top_features.nmfkit_stratified$which",
         quote(top_features(f$sfit, which = "stratum")),
         "nmfkit_error_choice"),
    list("top_features.nmfkit_stratified",
         quote(top_features(f$sfit, which = "basis", bogus = 1)),
         "nmfkit_error_dots"),
    # nmf_shift() and its methods, instances(), shifted_shapes()
    list("nmf_shift", quote(nmf_shift(f$sim$x)), "nmfkit_error_missing"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, nrun = 1e10)),
         "nmfkit_error_count"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2,
                                      control = list(h_start = "zeros"))),
         "nmfkit_error_control"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, control = list(eps = 1))),
         "nmfkit_error_control"),
    list("nmf_shift$shift", quote(nmf_shift(f$sim$x, 2, shift = "torus")),
         "nmfkit_error_choice"),
    list("nmf_shift$w_step", quote(nmf_shift(f$sim$x, 2, w_step = "PG")),
         "nmfkit_error_choice"),
    list("instances", quote(instances(f$fit)), "nmfkit_error_type"),
    list("instances.default", quote(instances(1)), "nmfkit_error_type"),
    list("instances.nmfkit_shift", quote(instances(f$shfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("instances.nmfkit_shift", quote(instances(f$shfit, threshold = -1)),
         "nmfkit_error_value"),
    list("predict.nmfkit_shift", quote(predict(f$shfit, f$sim$x, bogus = 1)),
         "nmfkit_error_dots"),
    list("predict.nmfkit_shift", quote(predict(f$shfit, f$sim$x, inner = 0)),
         "nmfkit_error_count"),
    list("fitted.nmfkit_shift", quote(fitted(f$shfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("summary.nmfkit_shift", quote(summary(f$shfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, image_dim = c(2, 2))),
         "nmfkit_error_image_dim"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, type = "placements",
                                         data = f$sim$x[, 1:2])),
         "nmfkit_error_dimension"),
    list("plot.nmfkit_shift$type", quote(plot(f$shfit, type = "placement")),
         "nmfkit_error_choice"),
    list("shifted_shapes", quote(shifted_shapes(0)), "nmfkit_error_count"),
    list("shifted_shapes$shapes", quote(shifted_shapes(2, shapes = "circle")),
         "nmfkit_error_shapes"),
    list("shifted_shapes", quote(shifted_shapes(2, frame = "a")),
         "nmfkit_error_image_dim"),
    list("shifted_shapes", quote(shifted_shapes(1e10)),
         "nmfkit_error_count"),
    # nmf_wasserstein(), ot_distance() and the Wasserstein methods
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist)),
         "nmfkit_error_missing"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2,
                                                  rho = c(weights = 0.1))),
         "nmfkit_error_rho"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2, nrun = 1e10)),
         "nmfkit_error_count"),
    list("nmf_wasserstein",
         quote(nmf_wasserstein(f$hist, 2, control = list(eps = 2))),
         "nmfkit_error_control"),
    list("nmf_wasserstein$kernel",
         quote(nmf_wasserstein(f$hist, 2, kernel = "sparse")),
         "nmfkit_error_choice"),
    list("ot_distance", quote(ot_distance(NULL, f$hist[, 1])),
         "nmfkit_error_type"),
    list("ot_distance", quote(ot_distance(f$hist[, 1])),
         "nmfkit_error_missing"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          control = list(max_iters = 5))),
         "nmfkit_error_control"),
    list("ot_distance$kernel",
         quote(ot_distance(f$hist[, 1], f$hist[, 2], kernel = "dens")),
         "nmfkit_error_choice"),
    list("ot_distance$type",
         quote(ot_distance(f$hist[, 1], f$hist[, 2], type = "divergnce")),
         "nmfkit_error_choice"),
    list("ot_distance$method",
         quote(ot_distance(f$hist[, 1], f$hist[, 2], method = "sinkorn")),
         "nmfkit_error_choice"),
    list("predict.nmfkit_wasserstein",
         quote(predict(f$wfit, f$hist, bogus = 1)), "nmfkit_error_dots"),
    list("predict.nmfkit_wasserstein", quote(predict(f$wfit, f$hist[1:3, ])),
         "nmfkit_error_dimension"),
    list("summary.nmfkit_wasserstein", quote(summary(f$wfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_wasserstein", quote(plot(f$wfit, image_dim = c(4, 4))),
         "nmfkit_error_image_dim"),
    list("plot.nmfkit_wasserstein$type", quote(plot(f$wfit, type = "atoms")),
         "nmfkit_error_choice"),
    # nmf_joint methods
    list("predict.nmfkit_joint", quote(predict(f$jfit, x, bogus = 1)),
         "nmfkit_error_dots"),
    list("predict.nmfkit_joint", quote(predict(f$jfit, x, normalize = NA)),
         "nmfkit_error_flag"),
    list("summary.nmfkit_joint", quote(summary(f$jfit, top = 0)),
         "nmfkit_error_count"),
    list("summary.nmfkit_joint", quote(summary(f$jfit, bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_joint", quote(plot(f$jfit, components = 5)),
         "nmfkit_error_components"),
    list("plot.nmfkit_joint$type", quote(plot(f$jfit, type = "pbar")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_dist", quote(plot(f$dist, centers = 1e10,
                                        order = "kmeans")),
         "nmfkit_error_count"),
    list("plot.nmfkit_dist$order", quote(plot(f$dist, order = "hc")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_dist", quote(plot(f$dist, hclust_method = "avg")),
         "nmfkit_error_choice"),
    # the methods every model has
    list("predict.nmfkit", quote(predict(f$fit, x, bogus = 1)),
         "nmfkit_error_dots"),
    list("predict.nmfkit", quote(predict(f$fit, x, max_passes = 1e10)),
         "nmfkit_error_count"),
    list("predict.nmfkit", quote(predict(f$fit, x[1:3, ])),
         "nmfkit_error_dimension"),
    list("residuals.nmfkit", quote(residuals(f$fit, x = x[, 1:3])),
         "nmfkit_error_dimension"),
    list("residuals.nmfkit", quote(residuals(f$fit, bogus = 1)),
         "nmfkit_error_dots"),
    list("fitted.nmfkit", quote(fitted(f$fit, bogus = 1)),
         "nmfkit_error_dots"),
    list("coef.nmfkit", quote(coef(f$fit, bogus = 1)), "nmfkit_error_dots"),
    list("basis", quote(basis(1:3)), "nmfkit_error_type"),
    list("basis.default", quote(basis(list())), "nmfkit_error_type"),
    list("basis.nmfkit", quote(basis(f$fit, bogus = 1)), "nmfkit_error_dots"),
    list("summary.nmfkit", quote(summary(f$fit, bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit", quote(plot(f$fit, image_dim = c(5, 5))),
         "nmfkit_error_image_dim"),
    list("plot.nmfkit$type", quote(plot(f$fit, type = "bases")),
         "nmfkit_error_choice"),
    list("print.nmfkit", quote(print(f$fit, digits = "a")),
         "nmfkit_error_count"),
    list("top_features", quote(top_features(1:3)), "nmfkit_error_type"),
    list("top_features.default", quote(top_features(NULL)),
         "nmfkit_error_type"),
    list("top_features.nmfkit", quote(top_features(f$fit, n = 0)),
         "nmfkit_error_count"),
    list("top_features.nmfkit", quote(top_features(f$fit, bogus = 1)),
         "nmfkit_error_dots"),
    list("top_features.nmfkit$score",
         quote(top_features(f$fit, score = "kimm")), "nmfkit_error_choice"),
    list("top_features.nmfkit_stratified$score",
         quote(top_features(f$sfit, score = "weights")),
         "nmfkit_error_choice"),
    # tidy(), glance(), augment()
    list("tidy", quote(tidy(f$fit, matrix = "V")), "nmfkit_error_choice"),
    list("tidy.nmfkit$matrix", quote(tidy(f$fit, matrix = "V")),
         "nmfkit_error_choice"),
    list("tidy.nmfkit_stratified$matrix",
         quote(tidy(f$sfit, matrix = "S")), "nmfkit_error_choice"),
    list("glance", quote(glance(f$fit, 1)), "nmfkit_error_dots"),
    list("glance.nmfkit", quote(glance(f$fit, 1)), "nmfkit_error_dots"),
    list("augment", quote(augment(f$fit, data = 1)), "nmfkit_error_data"),
    list("augment.nmfkit", quote(augment(f$fit, data = 1)),
         "nmfkit_error_data"),
    list("augment.nmfkit", quote(augment(f$fit, newdata = x[-1, ])),
         "nmfkit_error_dimension"),
    # feature scores, matching, consensus programs
    list("feature_score", quote(feature_score("a")), "nmfkit_error_type"),
    list("feature_score$method",
         quote(feature_score(f$fit, method = "entropy")),
         "nmfkit_error_choice"),
    list("match_components", quote(match_components(f$fit, x[-1, ])),
         "nmfkit_error_dimension"),
    list("nmf_consensus", quote(nmf_consensus(x)), "nmfkit_error_missing"),
    list("nmf_consensus", quote(nmf_consensus(x, 2, nrun = 1)),
         "nmfkit_error_count"),
    list("nmf_consensus", quote(nmf_consensus(x, 2, density_threshold = 0)),
         "nmfkit_error_value"),
    list("nmf_consensus", quote(nmf_consensus(x, 2, neighbors = 2)),
         "nmfkit_error_value"),
    list("nmf_consensus", quote(nmf_consensus(x, 2, keep_data = NA)),
         "nmfkit_error_flag"),
    list("nmf_consensus", quote(nmf_consensus(x, 2, init = "nndsvd")),
         "nmfkit_error_dots"),
    list("basis.nmfkit_consensus", quote(basis(cons)), "nmfkit_error_rank"),
    list("basis.nmfkit_consensus", quote(basis(cons, rank = 7)),
         "nmfkit_error_rank"),
    list("coef.nmfkit_consensus", quote(coef(cons, 1, 2)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_consensus$type", quote(plot(cons, type = "dens")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_consensus", quote(plot(cons, "basis", rank = 9)),
         "nmfkit_error_rank"),
    list("summary.nmfkit_consensus", quote(summary(cons, 1)),
         "nmfkit_error_dots"),
    list("tidy.nmfkit_consensus$matrix", quote(tidy(cons, matrix = "V")),
         "nmfkit_error_choice"),
    list("glance.nmfkit_consensus", quote(glance(cons, 1)),
         "nmfkit_error_dots"),
    # nmf_manifold(), its methods and the clustering scores
    list("nmf_manifold", quote(nmf_manifold(x)), "nmfkit_error_missing"),
    list("nmf_manifold", quote(nmf_manifold(x - 1, 2, method = "gnmf")),
         "nmfkit_error_negative"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, k = 0)), "nmfkit_error"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, method = "smrmf",
                                            exemplars = 20)),
         "nmfkit_error"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, sign_compt = TRUE)),
         "nmfkit_error_control"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, control = list(mu00 = 1))),
         "nmfkit_error_control"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, graph = diag(3))),
         "nmfkit_error"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, kernel = "euclidean")),
         "nmfkit_error_control"),
    list("nmf_manifold$nbr",
         quote(nmf_manifold(x, 2, method = "smrmf", nbr = "knn_heat")),
         "nmfkit_error_choice"),
    list("nmf_manifold$rank_on",
         quote(nmf_manifold(x, 2, method = "smrmf", rank_on = "g")),
         "nmfkit_error_choice"),
    list("nmf_manifold$inner_z_iter",
         quote(nmf_manifold(x, 2, method = "smrmf", inner_z_iter = 0.5)),
         "nmfkit_error_control"),
    list("nmf_manifold$kernel",
         quote(nmf_manifold(x, 2, method = "smrmf", kernel = "gauss")),
         "nmfkit_error_choice"),
    list("nmf_manifold$rank_norm",
         quote(nmf_manifold(x, 2, method = "fsmrmf", rank_norm = "l1")),
         "nmfkit_error_choice"),
    list("nmf_manifold$labels",
         quote(nmf_manifold(x, 2, labels = "hclust")),
         "nmfkit_error_choice"),
    list("nmf_manifold$method", quote(nmf_manifold(x, 2, method = "gnm")),
         "nmfkit_error_choice"),
    list("nmf_manifold$weight", quote(nmf_manifold(x, 2, weight = "hot")),
         "nmfkit_error_choice"),
    list("nmf_manifold$init", quote(nmf_manifold(x, 2, init = "nndsvda")),
         "nmfkit_error_choice"),
    list("nmf_manifold$preprocess",
         quote(nmf_manifold(x, 2, preprocess = "scale")),
         "nmfkit_error_choice"),
    list("summary.nmfkit_manifold", quote(summary(f$mfit, digits = 3)),
         "nmfkit_error_dots"),
    list("clusters", quote(clusters(1:3)), "nmfkit_error_type"),
    list("clusters.default", quote(clusters(NULL)), "nmfkit_error_type"),
    list("clusters.nmfkit", quote(clusters(f$fit, 2)), "nmfkit_error_dots"),
    list("clusters.nmfkit_manifold", quote(clusters(f$mfit, 1)),
         "nmfkit_error_dots"),
    list("fitted.nmfkit_manifold", quote(fitted(f$mfit, x = x)),
         "nmfkit_error_dots"),
    list("predict.nmfkit_manifold", quote(predict(f$mfit, x[-1, ])),
         "nmfkit_error_dimension"),
    list("predict.nmfkit_manifold", quote(predict(f$mfit, x * NA)),
         "nmfkit_error_nonfinite"),
    list("predict.nmfkit_manifold$type",
         quote(predict(f$mfit, x, type = "label")), "nmfkit_error_choice"),
    # predict(type = ) of every variant
    list("predict.nmfkit$type", quote(predict(f$fit, x, type = "clas")),
         "nmfkit_error_choice"),
    list("predict.nmfkit_joint$type",
         quote(predict(f$jfit, x, type = "clas")), "nmfkit_error_choice"),
    list("predict.nmfkit_stratified$type",
         quote(predict(f$sfit, x, strata = rep("a", 10), type = "clas")),
         "nmfkit_error_choice"),
    list("predict.nmfkit_shift$type",
         quote(predict(f$shfit, f$sim$x, type = "clas")),
         "nmfkit_error_choice"),
    list("predict.nmfkit_wasserstein$type",
         quote(predict(f$wfit, f$hist, type = "clas")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_manifold$type", quote(plot(f$mfit, type = "graf")),
         "nmfkit_error_choice"),
    list("plot.nmfkit_manifold$coords",
         quote(plot(f$mfit, coords = "pca")), "nmfkit_error_choice"),
    list("cluster_acc", quote(cluster_acc(1:3, 1:4)), "nmfkit_error_labels"),
    list("cluster_acc", quote(cluster_acc(c(1, NA), 1:2)),
         "nmfkit_error_labels"),
    list("cluster_nmi", quote(cluster_nmi(list(1), 1)),
         "nmfkit_error_labels"),
    list("cluster_nmi$normalize",
         quote(cluster_nmi(1:3, 1:3, normalize = "min")),
         "nmfkit_error_choice"),
    list("two_moons", quote(two_moons(1)), "nmfkit_error_count"),
    list("two_moons", quote(two_moons(10, noise = -1)), "nmfkit_error"),
    # nmf_rank() and its methods
    list("nmf_rank", quote(nmf_rank(x, 0:2)), "nmfkit_error_rank"),
    list("nmf_rank", quote(nmf_rank(x, integer())), "nmfkit_error_rank"),
    list("nmf_rank", quote(nmf_rank(x, 2.5)), "nmfkit_error_rank"),
    list("nmf_rank", quote(nmf_rank(x)), "nmfkit_error_missing"),
    list("nmf_rank", quote(nmf_rank(x, 2, fraction = 0.6)),
         "nmfkit_error_value"),
    list("nmf_rank", quote(nmf_rank(x, 2, fraction = 0)),
         "nmfkit_error_value"),
    list("nmf_rank", quote(nmf_rank(x, 2, nfolds = 1)), "nmfkit_error_count"),
    list("nmf_rank", quote(nmf_rank(x, 2, variant = "stratified")),
         "nmfkit_error_fit"),
    list("nmf_rank$variant", quote(nmf_rank(x, 2, variant = "nmff")),
         "nmfkit_error_choice"),
    list("nmf_rank", quote(nmf_rank(x, 2, variant = NA)),
         "nmfkit_error_variant"),
    list("nmf_rank", quote(nmf_rank(x, 2, method = "consensus", nrun = 1)),
         "nmfkit_error_count"),
    list("nmf_rank$method", quote(nmf_rank(x, 2, method = "cross")),
         "nmfkit_error_choice"),
    list("summary.nmfkit_rank",
         quote(summary(nmf_rank(x, 2:3, nfolds = 2), bogus = 1)),
         "nmfkit_error_dots"),
    list("as.data.frame.nmfkit_rank",
         quote(as.data.frame(nmf_rank(x, 2:3, nfolds = 2), bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_rank",
         quote(plot(nmf_rank(x, 2:3, nfolds = 2), rank = 2)),
         "nmfkit_error_rank"),
    # nmf_tune() and its methods
    list("nmf_tune", quote(nmf_tune(x, 0:2)), "nmfkit_error_rank"),
    list("nmf_tune", quote(nmf_tune(x, 2.5)), "nmfkit_error_rank"),
    list("nmf_tune", quote(nmf_tune(x, 11)), "nmfkit_error_rank"),
    list("nmf_tune", quote(nmf_tune(x)), "nmfkit_error_missing"),
    list("nmf_tune", quote(nmf_tune(x, 2, variant = "nnmf")),
         "nmfkit_error_choice"),
    list("nmf_tune", quote(nmf_tune(x, 2, variant = "wasserstein")),
         "nmfkit_error_variant"),
    list("nmf_tune", quote(nmf_tune(x, 2, loss = "poison")),
         "nmfkit_error_loss"),
    list("nmf_tune", quote(nmf_tune(x, 2, score = "l2")), "nmfkit_error_loss"),
    list("nmf_tune", quote(nmf_tune(x, 2, grid = list(lambda = 1))),
         "nmfkit_error_grid"),
    list("nmf_tune", quote(nmf_tune(x, 2, grid = list(l1 = numeric()))),
         "nmfkit_error_grid"),
    list("nmf_tune", quote(nmf_tune(x, 2, fraction = 0.6)),
         "nmfkit_error_value"),
    list("nmf_tune", quote(nmf_tune(x, 2, nfolds = 1)), "nmfkit_error_count"),
    list("nmf_tune", quote(nmf_tune(x, 2, keep_data = TRUE)),
         "nmfkit_error_dots"),
    list("nmf_tune", quote(nmf_tune(x, 2, assay = 0)), "nmfkit_error_assay"),
    list("nmf_tune$holdout", quote(nmf_tune(x, 2, holdout = "rows")),
         "nmfkit_error_choice"),
    list("summary.nmfkit_tune",
         quote(summary(nmf_tune(x, 2:3, nfolds = 2), bogus = 1)),
         "nmfkit_error_dots"),
    list("tidy.nmfkit_tune",
         quote(tidy(nmf_tune(x, 2:3, nfolds = 2), matrix = "W")),
         "nmfkit_error_dots"),
    list("glance.nmfkit_tune",
         quote(glance(nmf_tune(x, 2:3, nfolds = 2), 1)), "nmfkit_error_dots"),
    list("as.data.frame.nmfkit_tune",
         quote(as.data.frame(nmf_tune(x, 2:3, nfolds = 2), row.names = NULL,
                             optional = FALSE, bogus = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_tune",
         quote(plot(nmf_tune(x, 2:3, nfolds = 2), settings = 2)),
         "nmfkit_error_value"),
    # data
    list("swimmer$size", quote(swimmer("16x16")), "nmfkit_error_choice"),
    # the contract's third pass: huge data, bad fits, tiny folds, zero starts
    list("nmf", quote(nmf(x, 2, weights = Matrix::Matrix(x > 0.5,
                                                         sparse = TRUE))),
         "nmfkit_error_weights"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, fraction = 1e-10)),
         "nmfkit_error_value"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, mask = x > 0.5)),
         "nmfkit_error_dots"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, keep_data = TRUE)),
         "nmfkit_error_dots"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, variant = function(x, rank, mask,
                                                           keep_data) 1)),
         "nmfkit_error_fit"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, method = "consensus", nrun = 2,
                                    variant = function(x, rank, keep_data, ...)
                                      list(W = matrix(NaN, 12, rank),
                                           H = matrix(1, rank, 10)))),
         "nmfkit_error_fit"),
    list("shifted_shapes",
         quote(shifted_shapes(2, shapes = list(a = matrix(NA_real_, 2, 2)))),
         "nmfkit_error_shapes"),
    list("nmf_stratified",
         quote(nmf_stratified(f$sets, rank = 2,
                              init = list(W = matrix(0, 12, 2),
                                          H = matrix(1, 2, 18),
                                          V = matrix(1, 12, 2)))),
         "nmfkit_error_init"),
    list("predict.nmfkit", quote(predict(f$fit, x * .Machine$double.xmax)),
         "nmfkit_error_overflow"),
    list("predict.nmfkit_stratified",
         quote(predict(f$sfit, x * .Machine$double.xmax,
                       strata = rep("a", 10))),
         "nmfkit_error_overflow"),
    list("predict.nmfkit_manifold",
         quote(predict(f$mfit, x * .Machine$double.xmax)),
         "nmfkit_error_overflow"),
    # every argument of every function: the rows the table lacked
    list("chamfer_distance", quote(chamfer_distance(x, x, normalize = NA)),
         "nmfkit_error_flag"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 0)),
         "nmfkit_error_rank"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 10, resample = -1)),
         "nmfkit_error_count"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 10, samples = "a")),
         "nmfkit_error_count"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 10, normalize = NA)),
         "nmfkit_error_flag"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = 10, init = "bogus")),
         "nmfkit_error_init"),
    list("nmf_distance.list",
         quote(nmf_distance(f$sets, rank = 10, control = list(bogus = 1))),
         "nmfkit_error_control"),
    list("nmf_distance.nmfkit", quote(nmf_distance(f$fit, normalize = NA)),
         "nmfkit_error_flag"),
    list("nmf_distance.nmfkit_wasserstein",
         quote(nmf_distance(f$wfit, control = list(bogus = 1))),
         "nmfkit_error_control"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 10, samples = -1)),
         "nmfkit_error_count"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 10, normalize = NA)),
         "nmfkit_error_flag"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 10, init = "bogus")),
         "nmfkit_error_init"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 10, keep_data = NA)),
         "nmfkit_error_flag"),
    list("nmf_joint_test", quote(nmf_joint_test(x, f$x2, rank = 0)),
         "nmfkit_error_rank"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, lambda = -1)),
         "nmfkit_error_value"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, image_dim = c(3, 3))),
         "nmfkit_error_image_dim"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, inner = 0)),
         "nmfkit_error_count"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, instances = -1)),
         "nmfkit_error_instances"),
    # the grammar: nrun and keep_data everywhere, deprecated names still
    # checked
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 2, nrun = 0)),
         "nmfkit_error_count"),
    list("nmf_stratified", quote(nmf_stratified(f$sets, 2, nrun = 1.5)),
         "nmfkit_error_count"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, nrun = 0)),
         "nmfkit_error_count"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, keep_data = NA)),
         "nmfkit_error_flag"),
    list("nmf_shift$restarts",
         quote(suppressWarnings(nmf_shift(f$sim$x, 2, restarts = 0))),
         "nmfkit_error_count"),
    list("nmf_wasserstein$outer",
         quote(suppressWarnings(nmf_wasserstein(f$hist, 2, outer = 0))),
         "nmfkit_error_count"),
    list("nmf_rank$ranks",
         quote(suppressWarnings(nmf_rank(x, ranks = 0:2))),
         "nmfkit_error_rank"),
    list("nmf_rank$fit",
         quote(suppressWarnings(nmf_rank(x, 2, fit = "nmff"))),
         "nmfkit_error_choice"),
    list("predict.nmfkit_joint", quote(predict(f$jfit, x, tol = -1)),
         "nmfkit_error_value"),
    list("predict.nmfkit_joint", quote(predict(f$jfit, x, max_passes = 0)),
         "nmfkit_error_count"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, keep_data = NA)),
         "nmfkit_error_flag"),
    list("nmf_stratified", quote(nmf_stratified(x, strata = 1:3, rank = 2)),
         "nmfkit_error_strata"),
    list("nmf_stratified",
         quote(nmf_stratified(f$sets, rank = 2, keep_data = NA)),
         "nmfkit_error_flag"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2, coords = "a")),
         "nmfkit_error_coords"),
    list("nmf_wasserstein",
         quote(nmf_wasserstein(f$hist, 2, image_dim = c(2, 2))),
         "nmfkit_error_image_dim"),
    list("nmf_wasserstein",
         quote(nmf_wasserstein(f$hist, 2, cost = matrix(-1, 15, 15))),
         "nmfkit_error_cost"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2, epsilon = -1)),
         "nmfkit_error_epsilon"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2, init = "bogus")),
         "nmfkit_error_init"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2, keep_data = NA)),
         "nmfkit_error_flag"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          cost = "a")), "nmfkit_error_cost"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          coords = 1:3)),
         "nmfkit_error_coords"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          image_dim = c(2, 2))),
         "nmfkit_error_image_dim"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          epsilon = 0)),
         "nmfkit_error_epsilon"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          plan = NA)), "nmfkit_error_flag"),
    list("plot.nmfkit", quote(plot(f$fit, components = 99)),
         "nmfkit_error_components"),
    list("plot.nmfkit_dist", quote(plot(f$dist, values = NA)),
         "nmfkit_error_flag"),
    list("plot.nmfkit_joint", quote(plot(f$jfit, type = "basis",
                                         image_dim = c(5, 5))),
         "nmfkit_error_image_dim"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, type = "placements",
                                         images = 1e6)),
         "nmfkit_error_images"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, components = 99)),
         "nmfkit_error_components"),
    list("plot.nmfkit_stratified", quote(plot(f$sfit, type = "basis",
                                              components = 99)),
         "nmfkit_error_components"),
    list("plot.nmfkit_wasserstein", quote(plot(f$wfit, components = 99)),
         "nmfkit_error_components"),
    list("predict.nmfkit", quote(predict(f$fit, x, tol = -1)),
         "nmfkit_error_value"),
    list("predict.nmfkit_manifold", quote(predict(f$mfit, x, tol = -1)),
         "nmfkit_error_value"),
    list("predict.nmfkit_manifold", quote(predict(f$mfit, x, max_passes = 0)),
         "nmfkit_error_count"),
    list("predict.nmfkit_stratified",
         quote(predict(f$sfit, x, strata = rep("a", 10), tol = NA)),
         "nmfkit_error_value"),
    list("shifted_shapes", quote(shifted_shapes(2, noise = -1)),
         "nmfkit_error_value"),
    list("shifted_shapes", quote(shifted_shapes(2, copies = 0)),
         "nmfkit_error_copies"),
    list("shifted_shapes", quote(shifted_shapes(2, overlap = NA)),
         "nmfkit_error_flag"),
    list("shifted_shapes", quote(shifted_shapes(2, margin = -1)),
         "nmfkit_error_count"),
    list("top_features.nmfkit_stratified", quote(top_features(f$sfit, n = 0)),
         "nmfkit_error_count"),
    list("two_moons", quote(two_moons(10, dim = 1)), "nmfkit_error_count"),
    list("nmf", quote(nmf(x, 2, init = list(W = Matrix::Matrix(x[, 1:2] > 2),
                                            H = matrix(1, 2, 10)))),
         "nmfkit_error_init")
  )
  # containers (R/input.R, R/add-nmf.R): `assay` is checked for any data;
  # the methods of add_nmf() with their containers' packages (Suggests)
  tab <- data.frame(document = c("a", "b"), term = "t", n = c(1, -1))
  rows <- c(rows, list(
    list("nmf", quote(nmf(x, 2, assay = NA)), "nmfkit_error_assay"),
    list("nmf", quote(nmf(tab, 1)), "nmfkit_error_negative"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, assay = 0)), "nmfkit_error_assay"),
    list("nmf_consensus", quote(nmf_consensus(x, 2, nrun = 2, assay = "")),
         "nmfkit_error_assay"),
    list("predict.nmfkit", quote(predict(f$fit, x, assay = NA)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_nmf", quote(predict(kl, x, assay = 1.5)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_joint", quote(predict(f$jfit, x, assay = NA)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_manifold", quote(predict(f$mfit, x, assay = NA)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_shift", quote(predict(f$shfit, f$sim$x, assay = NA)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_stratified",
         quote(predict(f$sfit, x, strata = rep("a", 10), assay = NA)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_wasserstein",
         quote(predict(f$wfit, f$hist, assay = NA)), "nmfkit_error_assay"),
    list("add_nmf", quote(add_nmf(x, 2)), "nmfkit_error_type"),
    # a required argument left out names it (R's own error is unclassed)
    list("add_nmf", quote(add_nmf(foo = 1)), "nmfkit_error_missing"),
    list("feature_score", quote(feature_score()), "nmfkit_error_missing"),
    list("match_components", quote(match_components(f$fit)),
         "nmfkit_error_missing"),
    list("cluster_acc", quote(cluster_acc(1:3)), "nmfkit_error_missing"),
    list("cluster_nmi", quote(cluster_nmi(yhat = 1:3)),
         "nmfkit_error_missing"),
    list("nmf_manifold", quote(nmf_manifold(rank = 2)),
         "nmfkit_error_missing"),
    list("nmf_bootstrap", quote(nmf_bootstrap()), "nmfkit_error_missing"),
    list("nmf_distance", quote(nmf_distance()), "nmfkit_error_missing"),
    list("basis", quote(basis()), "nmfkit_error_missing"),
    list("top_features", quote(top_features()), "nmfkit_error_missing"),
    list("add_nmf.default", quote(add_nmf(list(), 2)), "nmfkit_error_type")
  ))
  have_sce <- requireNamespace("SingleCellExperiment", quietly = TRUE)
  have_seurat <- requireNamespace("SeuratObject", quietly = TRUE)
  if (have_sce) {
    sce <- SingleCellExperiment::SingleCellExperiment(list(counts = x))
    rows <- c(rows, list(
      list("add_nmf.SingleCellExperiment", quote(add_nmf(sce, rank = 0)),
           "nmfkit_error_rank"),
      list("add_nmf.SingleCellExperiment",
           quote(add_nmf(sce, 2, assay = "logcounts")), "nmfkit_error_assay"),
      list("add_nmf.SingleCellExperiment", quote(add_nmf(sce, 2, name = NA)),
           "nmfkit_error_name"),
      list("add_nmf.SingleCellExperiment",
           quote(add_nmf(sce, 2, keep_data = NA)), "nmfkit_error_flag"),
      list("add_nmf.SingleCellExperiment", quote(add_nmf(sce, model = 1)),
           "nmfkit_error_model"),
      list("add_nmf.SingleCellExperiment", quote(add_nmf(sce, 2, foo = 1)),
           "nmfkit_error_dots"),
      list("add_nmf.SingleCellExperiment", quote(add_nmf(sce, 2, 3)),
           "nmfkit_error_dots"),
      list("add_nmf.SingleCellExperiment", quote(add_nmf(sce, f$fit)),
           "nmfkit_error_model")
    ))
  }
  if (have_seurat) {
    sx <- round(10 * x)
    dimnames(sx) <- list(paste0("g", seq_len(nrow(x))),
                         paste0("c", seq_len(ncol(x))))
    so <- suppressWarnings(SeuratObject::CreateSeuratObject(
      methods::as(sx, "CsparseMatrix")))
    rows <- c(rows, list(
      list("add_nmf.Seurat", quote(add_nmf(so, rank = 0)), "nmfkit_error_rank"),
      list("add_nmf.Seurat", quote(add_nmf(so, 2, assay = "scale.data")),
           "nmfkit_error_assay"),
      list("add_nmf.Seurat", quote(add_nmf(so, 2, seurat_assay = "ADT")),
           "nmfkit_error_assay"),
      list("add_nmf.Seurat", quote(add_nmf(so, 2, name = "")),
           "nmfkit_error_name"),
      list("add_nmf.Seurat", quote(add_nmf(so, 2, key = "NMF")),
           "nmfkit_error_name"),
      list("add_nmf.Seurat", quote(add_nmf(so, 2, keep_data = NA)),
           "nmfkit_error_flag"),
      list("add_nmf.Seurat", quote(add_nmf(so, model = f$jfit)),
           "nmfkit_error_dimension"),
      list("add_nmf.Seurat", quote(add_nmf(so, 2, contrl = list())),
           "nmfkit_error_dots"),
      list("add_nmf.Seurat", quote(add_nmf(so, f$fit)), "nmfkit_error_model")
    ))
  }
  # write_tenx(), tenx_writer(), read_tenx(): without rhdf5 and HDF5Array
  # every call is the missing-package error
  h5 <- requireNamespace("rhdf5", quietly = TRUE) &&
    requireNamespace("HDF5Array", quietly = TRUE)
  h5_class <- function(cls) if (h5) cls else "nmfkit_error_package"
  h5_path <- withr::local_tempfile(fileext = ".h5")
  file.create(h5_path)
  h5_new <- function() tempfile(fileext = ".h5")
  rows <- c(rows, list(
    list("write_tenx", quote(write_tenx("a", h5_new())),
         h5_class("nmfkit_error_type")),
    list("write_tenx", quote(write_tenx(x, NA)),
         h5_class("nmfkit_error_filepath")),
    list("write_tenx", quote(write_tenx(x, h5_path)),
         h5_class("nmfkit_error_exists")),
    list("write_tenx", quote(write_tenx(x, h5_new(), overwrite = NA)),
         h5_class("nmfkit_error_flag")),
    list("write_tenx", quote(write_tenx(x, h5_new(), group = "")),
         h5_class("nmfkit_error_group")),
    list("write_tenx", quote(write_tenx(x, h5_new(), type = "float")),
         h5_class("nmfkit_error_choice")),
    list("write_tenx", quote(write_tenx(x, h5_new(), chunk = 0)),
         h5_class("nmfkit_error_chunk")),
    list("write_tenx", quote(write_tenx(x, h5_new(), level = 10)),
         h5_class("nmfkit_error_level")),
    list("tenx_writer", quote(tenx_writer(NA, 3)),
         h5_class("nmfkit_error_filepath")),
    list("tenx_writer", quote(tenx_writer(h5_new(), nrow = 0)),
         h5_class("nmfkit_error_dimension")),
    list("tenx_writer", quote(tenx_writer(h5_new(), 3, rownames = "a")),
         h5_class("nmfkit_error_dimnames")),
    list("tenx_writer", quote(tenx_writer(h5_new(), 3, group = NA)),
         h5_class("nmfkit_error_group")),
    list("tenx_writer$type", quote(tenx_writer(h5_new(), 3, type = "float")),
         h5_class("nmfkit_error_choice")),
    list("tenx_writer", quote(tenx_writer(h5_new(), 3, chunk = -1)),
         h5_class("nmfkit_error_chunk")),
    list("tenx_writer", quote(tenx_writer(h5_new(), 3, level = 1.5)),
         h5_class("nmfkit_error_level")),
    list("tenx_writer", quote(tenx_writer(h5_new(), 3, overwrite = "yes")),
         h5_class("nmfkit_error_flag")),
    list("read_tenx", quote(read_tenx(h5_new())),
         h5_class("nmfkit_error_filepath")),
    list("read_tenx", quote(read_tenx(h5_path, group = "")),
         h5_class("nmfkit_error_group"))
  ))
  # corrupted sparse objects of each layout in every sparse argument
  bad_d <- corrupt_sparse(x, "d")
  bad_l <- corrupt_sparse(x, "l")
  g <- Matrix::Matrix((as.matrix(dist(t(x))) < 1.2) * 1, sparse = TRUE)
  Matrix::diag(g) <- 0
  bad_g <- corrupt_sparse(as.matrix(g) + 0.5, "d")
  for (k in names(bad_d)) {
    b <- bad_d[[k]]
    rows <- c(rows, list(
      list("nmf", bquote(nmf(.(b), 2)), "nmfkit_error_sparse"),
      list("nmf", bquote(nmf(x, 2, weights = .(b))), "nmfkit_error_sparse"),
      list("nmf", bquote(nmf(x, 2, fixed = list(W = .(b)))),
           "nmfkit_error_sparse"),
      list("nmf", bquote(nmf(x, 2, mask = .(bad_l[[k]]))),
           "nmfkit_error_sparse"),
      list("nmf", bquote(nmf(Matrix::Matrix(x, sparse = TRUE), 2,
                             mask = .(bad_l[[k]]))), "nmfkit_error_sparse"),
      list("nmf_rank", bquote(nmf_rank(.(b), 1:2)), "nmfkit_error_sparse"),
      list("nmf_joint", bquote(nmf_joint(x, .(b), rank = 2)),
           "nmfkit_error_sparse"),
      list("nmf_stratified",
           bquote(nmf_stratified(list(a = x, b = .(b)), rank = 2)),
           "nmfkit_error_sparse"),
      list("nmf_manifold", bquote(nmf_manifold(.(b), 2, k = 3)),
           "nmfkit_error_sparse"),
      list("nmf_manifold", bquote(nmf_manifold(x, 2, graph = .(bad_g[[k]]))),
           "nmfkit_error_sparse"),
      list("predict.nmfkit", bquote(predict(f$fit, .(b))),
           "nmfkit_error_sparse")
    ))
  }
  # nmf_differential() and its result (R/nmf-differential.R)
  dtf <- withr::with_seed(1, nmf_differential(f$jfit, B = 2))
  rows <- c(rows, list(
    list("nmf_differential", quote(nmf_differential()),
         "nmfkit_error_missing"),
    list("nmf_differential", quote(nmf_differential(f$jfit, B = 0, x = NULL)),
         "nmfkit_error_count"),
    list("nmf_differential.default",
         quote(nmf_differential(f$fit, B = 1, x = NULL)), "nmfkit_error_type"),
    list("nmf_differential.default", quote(nmf_differential(x)),
         "nmfkit_error_type"),
    list("nmf_differential.nmfkit_joint",
         quote(nmf_differential(f$jfit, B = 2.5)), "nmfkit_error_count"),
    list("nmf_differential.nmfkit_joint",
         quote(nmf_differential(f$jfit, B = 1, x = x)), "nmfkit_error_data"),
    list("nmf_differential.nmfkit_joint",
         quote(nmf_differential(f$jfit, B = 1, x = list(x, x))),
         "nmfkit_error_dimension"),
    list("nmf_differential.nmfkit_joint",
         quote(nmf_differential(f$jfit, B = 1, x = list(x, -f$x2))),
         "nmfkit_error_negative"),
    list("nmf_differential.nmfkit_joint",
         quote(nmf_differential(f$jfit, 1, bee = 1)), "nmfkit_error_dots"),
    list("nmf_differential.nmfkit_stratified",
         quote(nmf_differential(f$sfit, B = -1)), "nmfkit_error_count"),
    list("nmf_differential.nmfkit_stratified",
         quote(nmf_differential(f$sfit, B = 1, x = x)),
         "nmfkit_error_dimension"),
    list("nmf_differential.nmfkit_stratified",
         quote(nmf_differential(f$sfit, B = 1, x = list(a = x, c = f$x2))),
         "nmfkit_error_strata"),
    list("summary.nmfkit_differential", quote(summary(dtf, alpha = 0)),
         "nmfkit_error_value"),
    list("glance.nmfkit_differential", quote(glance(dtf, 1)),
         "nmfkit_error_dots"),
    list("augment.nmfkit_differential", quote(augment(dtf, data = x)),
         "nmfkit_error_data"),
    list("augment.nmfkit_differential", quote(augment(dtf, alpha = 2)),
         "nmfkit_error_value"),
    list("summary.nmfkit_differential", quote(summary(dtf, bee = 0.1)),
         "nmfkit_error_dots"),
    list("tidy.nmfkit_differential", quote(tidy(dtf, matrix = "W")),
         "nmfkit_error_dots"),
    list("plot.nmfkit_differential", quote(plot(dtf, alpha = 2)),
         "nmfkit_error_value"),
    list("plot.nmfkit_differential", quote(plot(dtf, top = -1)),
         "nmfkit_error_count")
  ))
  # an unknown or misspelt argument of a function without options in `...`
  # is a classed error naming it (R's own "unused argument" is not)
  rows <- c(rows, list(
    list("nmf", quote(nmf(x, 2, contorl = nmf_control())), "nmfkit_error_dots"),
    list("nmf_joint", quote(nmf_joint(x, f$x2, rank = 2, pbr = "exact")),
         "nmfkit_error_dots"),
    list("nmf_stratified", quote(nmf_stratified(f$sets, 2, stratum = 1)),
         "nmfkit_error_dots"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, shifts = "torus2d")),
         "nmfkit_error_dots"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, init = "nndsvd")),
         "nmfkit_error_init"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2,
                                      init = list(W = matrix(1, 64, 2)))),
         "nmfkit_error_init"),
    list("nmf_shift", quote(nmf_shift(f$sim$x, 2, init = list(
      W = matrix(-1, 64, 2), H = matrix(1, 2, ncol(f$sim$x))))),
      "nmfkit_error_init"),
    list("nmf_wasserstein", quote(nmf_wasserstein(f$hist, 2, epsilom = 1)),
         "nmfkit_error_dots"),
    list("ot_distance", quote(ot_distance(f$hist[, 1], f$hist[, 2],
                                          epsilom = 1)), "nmfkit_error_dots"),
    list("chamfer_distance", quote(chamfer_distance(x, x, normalise = TRUE)),
         "nmfkit_error_dots"),
    list("feature_score", quote(feature_score(f$fit, metod = "kim")),
         "nmfkit_error_dots"),
    list("match_components", quote(match_components(f$fit, f$fit, 1)),
         "nmfkit_error_dots"),
    list("shifted_shapes", quote(shifted_shapes(2, frames = c(8, 8))),
         "nmfkit_error_dots"),
    list("swimmer", quote(swimmer(sise = "32x32")), "nmfkit_error_dots"),
    list("example_counts", quote(example_counts("pbmc", dirr = tempdir())),
         "nmfkit_error_dots"),
    list("example_counts_available",
         quote(example_counts_available("pbmc", tempdir(), 1)),
         "nmfkit_error_dots"),
    list("write_tenx", quote(write_tenx(x, h5_new(), overwite = TRUE)),
         "nmfkit_error_dots"),
    list("tenx_writer", quote(tenx_writer(h5_new(), 3, rownmes = "a")),
         "nmfkit_error_dots"),
    list("read_tenx", quote(read_tenx(h5_new(), grop = "matrix")),
         "nmfkit_error_dots")
  ))
  # a plot method's `...` goes to base graphics, which only warned about a
  # name that is no graphical parameter (a misspelt argument of the method)
  rows <- c(rows, list(
    list("plot.nmfkit", quote(plot(f$fit, tpye = "coef")), "nmfkit_error_dots"),
    list("plot.nmfkit", quote(plot(f$fit, "coef", NULL, NULL, 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_bootstrap", quote(plot(bt, topp = 3)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_consensus", quote(plot(cons, rnak = 2)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_dist", quote(plot(f$dist, oder = "none")),
         "nmfkit_error_dots"),
    list("plot.nmfkit_joint", quote(plot(f$jfit, compnents = 1)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_rank", quote(plot(nmf_rank(x, 2:3, nfolds = 2),
                                        rnk = 2)), "nmfkit_error_dots"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, imges = 2)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_stratified", quote(plot(f$sfit, tpye = "basis")),
         "nmfkit_error_dots"),
    list("plot.nmfkit_tune", quote(plot(nmf_tune(x, 2:3, nfolds = 2),
                                        sttings = 2)), "nmfkit_error_dots"),
    list("plot.nmfkit_wasserstein", quote(plot(f$wfit, tpe = "coef")),
         "nmfkit_error_dots"),
    list("write_tenx", quote(write_tenx(x, h5_path, overwrite = FALSE)),
         h5_class("nmfkit_error_exists")),
    # digits of print methods are checked
    list("print.nmfkit_interval", quote(print(bi, digits = "a")),
         "nmfkit_error_count"),
    list("print.summary.nmfkit_bootstrap",
         quote(print(summary(bt), digits = "a")), "nmfkit_error_count")
  ))
  # the fourth pass's siblings: an argument that only some modes read is
  # checked in every mode; plot methods check their graphics `...`; a
  # renamed argument given twice; print() methods check `...`
  rk <- withr::with_seed(1, nmf_rank(x, 1:2, nfolds = 2,
                                     control = nmf_control(max_iter = 5)))
  rows <- c(rows, list(
    list("predict.nmfkit_nmf", quote(predict(kl, tol = -1)),
         "nmfkit_error_value"),
    list("predict.nmfkit_nmf", quote(predict(kl, max_passes = 0)),
         "nmfkit_error_count"),
    list("predict.nmfkit_nmf", quote(predict(kl, level = 2)),
         "nmfkit_error_value"),
    list("predict.nmfkit_nmf", quote(predict(kl, x, bootstrap = bt)),
         "nmfkit_error_bootstrap"),
    list("predict.nmfkit_nmf", quote(predict(kl, assay = NA)),
         "nmfkit_error_assay"),
    list("predict.nmfkit_stratified", quote(predict(f$sfit, tol = NA)),
         "nmfkit_error_value"),
    list("predict.nmfkit_joint", quote(predict(f$jfit, max_passes = -1)),
         "nmfkit_error_count"),
    list("predict.nmfkit_manifold", quote(predict(f$mfit, assay = "")),
         "nmfkit_error_assay"),
    list("predict.nmfkit_shift", quote(predict(f$shfit, inner = 0)),
         "nmfkit_error_count"),
    list("predict.nmfkit_shift", quote(predict(f$shfit, assay = NA)),
         "nmfkit_error_assay"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, nrun = NA)),
         "nmfkit_error_count"),
    list("nmf_rank", quote(nmf_rank(x, 1:2, method = "consensus",
                                    nfolds = 1)), "nmfkit_error_count"),
    list("nmf_rank", quote(suppressWarnings(nmf_rank(x, 1:2, ranks = 1:3))),
         "nmfkit_error_renamed"),
    list("nmf_rank", quote(suppressWarnings(nmf_rank(x, 1:2, fit = "zz"))),
         "nmfkit_error_choice"),
    list("nmf_shift", quote(suppressWarnings(nmf_shift(f$sim$x, 2, nrun = 1,
                                                       restarts = 2))),
         "nmfkit_error_renamed"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, rank = -1,
                                                 method = "chamfer")),
         "nmfkit_error_rank"),
    list("nmf_distance.list", quote(nmf_distance(f$sets, method = "chamfer",
                                                 init = "nndsvdx")),
         "nmfkit_error_init"),
    list("nmf_manifold", quote(nmf_manifold(x, 2, method = "gnmf",
                                            graph = f$mfit$graph, k = 0)),
         "nmfkit_error_k"),
    list("plot.nmfkit_consensus", quote(plot(cons, rank = 7)),
         "nmfkit_error_rank"),
    list("plot.nmfkit_dist", quote(plot(f$dist, centers = -1)),
         "nmfkit_error_count"),
    list("plot.nmfkit_joint", quote(plot(f$jfit, image_dim = c(5, 5))),
         "nmfkit_error_image_dim"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, images = 0)),
         "nmfkit_error_images"),
    list("plot.nmfkit_shift", quote(plot(f$shfit, data = x)),
         "nmfkit_error_dimension"),
    list("plot.nmfkit_stratified", quote(plot(f$sfit, components = 9)),
         "nmfkit_error_components"),
    list("plot.nmfkit_differential", quote(plot(dtf, topp = 3)),
         "nmfkit_error_dots"),
    list("plot.nmfkit_manifold", quote(plot(f$mfit, cords = "mds")),
         "nmfkit_error_dots"),
    list("as.data.frame.nmfkit_rank", quote(as.data.frame(rk, row.names = 1)),
         "nmfkit_error_value"),
    list("as.data.frame.nmfkit_rank", quote(as.data.frame(rk, optional = NA)),
         "nmfkit_error_flag"),
    list("as.data.frame.nmfkit_tune",
         quote(as.data.frame(nmf_tune(x, 1:2, nfolds = 2), row.names = NA)),
         "nmfkit_error_value"),
    list("as.data.frame.nmfkit_tune",
         quote(as.data.frame(nmf_tune(x, 1:2, nfolds = 2), optional = "a")),
         "nmfkit_error_flag"),
    list("tidy.nmfkit_rank", quote(tidy(x = rk, matrix = "W")),
         "nmfkit_error_dots"),
    list("glance.nmfkit_rank", quote(glance(x = rk, 1)), "nmfkit_error_dots"),
    list("print.summary.nmfkit", quote(print(summary(f$fit), digitz = 3)),
         "nmfkit_error_dots"),
    list("print.summary.nmfkit_joint",
         quote(print(summary(f$jfit), digitz = 3)), "nmfkit_error_dots"),
    list("print.summary.nmfkit_bootstrap", quote(print(summary(bt), foo = 1)),
         "nmfkit_error_dots"),
    list("print.nmfkit_control", quote(print(nmf_control(), foo = 1)),
         "nmfkit_error_dots")
  ))
  # the signature functions' rows (helper-signatures.R)
  rows <- c(rows, signature_contract_rows(environment()))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (r in rows) {
    info <- paste(r[[1]], deparse1(r[[2]]))
    cnd <- expect_error(eval(r[[2]]), class = r[[3]], info = info)
    # the message names the argument: one the call gives or the function
    # takes (a missing one), in backticks
    if (inherits(cnd, "nmfkit_error")) {
      expect_true(names_an_argument(cnd, r[[1]], r[[2]]),
                  info = paste(info, "\n", conditionMessage(cnd)))
    }
  }

  # coverage: every exported function and method, every choice argument
  covered <- vapply(rows, `[[`, character(1), 1)
  api <- nmfkit_api()
  # (methods of the internal class of data read in blocks, which no user
  # input reaches, are exempt)
  exempt <- c(grep("^print", api, value = TRUE),
              grep("\\.nmfkit_blocks$", api, value = TRUE),
              if (!have_sce) "add_nmf.SingleCellExperiment",
              if (!have_seurat) "add_nmf.Seurat")
  expect_setequal(setdiff(api, c(sub("\\$.*", "", covered), exempt)),
                  character())
  choices <- unlist(lapply(setdiff(api, exempt), function(fn) {
    a <- choice_args(fn)
    if (length(a)) paste0(fn, "$", a)
  }))
  expect_setequal(setdiff(choices, covered), character())

  # coverage of arguments: every formal argument of every function is set
  # (by name or position) in one of its rows, but for those that take any
  # value (ignored for the generic, a plot title)
  any_value <- "plot.nmfkit_dist$main"
  set_args <- unlist(lapply(rows, function(r) {
    fn <- sub("\\$.*", "", r[[1]])
    cl <- as.list(r[[2]])[-1]
    nms <- names(cl)
    if (is.null(nms)) nms <- rep("", length(cl))
    formal <- setdiff(names(formals(get(fn, envir = asNamespace("nmfkit")))),
                      "...")
    pos <- formal[seq_len(min(sum(!nzchar(nms)), length(formal)))]
    paste0(fn, "$", c(nms[nzchar(nms)], pos))
  }))
  all_args <- unlist(lapply(setdiff(api, exempt), function(fn) {
    a <- setdiff(names(formals(get(fn, envir = asNamespace("nmfkit")))),
                 "...")
    if (length(a)) paste0(fn, "$", a)
  }))
  expect_setequal(setdiff(all_args, c(set_args, covered, any_value)),
                  character())
})

test_that("choices are checked by check_choice() with a hint", {
  x <- small_data()
  expect_error(nmf(x, 2, method = "hal"), class = "nmfkit_error_choice")
  expect_snapshot(nmf(x, 2, method = "hal"), error = TRUE)
  expect_snapshot(swimmer(size = 32), error = TRUE)
  # the full default picks the first choice ("auto", resolved to the solver
  # that ran: ANLS on dense data); no partial matching
  expect_identical(nmf(x, 2)$method, "anls")
  expect_error(nmf(x, 2, method = "h"), class = "nmfkit_error_choice")
  # no rlang::arg_match() or match.arg() is left in the package
  ns <- asNamespace("nmfkit")
  uses <- vapply(ls(ns), function(nm) {
    f <- get(nm, envir = ns)
    is.function(f) &&
      any(grepl("arg_match|match\\.arg", deparse(body(f))))
  }, logical(1))
  expect_identical(names(uses)[uses], character())
})

test_that("whole numbers beyond the integer range are errors, not NA", {
  x <- small_data()
  set.seed(1)
  fit <- nmf(x, 2)
  expect_error(predict(fit, x, max_passes = 1e10), class = "nmfkit_error_count")
  expect_snapshot(predict(fit, x, max_passes = 1e10), error = TRUE)
  expect_error(nmf_control(max_iter = 1e10), class = "nmfkit_error_control")
  expect_error(nmf_control(inner = 2^31), class = "nmfkit_error_control")
  expect_identical(nmf_control(max_iter = 2^31 - 1)$max_iter, 2147483647L)
})

test_that("messages show the offending value and pluralise", {
  x <- small_data()
  expect_snapshot(nmf(x, Inf), error = TRUE)
  expect_snapshot(nmf(x, 2 + 1e-12), error = TRUE)
  expect_snapshot(nmf(x, "3"), error = TRUE)
  expect_snapshot(nmf(matrix(TRUE, 2, 2), 1), error = TRUE)
  expect_snapshot(nmf(x), error = TRUE)
  expect_snapshot(ot_distance(cbind(0, 0, 1), cbind(1, 1, 1)), error = TRUE)
  expect_snapshot(nmf_distance(list(a = x, b = x), rank = 10, trails = 5), error = TRUE)
  expect_snapshot(nmf_joint_test(x, x, rank = 2, B = 1, pbarr = "exact"),
                  error = TRUE)
  msg <- tryCatch(nmf(x, 2 + 1e-12), nmfkit_error = conditionMessage)
  expect_match(msg, "2.000000000001", fixed = TRUE)
})

test_that("the glue rejects unknown strings instead of defaulting", {
  x <- small_data()
  w <- matrix(1, nrow(x), 2)
  h <- matrix(1, 2, ncol(x))
  ctl <- nmf_control(max_iter = 2)
  expect_error(nmfkit:::core_fit(x, w, h, nmfkit:::core_params("bogus", ctl)),
               "unknown method")
  expect_error(nmfkit:::r_chamfer(x, x, "bogus", 1L), "unknown variant")
  expect_error(nmfkit:::r_pbar(h, 3L, "bogus", NULL), "unknown pbar")
  expect_error(nmfkit:::r_shift_reconstruct(w, c(5L, 6L), "bogus", 0L, 0L,
                                            1, 0L, 1L), "unknown shift")
  expect_error(nmfkit:::r_ot_sinkhorn(cbind(c(.5, .5)), cbind(c(.5, .5)),
                                      list(type = "bogus"), 1, 10L, 1e-8, 1L),
               "unknown kernel")
})

test_that("siblings: missing data and counts beyond integers", {
  expect_error(nmf_stratified(rank = 2), class = "nmfkit_error_missing")
  expect_error(shifted_shapes(2, copies = 1e10), class = "nmfkit_error_copies")
  expect_error(shifted_shapes(2, copies = Inf), class = "nmfkit_error_copies")
  expect_error(shifted_shapes(2, frame = c(1e10, 1)),
               class = "nmfkit_error_image_dim")
})

test_that("huge and tiny data give finite answers or classed errors", {
  f <- contract_fixtures()
  x <- f$x
  c <- 2^1000
  # predict(): coefficients scale with the data (NNLS is equivariant; not
  # so stratified fits, whose fixed shifts V do not scale with newdata)
  s_big <- predict(f$sfit, x * c, strata = rep("a", 10))
  expect_true(all(is.finite(s_big)))
  cases <- list(
    nmf = list(f$fit, x, list()),
    shift = list(f$shfit, f$sim$x, list()),
    manifold = list(f$mfit, x, list())
  )
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    h <- do.call(predict, c(list(cs[[1]], cs[[2]]), cs[[3]]))
    for (s in c(c, 1 / c)) {
      hs <- do.call(predict, c(list(cs[[1]], cs[[2]] * s), cs[[3]]))
      expect_true(all(is.finite(hs)), info = nm)
      expect_equal(as.vector(hs) / s, as.vector(h), tolerance = 1e-8,
                   info = nm)
    }
  }
  expect_true(all(is.finite(predict(f$jfit, x * c))))
  expect_true(all(is.finite(predict(f$wfit, f$hist * c))))
  # summary(): the relative error does not depend on the scale
  fits <- list(
    nmf = function(s) nmf(x * s, 2),
    joint = function(s) nmf_joint(x * s, f$x2 * s, rank = 2),
    stratified = function(s) nmf_stratified(list(a = x * s, b = f$x2 * s),
                                            rank = 2,
                                            control = nmf_control(max_iter = 5)),
    shift = function(s) nmf_shift(f$sim$x * s, rank = 2, nrun = 1,
                                  control = nmf_control(max_iter = 2)),
    masked = function(s) nmf(replace(x, 3, NA) * s, 2, na = "omit")
  )
  for (nm in names(fits)) {
    ref <- withr::with_seed(1, summary(fits[[nm]](1))$relative_error)
    for (s in c(c, 1 / c)) {
      rel <- withr::with_seed(1, summary(fits[[nm]](s))$relative_error)
      expect_true(is.finite(rel), info = nm)
      expect_equal(rel, ref, tolerance = 1e-6, info = nm)
    }
  }
  # nmf_rank(): held-out errors and clusters of huge data are those of x
  for (m in c("cv", "consensus")) {
    r0 <- withr::with_seed(1, nmf_rank(x, 1:2, method = m, nfolds = 2,
                                       nrun = 2, fraction = 0.1))
    r <- withr::with_seed(1, nmf_rank(x * 1e300, 1:2, method = m, nfolds = 2,
                                      nrun = 2, fraction = 0.1))
    expect_equal(r$results, r0$results, tolerance = 1e-8)
  }
})

test_that("every exported function takes `...`, so that a misspelt argument is a classed error", {
  # R answers an argument a function does not have with its own unclassed
  # "unused argument" error, before any of the function's code runs: every
  # function therefore has `...`, and one without options there calls
  # check_dots_empty(), which names the unknown argument and the nearest
  # real one
  ns <- asNamespace("nmfkit")
  api <- nmfkit_api()
  # dim() and dimnames() methods take what the primitive gives them
  exempt <- c("dim.nmfkit_blocks", "dimnames.nmfkit_blocks")
  no_dots <- api[!vapply(api, function(f) {
    "..." %in% names(formals(get(f, envir = ns)))
  }, logical(1))]
  expect_setequal(setdiff(no_dots, exempt), character())
  cnd <- rlang::catch_cnd(nmf(small_data(), 2, contorl = nmf_control()),
                          "nmfkit_error_dots")
  expect_match(cli::ansi_strip(conditionMessage(cnd)), "`contorl`",
               fixed = TRUE)
  expect_match(cli::ansi_strip(conditionMessage(cnd)), "`control`",
               fixed = TRUE)
})

test_that("a user's graphical parameter replaces the plot's own", {
  # a plot method that sets `main` (or `log`, `col`, `axes`) and passes the
  # user's `...` as well gave the graphics function both: R's "formal
  # argument matched by multiple actual arguments". draw() merges them.
  args <- nmfkit:::draw(function(...) list(...), 1:3, main = "own",
                        xlab = "x", user = list(main = "user", lwd = 2))
  expect_identical(args, list(1:3, xlab = "x", main = "user", lwd = 2))
  # the data are bound to a name: a label made by deparse(substitute())
  # deparses that name, not a thousand numbers
  lab <- nmfkit:::draw(function(x, ...) deparse(substitute(x)), runif(1000))
  expect_identical(lab, "arg1")
  f <- contract_fixtures()
  x <- f$x
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  cons <- withr::with_seed(1, nmf_consensus(x, 1:2, nrun = 2,
                                            control = nmf_control(max_iter = 5)))
  rk <- withr::with_seed(1, nmf_rank(x, 1:2, nfolds = 2,
                                     control = nmf_control(max_iter = 5)))
  calls <- list(
    quote(plot(f$fit, "loss", log = "", main = "trace")),
    quote(plot(f$fit, "coef", main = "H", col = grDevices::gray.colors(8))),
    quote(plot(f$fit, "basis", axes = TRUE, xlab = "gene")),
    quote(plot(f$fit, "basis", image_dim = c(4, 3), asp = 1, ncol = 1)),
    quote(plot(f$jfit, main = "p", col = "grey")),
    quote(plot(f$sfit, main = "V", las = 1)),
    quote(plot(f$sfit, "loss", log = "")),
    quote(plot(f$mfit, main = "graph", asp = NA)),
    quote(plot(f$wfit, main = "atoms", lty = 2)),
    quote(plot(f$dist, col = grDevices::gray.colors(8), axes = TRUE)),
    quote(plot(f$shfit, "placements", col = grDevices::gray.colors(8))),
    quote(plot(cons, main = "selection", xaxt = "s")),
    quote(plot(cons, "density", breaks = 5, main = "density")),
    quote(plot(rk, main = "cv", log = "")),
    quote(plot(nmf_tune(x, 1:2, nfolds = 2), main = "grid", xaxt = "s"))
  )
  for (cl in calls) {
    expect_no_error(eval(cl), message = deparse1(cl))
  }
})
