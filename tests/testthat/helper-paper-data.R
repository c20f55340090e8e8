# The data sets of the SMRMF paper (Mani, Domeniconi and Griva) that install
# offline, as list(x = features x points, y = classes): the one loader of
# each set, for the tests and bench/manifold.R (which sources this file).
# "ionosphere", "sonar" (mlbench), "musk1" (kernlab), "mfeatpix" (RSKC's
# DutchUtility: 240 pixels x 2000 digits, classes from the row names),
# "orl" (RnavGraphImageData's faces, 4096 x 400, 10 images per person) and
# "wave" (mlbench.waveform(600) drawn under seed 600; the caller's RNG
# state is kept). Ionosphere's second feature is constant and dropped,
# its first (a factor) made numeric. Min-max scaling is the fit's business.
paper_data <- function(name) {
  name <- match.arg(name, c("wave", "ionosphere", "sonar", "musk1",
                            "mfeatpix", "orl"))
  e <- new.env()
  get_data <- function(set, pkg) {
    utils::data(list = set, package = pkg, envir = e)
    get(set, envir = e)
  }
  switch(name,
    wave = {
      d <- withr::with_seed(600, mlbench::mlbench.waveform(600))
      list(x = t(d$x), y = d$classes)
    },
    ionosphere = {
      d <- get_data("Ionosphere", "mlbench")
      x <- d[, setdiff(names(d), c("V2", "Class"))]
      x$V1 <- as.numeric(as.character(x$V1))
      list(x = t(as.matrix(x)), y = d$Class)
    },
    sonar = {
      d <- get_data("Sonar", "mlbench")
      list(x = t(as.matrix(d[, names(d) != "Class"])), y = d$Class)
    },
    musk1 = {
      d <- get_data("musk", "kernlab")
      list(x = t(as.matrix(d[, names(d) != "Class"])), y = d$Class)
    },
    mfeatpix = {
      d <- as.matrix(get_data("DutchUtility", "RSKC"))
      list(x = t(d), y = substr(rownames(d), 1, 1))
    },
    orl = {
      list(x = as.matrix(get_data("faces", "RnavGraphImageData")),
           y = rep(1:40, each = 10))
    }
  )
}
