// Package shell reads a Bash command line statically and says which simple
// commands it runs and the strings each may be matched as. It is the Bash
// half of hookd's permission rules, split out of package rules so that each
// holds one idea: rules owns the rule grammar, the star globs, matching and
// decisions (deny → ask → allow, fail closed or open); shell owns the shell.
//
// It knows: the Bash grammar (through mvdan.cc/sh/v3/syntax, the parser
// behind shfmt, bash dialect), static word evaluation, wrapper commands and
// their option grammars, and scripts run by commands. It does not know
// permission rules, patterns, tools, settings or decisions, and reads no
// files. It imports no hookd package; rules imports it, never the reverse.
//
// # What is found
//
// Analyze finds every simple command the shell would run: in lists,
// pipelines, subshells, groups, if/case/loops, function bodies, time,
// coproc, !, [[ ]], arithmetic, command and process substitutions,
// redirections and unquoted here-documents. For each, the program that runs
// is resolved: quote removal and $'…' decoding, brace lists, a path also
// seen by its base name (/usr/bin/env → env), and variables assigned
// literally earlier in the same script (x=rm; $x f → rm f). Wrapper
// commands are looked through using one table of their option grammars
// (wrappers.go: env, sudo, doas, su -c, runuser, setpriv, nice, ionice,
// nohup, setsid, stdbuf, timeout, time, command, builtin, noglob, exec,
// xargs, parallel, flock, watch, nsenter, unshare, chroot, strace, ltrace,
// script -c, find -exec/-execdir/-ok/-okdir, trap, busybox), and scripts
// run by a command are parsed and analysed in turn: sh|bash|zsh|dash|ksh|
// mksh|ash -c STRING, eval, alias, env -S, source/. of /dev/stdin, a shell
// reading a here-document, here-string, /dev/stdin or a pipe.
//
// Each Command carries two sets of views (see Command): a few conservative
// Strict views for patterns that grant, and every view, for patterns that
// refuse. Literal output-redirection targets are listed in Analysis.Writes.
//
// # What cannot be known
//
// What cannot be known without running the shell becomes a Hole, a NUL
// byte in a view that stands for any text: a command name that is not a
// literal ($x, ${x:-rm}, $(printf rm), a glob), and whatever follows an
// option a wrapper does not have. A script that is not a literal or does
// not parse (bash -c "$(…)", eval "$x"), a shell reading a pipe or a
// command's output (… | sh, bash <(…)), or too much nesting is listed as a
// Command whose Unresolved field gives the reason and whose only view is a
// hole. Arguments that are not literals are kept as written. Scripts in
// files (bash x.sh, source x.sh) are not analysed. A line that does not
// parse at all (or exceeds 1 MiB or bracket nesting 256) sets
// Analysis.Err. What a hole or an error costs is the caller's choice;
// package rules documents its own (deny and ask fail closed, `if` fails
// open).
//
// Analyze and Split never panic on any input and bound their work.
package shell
