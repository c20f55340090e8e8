# Methods of generics in packages that nmfkit only suggests (ggplot2's
# autoplot()) are registered when that package loads, so nmfkit loads
# without it.
.onLoad <- function(libname, pkgname) {
  s3_register("ggplot2::autoplot", "nmfkit")
  s3_register("ggplot2::autoplot", "nmfkit_rank")
  s3_register("ggplot2::autoplot", "nmfkit_tune")
  s3_register("ggplot2::autoplot", "nmfkit_consensus")
  s3_register("ggplot2::autoplot", "nmfkit_bootstrap")
  s3_register("ggplot2::autoplot", "nmfkit_differential")
  invisible(NULL)
}

# Registers the method <generic>.<class> of this namespace for the generic
# "pkg::generic" now if pkg is loaded, and whenever it loads later (the
# pattern of vctrs::s3_register()).
s3_register <- function(generic, class, method = NULL) {
  pieces <- strsplit(generic, "::", fixed = TRUE)[[1]]
  package <- pieces[[1]]
  generic <- pieces[[2]]
  if (is.null(method)) {
    method <- get(paste0(generic, ".", class), envir = asNamespace("nmfkit"))
  }
  register <- function(...) {
    envir <- asNamespace(package)
    if (exists(generic, envir = envir, inherits = FALSE)) {
      registerS3method(generic, class, method, envir = envir)
    }
  }
  setHook(packageEvent(package, "onLoad"), register)
  if (isNamespaceLoaded(package)) register()
  invisible(NULL)
}
