#include "cli.h"
#include "utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The model's parameters in the caller's hands (the summary reads them once). */
typedef struct parameters {
    size_t K, d, p, rows, classes;
    int intercept;
    double *gate, *experts, *variances;
    double *degrees; /* t experts' nu, Gamma experts' shapes, else NULL */
    /* Their names in the text and in JSON (moe_model_scale_kind), NULL without them. */
    const char *variance_text, *variance_json, *degrees_text;
    /* What each input (intercept first) is to the gate and to the experts: */
    unsigned char *gate_roles, *expert_roles;
} parameters;

enum { INPUT_HELD = 0, INPUT_FREE = 1, INPUT_OFFSET = 2, INPUT_TRIALS = 3 };

/* The roles of one part's p inputs, from a version-2 spec (moe/model.h): features seen
   (nonzero byte, or NULL for every one), the intercept when its flag is set, and the
   experts' offset. */
static void part_roles(const moe_model_spec *spec, int gate, unsigned char *roles)
{
    const unsigned char *features = gate ? spec->gate_features : spec->expert_features;
    size_t first = (size_t)(spec->intercept != 0);
    if (first) {
        int seen = gate ? spec->gate_intercept : spec->expert_intercept;
        roles[0] = seen ? INPUT_FREE : INPUT_HELD;
    }
    for (size_t j = 0; j < spec->n_features; ++j) {
        roles[first + j] = features == NULL || features[j] ? INPUT_FREE : INPUT_HELD;
        if (!gate && (long)j == spec->offset_feature)
            roles[first + j] = INPUT_OFFSET;
        if (!gate && (long)j == spec->trials_feature)
            roles[first + j] = INPUT_TRIALS;
    }
}

/* What the per-expert parameters besides the coefficients are called, by their kind. */
static void scale_names(moe_scale_kind kind, parameters *out)
{
    out->variance_text = out->variance_json = out->degrees_text = NULL;
    if (kind == MOE_SCALE_VARIANCE)
        out->variance_text = out->variance_json = "variance";
    if (kind == MOE_SCALE_STUDENT) {
        out->variance_text = "scale^2";
        out->variance_json = "scale_squared";
        out->degrees_text = "nu";
    }
    if (kind == MOE_SCALE_SHAPE)
        out->degrees_text = "shape";
}

static int load_parameters(const moe_model_t *model, parameters *out)
{
    memset(out, 0, sizeof *out);
    out->K = moe_model_n_experts(model);
    out->d = moe_model_n_features(model);
    out->p = moe_model_n_inputs(model);
    out->rows = moe_model_expert_rows(model);
    out->intercept = moe_model_has_intercept(model);
    out->classes = model_classes(model);
    moe_model_spec spec;
    moe_model_spec_init(&spec, MOE_MODEL_SPEC_VERSION);
    out->gate_roles = malloc(out->p + 1);
    out->expert_roles = malloc(out->p + 1);
    if (out->gate_roles == NULL || out->expert_roles == NULL ||
        moe_model_get_spec(model, &spec) != MOE_OK)
        return -1;
    part_roles(&spec, 1, out->gate_roles);
    part_roles(&spec, 0, out->expert_roles);
    out->gate = malloc(out->K * out->p * sizeof(double));
    out->experts = malloc(out->K * out->rows * out->p * sizeof(double));
    scale_names(moe_model_scale_kind(model), out);
    if (out->variance_text != NULL)
        out->variances = malloc(out->K * sizeof(double));
    if (out->degrees_text != NULL)
        out->degrees = malloc(out->K * sizeof(double));
    if (out->gate == NULL || out->experts == NULL ||
        (out->variance_text != NULL && out->variances == NULL) ||
        (out->degrees_text != NULL && out->degrees == NULL))
        return -1;
    moe_model_get_gate(model, out->gate, out->K * out->p);
    moe_model_get_experts(model, out->experts, out->K * out->rows * out->p);
    if (out->variances != NULL)
        moe_model_get_variances(model, out->variances, out->K);
    if (out->degrees != NULL)
        moe_model_get_degrees(model, out->degrees, out->K);
    return 0;
}

