# CRAN installs for tools/install-deps.sh, through the mirror the user has
# configured (getOption("repos")["CRAN"], set on Debian in Rprofile.site,
# which `Rscript --vanilla` would skip): never a hard-coded address.
#   Rscript tools/install-cran.R pkg ...          packages missing from CRAN
#   Rscript tools/install-cran.R --archive pkg version   one archived version
#   Rscript tools/install-cran.R --lib DIR [--min pkg version]... pkg ...
#       packages into a private library DIR (put first on .libPaths()), with
#       each --min package brought there from CRAN when the version found on
#       DIR + the usual libraries is older; other dependencies are taken from
#       the usual libraries when present (Debian's r-cran-*)

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

# The version of pkg first on lib_paths, or NULL when it is not installed.
version_on <- function(pkg, lib_paths = .libPaths()) {
  tryCatch(utils::packageVersion(pkg, lib.loc = lib_paths),
           error = function(e) NULL)
}

install_private <- function(pkgs, lib, min = character()) {
  dir.create(lib, showWarnings = FALSE, recursive = TRUE)
  lib <- normalizePath(lib)
  .libPaths(c(lib, .libPaths()))
  old <- names(min)[vapply(names(min), function(p) {
    v <- version_on(p)
    is.null(v) || v < min[[p]]
  }, logical(1))]
  miss <- pkgs[vapply(pkgs, function(p) is.null(version_on(p)), logical(1))]
  todo <- c(old, miss)
  if (!length(todo)) return(invisible())
  repo <- cran_repo()
  message("install-deps: installing into ", lib, " from CRAN (", repo, "): ",
          paste(todo, collapse = ", "))
  # the --min packages first, so the others compile against them
  for (set in list(old, miss)) {
    if (!length(set)) next
    utils::install.packages(set, lib = lib, repos = c(CRAN = repo),
                            Ncpus = 2L, quiet = TRUE)
  }
  bad <- c(
    old[vapply(old, function(p) {
      v <- version_on(p, lib)
      is.null(v) || v < min[[p]]
    }, logical(1))],
    miss[vapply(miss, function(p) is.null(version_on(p, lib)), logical(1))])
  if (length(bad)) {
    stop("install-deps: could not install into ", lib, ": ",
         paste(bad, collapse = ", "), call. = FALSE)
  }
}

# Run only as a script (source() leaves the functions for the tests).
if (sys.nframe() == 0L) {
  args <- commandArgs(trailingOnly = TRUE)
  if (length(args) && args[1] == "--archive") {
    install_archived(args[2], args[3])
  } else if (length(args) && args[1] == "--lib") {
    lib <- args[2]
    args <- args[-(1:2)]
    min <- character()
    while (length(args) >= 3 && args[1] == "--min") {
      min[[args[2]]] <- args[3]
      args <- args[-(1:3)]
    }
    install_private(args, lib, min)
  } else {
    install_missing(args)
  }
}
