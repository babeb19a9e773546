package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

func reloadCommand() *cli.Command {
	return &cli.Command{
		Name:  "reload",
		Usage: "make the running daemon re-read every settings file now",
		Action: func(c *cli.Context) error {
			data, err := call(c, protocol.OpReload)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, string(data))
			return nil
		},
	}
}