static void free_parameters(parameters *p)
{
    free(p->gate);
    free(p->experts);
    free(p->variances);
    free(p->degrees);
    free(p->gate_roles);
    free(p->expert_roles);
}

/* Name of input a (0-based over p): "(intercept)" or the feature's. */
static const char *input_label(const moe_model_t *model, const parameters *p, size_t a,
                               char *buffer, size_t size)
{
    if (p->intercept && a == 0)
        return "(intercept)";
    return feature_label(model, a - (size_t)p->intercept, buffer, size);
}

/* "gate sees: (intercept), z" (part: "gate sees"): the inputs a part estimates. */
static void print_part_inputs(FILE *out, const moe_model_t *model, const parameters *p,
                              const char *part, const unsigned char *roles)
{
    char buffer[32];
    const char *separator = " ";
    fprintf(out, "%s:", part);
    for (size_t a = 0; a < p->p; ++a)
        if (roles[a] == INPUT_FREE) {
            fprintf(out, "%s%s", separator, input_label(model, p, a, buffer, sizeof buffer));
            separator = ", ";
        }
    for (size_t a = 0; a < p->p; ++a)
        if (roles[a] == INPUT_OFFSET)
            fprintf(out, "; offset %s (coefficient 1)",
                    input_label(model, p, a, buffer, sizeof buffer));
        else if (roles[a] == INPUT_TRIALS)
            fprintf(out, "; trials %s", input_label(model, p, a, buffer, sizeof buffer));
    fputc('\n', out);
}

/* One table: a row per input, a column per expert, values[k * stride + a]. */
static void print_table(FILE *out, const moe_model_t *model, const parameters *p,
                        const double *values, size_t stride, const unsigned char *roles)
{
    char buffer[32];
    fprintf(out, "  %-22s", "");
    for (size_t k = 0; k < p->K; ++k) {
        snprintf(buffer, sizeof buffer, "expert %zu", k + 1);
        fprintf(out, " %14s", buffer);
    }
    fputc('\n', out);
    for (size_t a = 0; a < p->p; ++a) {
        fprintf(out, "  %-22.22s", input_label(model, p, a, buffer, sizeof buffer));
        for (size_t k = 0; k < p->K; ++k)
            if (roles[a] == INPUT_FREE)
                fprintf(out, " %14.6g", values[k * stride + a]);
            else /* held at 0, or an offset's 1: not estimated */
                fprintf(out, " %14s", roles[a] == INPUT_OFFSET   ? "offset"
                                      : roles[a] == INPUT_TRIALS ? "trials"
                                                                 : "-");
        fputc('\n', out);
    }
}

/* The estimates in the order of moe_model_vcov and a label for each ("gate 1: x", "expert
   2: x", "expert 2 class a: x", "expert 1: variance", t experts' "expert 1: scale^2" and
   "expert 1: nu"); count values. */
static size_t inference_rows(const moe_model_t *model, const parameters *p, double *estimates,
                             char (*labels)[96])
{
    size_t count = 0;
    char input[32], cls[32];
    for (size_t a = 0; a + 1 < p->K; ++a)
        for (size_t j = 0; j < p->p; ++j) {
            if (p->gate_roles[j] != INPUT_FREE)
                continue;
            estimates[count] = p->gate[a * p->p + j];
            snprintf(labels[count++], 96, "gate %zu: %s", a + 1,
                     input_label(model, p, j, input, sizeof input));
        }
    size_t free_rows = moe_model_family(model) == MOE_FAMILY_MULTINOMIAL ? p->rows - 1 : 1;
    for (size_t k = 0; k < p->K; ++k)
        for (size_t q = 0; q < free_rows; ++q)
            for (size_t j = 0; j < p->p; ++j) {
                if (p->expert_roles[j] != INPUT_FREE)
                    continue;
                estimates[count] = p->experts[(k * p->rows + q) * p->p + j];
                if (free_rows > 1)
                    snprintf(labels[count++], 96, "expert %zu class %s: %s", k + 1,
                             class_label(model, q, cls, sizeof cls),
                             input_label(model, p, j, input, sizeof input));
                else
                    snprintf(labels[count++], 96, "expert %zu: %s", k + 1,
                             input_label(model, p, j, input, sizeof input));
            }
    if (p->variances != NULL)
        for (size_t k = 0; k < p->K; ++k) {
            estimates[count] = p->variances[k];
            snprintf(labels[count++], 96, "expert %zu: %s", k + 1, p->variance_text);
        }
    if (p->degrees != NULL)
        for (size_t k = 0; k < p->K; ++k) {
            estimates[count] = p->degrees[k];
            snprintf(labels[count++], 96, "expert %zu: %s", k + 1, p->degrees_text);
        }
    return count;
}

