// Command hookd is the hook-runner daemon and its administration CLI.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := App().Run(os.Args); err != nil {
		if ec, ok := err.(interface{ ExitCode() int }); ok {
			if msg := err.Error(); msg != "" {
				fmt.Fprintln(os.Stderr, "hookd:", msg)
			}
			os.Exit(ec.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "hookd:", err)
		os.Exit(1)
	}
}
