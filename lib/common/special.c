/* Special functions (common/special.h). */
#include "common/special.h"

#include <math.h>

#define ROOT_BISECTIONS 200

/* The recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series, whose
   truncation error there is below 1e-13. */
double moe_digamma(double x)
{
    double result = 0.0;
    while (x < 6.0) {
        result -= 1.0 / x;
        x += 1.0;
    }
    double inverse = 1.0 / x, squared = inverse * inverse;
    double series = squared * (1.0 / 12.0 - squared * (1.0 / 120.0 - squared * (1.0 / 252.0 -
                    squared * (1.0 / 240.0 - squared * (1.0 / 132.0)))));
    return result + log(x) - 0.5 * inverse - series;
}

/* psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 6, then the asymptotic series (truncation error
   there below 1e-12 relative). */
double moe_trigamma(double x)
{
    double result = 0.0;
    while (x < 6.0) {
        result += 1.0 / (x * x);
        x += 1.0;
    }
    double inverse = 1.0 / x, squared = inverse * inverse;
    double series = inverse + 0.5 * squared +
                    inverse * squared * (1.0 / 6.0 - squared * (1.0 / 30.0 - squared *
                    (1.0 / 42.0 - squared * (1.0 / 30.0 - squared * (5.0 / 66.0)))));
    return result + series;
}

double moe_log_minus_digamma(double x)
{
    return log(x) - moe_digamma(x);
}

double moe_log_minus_digamma_root(double scale, double c, double low_end, double high_end)
{
    double low = log(low_end), high = log(high_end);
    if (moe_log_minus_digamma(scale * high_end) + c >= 0.0)
        return high_end;
    if (moe_log_minus_digamma(scale * low_end) + c <= 0.0)
        return low_end;
    for (int step = 0; step < ROOT_BISECTIONS && high - low > 1e-12; ++step) {
        double middle = 0.5 * (low + high);
        if (moe_log_minus_digamma(scale * exp(middle)) + c > 0.0)
            low = middle;
        else
            high = middle;
    }
    return exp(0.5 * (low + high));
}