/* The standard errors are from the penalised information. */
static int penalised(const fit_summary *fit)
{
    return fit->gate_l2 > 0.0 || fit->expert_ridge > 0.0;
}

/* The fit's report says its gate separates the rows (moe/fitter.h). */
static int gate_separated(const fit_summary *fit)
{
    return fit->report != NULL && (fit->report->warnings & MOE_WARNING_GATE_SEPARATED);
}

/* Two-sided normal p-value of z. */
static double p_value(double z)
{
    return erfc(fabs(z) / sqrt(2.0));
}

static void print_inference(FILE *out, const moe_model_t *model, const parameters *p,
                            const fit_summary *fit)
{
    size_t P = moe_model_n_free_params(model);
    double *estimates = malloc(P * sizeof(double));
    char (*labels)[96] = malloc(P * sizeof *labels);
    if (estimates == NULL || labels == NULL) {
        free(estimates);
        free(labels);
        return;
    }
    size_t count = inference_rows(model, p, estimates, labels);
    if (penalised(fit))
        fprintf(out,
                "\nstandard errors from the penalised information (gate_l2 = %g, "
                "expert_ridge = %g):\n",
                fit->gate_l2, fit->expert_ridge);
    else if (gate_separated(fit))
        fputs("\nstandard errors (observed information; the gate's are not meaningful: see the "
              "warning above):\n",
              out);
    else
        fputs("\nstandard errors (observed information):\n", out);
    fprintf(out, "  %-32s %14s %12s %9s %10s", "parameter", "estimate", "std. error", "z", "p");
    if (fit->intervals)
        fprintf(out, " %12s %12s", "95% lower", "95% upper");
    fputc('\n', out);
    for (size_t j = 0; j < count; ++j) {
        double se = fit->standard_errors[j], z = estimates[j] / se;
        fprintf(out, "  %-32.32s %14.6g %12.4g %9.3f %10.3g", labels[j], estimates[j], se, z,
                p_value(z));
        if (fit->intervals)
            fprintf(out, " %12.6g %12.6g", estimates[j] - 1.959963984540054 * se,
                    estimates[j] + 1.959963984540054 * se);
        fputc('\n', out);
    }
    free(estimates);
    free(labels);
}

static void print_separation(FILE *out, const fit_summary *fit)
{
    fprintf(out,
            "\nwarning: the gate separates the rows (its smallest transition holds %.2g rows):\n"
            "  its maximum likelihood lies at infinity, so its coefficients are where the\n"
            "  iterations stopped, and their standard errors and p-values are not meaningful\n"
            "  (the likelihood is flat towards infinity). The experts and the gate's borders\n"
            "  are still estimated. For a finite gate with penalised standard errors, refit\n"
            "  with a gate penalty: --option gate_l2=1e-4 (Python: gate_l2=1e-4; R:\n"
            "  gate_l2 = 1e-4).\n",
            fit->report->gate_transition);
}

/* "1st", "2nd", ...: which restart won. */
static const char *ordinal(size_t number, char *buffer, size_t size)
{
    size_t tens = number % 100, units = number % 10;
    const char *suffix = tens >= 11 && tens <= 13 ? "th"
                         : units == 1             ? "st"
                         : units == 2             ? "nd"
                         : units == 3             ? "rd"
                                                  : "th";
    snprintf(buffer, size, "%zu%s", number, suffix);
    return buffer;
}

