# The developer scripts in tools/ (not in the built package: these tests run
# from the source tree only).

test_that("install-deps.sh installs through the configured CRAN mirror", {
  root <- test_path("..", "..")
  script <- file.path(root, "tools", "install-deps.sh")
  helper <- file.path(root, "tools", "install-cran.R")
  skip_if_not(file.exists(script) && file.exists(helper))
  # no hard-coded repository, and no --vanilla (it skips Rprofile.site,
  # where Debian sets getOption("repos"))
  for (f in c(script, helper)) {
    src <- readLines(f)
    src <- src[!grepl("^\\s*#", src)]  # code, not comments
    expect_false(any(grepl("https?://[a-z]", src)), label = basename(f))
    expect_false(any(grepl("--vanilla", src)), label = basename(f))
  }
  env <- new.env()
  sys.source(helper, env)
  expect_identical(env$cran_repo(c(CRAN = "https://mirror.example/cran/")),
                   "https://mirror.example/cran")
  expect_identical(
    env$archive_url("lda", "1.4.2", c(CRAN = "https://mirror.example")),
    "https://mirror.example/src/contrib/Archive/lda/lda_1.4.2.tar.gz"
  )
  expect_error(env$cran_repo(c(CRAN = "@CRAN@")), "options\\(repos = ")
  expect_error(env$cran_repo(character()), "missing")
  # --lib/--min (the bench library): a version is looked up, a missing
  # package is NULL
  expect_null(env$version_on("nmfkit.no.such.package"))
  expect_s3_class(env$version_on("stats"), "package_version")
})
