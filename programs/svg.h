/*
 * A small SVG writer for moe plot: panels with axes and ticks, points,
 * polylines and text. Coordinates passed in are data coordinates of a panel.
 */
#ifndef MOE_PROGRAMS_SVG_H
#define MOE_PROGRAMS_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef struct svg_panel {
    FILE *out;
    double left, top, width, height;       /* pixels */
    double x_min, x_max, y_min, y_max;     /* data range */
} svg_panel;

/* The colour of series k (a fixed palette that cycles). */
const char *svg_colour(size_t k);

void svg_begin(FILE *out, double width, double height, const char *title);
void svg_end(FILE *out);

/* A panel with its frame, ticks, tick labels and axis titles. */
void svg_panel_begin(svg_panel *panel, FILE *out, double left, double top, double width,
                     double height, double x_min, double x_max, double y_min, double y_max,
                     const char *x_title, const char *y_title);

/* Data range of values (with a margin), for a panel. */
void svg_range(const double *values, size_t count, size_t stride, double *low, double *high);

void svg_point(const svg_panel *panel, double x, double y, double radius, const char *fill,
               const char *stroke);
/* A polyline through (x[i], y[i * stride]). */
void svg_line(const svg_panel *panel, const double *x, const double *y, size_t count,
              size_t stride, const char *colour, double width, int dashed);
/* Text at data coordinates, or in pixels for legends (panel NULL). */
void svg_text(FILE *out, double x, double y, const char *text, const char *anchor, double size);
/* A legend entry (a swatch and a label) at pixel coordinates. */
void svg_legend(FILE *out, double x, double y, const char *colour, const char *label);

#endif
