/* Special functions the families' likelihoods need: psi, psi' and the root of
   log x - psi(x) = target that the t and Gamma experts' M-steps solve. */
#ifndef MOE_LIB_SPECIAL_H
#define MOE_LIB_SPECIAL_H

/* psi(x) and psi'(x) for x > 0, to 1e-13 and 1e-12 relative. */
double moe_digamma(double x);
double moe_trigamma(double x);

/* log(x) - psi(x) > 0, falling in x. */
double moe_log_minus_digamma(double x);

/*
 * The x in [low, high] with log(scale x) - psi(scale x) + c = 0, by bisection in log x
 * (200 halvings or a bracket of 1e-12); low or high when the root lies beyond them. The t
 * experts' CM2 step takes scale 1/2, the Gamma experts' shape scale 1.
 */
double moe_log_minus_digamma_root(double scale, double c, double low, double high);

#endif
