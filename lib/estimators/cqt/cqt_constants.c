/*
 * The cubic and quadratic transforms of the response (docs/ARCHITECTURE.md, "The tensor
 * estimator"). With m_pq = E[He_p(Z) g(Z)^q], Z ~ N(0, 1), and u = beta + 3 sigma^2:
 *
 *   [ m12 m11 ] [alpha]     [ m13 ]
 *   [ m22 m21 ] [  u  ] = - [ m23 ]      E[He1 h3] = E[He2 h3] = 0
 *   gamma = -m12 / m11                   E[He1 h2] = 0
 *   c3 = m33 + alpha m32 + u m31,  c2 = m22 + gamma m21
 *
 * The conditions are written with Hermite polynomials rather than derivatives of h3 and h2
 * (Stein's identity turns one into the other), so a link with a kink (ReLU) needs no Dirac
 * mass: the moments are plain integrals, split at the kink.
 */
#include "estimators/cqt/cqt.h"

#include <math.h>
#include <stdio.h>

static double link_identity(double t)
{
    return t;
}

static double link_sigmoid(double t)
{
    /* exp of a non-positive number only: no overflow for any t. */
    if (t >= 0.0)
        return 1.0 / (1.0 + exp(-t));
    double e = exp(t);
    return e / (1.0 + e);
}

static double link_relu(double t)
{
    return t > 0.0 ? t : 0.0;
}

cqt_link_fn cqt_link_function(moe_link link)
{
    switch (link) {
    case MOE_LINK_SIGMOID:
        return link_sigmoid;
    case MOE_LINK_RELU:
        return link_relu;
    default:
        return link_identity;
    }
}

/* Gauss-Legendre nodes and weights on [-1, 1] by Newton's method on P_n. */
enum { LEGENDRE_ORDER = 20 };

static void legendre_rule(double nodes[LEGENDRE_ORDER], double weights[LEGENDRE_ORDER])
{
    const int n = LEGENDRE_ORDER;
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < n; ++i) {
        double x = cos(pi * (i + 0.75) / (n + 0.5)), derivative = 1.0;
        for (int step = 0; step < 100; ++step) {
            double p0 = 1.0, p1 = x;
            for (int j = 2; j <= n; ++j) {
                double p2 = ((2.0 * j - 1.0) * x * p1 - (j - 1.0) * p0) / j;
                p0 = p1;
                p1 = p2;
            }
            derivative = n * (x * p1 - p0) / (x * x - 1.0);
            double dx = p1 / derivative;
            x -= dx;
            if (fabs(dx) < 1e-16)
                break;
        }
        nodes[i] = x;
        weights[i] = 2.0 / ((1.0 - x * x) * derivative * derivative);
    }
}

void cqt_moments_by_quadrature(cqt_link_fn g, double moments[4][4])
{
    double nodes[LEGENDRE_ORDER], weights[LEGENDRE_ORDER];
    legendre_rule(nodes, weights);
    for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q)
            moments[p][q] = 0.0;
    /* Panels of width 1/4 on [-14, 14]: both halves end at the kink of a link at 0, and the
       normal density is below 1e-42 past 14. */
    const double width = 0.25, start = -14.0;
    const int panels = 112;
    const double normalizer = 1.0 / sqrt(2.0 * 3.14159265358979323846);
    for (int panel = 0; panel < panels; ++panel) {
        double left = start + panel * width, center = left + 0.5 * width;
        for (int i = 0; i < LEGENDRE_ORDER; ++i) {
            double z = center + 0.5 * width * nodes[i];
            double density = normalizer * exp(-0.5 * z * z) * 0.5 * width * weights[i];
            double hermite[4] = {1.0, z, z * z - 1.0, z * z * z - 3.0 * z};
            double value = g(z), power[4] = {1.0, value, value * value, value * value * value};
            for (int p = 0; p < 4; ++p)
                for (int q = 0; q < 4; ++q)
                    moments[p][q] += density * hermite[p] * power[q];
        }
    }
}

