package main

import (
	"encoding/json"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

// printVersion is `hookd --version`: the build identity (protocol.BuildInfo), in the form
// `hookc --version` prints, so the two read side by side.
func printVersion(c *cli.Context) {
	_, _ = io.WriteString(c.App.Writer, protocol.BuildInfo().Text("hookd"))
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print hookd's version, commit, build date, Go version and the harness versions it was checked against",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print it as one JSON object"}},
		Action: func(c *cli.Context) error {
			if !c.Bool("json") {
				printVersion(c)
				return nil
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "  ")
			return enc.Encode(protocol.BuildInfo())
		},
	}
}