/* How the returned fit was started, in the words of a flexmix user (its nrep repetitions):
   the restarts run and n_init, which the default start search can leave fewer of (the
   distinct end points it found), and the search's own short runs, which iterations above
   do not count: after a search that already converged, the returned fit may need 1. */
static void print_starts(FILE *out, const fit_summary *fit)
{
    const moe_fit_report *r = fit->report;
    char asked[48] = "", best[32];
    if (fit->n_init > 0)
        snprintf(asked, sizeof asked, r->search_runs > 0 ? " (n_init %zu: up to %zu)"
                                                         : " (n_init %zu)",
                 fit->n_init, fit->n_init);
    const char *plural = r->n_restarts == 1 ? "" : "s";
    if (r->search_runs > 0)
        fprintf(out, "starts: a search of %zu short EM runs (%zu iterations) kept %zu distinct "
                     "end point%s%s, ",
                r->search_runs, r->search_iterations, r->n_restarts, plural, asked);
    else
        fprintf(out, "starts: %zu restart%s%s, ", r->n_restarts, plural, asked);
    if (r->n_restarts == 1)
        fputs(r->search_runs > 0 ? "iterated to the fit above\n" : "the fit above\n", out);
    else
        fprintf(out, "each iterated (%zu iterations in all); the best, the %s, is the fit "
                     "above\n",
                r->total_iterations, ordinal(r->best_restart + 1, best, sizeof best));
}

/* The fit's line: iterations of the start search and of the restarts apart, or a streaming
   session's steps and prequential log-likelihood (it has no convergence to report). */
static void print_fit_report(FILE *out, const fit_summary *fit)
{
    const moe_fit_report *r = fit->report;
    if (r->stages & MOE_STAGE_STREAM) {
        fprintf(out, "\nstreaming session: %zu rows, %zu steps, average log-likelihood per row ",
                r->samples_seen, r->stream_steps);
        if (r->stream_rows > 0)
            fprintf(out, "%.6g\n  (each batch scored by the model before its step: %zu rows "
                         "scored, not the warm start's)\n",
                    r->stream_loglik / (double)r->stream_rows, r->stream_rows);
        else
            fputs("not yet known (no step after the warm start)\n", out);
        return;
    }
    fprintf(out, "\nfit: %s, %s after %zu iteration%s, %.3f s\n", fit->estimator,
            r->converged ? "converged" : "NOT converged", r->iterations,
            r->iterations == 1 ? "" : "s", r->seconds);
    print_starts(out, fit);
    if (r->stages & MOE_STAGE_TENSOR)
        fprintf(out, "stages: experts from the tensor, gate with the experts held%s\n",
                r->stages & MOE_STAGE_JOINT ? ", then every parameter" : "");
}

