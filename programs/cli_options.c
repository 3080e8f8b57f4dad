/* moe options: what the library says its estimators and their options are. */
#include "cli.h"

#include <string.h>

static const char options_help[] =
    "usage: moe options [ESTIMATOR]\n"
    "\n"
    "Without ESTIMATOR, list the estimators (the values of --estimator). With one, list\n"
    "every option it takes (the names --option NAME=VALUE sets): type, default, range\n"
    "and what it does. Both lists come from the library.\n"
    "\n"
    "Exit status: 0 printed, 2 usage error or unknown estimator.\n";

static void print_range(const moe_option_info *info)
{
    if (info->type == MOE_OPTION_KEYWORD) {
        for (size_t k = 0; info->keywords[k] != NULL; ++k)
            printf("%s%s", k ? "|" : "", info->keywords[k]);
        return;
    }
    printf("%c%.10g, %.10g%c", (info->flags & MOE_OPTION_LOWER_OPEN) ? '(' : '[', info->lower,
           info->upper, (info->flags & MOE_OPTION_UPPER_OPEN) ? ')' : ']');
}

static int print_options(const char *estimator)
{
    moe_fitter_t *fitter = NULL;
    if (moe_fitter_create(&fitter, estimator) != MOE_OK)
        return usage_error("options: %s (see moe options)", moe_last_error());
    static const char *const types[] = {"integer", "real", "keyword"};
    for (size_t i = 0; i < moe_fitter_option_count(fitter); ++i) {
        moe_option_info info;
        if (moe_option_info_init(&info, MOE_OPTION_INFO_VERSION) != MOE_OK ||
            moe_fitter_option_info(fitter, i, &info) != MOE_OK) {
            moe_fitter_free(fitter);
            return usage_error("options: %s", moe_last_error());
        }
        printf("%-20s %-8s default ", info.name, types[info.type]);
        if (info.type == MOE_OPTION_KEYWORD)
            printf("%-12s", info.keywords[(size_t)info.default_value]);
        else
            printf("%-12.10g", info.default_value);
        printf(" ");
        print_range(&info);
        printf("%s\n    %s\n", info.number == 0 ? "  (this estimator's own)" : "",
               info.description);
    }
    moe_fitter_free(fitter);
    return 0;
}

int command_options(int argc, char **argv)
{
    const char *estimator = NULL;
    for (int at = 1; at < argc; ++at) {
        if (strcmp(argv[at], "-h") == 0 || strcmp(argv[at], "--help") == 0) {
            fputs(options_help, stdout);
            return 0;
        }
        if (argv[at][0] == '-' && argv[at][1] != '\0')
            return usage_error("options: unknown option %s (see moe options --help)", argv[at]);
        if (estimator != NULL)
            return usage_error("options: more than one estimator");
        estimator = argv[at];
    }
    if (estimator != NULL)
        return print_options(estimator);
    for (size_t i = 0; i < moe_estimator_count(); ++i)
        printf("%-6s %s\n", moe_estimator_name(i), moe_estimator_description(i));
    return 0;
}
