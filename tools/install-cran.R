# CRAN installs for tools/install-deps.sh, through the mirror the user has
# configured (getOption("repos")["CRAN"], set on Debian in Rprofile.site,
# which `Rscript --vanilla` would skip): never a hard-coded address.
#   Rscript tools/install-cran.R pkg ...          packages missing from CRAN
#   Rscript tools/install-cran.R --archive pkg version   one archived version

# The configured CRAN mirror without a trailing slash, or a clear error.
cran_repo <- function(repos = getOption("repos")) {
  cran <- if ("CRAN" %in% names(repos)) unname(repos[["CRAN"]]) else NA
  if (is.na(cran) || !nzchar(cran) || cran == "@CRAN@") {
    stop("install-deps: no CRAN mirror is configured (getOption(\"repos\")",
         "[\"CRAN\"] is ", if (is.na(cran)) "missing" else
           paste0("\"", cran, "\""), ").\n",
         "Set one before running this script, e.g. in ~/.Rprofile:\n",
         "  options(repos = c(CRAN = \"<URL of your CRAN mirror>\"))",
         call. = FALSE)
  }
  sub("/+$", "", cran)
}

# The source tarball of an archived CRAN package version on that mirror.
archive_url <- function(pkg, version, repos = getOption("repos")) {
  paste0(cran_repo(repos), "/src/contrib/Archive/", pkg, "/", pkg, "_",
         version, ".tar.gz")
}

install_missing <- function(pkgs, lib = .libPaths()[1]) {
  miss <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
  if (!length(miss)) return(invisible())
  repo <- cran_repo()
  message("install-deps: installing from CRAN (", repo, "): ",
          paste(miss, collapse = ", "))
  utils::install.packages(miss, lib = lib, repos = c(CRAN = repo),
                          Ncpus = 2L, quiet = TRUE)
  still <- miss[!vapply(miss, requireNamespace, logical(1), quietly = TRUE)]
  if (length(still)) {
    stop("install-deps: could not install: ", paste(still, collapse = ", "),
         call. = FALSE)
  }
}

install_archived <- function(pkg, version, lib = .libPaths()[1]) {
  if (requireNamespace(pkg, quietly = TRUE)) return(invisible())
  url <- archive_url(pkg, version)
  message("install-deps: installing ", pkg, " ", version, " from ", url)
  utils::install.packages(url, lib = lib, repos = NULL, type = "source",
                          quiet = TRUE)
}

# Run only as a script (source() leaves the functions for the tests).
if (sys.nframe() == 0L) {
  args <- commandArgs(trailingOnly = TRUE)
  if (length(args) && args[1] == "--archive") {
    install_archived(args[2], args[3])
  } else {
    install_missing(args)
  }
}