void print_summary(FILE *out, const moe_model_t *model, const fit_summary *fit)
{
    parameters p;
    if (load_parameters(model, &p) != 0) {
        free_parameters(&p);
        fputs("moe: out of memory\n", stderr);
        return;
    }
    moe_family family = moe_model_family(model);
    const char *response = moe_model_get_name(model, MOE_NAME_RESPONSE, 0);
    char buffer[32];
    fprintf(out, "%s experts: K = %zu, %zu feature%s%s, %zu free parameters\n",
            moe_family_name(family), p.K, p.d, p.d == 1 ? "" : "s",
            p.intercept ? " and an intercept" : "", moe_model_n_free_params(model));
    if (response != NULL)
        fprintf(out, "response: %s\n", response);

    moe_link link = moe_model_link(model);
    if (family == MOE_FAMILY_GAUSSIAN)
        fprintf(out, "link: %s\n", moe_link_name(link));
    /* Which columns the model took, always: without --features every other column is
       one, and an identifier column among them would otherwise pass unnoticed. */
    fputs("covariates:", out);
    for (size_t j = 0; j < p.d; ++j)
        fprintf(out, "%s%s", j > 0 ? ", " : " ", feature_label(model, j, buffer, sizeof buffer));
    fputs(p.d == 0 ? " none\n" : "\n", out);
    print_part_inputs(out, model, &p, "gate sees", p.gate_roles);
    print_part_inputs(out, model, &p, "experts see", p.expert_roles);
    if (p.classes > 0) {
        fputs("classes:", out);
        for (size_t c = 0; c < p.classes; ++c)
            fprintf(out, " %s", class_label(model, c, buffer, sizeof buffer));
        fputc('\n', out);
    }
    fputc('\n', out);
    if (family == MOE_FAMILY_MULTINOMIAL) {
        for (size_t c = 0; c + 1 < p.classes; ++c) {
            fprintf(out, "experts: log-odds of class %s against %s\n",
                    class_label(model, c, buffer, sizeof buffer),
                    moe_model_get_name(model, MOE_NAME_CLASS, p.classes - 1) != NULL
                        ? moe_model_get_name(model, MOE_NAME_CLASS, p.classes - 1)
                        : "the last class");
            print_table(out, model, &p, p.experts + c * p.p, p.rows * p.p, p.expert_roles);
        }
    } else {
        if (family == MOE_FAMILY_LOGISTIC)
            fprintf(out, "experts: log-odds of class %s\n",
                    class_label(model, 1, buffer, sizeof buffer));
        else if (family == MOE_FAMILY_POISSON)
            fputs("experts: coefficients of log E[y] (Poisson, log link)\n", out);
        else if (family == MOE_FAMILY_BINOMIAL)
            fputs("experts: log-odds of success (binomial, logit link)\n", out);
        else if (family == MOE_FAMILY_STUDENT_T)
            fputs("experts: regression coefficients (Student-t noise)\n", out);
        else if (family == MOE_FAMILY_GAUSSIAN && link == MOE_LINK_IDENTITY)
            fputs("experts: regression coefficients\n", out);
        else if (family == MOE_FAMILY_GAUSSIAN)
            fprintf(out, "experts: coefficients of t = x'beta, mean %s\n",
                    link == MOE_LINK_SIGMOID ? "1 / (1 + exp(-t))" : "max(0, t)");
        else /* a family this summary has no words of its own for: the table's line */
            fprintf(out, "experts: coefficients of the linear predictor (%s)\n",
                    moe_family_description(family));
        print_table(out, model, &p, p.experts, p.p, p.expert_roles);
    }
    if (p.variances != NULL) {
        fprintf(out, "  %-22s", p.variance_text);
        for (size_t k = 0; k < p.K; ++k)
            fprintf(out, " %14.6g", p.variances[k]);
        fputc('\n', out);
    }
    if (p.degrees != NULL) {
        fprintf(out, "  %-22s", p.degrees_text);
        for (size_t k = 0; k < p.K; ++k)
            fprintf(out, " %14.6g", p.degrees[k]);
        fputc('\n', out);
    }
    if (fit != NULL && fit->mean_gate != NULL) {
        fprintf(out, "  %-22s", "mean gate weight");
        for (size_t k = 0; k < p.K; ++k)
            fprintf(out, " %14.4f", fit->mean_gate[k]);
        fputc('\n', out);
    }
    fprintf(out, "\ngate: log-odds against expert %zu\n", p.K);
    print_table(out, model, &p, p.gate, p.p, p.gate_roles);
    if (fit != NULL && gate_separated(fit))
        print_separation(out, fit);
    if (fit != NULL && fit->standard_errors != NULL)
        print_inference(out, model, &p, fit);
    if (fit != NULL && fit->report != NULL)
        print_fit_report(out, fit);
    if (fit != NULL && fit->criteria != NULL) {
        const moe_criteria *c = fit->criteria;
        fprintf(out, "log-likelihood %.6f   AIC %.4f   BIC %.4f   ICL %.4f   (n = %zu)\n",
                c->loglik, c->aic, c->bic, c->icl, fit->n);
    }
    free_parameters(&p);
}

/* JSON ------------------------------------------------------------------------------------ */

