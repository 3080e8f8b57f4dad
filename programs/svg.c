#include "svg.h"
#include "utf8.h"

#include <math.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

const char *svg_colour(size_t k)
{
    return palette[k % (sizeof palette / sizeof palette[0])];
}

/* Text content with the five XML special characters escaped. Control characters
   other than tab, bytes that are not UTF-8 and the two code points XML forbids
   (U+FFFE, U+FFFF) would make the document ill-formed: they are dropped or, when they
   stand for a character, replaced by U+FFFD. */
static void escaped(FILE *out, const char *text)
{
    const unsigned char *c = (const unsigned char *)text;
    size_t left = strlen(text);
    while (left > 0) {
        unsigned long code_point = 0;
        size_t step = utf8_sequence(c, left, &code_point);
        if (step == 0 || code_point == 0xfffe || code_point == 0xffff) {
            fputs("\xef\xbf\xbd", out);
            step = step > 0 ? step : 1;
        } else {
            switch (*c) {
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '&': fputs("&amp;", out); break;
            case '"': fputs("&quot;", out); break;
            case '\'': fputs("&apos;", out); break;
            default:
                if (*c >= 0x20 || *c == '\t')
                    fwrite(c, 1, step, out);
            }
        }
        c += step;
        left -= step;
    }
}

void svg_begin(FILE *out, double width, double height, const char *title)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n<title>",
            width, height, width, height);
    escaped(out, title);
    fprintf(out, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width,
            height);
    svg_text(out, width / 2, 22, title, "middle", 15);
}

void svg_end(FILE *out)
{
    fputs("</svg>\n", out);
}

static double pixel_x(const svg_panel *p, double x)
{
    return p->left + (x - p->x_min) / (p->x_max - p->x_min) * p->width;
}

static double pixel_y(const svg_panel *p, double y)
{
    return p->top + p->height - (y - p->y_min) / (p->y_max - p->y_min) * p->height;
}

/* A tick step of 1, 2 or 5 times a power of ten giving about five ticks. */
static double tick_step(double low, double high)
{
    double raw = (high - low) / 5.0;
    if (!(raw > 0.0) || !isfinite(raw))
        return 1.0;
    double power = pow(10.0, floor(log10(raw))), fraction = raw / power;
    return (fraction < 1.5 ? 1.0 : fraction < 3.5 ? 2.0 : fraction < 7.5 ? 5.0 : 10.0) * power;
}

void svg_range(const double *values, size_t count, size_t stride, double *low, double *high)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < count; ++i) {
        double v = values[i * stride];
        if (isfinite(v)) {
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
    }
    if (!(a < b)) {
        a = isfinite(a) ? a - 1.0 : 0.0;
        b = isfinite(b) ? b + 1.0 : 1.0;
    }
    double margin = 0.04 * (b - a);
    *low = a - margin;
    *high = b + margin;
}

void svg_panel_begin(svg_panel *panel, FILE *out, double left, double top, double width,
                     double height, double x_min, double x_max, double y_min, double y_max,
                     const char *x_title, const char *y_title)
{
    svg_panel p = {out, left, top, width, height, x_min, x_max, y_min, y_max};
    *panel = p;
    fprintf(out, "<g class=\"panel\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                 "fill=\"none\" stroke=\"#444\"/>\n",
            left, top, width, height);
    double step = tick_step(x_min, x_max);
    char label[32];
    for (double t = ceil(x_min / step) * step; t <= x_max; t += step) {
        double x = pixel_x(panel, t);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                x, top + height, x, top + height + 5);
        snprintf(label, sizeof label, "%g", fabs(t) < 1e-12 * step ? 0.0 : t);
        svg_text(out, x, top + height + 18, label, "middle", 11);
    }
    step = tick_step(y_min, y_max);
    for (double t = ceil(y_min / step) * step; t <= y_max; t += step) {
        double y = pixel_y(panel, t);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                left - 5, y, left, y);
        snprintf(label, sizeof label, "%g", fabs(t) < 1e-12 * step ? 0.0 : t);
        svg_text(out, left - 8, y + 4, label, "end", 11);
    }
    svg_text(out, left + width / 2, top + height + 36, x_title, "middle", 13);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\" "
                 "transform=\"rotate(-90 %.1f %.1f)\">",
            left - 46, top + height / 2, left - 46, top + height / 2);
    escaped(out, y_title);
    fputs("</text>\n</g>\n", out);
}

void svg_point(const svg_panel *panel, double x, double y, double radius, const char *fill,
               const char *stroke)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    fprintf(panel->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
                        "fill-opacity=\"0.55\"%s%s%s/>\n",
            pixel_x(panel, x), pixel_y(panel, y), radius, fill,
            stroke != NULL ? " stroke=\"" : "", stroke != NULL ? stroke : "",
            stroke != NULL ? "\" stroke-width=\"1.5\"" : "");
}

void svg_line(const svg_panel *panel, const double *x, const double *y, size_t count,
              size_t stride, const char *colour, double width, int dashed)
{
    fprintf(panel->out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s "
                        "points=\"",
            colour, width, dashed ? " stroke-dasharray=\"6 4\"" : "");
    for (size_t i = 0; i < count; ++i) {
        double py = pixel_y(panel, y[i * stride]);
        /* Keep the line inside its panel. */
        py = py < panel->top ? panel->top : py > panel->top + panel->height
                                               ? panel->top + panel->height
                                               : py;
        fprintf(panel->out, "%s%.1f,%.1f", i > 0 ? " " : "", pixel_x(panel, x[i]), py);
    }
    fputs("\"/>\n", panel->out);
}

void svg_text(FILE *out, double x, double y, const char *text, const char *anchor, double size)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"%s\">", x, y,
            size, anchor);
    escaped(out, text);
    fputs("</text>\n", out);
}

void svg_legend(FILE *out, double x, double y, const char *colour, const char *label)
{
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x,
            y - 10, colour);
    svg_text(out, x + 18, y, label, "start", 12);
}
