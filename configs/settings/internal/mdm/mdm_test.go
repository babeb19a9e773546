package mdm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/internal/readfile"
)

// readFixture reads a plist of configs/settings/testdata/mdm (written by Python's
// plistlib: make.py there).
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mdm", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What `plutil -convert json` makes of the profile (make.py's dict).
const profileJSON = `{"allowManagedHooksOnly":false,"env":{"ORG":"acme"},"hooks":{"PreToolUse":[{"hooks":[{"command":"mdm-guard","timeout":5.5,"type":"command"}],"matcher":"Bash"}]},"permissions":{"deny":["Bash(curl:*)"]}}`

func TestDecode(t *testing.T) {
	var want any
	if err := json.Unmarshal([]byte(profileJSON), &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"profile.binary.plist", "profile.xml.plist"} {
		t.Run(name, func(t *testing.T) {
			out, err := Decode(readFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %s\nwant %s", out, profileJSON)
			}
		})
	}
	for _, tt := range []struct{ name, want string }{
		{"date.xml.plist", "deployed: a date value, which JSON cannot hold (plutil -convert json fails on it, and Claude Code refuses to start)"},
		{"array.xml.plist", "the top level is an array, not a dictionary of settings"},
	} {
		if _, err := Decode(readFixture(t, tt.name)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := Decode([]byte("bplist00\xff\xff")); err == nil {
		t.Error("a truncated binary plist decoded")
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"profile.binary.plist", "profile.xml.plist", "merge.binary.plist", "date.xml.plist", "array.xml.plist"} {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte(`{ hooks = { }; }`)) // OpenStep
	f.Add([]byte("bplist00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Decode(data)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("decoded to something that is not a JSON object: %v\n%q", err, out)
		}
		if len(out) > readfile.MaxBytes {
			t.Fatalf("%d bytes", len(out))
		}
	})
}
