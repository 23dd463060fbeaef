package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
)

// docsCommands print the manual page and the shell completions, made from
// the command line's own definition.
func docsCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:  "man",
			Usage: "print p2pbench's manual page (roff; e.g. p2pbench man > p2pbench.1)",
			Action: func(c *cli.Context) error {
				if err := cmdline.NoArgs(c); err != nil {
					return err
				}
				page, err := c.App.ToManWithSection(1)
				if err != nil {
					return err
				}
				_, err = io.WriteString(c.App.Writer, page)
				return err
			},
		},
		{
			Name:      "completion",
			Usage:     "print the shell completion of p2pbench for bash or fish (e.g. source <(p2pbench completion bash))",
			ArgsUsage: "bash|fish",
			Action: func(c *cli.Context) error {
				args, err := cmdline.Positional(c)
				if err != nil {
					return err
				}
				if len(args) != 1 {
					return cmdline.Usage(fmt.Errorf("completion takes one shell, bash or fish"))
				}
				switch args[0] {
				case "bash":
					_, err = io.WriteString(c.App.Writer, bashCompletion)
				case "fish":
					var script string
					if script, err = c.App.ToFishCompletion(); err == nil {
						_, err = io.WriteString(c.App.Writer, script)
					}
				default:
					return cmdline.Usage(fmt.Errorf("no completion for shell %q: bash or fish", args[0]))
				}
				return err
			},
		},
	}
}

// bashCompletion asks p2pbench itself, through urfave/cli's
// --generate-bash-completion, what may follow the words typed so far.
const bashCompletion = `# bash completion of p2pbench: source <(p2pbench completion bash)
_p2pbench() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local words=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
	[[ $cur == -* ]] && words+=("$cur")
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${words[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o default -F _p2pbench p2pbench
`
