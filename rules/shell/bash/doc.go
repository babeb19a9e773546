// Package bash reads Bash source the way bash 5.2 does, for package shell:
// it parses a command line with mvdan.cc/sh/v3/syntax within bounds that
// keep the parser and the walkers over its tree from exhausting the stack
// or the heap, undoes the places where mvdan reads bytes differently from
// bash (carriage returns, comments ending in a backslash, `coproc NAME cmd
// | …`, NUL bytes), and holds bash's lexical facts: quote removal, $'…'
// decoding, names, numbers, reserved words and the shell options whose
// effect the analysis models.
//
// Parse never panics and returns an error, rather than a tree, for input
// over its bounds (1 MiB; about 16 MiB of parser stack, estimated from the
// bytes that can open a level of recursion; 50,000 tokens) — see parse.go.
// It imports no hookd package.
package bash
