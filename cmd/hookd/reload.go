package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/show"
	"github.com/hookd/hookd/protocol"
)

func reloadCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "reload",
		Usage: "make the running daemon re-read every settings file now",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON (protocol.ReloadSummary)"}},
		Action: func(c *cli.Context) error {
			var sum protocol.ReloadSummary
			return answer(c, protocol.OpReload, "reload summary", &sum, func(w io.Writer) { show.Reload(w, &sum) })
		},
	}, "socket")
}
