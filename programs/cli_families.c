/* moe families: the expert families this libmoe knows, from its family table. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int command_families(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs("usage: moe families\n\nThe expert families, one a line: the name --family "
              "takes and what it fits.\n",
              stdout);
        return 0;
    }
    if (argc > 1)
        return usage_error("families takes no arguments (got '%s')", argv[1]);
    for (size_t i = 0; i < moe_family_count(); ++i) {
        moe_family family = moe_family_at(i);
        printf("%-12s %s\n", moe_family_name(family), moe_family_description(family));
    }
    return 0;
}
