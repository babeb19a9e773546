package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

func reloadCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "reload",
		Usage: "make the running daemon re-read every settings file now",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON (protocol.ReloadSummary)"}},
		Action: func(c *cli.Context) error {
			var sum protocol.ReloadSummary
			return answer(c, protocol.OpReload, "reload summary", &sum, func(w io.Writer) { printReload(w, &sum) })
		},
	}, "socket")
}

// printReload writes a reload summary as `hookd status` writes its parts: one table row
// of figures, then every changed file, error and refusal on a line of its own, so that a
// failing file is named in full.
func printReload(w io.Writer, r *protocol.ReloadSummary) {
	t := newTable(w, "reload", "TRIGGER", "AT", "TOOK", "FILES READ", "CHANGED", "SWAPPED", "GENERATION", "ERRORS", "REFUSED")
	t.row(r.Trigger, clock(r.At), r.Took, i(r.FilesRead), i(len(r.Changed)), i(r.Swapped), u(r.Generation), i(len(r.Errors)), i(len(r.Refused)))
	t.flush()
	for _, c := range r.Changed {
		fmt.Fprintf(w, "  changed %s\n", c)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  ERROR %s\n", e)
	}
	for _, rf := range r.Refused {
		fmt.Fprintf(w, "  REFUSED %s\n", rf)
	}
}
