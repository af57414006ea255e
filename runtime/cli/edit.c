/* edit.c placeholder */
#include "cli.h"
static int run(int argc, char **argv, cli_env_t *env)
{
	(void)argc, (void)argv, (void)env;
	return EXIT_USAGE;
}
const cli_cmd_t cmd_edit = { "edit", "edit", "usage: nnnkit edit\n", run };
