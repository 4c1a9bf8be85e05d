/* Commands beyond the filter operations. Each lives in its own src/cli/cmd_*.c file. */
#include "cli.h"

int tsr__cmd_puzzle(int argc, char **argv, const tsr_cli_common *global);

const tsr_cli_command tsr_cli_commands[] = {
    {"puzzle", "scramble, solve and score square-piece jigsaw puzzles", tsr__cmd_puzzle},
    {NULL, NULL, NULL}};
