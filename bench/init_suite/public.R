# Writes the public data sets of the start benchmark as CSV files (response
# column "y" last) into the directory given as the first argument. The data
# come from Debian packages: r-cran-flexmix, r-cran-mixtools, r-cran-mass and
# R's own datasets.
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) > 0) args[1] else "."
suppressMessages({
    library(flexmix)
    library(mixtools)
    library(MASS)
})
save <- function(name, frame) {
    write.csv(frame, file.path(out, paste0(name, ".csv")), row.names = FALSE)
}
data(NPreg, package = "flexmix")
save("npreg", data.frame(x = NPreg$x, x2 = NPreg$x^2, y = NPreg$yn))
data(tonedata, package = "mixtools")
save("tonedata", data.frame(stretchratio = tonedata$stretchratio, y = tonedata$tuned))
data(NOdata, package = "mixtools")
save("nodata", data.frame(equivalence = NOdata$Equivalence, y = NOdata$NO))
data(CO2data, package = "mixtools")
save("co2", data.frame(gnp = CO2data$GNP, y = CO2data$CO2))
data(mcycle, package = "MASS")
save("mcycle", data.frame(times = mcycle$times, y = mcycle$accel))
save("faithful", data.frame(waiting = faithful$waiting, y = faithful$eruptions))
data(Boston, package = "MASS")
save("boston", data.frame(lstat = Boston$lstat, rm = Boston$rm, y = Boston$medv))
