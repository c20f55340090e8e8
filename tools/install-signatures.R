# Mutational signature data for cosmic_signatures() and
# example_counts("mutations"), the signatures tests, tour stop and
# article: taken from Debian's r-bioc-mutationalpatterns 3.8.1 .deb
# without installing it (nor its ~300 dependencies): `apt-get download`
# (no root needed) then `dpkg-deb -x`.
#   extdata/signatures/{snv,dbs,indel}_COSMIC_v3.2_reference_*.txt
#       COSMIC v3.2 reference signatures (SBS GRCh37/GRCh38/mm10, DBS
#       GRCh37/GRCh38/mm10, ID GRCh37)
#   states/mut_mat_data.rds      the 96 x 9 SBS catalogue of its vignette
#   states/snv_refit.rds, states/strict_snv_refit.rds
#       its own fit_to_signatures() / fit_to_signatures_strict() of that
#       catalogue (a reference for tests)
# into <data dir>/mutationalpatterns (NMFKIT_DATA, or
# tools::R_user_dir("nmfkit", "data")). Idempotent: present files are kept.
# Licences: MutationalPatterns is MIT (the .deb's copyright file); the
# COSMIC signatures come with COSMIC's terms (free for non-commercial use),
# which is why nmfkit does not ship them but installs them here.
# Run by tools/install-deps.sh (make test, make demo).

data_dir <- function() {
  d <- Sys.getenv("NMFKIT_DATA", "")
  if (!nzchar(d)) d <- tools::R_user_dir("nmfkit", "data")
  file.path(d, "mutationalpatterns")
}

files <- c(
  file.path("extdata", "signatures",
            c(paste0("snv_COSMIC_v3.2_reference_",
                     c("GRCh37", "GRCh38", "mm10"), ".txt"),
              paste0("dbs_COSMIC_v3.2_reference_",
                     c("GRCh37", "GRCh38", "mm10"), ".txt"),
              "indel_COSMIC_v3.2_reference_GRCh37.txt")),
  file.path("states", c("mut_mat_data.rds", "snv_refit.rds",
                        "strict_snv_refit.rds"))
)

dest <- data_dir()
if (all(file.exists(file.path(dest, basename(files))))) quit(status = 0)
if (!nzchar(Sys.which("apt-get")) || !nzchar(Sys.which("dpkg-deb"))) {
  message("install-signatures: apt-get or dpkg-deb not found; the COSMIC ",
          "signatures and the MutationalPatterns example are not installed ",
          "(their tests skip)")
  quit(status = 0)
}
tmp <- tempfile("nmfkit-sig")
dir.create(tmp)
message("install-signatures: r-bioc-mutationalpatterns (.deb) -> ", dest)
old <- setwd(tmp)
download <- function() {
  system2("apt-get", c("download", "-qq", "r-bioc-mutationalpatterns"),
          stdout = FALSE, stderr = FALSE)
}
status <- download()
# a fresh machine may have no package lists yet: read them once and retry
if (status != 0 && identical(unname(Sys.info()[["effective_user"]]), "root")) {
  system2("apt-get", c("update", "-qq"), stdout = FALSE, stderr = FALSE)
  status <- download()
}
setwd(old)
deb <- list.files(tmp, "\\.deb$", full.names = TRUE)
if (status != 0 || !length(deb)) {
  stop("install-signatures: `apt-get download r-bioc-mutationalpatterns` ",
       "failed (is the Debian bookworm archive in the apt sources?)",
       call. = FALSE)
}
ex <- file.path(tmp, "x")
if (system2("dpkg-deb", c("-x", shQuote(deb[1]), shQuote(ex))) != 0) {
  stop("install-signatures: could not unpack ", deb[1], call. = FALSE)
}
root <- file.path(ex, "usr", "lib", "R", "site-library", "MutationalPatterns")
dir.create(dest, recursive = TRUE, showWarnings = FALSE)
ok <- file.copy(file.path(root, files), dest, overwrite = TRUE)
if (!all(ok)) {
  stop("install-signatures: missing in the .deb: ",
       paste(files[!ok], collapse = ", "), call. = FALSE)
}
doc <- file.path(ex, "usr", "share", "doc", "r-bioc-mutationalpatterns")
invisible(file.copy(file.path(doc, "copyright"), file.path(dest, "COPYRIGHT"),
                    overwrite = TRUE))
unlink(tmp, recursive = TRUE)
