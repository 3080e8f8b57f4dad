/* Links moe::moe and prints the version of the libmoe it runs with. */
#include <moe/moe.h>
#include <stdio.h>

int main(void)
{
    printf("libmoe %s\n", moe_version_string());
    return 0;
}
