/* locus: the command-line front end; one subcommand per tools/cmd_*.c. */
#include "cli.h"

#include <locus/locus.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} command_t;

static const command_t commands[] = {
#define LOCUS_COMMAND(name, fn, help) {#name, fn, help},
#include "commands.def"
#undef LOCUS_COMMAND
};

int cli_fail(const char *cmd, locus_status_t st)
{
    const char *detail = locus_last_error();
    if (detail && *detail)
        fprintf(stderr, "locus %s: %s\n", cmd, detail);
    else
        fprintf(stderr, "locus %s: %s\n", cmd, locus_strerror(st));
    return 1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "locus %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

bool cli_is_tty(void) { return isatty(STDERR_FILENO); }

static void usage(FILE *out)
{
    fprintf(out, "usage: locus <command> [options]   (locus <command> --help)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("locus %s\n", LOCUS_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "locus: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
