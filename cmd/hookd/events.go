package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/events"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:  "events",
		Usage: "list the hook events hookd knows",
		Action: func(c *cli.Context) error {
			tw := tabwriter.NewWriter(c.App.Writer, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "EVENT\tMATCHER FIELD\tBLOCKS\tTYPES\tTIMEOUT")
			for _, e := range events.All() {
				var ts []string
				for _, t := range e.Types {
					ts = append(ts, string(t))
				}
				mf := e.MatcherField
				if mf == "" {
					mf = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", e.Name, mf, e.CanBlock, strings.Join(ts, ","), e.DefaultTimeout)
			}
			return tw.Flush()
		},
	}
}
