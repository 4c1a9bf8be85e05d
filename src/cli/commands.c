/* Commands beyond the filter operations. Each lives in its own src/cli/cmd_*.c file. */
#include "cli.h"

const tsr_cli_command tsr_cli_commands[] = {
    {NULL, NULL, NULL}};
