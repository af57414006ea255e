/* main.c: nnnkit's entry point: parse the command name, dispatch, report. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_cmd_t *const commands[] = { &cmd_info, &cmd_validate, &cmd_dump, &cmd_convert };
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(FILE *f, int code)
{
	fprintf(f, "usage: nnnkit COMMAND [OPTIONS] ...\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nRun 'nnnkit COMMAND --help' for a command's options.\n"
	           "Exit codes: 0 success, 1 invalid model, 2 usage or system error, 3 plugin error.\n"
	           "Errors go to stderr as 'nnnkit: FILE: message'.\n");
	return code;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, EXIT_USAGE);
	if (cli_is_help(argv[1]) || !strcmp(argv[1], "help"))
		return usage(stdout, EXIT_VALID);
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i]->name))
			return commands[i]->run(argc - 1, argv + 1);
	fprintf(stderr, "nnnkit: unknown command '%s'\n", argv[1]);
	return usage(stderr, EXIT_USAGE);
}
