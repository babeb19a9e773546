package clix

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The completion scripts for bash and zsh are urfave/cli's own (its autocomplete/
// directory, with PROG set to hookd): they ask hookd itself for the words that can come
// next (`hookd <words> --generate-bash-completion`, answered by urfave/cli from the
// command tree), so they never go stale. fish's is generated from the command tree by
// urfave/cli's ToFishCompletion.
const bashCompletion = `# bash completion for hookd (urfave/cli); load with: source <(hookd completion bash)
_hookd_cli_init_completion() {
  COMPREPLY=()
  _get_comp_words_by_ref "$@" cur prev words cword
}

_hookd_bash_autocomplete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts base words
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    elif declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
      _hookd_cli_init_completion -n "=:" || return
    else
      words=("${COMP_WORDS[@]}")
      cword=$COMP_CWORD
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "-"* ]]; then
      requestComp="${words[*]} ${cur} --generate-bash-completion"
    else
      requestComp="${words[*]} --generate-bash-completion"
    fi
    opts=$(eval "${requestComp}" 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
    return 0
  fi
}

complete -o bashdefault -o default -o nospace -F _hookd_bash_autocomplete hookd
`

const zshCompletion = `#compdef hookd
# zsh completion for hookd (urfave/cli); load with: source <(hookd completion zsh)

_hookd_zsh_autocomplete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi

  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

compdef _hookd_zsh_autocomplete hookd
`

// CompletionCommand is `hookd completion bash|zsh|fish`.
func CompletionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: `Prints a script that completes hookd's commands and flags in the shell named:
   source <(hookd completion bash)                      # bash, e.g. in ~/.bashrc
   source <(hookd completion zsh)                       # zsh, after compinit
   hookd completion fish > ~/.config/fish/completions/hookd.fish`,
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			switch sh := c.Args().First(); {
			case c.NArg() != 1:
				return ExitError{Code: 2, Msg: "usage: hookd completion bash|zsh|fish"}
			case sh == "bash":
				fmt.Fprint(w, bashCompletion)
			case sh == "zsh":
				fmt.Fprint(w, zshCompletion)
			case sh == "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				fmt.Fprint(w, s)
			default:
				return ExitError{Code: 2, Msg: fmt.Sprintf("completion: unknown shell %q (bash, zsh or fish)", sh)}
			}
			return nil
		},
	}
}
