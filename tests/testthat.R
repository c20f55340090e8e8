library(testthat)
library(nmfkit)

test_check("nmfkit")
