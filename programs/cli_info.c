#include "cli.h"

#include <string.h>

static const char info_help[] =
    "usage: moe info MODEL.moe [--json]\n"
    "\n"
    "Print the summary of a saved model: its structure, names, expert and gate\n"
    "coefficients and variances.\n"
    "\n"
    "Exit status: 0 printed, 2 usage error or unreadable model.\n";

int command_info(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    for (int at = 1; at < argc; ++at) {
        if (strcmp(argv[at], "-h") == 0 || strcmp(argv[at], "--help") == 0) {
            fputs(info_help, stdout);
            return 0;
        }
        if (strcmp(argv[at], "--json") == 0)
            json = 1;
        else if (argv[at][0] == '-' && argv[at][1] != '\0')
            return usage_error("info: unknown option %s (see moe info --help)", argv[at]);
        else if (path == NULL)
            path = argv[at];
        else
            return usage_error("info: more than one model file");
    }
    if (path == NULL)
        return usage_error("info: no model file (see moe info --help)");
    moe_model_t *model = NULL;
    if (moe_model_load(&model, path) != MOE_OK)
        return usage_error("%s", moe_last_error());
    if (json)
        print_summary_json(stdout, model, NULL);
    else
        print_summary(stdout, model, NULL);
    moe_model_free(model);
    return 0;
}
