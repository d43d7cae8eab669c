package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// command is one coordctl command. A file adds its commands with register
// from an init function; dispatch finds a command by its words, parses the
// common flags and the command's own with a FlagSet of its own (flags may
// come before, between or after the positional arguments), checks the
// number of positional arguments and runs it.
//
//	func init() {
//		register(command{
//			name: "pause", synopsis: "PREFIX GROUP", summary: "…", help: "…",
//			minArgs: 2, maxArgs: 2,
//			setup: func(fs *flag.FlagSet) func(*call) error {
//				force := fs.Bool("force", false, "…")
//				return func(c *call) error { … *force … }
//			},
//		})
//	}
type command struct {
	// name is the command's words: "scale", "groups list".
	name string
	// synopsis follows the name in the usage line: "PREFIX GROUP --shards N".
	synopsis string
	// summary is its line in coordctl help.
	summary string
	// help is what coordctl NAME --help prints below the usage line: what
	// it does, its arguments and what it answers.
	help string
	// minArgs and maxArgs bound its positional arguments (maxArgs -1: no
	// bound).
	minArgs, maxArgs int
	// setup defines the command's own flags on fs and returns the function
	// that runs it once they are parsed.
	setup func(fs *flag.FlagSet) func(*call) error
}

// commands holds every registered command by name.
var commands = map[string]command{}

// register adds cmd; a name registered twice is a programming error.
func register(cmd command) {
	if _, dup := commands[cmd.name]; dup || cmd.setup == nil || cmd.summary == "" {
		panic("coordctl: bad or duplicate command " + cmd.name)
	}
	commands[cmd.name] = cmd
}

// lookup finds the command named by the first one or two words of args
// and returns it with the arguments that follow its name.
func lookup(args []string) (command, []string, bool) {
	if len(args) >= 2 {
		if cmd, ok := commands[args[0]+" "+args[1]]; ok {
			return cmd, args[2:], true
		}
	}
	if len(args) >= 1 {
		if cmd, ok := commands[args[0]]; ok {
			return cmd, args[1:], true
		}
	}
	return command{}, nil, false
}

// subcommands lists the second words of the commands whose first word is
// word ("groups": create, delete, describe, list).
func subcommands(word string) []string {
	var out []string
	for name := range commands {
		if rest, ok := strings.CutPrefix(name, word+" "); ok {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}

// call is one run of a command: its positional arguments, the common flags
// and where it reads and writes.
type call struct {
	ctx    context.Context
	cmd    command
	args   []string
	stdin  io.Reader
	out    io.Writer
	errOut io.Writer // progress of long commands
	env    func(string) string

	output      string // table or json
	server      string // --server
	requestedBy string
	reason      string
}

const commonFlagsHelp = `Flags of every command:
  -o, --output table|json   output format (default table)
  --server URL              coordinator, e.g. http://127.0.0.1:8080 (the API's base
                            path ` + contract.BasePath + ` may be included; default: the one of login)
  --requested-by NAME       who asks, recorded in the audit trail (default $USER)
  --reason TEXT             why, recorded in the audit trail
`

// parse parses args for cmd (flags anywhere among the positional
// arguments) and returns the call and the command's function. --help
// returns flag.ErrHelp.
func parse(ctx context.Context, cmd command, args []string, stdin io.Reader, out, errOut io.Writer, env func(string) string) (*call, func(*call) error, error) {
	c := &call{ctx: ctx, cmd: cmd, stdin: stdin, out: out, errOut: errOut, env: env}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.output, "o", "table", "")
	fs.StringVar(&c.output, "output", "table", "")
	fs.StringVar(&c.server, "server", "", "")
	fs.StringVar(&c.requestedBy, "requested-by", cmpOr(env("USER"), "coordctl"), "")
	fs.StringVar(&c.reason, "reason", "", "")
	runCmd := cmd.setup(fs)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, err
			}
			return nil, nil, usageErrorf("%s: %v", cmd.name, err)
		}
		if fs.NArg() == 0 {
			break
		}
		c.args = append(c.args, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if c.output != "table" && c.output != "json" {
		return nil, nil, usageErrorf("-o %q: want table or json", c.output)
	}
	if n := len(c.args); n < cmd.minArgs || cmd.maxArgs >= 0 && n > cmd.maxArgs {
		if cmd.maxArgs == 0 {
			return nil, nil, usageErrorf("%s: want no argument, got %d", cmd.name, n)
		}
		return nil, nil, usageErrorf("%s: want %s", cmd.name, cmd.synopsis)
	}
	return c, runCmd, nil
}

// commandHelp writes cmd's --help: its usage line, its text, its own flags
// and the common ones.
func commandHelp(w io.Writer, cmd command) {
	fmt.Fprintf(w, "Usage: coordctl %s %s\n\n%s\n", cmd.name, cmd.synopsis, strings.TrimSpace(cmd.help))
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.setup(fs)
	var own []string
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "-1" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		own = append(own, fmt.Sprintf("%-26s %s", line, usage))
	})
	if len(own) > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s\n", strings.Join(own, "\n"))
	}
	fmt.Fprintf(w, "\n%s", commonFlagsHelp)
}

// globalHelp writes coordctl's usage: every command with its summary.
func globalHelp(w io.Writer) {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprint(w, "coordctl manages the consumer groups of a Redis Stream Coordinator.\n\nCommands:\n")
	for _, name := range names {
		fmt.Fprintf(w, "  %-18s %s\n", name, commands[name].summary)
	}
	fmt.Fprintf(w, "\nRun coordctl COMMAND --help (or coordctl help COMMAND) for a command's arguments and flags.\n\n%s\n%s", commonFlagsHelp, exitCodesHelp)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
