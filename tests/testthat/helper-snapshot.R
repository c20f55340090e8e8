# Snapshot scrubbing. Printed fits carry numbers that the last bits of
# floating point decide (iteration counts that stop near a tolerance, losses
# and shares to four digits, counts of kept atoms); two machines of one kind
# may differ in those bits: Eigen sizes the blocks of its matrix products
# from the cache sizes the CPU reports, which changes the order of the sums
# (a joint fit took 57 iterations instead of 55 with a 32 KiB instead of a
# 48 KiB L1 cache). Snapshots keep the text -- structure and wording -- and
# the numbers are asserted with tolerances in the tests themselves. Use as
# expect_snapshot(print(fit), transform = scrub_numbers).
scrub_numbers <- function(lines) {
  # Decimals and exponents (signed): 0.7560, -0.9972, 6.054e-05, 1e-04.
  num <- "-?[0-9]+(\\.[0-9]+)?[eE][-+]?[0-9]+|-?[0-9]*\\.[0-9]+"
  lines <- gsub(num, "<num>", lines)
  # Counts of iterations and other fit-decided integers.
  lines <- gsub("[0-9]+( iterations?\\b)", "<n>\\1", lines, perl = TRUE)
  lines <- gsub("\\b(dictionary|weights) [0-9]+\\b", "\\1 <n>", lines,
                perl = TRUE)
  lines <- gsub("\\b[0-9]+ (kept|instances|instance atoms)\\b", "<n> \\1",
                lines, perl = TRUE)
  # Shares of zeros may be exactly 0 on one machine and tiny on another.
  lines <- gsub("\\b([WH]) (0|<num>)\\b", "\\1 <num>", lines, perl = TRUE)
  # Column alignment of printed tables follows the widths of the numbers.
  gsub("(?<=\\S) {2,}|^ {2,}", " ", lines, perl = TRUE)
}

# For fits whose stopping reason is itself decided by the last bits (a
# status reached near the iteration cap): scrub it too.
scrub_status <- function(lines) {
  lines <- scrub_numbers(lines)
  lines <- gsub("\\((converged|iteration cap reached)\\)", "(<status>)",
                lines)
  gsub("stopped: [a-z_]+", "stopped: <why>", lines)
}
