package clients

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTrackerCountsByNameAndVersion(t *testing.T) {
	var tr Tracker
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tr.Note("hookc/1.2.0", t0)
	tr.Note("hookc/1.2.0", t0.Add(2*time.Second))
	tr.Note("hookc/1.1.0", t0.Add(time.Second))
	tr.Note("hookc", t0)
	tr.Note("my-harness/0.9", t0)
	tr.Note("", t0) // the raw protocol without a name: not listed
	got := tr.List("1.2.0")
	want := []string{"hookc 1.2.0 2 false", "hookc 1.1.0 1 true", "hookc  1 true", "my-harness 0.9 1 false"}
	if len(got) != len(want) {
		t.Fatalf("listed %+v", got)
	}
	for i, c := range got {
		if s := fmt.Sprintf("%s %s %d %v", c.Client, c.Version, c.Requests, c.Skew); s != want[i] {
			t.Errorf("entry %d: %q, want %q", i, s, want[i])
		}
	}
	if c := got[0]; !c.FirstSeen.Equal(t0) || !c.LastSeen.Equal(t0.Add(2*time.Second)) {
		t.Errorf("hookc/1.2.0 seen %v … %v", c.FirstSeen, c.LastSeen)
	}
	// Another daemon version: now the 1.1.0 client is the matching one.
	for _, c := range tr.List("1.1.0") {
		if c.Client == Hookc && c.Skew != (c.Version != "1.1.0") {
			t.Errorf("against 1.1.0: %+v", c)
		}
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][2]string{
		"hookc/0.4.1": {"hookc", "0.4.1"}, "hookc": {"hookc", ""}, "org/tool/1.0": {"org/tool", "1.0"},
		"/1.0": {"/1.0", ""}, "hookc/": {"hookc", ""},
	} {
		if n, v := Split(in); n != want[0] || v != want[1] {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", in, n, v, want[0], want[1])
		}
	}
}

// TestTrackerIsBounded: any local process can name itself anything, as often as it
// likes; the tracker keeps at most MaxEntries names of at most MaxName bytes, forgetting
// the one seen least recently.
func TestTrackerIsBounded(t *testing.T) {
	var tr Tracker
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tr.Note("hookc/1.0", t0.Add(time.Hour)) // seen last: survives the flood
	for i := range 10 * MaxEntries {
		tr.Note(fmt.Sprintf("flood-%d/%s", i, strings.Repeat("é", 100)), t0.Add(time.Duration(i)*time.Millisecond))
	}
	got := tr.List("1.0")
	if len(got) != MaxEntries {
		t.Fatalf("%d entries, want %d", len(got), MaxEntries)
	}
	if got[0].Client != "hookc" || got[0].Version != "1.0" {
		t.Errorf("the most recent client was evicted: first is %+v", got[0])
	}
	for _, c := range got[1:] {
		if n := len(c.Client) + len(c.Version); n > MaxName || !strings.HasPrefix(c.Client, "flood-") {
			t.Errorf("kept %q / %q (%d bytes)", c.Client, c.Version, n)
		}
		var i int
		if _, err := fmt.Sscanf(c.Client, "flood-%d", &i); err != nil || i < 10*MaxEntries-(MaxEntries-1) {
			t.Errorf("kept an old entry %q: the least recently seen go first", c.Client)
		}
	}
}

func TestTrackerConcurrent(t *testing.T) {
	var tr Tracker
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				tr.Note(fmt.Sprintf("hookc/%d", (g+i)%3), time.Now())
				if i%50 == 0 {
					_ = tr.List("0")
				}
			}
		}()
	}
	wg.Wait()
	var total uint64
	for _, c := range tr.List("0") {
		total += c.Requests
	}
	if total != 8*500 {
		t.Fatalf("counted %d requests, want %d", total, 8*500)
	}
}
