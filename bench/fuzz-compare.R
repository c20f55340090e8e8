# The contract fuzz before and after a change: the count of cells per class
# and one instance of each, from two tables written by fuzz-contract.R.
# Usage: Rscript bench/fuzz-compare.R before.csv after.csv
args <- commandArgs(TRUE)
before <- utils::read.csv(args[1])
after <- utils::read.csv(args[2])
levels <- c("classed", "ok", "accepted", "classed warning",
            "classed, unnamed", "unclassed error", "unclassed warning",
            "crash", "hang", "nonsense")
count <- function(t) as.vector(table(factor(t$class, levels = levels)))
instance <- function(t, cls) {
  r <- t[t$class == cls, , drop = FALSE]
  if (!nrow(r)) return("")
  # the most frequent kind of message, and one cell showing it
  key <- substr(gsub("[`'\"]", "", r$message), 1, 40)
  top <- names(sort(table(key), decreasing = TRUE))[1]
  k <- which(key == top)[1]
  sprintf("`%s`: %s", r$id[k], substr(gsub("\\|", "/", r$message[k]), 1, 110))
}
cat("| class | before | after | instance before | instance after |\n")
cat("|---|---|---|---|---|\n")
for (i in seq_along(levels)) {
  cat(sprintf("| %s | %d | %d | %s | %s |\n", levels[i], count(before)[i],
              count(after)[i], instance(before, levels[i]),
              instance(after, levels[i])))
}
cat(sprintf("| total | %d | %d | | |\n", nrow(before), nrow(after)))
