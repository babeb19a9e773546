// Package shell reads a Bash command line statically and says which simple
// commands it runs and the strings each may be matched as. It is the Bash
// half of hookd's permission rules, split out of package rules so that each
// holds one idea: rules owns the rule grammar, the star globs, matching and
// decisions (deny → ask → allow, fail closed or open); shell owns the shell.
//
// It knows bash 5.2's grammar (through its sub-package bash, on
// mvdan.cc/sh/v3/syntax), static word evaluation, the builtins and
// variables that change how the rest of a script is read, wrapper commands
// and their option grammars (sub-package wrap), and scripts run by
// commands. It does not know permission rules, patterns, tools, settings or
// decisions, and reads no files. It imports no hookd package but its own
// sub-packages; rules imports it, never the reverse.
//
// # Understood, or fail closed
//
// A simple command is resolved only when every construct on its path is
// one the analysis models as bash does — the list is docs/rules.md, "The
// contract"; this package implements it. Anything else makes the command
// unresolved (Command.Unresolved names the construct) with a hole standing
// for all of it, so every pattern that refuses could match. What the
// analysis does not model is therefore never a way around a refusing rule;
// it costs false refusals instead, which docs/rules.md lists.
//
// # What is found
//
// Analyze finds every simple command the shell would run: in lists,
// pipelines, subshells, groups, if/case/loops, function bodies, time,
// coproc, !, [[ ]], arithmetic, command and process substitutions,
// redirections and unquoted here-documents. For each, the program that runs
// is resolved: quote removal and $'…' decoding, brace lists, a path also
// seen by its base name (/usr/bin/env → env), variables assigned literally
// earlier in the same script (x=rm; $x f → rm f), and names `hash -p` gave
// a path. Wrapper commands are looked through (package wrap), and scripts
// run by a command are parsed and analysed in turn: sh|bash|zsh|dash|ksh|
// mksh|ash -c STRING, eval, alias values, env -S, su -c, trap, mapfile -C,
// compgen -C/-W, source/. of /dev/stdin, a shell reading a here-document,
// here-string, /dev/stdin, a pipe or a descriptor exec left open.
//
// Each Command carries two sets of views (see Command): a few conservative
// Strict views for patterns that grant, and every view, for patterns that
// refuse. Literal output-redirection targets are listed in Analysis.Writes.
//
// # Holes
//
// What cannot be known without running the shell becomes a Hole, a NUL
// byte in a view that stands for any text. A hole is of one of two kinds.
// Data from the harness's environment — a variable the command never
// assigns, used alone as a command name ($EDITOR, "$CC") — leaves the
// command unresolved but its arguments matched as written. Text the command
// chose or computed at run time — a command's output, a glob, a value read
// or built by the script, a name written partly by the command (eval$x) —
// may name any program, a shell or eval among them, so a hole stands for
// the whole command. An inner script that is not a literal or does not
// parse, a shell reading a pipe or a command's output, and every bound
// passed are listed as a Command whose only view is a hole. Arguments that
// are not literals are kept as written. Scripts in files are not analysed.
//
// What a script does anywhere that changes how the rest of it reads —
// variables it assigns, IFS, aliases, hashed names, integer attributes,
// start-up files, options bash parses by — is collected as facts, flow-
// insensitively (functions, traps and loops move code in time); a script is
// read again when a late fact changes an earlier answer.
//
// A line that is not parsed at all (a syntax error, over 1 MiB, nesting or
// size over what the parser may recurse on, a NUL byte) sets Analysis.Err.
// What a hole or an error costs is the caller's choice; package rules
// documents its own (deny and ask fail closed, `if` fails open).
//
// Analyze and Split never panic on any input and bound their work.
package shell
