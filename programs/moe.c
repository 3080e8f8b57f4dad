/*
 * moe: fit, inspect and apply mixtures of experts from the command line.
 * A thin program over libmoe's public API; each command is in its own file.
 */
#include "cli.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

static const char main_help[] =
    "usage: moe COMMAND [arguments]\n"
    "\n"
    "Mixtures of experts from CSV files, with libmoe.\n"
    "\n"
    "commands:\n"
    "  fit DATA.csv --response Y [-k K] [-o MODEL.moe]   fit a model and summarise it\n"
    "  predict MODEL.moe DATA.csv [--proba|--posterior]  predictions as CSV\n"
    "  select DATA.csv --response Y -k 1:8               compare numbers of experts\n"
    "  info MODEL.moe [--json]                           summarise a saved model\n"
    "  plot MODEL.moe DATA.csv -o FIT.svg                draw the fit\n"
    "  options [ESTIMATOR]                               the estimators, or one's options\n"
    "  families                                          the experts' families\n"
    "\n"
    "`moe COMMAND --help` describes a command. `moe --version` prints the version.\n"
    "Exit status: 0 success, 1 a fit or model problem, 2 usage or input error.\n";

int main(int argc, char **argv)
{
    /* The user's locale for text, but numbers in and out are always C ("1.5", never
       "1,5"): CSV files are exchanged between machines. */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    if (argc < 2)
        return usage_error("no command (see moe --help)");
    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(main_help, stdout);
        return 0;
    }
    if (strcmp(command, "--version") == 0) {
        printf("moe (libmoe) %s\n", moe_version_string());
        return 0;
    }
    if (strcmp(command, "fit") == 0)
        return command_fit(argc - 1, argv + 1);
    if (strcmp(command, "predict") == 0)
        return command_predict(argc - 1, argv + 1);
    if (strcmp(command, "select") == 0)
        return command_select(argc - 1, argv + 1);
    if (strcmp(command, "plot") == 0)
        return command_plot(argc - 1, argv + 1);
    if (strcmp(command, "info") == 0)
        return command_info(argc - 1, argv + 1);
    if (strcmp(command, "options") == 0)
        return command_options(argc - 1, argv + 1);
    if (strcmp(command, "families") == 0)
        return command_families(argc - 1, argv + 1);
    return usage_error("unknown command '%s' (see moe --help)", command);
}
