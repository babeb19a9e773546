package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

// printVersion is `hookd --version`: the build identity (protocol.BuildInfo), in the form
// `hookc --version` prints, so the two read side by side.
func printVersion(c *cli.Context) {
	_, _ = io.WriteString(c.App.Writer, protocol.BuildInfo().Text("hookd"))
}
