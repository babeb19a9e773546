package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

func TestVersionFlagAndCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		app := App()
		var out bytes.Buffer
		app.Writer = &out
		if err := app.Run(append([]string{"hookd"}, args...)); err != nil {
			t.Fatal(err)
		}
		if want := protocol.BuildInfo().Text("hookd"); out.String() != want {
			t.Fatalf("%s: %q, want %q", args, out.String(), want)
		}
	}
	app := App()
	var out bytes.Buffer
	app.Writer = &out
	if err := app.Run([]string{"hookd", "version", "--json"}); err != nil {
		t.Fatal(err)
	}
	var b lite.Build
	if err := json.Unmarshal(out.Bytes(), &b); err != nil || b.Version == "" || b.Go == "" || len(b.Checked) == 0 {
		t.Fatalf("version --json: %v %+v\n%s", err, b, out.String())
	}
}