/* A JSON string: UTF-8 passed through, control characters as \u00XX, and any byte that
   is not UTF-8 (a model saved by another program may hold such names) as U+FFFD, the
   replacement character, so the output is always valid JSON. */
static void json_string(FILE *out, const char *text)
{
    const unsigned char *c = (const unsigned char *)text;
    size_t left = strlen(text);
    fputc('"', out);
    while (left > 0) {
        size_t step = *c < 0x80 ? 1 : utf8_sequence(c, left, NULL);
        if (step == 0) {
            fputs("\\ufffd", out);
            step = 1;
        } else if (*c == '"' || *c == '\\') {
            fprintf(out, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(out, "\\u%04x", *c);
        } else {
            fwrite(c, 1, step, out);
        }
        c += step;
        left -= step;
    }
    fputc('"', out);
}

static void json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.17g", value);
    else
        fputs("null", out);
}

/* {"(intercept)": v, "x1": v, ...} from values[a], a over the inputs the part estimates
   (held coefficients are left out: "gate_inputs" and "expert_inputs" say which they are). */
static void json_coefficients(FILE *out, const moe_model_t *model, const parameters *p,
                              const double *values, const unsigned char *roles)
{
    char buffer[32];
    const char *separator = "";
    fputc('{', out);
    for (size_t a = 0; a < p->p; ++a) {
        if (roles[a] != INPUT_FREE)
            continue;
        fputs(separator, out);
        separator = ", ";
        json_string(out, input_label(model, p, a, buffer, sizeof buffer));
        fputs(": ", out);
        json_number(out, values[a]);
    }
    fputc('}', out);
}

/* The report's part of "fit": a fit's restarts and iterations (the start search's apart),
   or a streaming session's rows, steps and prequential average (no iterations or
   convergence: a session has none); the stages; the gate's separation warning. */
static void json_fit_report(FILE *out, const fit_summary *fit)
{
    const moe_fit_report *r = fit->report;
    fputs("\"estimator\": ", out);
    json_string(out, fit->estimator);
    if (r->stages & MOE_STAGE_STREAM) {
        fprintf(out, ", \"stream\": {\"rows\": %zu, \"batches\": %zu, \"steps\": %zu, "
                     "\"scored_rows\": %zu, \"average_loglik\": ",
                r->samples_seen, r->batches, r->stream_steps, r->stream_rows);
        json_number(out, r->stream_rows > 0 ? r->stream_loglik / (double)r->stream_rows : NAN);
        fputc('}', out);
    } else {
        fprintf(out, ", \"restarts\": %zu, \"best_restart\": %zu, \"iterations\": %zu, "
                     "\"total_iterations\": %zu, \"search_runs\": %zu, "
                     "\"search_iterations\": %zu, \"converged\": %s",
                r->n_restarts, r->best_restart + 1, r->iterations, r->total_iterations,
                r->search_runs, r->search_iterations, r->converged ? "true" : "false");
    }
    fputs(", \"seconds\": ", out);
    json_number(out, r->seconds);
    static const struct {
        unsigned int flag;
        const char *name;
    } stages[] = {{MOE_STAGE_TENSOR, "tensor"},
                  {MOE_STAGE_GATE, "gate"},
                  {MOE_STAGE_JOINT, "joint"},
                  {MOE_STAGE_STREAM, "stream"}};
    fputs(", \"stages\": [", out);
    const char *separator = "";
    for (size_t s = 0; s < sizeof stages / sizeof stages[0]; ++s)
        if (r->stages & stages[s].flag) {
            fprintf(out, "%s\"%s\"", separator, stages[s].name);
            separator = ", ";
        }
    fputc(']', out);
    fprintf(out, ", \"gate_separated\": %s",
            (r->warnings & MOE_WARNING_GATE_SEPARATED) ? "true" : "false");
    if (r->warnings & MOE_WARNING_GATE_SEPARATED) {
        fputs(", \"gate_transition_rows\": ", out);
        json_number(out, r->gate_transition);
        fputs(", \"warnings\": [\"the gate separates the rows: its maximum likelihood lies at "
              "infinity, and its coefficients' standard errors and p-values are not "
              "meaningful (the likelihood is flat towards infinity); refit with a gate "
              "penalty, gate_l2 = 1e-4 say\"]",
              out);
    }
}

