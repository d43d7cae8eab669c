package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run executes one coordctl command line and returns its exit code;
// errors are printed on stderr, help on stdout.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	err := dispatch(ctx, args, stdin, stdout, stderr, env)
	if err != nil {
		fmt.Fprintln(stderr, "coordctl:", err)
		if exitCode(err) == exitUsage {
			fmt.Fprintln(stderr, "Run coordctl help for the commands, coordctl COMMAND --help for one command.")
		}
		return exitCode(err)
	}
	return exitOK
}

// dispatch finds the command args name and runs it; help, -h and --help
// alone print the usage, help COMMAND and COMMAND --help the command's.
func dispatch(ctx context.Context, args []string, stdin io.Reader, out, errOut io.Writer, env func(string) string) error {
	if len(args) == 0 {
		return usageErrorf("no command")
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			globalHelp(out)
			return nil
		}
		cmd, rest, ok := lookup(args[1:])
		if !ok || len(rest) > 0 {
			return unknown(args[1:])
		}
		commandHelp(out, cmd)
		return nil
	}
	cmd, rest, ok := lookup(args)
	if !ok {
		return unknown(args)
	}
	c, runCmd, err := parse(ctx, cmd, rest, stdin, out, errOut, env)
	if errors.Is(err, flag.ErrHelp) {
		commandHelp(out, cmd)
		return nil
	}
	if err != nil {
		return err
	}
	return runCmd(c)
}

// unknown is the usage error for words that name no command.
func unknown(args []string) error {
	if subs := subcommands(args[0]); len(subs) > 0 {
		if len(args) == 1 {
			return usageErrorf("%s: want %s", args[0], strings.Join(subs, ", "))
		}
		return usageErrorf("%s %s: want %s", args[0], args[1], strings.Join(subs, ", "))
	}
	return usageErrorf("unknown command %q", args[0])
}