void cqt_link_moments(moe_link link, double moments[4][4])
{
    for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q)
            moments[p][q] = 0.0;
    if (link == MOE_LINK_IDENTITY) {
        /* E[He_p(Z) Z^q]: Z = He1, Z^2 = He2 + 1, Z^3 = He3 + 3 He1. */
        moments[0][0] = 1.0;
        moments[0][2] = 1.0;
        moments[1][1] = 1.0;
        moments[1][3] = 3.0;
        moments[2][2] = 2.0;
        moments[3][3] = 6.0;
        return;
    }
    if (link == MOE_LINK_RELU) {
        /* From the half moments E[Z^j 1{Z > 0}] = 1/2, s, 1/2, 2s, 3/2, 8s, 15/2, s =
           1/sqrt(2 pi). */
        double s = 1.0 / sqrt(2.0 * 3.14159265358979323846);
        double half[7] = {0.5, s, 0.5, 2.0 * s, 1.5, 8.0 * s, 7.5};
        /* He_p as coefficients of 1, z, z^2, z^3. */
        static const double hermite[4][4] = {
            {1, 0, 0, 0}, {0, 1, 0, 0}, {-1, 0, 1, 0}, {0, -3, 0, 1}};
        for (int p = 0; p < 4; ++p) {
            moments[p][0] = p == 0 ? 1.0 : 0.0;
            for (int q = 1; q < 4; ++q) {
                double sum = 0.0;
                for (int j = 0; j < 4; ++j)
                    sum += hermite[p][j] * half[j + q];
                moments[p][q] = sum;
            }
        }
        return;
    }
    cqt_moments_by_quadrature(cqt_link_function(link), moments);
}

int cqt_solve_constants(double m[4][4], double sigma2, cqt_constants *constants,
                        char *message, size_t message_size)
{
    double a11 = m[1][2], a12 = m[1][1], a21 = m[2][2], a22 = m[2][1];
    double determinant = a11 * a22 - a12 * a21;
    double scale = fabs(a11 * a22) + fabs(a12 * a21);
    if (!(fabs(determinant) > 1e-10 * (scale > 0.0 ? scale : 1.0)) || !(fabs(m[1][1]) > 1e-12)) {
        snprintf(message, message_size,
                 "the link has no cubic transform: the conditions' 2 x 2 system is singular");
        return 1;
    }
    double b1 = -m[1][3], b2 = -m[2][3];
    constants->alpha = (b1 * a22 - a12 * b2) / determinant;
    constants->u = (a11 * b2 - b1 * a21) / determinant;
    constants->beta = constants->u - 3.0 * sigma2;
    constants->gamma = -m[1][2] / m[1][1];
    constants->c3 = m[3][3] + constants->alpha * m[3][2] + constants->u * m[3][1];
    constants->c2 = m[2][2] + constants->gamma * m[2][1];
    constants->second_moment = m[0][2];
    if (!(fabs(constants->c3) > 1e-8) || !(fabs(constants->c2) > 1e-8)) {
        snprintf(message, message_size,
                 "the link's transforms leave no signal (c2 = %g, c3 = %g): its experts cannot "
                 "be found from moments",
                 constants->c2, constants->c3);
        return 1;
    }
    return 0;
}

int cqt_constants_for(moe_link link, cqt_preset preset, double sigma2, cqt_constants *constants,
                      char *message, size_t message_size)
{
    double moments[4][4];
    cqt_link_moments(link, moments);
    if (cqt_solve_constants(moments, sigma2, constants, message, message_size) != 0)
        return 1;
    if (link == MOE_LINK_RELU && preset == CQT_PRESET_PAPER) {
        /* The published ReLU constants: they drop the Dirac mass of g'' at 0, so E[He2 h3]
           is not 0 and the raw tensor keeps cross terms with the gate; after whitening
           (which projects them out when gate and experts are orthogonal) they work. */
        const double pi = 3.14159265358979323846;
        constants->alpha = -3.0 * sqrt(2.0 / pi);
        constants->u = 3.0 * (4.0 / pi - 1.0);
        constants->beta = constants->u - 3.0 * sigma2;
        constants->c3 = moments[3][3] + constants->alpha * moments[3][2] +
                        constants->u * moments[3][1];
    }
    return 0;
}

void cqt_residuals(double m[4][4], const cqt_constants *c, double residuals[3])
{
    residuals[0] = m[1][3] + c->alpha * m[1][2] + c->u * m[1][1];
    residuals[1] = m[2][3] + c->alpha * m[2][2] + c->u * m[2][1];
    residuals[2] = m[1][2] + c->gamma * m[1][1];
}
