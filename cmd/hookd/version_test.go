package main

import (
	"bytes"
	"testing"

	"github.com/hookd/hookd/protocol"
)

func TestVersionFlag(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		app := App()
		var out bytes.Buffer
		app.Writer = &out
		if err := app.Run([]string{"hookd", flag}); err != nil {
			t.Fatal(err)
		}
		if want := protocol.BuildInfo().Text("hookd"); out.String() != want {
			t.Fatalf("%s: %q, want %q", flag, out.String(), want)
		}
	}
}
