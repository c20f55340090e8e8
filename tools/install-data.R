# Real count data for tests, the demo and the count-data vignette, taken
# from the data/ folders of two CRAN source packages without building them
# (fastTopics needs a newer Rcpp than Debian's; lda 1.4.2 is archived):
#   fastTopics: pbmc_facs (3,774 FACS-purified PBMCs x 16,791 genes, UMI)
#   lda 1.4.2:  the 20 Newsgroups word counts and labels
# into the directory nmfkit::example_counts() reads (NMFKIT_DATA, or
# tools::R_user_dir("nmfkit", "data")). Idempotent: present files are kept.
# Run by tools/install-deps.sh (make test, make demo).
source(file.path(dirname(sub("^--file=", "", grep("^--file=",
  commandArgs(FALSE), value = TRUE)[1])), "install-cran.R"))

data_dir <- function() {
  d <- Sys.getenv("NMFKIT_DATA", "")
  if (!nzchar(d)) d <- tools::R_user_dir("nmfkit", "data")
  d
}

# Extracts `files` (paths inside the tarball) of the source tarball at `url`
# (or of the current CRAN version of `pkg`) into `dest`.
extract_data <- function(pkg, files, dest, url = NULL) {
  tmp <- tempfile("nmfkit-data")
  dir.create(tmp)
  on.exit(unlink(tmp, recursive = TRUE))
  tarball <- if (is.null(url)) {
    got <- utils::download.packages(pkg, tmp, type = "source",
                                    repos = c(CRAN = cran_repo()),
                                    quiet = TRUE)
    got[1, 2]
  } else {
    f <- file.path(tmp, basename(url))
    utils::download.file(url, f, quiet = TRUE, mode = "wb")
    f
  }
  utils::untar(tarball, files = file.path(pkg, files), exdir = tmp)
  ok <- file.copy(file.path(tmp, pkg, files), dest, overwrite = TRUE)
  if (!all(ok)) stop("install-data: could not extract ", pkg, " data",
                     call. = FALSE)
}

dest <- data_dir()
dir.create(dest, recursive = TRUE, showWarnings = FALSE)
if (!file.exists(file.path(dest, "pbmc_facs.RData"))) {
  message("install-data: pbmc_facs from CRAN fastTopics -> ", dest)
  extract_data("fastTopics", "data/pbmc_facs.RData", dest)
}
ng <- c("newsgroup.train.documents.rda", "newsgroup.train.labels.rda",
        "newsgroup.test.documents.rda", "newsgroup.test.labels.rda",
        "newsgroup.vocab.rda", "newsgroup.label.map.rda")
if (!all(file.exists(file.path(dest, ng)))) {
  message("install-data: 20 Newsgroups from CRAN lda 1.4.2 -> ", dest)
  extract_data("lda", file.path("data", ng), dest,
               url = archive_url("lda", "1.4.2"))
}
