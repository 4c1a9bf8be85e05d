/* Commands beyond the filter operations. Each lives in its own src/cli/cmd_*.c file. */
#include "cli.h"

int tsr__cmd_view(int argc, char **argv, const tsr_cli_common *global);     /* src/cli/cmd_view.c */
int tsr__cmd_deband(int argc, char **argv, const tsr_cli_common *global);   /* src/cli/cmd_deband.c */
int tsr__cmd_puzzle(int argc, char **argv, const tsr_cli_common *global);   /* src/cli/cmd_puzzle.c */

const tsr_cli_command tsr_cli_commands[] = {
    {"view", "show an image or play a y4m stream through operations, in a window or off screen", tsr__cmd_view},
    {"deband", "reduce banding (f3kdb-compatible) in y4m video and images", tsr__cmd_deband},
    {"puzzle", "scramble, solve and score square-piece jigsaw puzzles", tsr__cmd_puzzle},
    {NULL, NULL, NULL}};
