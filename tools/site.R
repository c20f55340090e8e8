# Builds the pkgdown site into docs/ with the installed nmfkit (`make site`
# installs it first), then checks it:
# * every page: relative links and images point at files that exist;
# * every page: no R error in rendered output ("Error" in a code output);
# * headless Chromium screenshots of the home page, one reference page and
#   one article, into docs/shots/ (look at them).
# Usage: Rscript tools/site.R [--no-build]
args <- commandArgs(trailingOnly = TRUE)
build <- !("--no-build" %in% args)
root <- normalizePath(".")
docs <- file.path(root, "docs")

if (build) {
  # offline and reproducible: no look-up of nmfkit on CRAN or Bioconductor
  # for the home page's "Links" (that look-up fails without a network)
  options(pkgdown.internet = FALSE)
  # install = FALSE: examples and articles use the installed package, so the
  # site shows what users get (and the C++ core is not compiled twice)
  pkgdown::build_site(root, install = FALSE, new_process = FALSE,
                      preview = FALSE)
}

pages <- list.files(docs, pattern = "[.]html$", recursive = TRUE,
                    full.names = TRUE)
pages <- pages[!grepl("^shots/", substring(pages, nchar(docs) + 2))]
problems <- character()
note <- function(page, what) {
  problems <<- c(problems, sprintf("%s: %s",
                                   substring(page, nchar(docs) + 2), what))
}

local_target <- function(ref) {
  !is.na(ref) && nzchar(ref) &&
    !grepl("^([a-z][a-z0-9+.-]*:|//|#)", ref, ignore.case = TRUE)
}

for (page in pages) {
  html <- xml2::read_html(page)
  refs <- c(
    xml2::xml_attr(xml2::xml_find_all(html, "//a[@href]"), "href"),
    xml2::xml_attr(xml2::xml_find_all(html, "//link[@href]"), "href"),
    xml2::xml_attr(xml2::xml_find_all(html, "//script[@src]"), "src")
  )
  for (ref in unique(refs[vapply(refs, local_target, logical(1))])) {
    file <- sub("[?#].*$", "", utils::URLdecode(ref))
    if (!nzchar(file)) next
    target <- file.path(dirname(page), file)
    if (dir.exists(target)) target <- file.path(target, "index.html")
    if (!file.exists(target)) note(page, paste("broken link", ref))
  }
  imgs <- xml2::xml_attr(xml2::xml_find_all(html, "//img[@src]"), "src")
  for (src in unique(imgs)) {
    # "" is pkgdown's empty logo slot (no logo): nothing is shown
    if (!nzchar(src) || grepl("^data:", src)) next
    if (!local_target(src)) {
      note(page, paste("image not in the site", src))
      next
    }
    if (!file.exists(file.path(dirname(page), sub("[?#].*$", "", src)))) {
      note(page, paste("missing image", src))
    }
  }
  # an R error in the output ("#> Error" or "## Error" lines, as knitr and
  # pkgdown print them) fails the check unless the code line that made it
  # asked for it: try() or tryCatch() (examples and articles that show a
  # classed error do it that way)
  for (out in xml2::xml_text(xml2::xml_find_all(html, "//pre"))) {
    lines <- strsplit(out, "\n", fixed = TRUE)[[1]]
    code <- ""
    for (line in lines) {
      if (!grepl("^\\s*(#>|##)", line)) {
        code <- line
      } else if (grepl("^\\s*(#>|##) *Error", line) &&
                 !grepl("\\b(try|tryCatch)\\(", code)) {
        note(page, paste("R error in output after:", substr(code, 1, 80)))
      }
    }
  }
}

shots <- file.path(docs, "shots")
dir.create(shots, showWarnings = FALSE)
chromium <- Sys.which(c("chromium", "chromium-browser", "google-chrome"))
chromium <- chromium[nzchar(chromium)][1]
if (is.na(chromium)) stop("site: Chromium not found (apt-get install chromium)")
targets <- c(home = "index.html", reference = "reference/nmf.html",
             article = "articles/nmfkit.html")
for (name in names(targets)) {
  page <- file.path(docs, targets[[name]])
  if (!file.exists(page)) {
    note(page, "page not built")
    next
  }
  png <- file.path(shots, paste0(name, ".png"))
  unlink(png)
  status <- system2(chromium, c(
    "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
    "--disable-dev-shm-usage", "--window-size=1280,1600",
    paste0("--screenshot=", png), paste0("file://", page)
  ), stdout = FALSE, stderr = FALSE)
  if (status != 0 || !file.exists(png) || file.size(png) < 10000) {
    note(page, "no screenshot (Chromium failed or the page is blank)")
  }
}

cat(sprintf("site: %d pages checked, screenshots in %s\n", length(pages),
            shots))
if (length(problems)) {
  cat("site: problems\n", paste0("  ", problems, "\n"), sep = "")
  quit(status = 1)
}
cat("site: no broken links, missing images or R errors\n")
