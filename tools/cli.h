/* Shared helpers for the locus CLI subcommands. */
#ifndef LOCUS_TOOLS_CLI_H
#define LOCUS_TOOLS_CLI_H

#include <stdbool.h>
#include <locus/status.h>

#define LOCUS_COMMAND(name, fn, help) int fn(int argc, char **argv);
#include "commands.def"
#undef LOCUS_COMMAND

/* Print "locus <cmd>: <generic>: <detail>" for a failed library call to
 * stderr and return the exit status to use (1). */
int cli_fail(const char *cmd, locus_status_t st);
/* Print "locus <cmd>: <message>" and return 2 (usage error). */
int cli_usage_error(const char *cmd, const char *fmt, ...);
/* True if stdout/stderr is a terminal (progress output). */
bool cli_is_tty(void);

#endif
