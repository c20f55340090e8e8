#' Draw mutational spectra
#'
#' Bar plots of catalogues or signatures, one panel per column, in the
#' usual layout: the contexts in their order along the x axis, bars
#' coloured by substitution class for the 96 SBS contexts (`C>A` blue,
#' `C>G` black, `C>T` red, `T>A` grey, `T>C` green, `T>G` pink, as
#' COSMIC draws them) with the class names above; for other contexts by
#' their group (the part before `>` for doublets, the first two fields of
#' `1:Del:C:0` for indels). Whiskers show per-entry intervals when `lower`
#' and `upper` are given (the spread of [nmf_signatures()]' consensus).
#'
#' @param x A matrix (or data frame) of counts or probabilities, contexts x
#'   columns, with the contexts as row names.
#' @param lower,upper Optional matrices of the shape of `x`: interval ends
#'   drawn as whiskers.
#' @param proportions Draw each column divided by its sum.
#' @param main Panel titles (by default the column names).
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' plot_spectra(simulate_signatures(2))
#' @export
plot_spectra <- function(x, lower = NULL, upper = NULL, proportions = FALSE,
                         main = NULL, ...) {
  check_graphics_dots()
  x <- check_catalogue_matrix(x)
  check_flag(proportions)
  for (b in c("lower", "upper")) {
    v <- get(b)
    if (!is.null(v) && (!is.numeric(v) || !identical(dim(v), dim(x)))) {
      abort_nmfkit(c("{.arg {b}} must be a numeric matrix of the shape of {.arg x} ({nrow(x)} x {ncol(x)}).",
                     "x" = "It is {describe_value(v)}."),
                   "dimension", value = v)
    }
  }
  if (is.null(main)) main <- colnames(x) %||% paste("column", seq_len(ncol(x)))
  if (!is.character(main) || !length(main) %in% c(1L, ncol(x))) {
    abort_nmfkit(c("{.arg main} must be text: one title or {ncol(x)} (one per column).",
                   "x" = "It is {describe_value(main)}."),
                 "type", value = main)
  }
  main <- rep_len(main, ncol(x))
  ctx <- rownames(x) %||% as.character(seq_len(nrow(x)))
  grp <- context_groups(ctx)
  col <- grp$colour[match(grp$group, grp$levels)]
  s <- if (proportions) pmax(colSums(x), .Machine$double.xmin) else
    rep(1, ncol(x))
  n <- ncol(x)
  old <- graphics::par(mfrow = c(n, 1), mar = c(if (n > 3) 1 else 2, 4, 3, 1),
                       oma = c(2, 0, 0, 0))
  on.exit(graphics::par(old))
  for (j in seq_len(n)) {
    v <- x[, j] / s[j]
    top <- max(v, if (!is.null(upper)) upper[, j] / s[j], 0)
    mids <- draw(graphics::barplot, v, col = col, border = NA, space = 0.3,
                 names.arg = FALSE, ylim = c(0, top * 1.15 + 1e-12), las = 1,
                 main = "", user = list(...))
    graphics::title(main = main[j], line = 1.8, cex.main = 1)
    if (!is.null(lower) && !is.null(upper)) {
      graphics::segments(mids, lower[, j] / s[j], mids, upper[, j] / s[j],
                         col = "grey30", lwd = 0.7)
    }
    # the groups' names over their bars
    runs <- rle(grp$group)
    ends <- cumsum(runs$lengths)
    starts <- ends - runs$lengths + 1L
    graphics::mtext(runs$values, side = 3, line = 0.2,
                    at = (mids[starts] + mids[ends]) / 2,
                    col = grp$colour[match(runs$values, grp$levels)],
                    cex = 0.7, font = 2)
  }
  invisible(x)
}

# Groups of contexts and their colours: SBS classes in COSMIC's colours,
# doublets by their reference pair, indels by their first two fields.
context_groups <- function(ctx) {
  sbs <- c("C>A", "C>G", "C>T", "T>A", "T>C", "T>G")
  cls <- sub("^.\\[(.>.)\\].$", "\\1", ctx)
  if (all(cls %in% sbs)) {
    return(list(group = cls, levels = sbs,
                colour = c("#03BCEE", "#010101", "#E32926", "#CAC9C9",
                           "#A1CE63", "#EBC6C4")))
  }
  group <- if (all(grepl(">", ctx, fixed = TRUE))) {
    sub(">.*$", "", ctx)
  } else if (all(grepl(":", ctx, fixed = TRUE))) {
    vapply(strsplit(ctx, ":", fixed = TRUE),
           function(p) paste(p[seq_len(min(2L, length(p)))], collapse = ":"),
           character(1))
  } else {
    rep("", length(ctx))
  }
  lev <- unique(group)
  list(group = group, levels = lev,
       colour = if (length(lev) == 1L) "grey40" else
         grDevices::hcl.colors(length(lev), "Dark 3"))
}
