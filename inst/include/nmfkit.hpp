// Umbrella header of the nmfkit core (pure C++17 on Eigen; no R headers).
#pragma once

#include "nmfkit/types.hpp"
#include "nmfkit/hooks.hpp"
#include "nmfkit/parallel.hpp"
#include "nmfkit/data.hpp"
#include "nmfkit/loss.hpp"
#include "nmfkit/nnls.hpp"
#include "nmfkit/init.hpp"
#include "nmfkit/nmf.hpp"
#include "nmfkit/joint.hpp"
#include "nmfkit/fft.hpp"
#include "nmfkit/shift_kernels.hpp"
#include "nmfkit/shift.hpp"
#include "nmfkit/stratified.hpp"
#include "nmfkit/sinkhorn.hpp"
#include "nmfkit/sinkhorn_symmetric.hpp"
#include "nmfkit/wasserstein.hpp"
