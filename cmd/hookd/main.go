// Command hookd is the hook-runner daemon and its administration CLI.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookd/hookd/cmd/hookd/internal/clix"
	"github.com/hookd/hookd/daemon/runner/reaper"
)

func main() {
	if len(os.Args) >= 2 && len(os.Args) <= 3 && os.Args[1] == reaper.Arg {
		reaperMain()
		return
	}
	app := App()
	if err := app.Run(clix.Intersperse(app, os.Args)); err != nil {
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

// reaperMain runs hookd as the hook group reaper of a serving daemon (reaper.Start):
// it outlives the daemon only long enough to kill the hooks' process groups. It ignores
// the signals a terminal or a service manager sends the daemon: only the end of its pipe
// (the daemon gone) ends it.
func reaperMain() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	record := ""
	if len(os.Args) == 3 {
		record = os.Args[2]
	}
	reaper.Run(os.Stdin, record, func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "hookd group reaper: "+format+"\n", args...)
	})
}