/* , "gate_inputs": ["(intercept)", "z"] (the inputs the part estimates), and for the
   experts' offset , "offset": "log_t" (null without one). */
static void json_part_inputs(FILE *out, const moe_model_t *model, const parameters *p,
                             const char *member, const unsigned char *roles)
{
    char buffer[32], offset_buffer[32], trials_buffer[32];
    const char *separator = "";
    const char *offset = NULL, *trials = NULL;
    fprintf(out, ", \"%s\": [", member);
    for (size_t a = 0; a < p->p; ++a) {
        if (roles[a] == INPUT_OFFSET)
            offset = input_label(model, p, a, offset_buffer, sizeof offset_buffer);
        if (roles[a] == INPUT_TRIALS)
            trials = input_label(model, p, a, trials_buffer, sizeof trials_buffer);
        if (roles[a] != INPUT_FREE)
            continue;
        fputs(separator, out);
        separator = ", ";
        json_string(out, input_label(model, p, a, buffer, sizeof buffer));
    }
    fputc(']', out);
    if (roles == p->expert_roles) {
        fputs(", \"offset\": ", out);
        if (offset != NULL)
            json_string(out, offset);
        else
            fputs("null", out);
        fputs(", \"trials\": ", out);
        if (trials != NULL)
            json_string(out, trials);
        else
            fputs("null", out);
    }
}

/* The model's structure, names and labels: the JSON object's first members. */
static void json_structure(FILE *out, const moe_model_t *model, const parameters *p)
{
    char buffer[32];
    fprintf(out, "{\"family\": \"%s\", \"link\": \"%s\", \"n_experts\": %zu, "
                 "\"n_features\": %zu, \"intercept\": %s, \"n_classes\": %zu, "
                 "\"free_parameters\": %zu",
            moe_family_name(moe_model_family(model)), moe_link_name(moe_model_link(model)),
            p->K, p->d, p->intercept ? "true" : "false", p->classes,
            moe_model_n_free_params(model));
    fputs(", \"features\": [", out);
    for (size_t j = 0; j < p->d; ++j) {
        if (j > 0)
            fputs(", ", out);
        json_string(out, feature_label(model, j, buffer, sizeof buffer));
    }
    fputs("], \"response\": ", out);
    const char *response = moe_model_get_name(model, MOE_NAME_RESPONSE, 0);
    if (response != NULL)
        json_string(out, response);
    else
        fputs("null", out);
    fputs(", \"classes\": [", out);
    for (size_t c = 0; c < p->classes; ++c) {
        if (c > 0)
            fputs(", ", out);
        json_string(out, class_label(model, c, buffer, sizeof buffer));
    }
    fputc(']', out);
    json_part_inputs(out, model, p, "gate_inputs", p->gate_roles);
    json_part_inputs(out, model, p, "expert_inputs", p->expert_roles);
}

/* The experts: coefficients (per class for multinomial experts), variance, mean gate
   weight and gate row. */
static void json_experts(FILE *out, const moe_model_t *model, const parameters *p,
                         const fit_summary *fit)
{
    char buffer[32];
    fputs(", \"experts\": [", out);
    for (size_t k = 0; k < p->K; ++k) {
        fputs(k > 0 ? ", {" : "{", out);
        fputs("\"coefficients\": ", out);
        if (moe_model_family(model) == MOE_FAMILY_MULTINOMIAL) {
            fputc('{', out); /* per class, the reference class last and zero */
            for (size_t c = 0; c < p->classes; ++c) {
                if (c > 0)
                    fputs(", ", out);
                json_string(out, class_label(model, c, buffer, sizeof buffer));
                fputs(": ", out);
                json_coefficients(out, model, p, p->experts + (k * p->rows + c) * p->p,
                                  p->expert_roles);
            }
            fputc('}', out);
        } else {
            json_coefficients(out, model, p, p->experts + k * p->p, p->expert_roles);
        }
        if (p->variances != NULL) {
            fprintf(out, ", \"%s\": ", p->variance_json);
            json_number(out, p->variances[k]);
        }
        if (p->degrees != NULL) {
            fprintf(out, ", \"%s\": ", p->degrees_text);
            json_number(out, p->degrees[k]);
        }
        if (fit != NULL && fit->mean_gate != NULL) {
            fputs(", \"mean_gate_weight\": ", out);
            json_number(out, fit->mean_gate[k]);
        }
        fputs(", \"gate\": ", out);
        json_coefficients(out, model, p, p->gate + k * p->p, p->gate_roles);
        fputc('}', out);
    }
    fputc(']', out);
}

/* The fit's report and criteria. */
static void json_fit(FILE *out, const fit_summary *fit)
{
    fputs(", \"fit\": {", out);
    const char *separator = "";
    if (fit->report != NULL) {
        json_fit_report(out, fit);
        separator = ", ";
    }
    if (fit->criteria != NULL) {
        const moe_criteria *c = fit->criteria;
        fprintf(out, "%s\"n\": %zu, \"loglik\": ", separator, fit->n);
        json_number(out, c->loglik);
        fputs(", \"aic\": ", out);
        json_number(out, c->aic);
        fputs(", \"bic\": ", out);
        json_number(out, c->bic);
        fputs(", \"icl\": ", out);
        json_number(out, c->icl);
    }
    fputc('}', out);
}

/* One row of the inference table. */
static void json_inference_row(FILE *out, const char *label, double estimate, double se,
                               int intervals)
{
    double z = estimate / se;
    fputs("{\"parameter\": ", out);
    json_string(out, label);
    fputs(", \"estimate\": ", out);
    json_number(out, estimate);
    fputs(", \"se\": ", out);
    json_number(out, se);
    fputs(", \"z\": ", out);
    json_number(out, z);
    fputs(", \"p\": ", out);
    json_number(out, p_value(z));
    if (intervals) {
        fputs(", \"lower\": ", out);
        json_number(out, estimate - 1.959963984540054 * se);
        fputs(", \"upper\": ", out);
        json_number(out, estimate + 1.959963984540054 * se);
    }
    fputc('}', out);
}

/* How the information was computed, and every free parameter with its standard error. */
static void json_inference(FILE *out, const moe_model_t *model, const parameters *p,
                           const fit_summary *fit)
{
    size_t P = moe_model_n_free_params(model);
    double *estimates = malloc(P * sizeof(double));
    char (*labels)[96] = malloc(P * sizeof *labels);
    if (estimates != NULL && labels != NULL) {
        size_t count = inference_rows(model, p, estimates, labels);
        if (penalised(fit)) {
            fputs(", \"information\": {\"penalised\": true, \"gate_l2\": ", out);
            json_number(out, fit->gate_l2);
            fputs(", \"expert_ridge\": ", out);
            json_number(out, fit->expert_ridge);
            fputc('}', out);
        } else
            fputs(", \"information\": {\"penalised\": false}", out);
        fputs(", \"inference\": [", out);
        for (size_t j = 0; j < count; ++j) {
            if (j > 0)
                fputs(", ", out);
            json_inference_row(out, labels[j], estimates[j], fit->standard_errors[j],
                               fit->intervals);
        }
        fputc(']', out);
    }
    free(estimates);
    free(labels);
}

void print_summary_json(FILE *out, const moe_model_t *model, const fit_summary *fit)
{
    parameters p;
    if (load_parameters(model, &p) != 0) {
        free_parameters(&p);
        fputs("moe: out of memory\n", stderr);
        return;
    }
    json_structure(out, model, &p);
    json_experts(out, model, &p, fit);
    if (fit != NULL && (fit->report != NULL || fit->criteria != NULL))
        json_fit(out, fit);
    if (fit != NULL && fit->standard_errors != NULL)
        json_inference(out, model, &p, fit);
    if (fit != NULL && fit->json_members != NULL)
        fprintf(out, ", %s", fit->json_members);
    fputs("}\n", out);
    free_parameters(&p);
}
