package zygote

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// setHot hands the zygote a learner's message (tests only: op "hot"; nil: none) and
// returns the hot list it kept after its checks.
func (z *zygote) setHot(data []byte) ([][2]uint64, error) {
	id, r := z.register()
	if id == 0 {
		return nil, fallback("zygote ended")
	}
	req := map[string]any{"op": "hot", "id": id}
	if data != nil {
		req["data"] = hex.EncodeToString(data)
	}
	if err := z.send(req, nil, time.Time{}); err != nil {
		z.forget(id)
		return nil, err
	}
	rep := <-r.reply
	if rep.fallback != "" {
		return nil, fallback("%s", rep.fallback)
	}
	return rep.hot, nil
}

// learnerMsg is a learner's message as server.py's learn_pages writes it.
func learnerMsg(pid uint64, ranges ...[2]uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, 0x504b48)
	b = binary.LittleEndian.AppendUint64(b, pid)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(ranges)))
	for _, r := range ranges {
		b = binary.LittleEndian.AppendUint64(b, r[0])
		b = binary.LittleEndian.AppendUint64(b, r[1])
	}
	return b
}

// mapping is one line of /proc/PID/maps.
type mapping struct {
	lo, hi uint64
	perms  string
	name   string
}

func mapsOf(t *testing.T, pid int) []mapping { return mapsOfPid(t, pid) }

func mapsOfPid(t testing.TB, pid int) []mapping {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		lo, hi, _ := strings.Cut(fs[0], "-")
		m := mapping{perms: fs[1]}
		m.lo, _ = strconv.ParseUint(lo, 16, 64)
		m.hi, _ = strconv.ParseUint(hi, 16, 64)
		if len(fs) > 5 {
			m.name = fs[5]
		}
		out = append(out, m)
	}
	return out
}

// TestPrefaultHappens: from the second event of a script on, the spare that takes the
// event has pre-faulted the pages the first child wrote, and the forked hook still sees
// exactly what a cold run sees (the probe compares argv, environment, descriptors — no
// descriptor of the learning pipe —, signals, stdio ...), with pre-faulting on and off.
func TestPrefaultHappens(t *testing.T) {
	m, spec := setup(t)
	if !kernelAtLeast(5, 14) {
		t.Skip("SKIP (loud): MADV_POPULATE_WRITE needs Linux 5.14; nothing is pre-faulted here (checked: children still run, by the other tests)")
	}
	off := New(Options{NoPrefault: true})
	t.Cleanup(off.Close)
	if err := off.WaitReady(spec, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	stdin := []byte(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`)
	events := 0
	for m.Stats.Get().Populated == 0 {
		if events++; events > 20 {
			t.Fatalf("no spare pre-faulted a page after %d events: %+v", events, m.Stats.Get())
		}
		s := spec
		s.Args = []string{"0"}
		forked(t, m, s, stdin)
	}
	if events > 2 {
		t.Errorf("first pre-faulted event: %d, want the second", events)
	}
	for _, mode := range []string{"0", "2", "raise", "exit-msg"} {
		s := spec
		s.Args = []string{mode}
		want := cold(t, s, stdin)
		before := m.Stats.Get()
		for name, mgr := range map[string]*Manager{"on": m, "off": off} {
			got := forked(t, mgr, s, stdin)
			if got.code != want.code || got.stderr != want.stderr {
				t.Errorf("pre-faulting %s, mode %s: exit %d stderr %q; cold: %d %q", name, mode, got.code, got.stderr, want.code, want.stderr)
			}
			compareProbe(t, got.stdout, want.stdout)
		}
		if after := m.Stats.Get(); after.Prefaulted == before.Prefaulted {
			t.Errorf("mode %s: the event was not pre-faulted (%+v)", mode, after)
		}
	}
	if c := off.Stats.Get(); c.Populated != 0 || c.Exited == 0 {
		t.Errorf("NoPrefault: %+v, want nothing populated", c)
	}
	// Every child reported its faults when ready, and took some after (its exit at least).
	for name, c := range map[string]Counts{"on": m.Stats.Get(), "off": off.Stats.Get()} {
		if c.Reported != c.Exited || c.EventFaults == 0 || c.ChildFaults <= c.EventFaults {
			t.Errorf("pre-faulting %s: fault counters %+v", name, c)
		}
	}
}

// TestPrefaultBogusRanges: whatever a learner's message says — addresses outside every
// mapping, read-only and executable mappings, the zygote's whole writable memory, huge
// counts, misaligned addresses, garbage — a forked hook behaves as a cold one, and what
// the zygote keeps is bounded.
func TestPrefaultBogusRanges(t *testing.T) {
	m, spec := setup(t)
	s := spec
	s.Args = []string{"2"}
	stdin := []byte(`{"x":1}`)
	forked(t, m, s, stdin) // the zygote is serving
	z := m.get(spec, false)
	zpid := m.ZygotePIDs()[0]
	var ro, all [][2]uint64
	for _, mp := range mapsOf(t, zpid) {
		r := [2]uint64{mp.lo, (mp.hi - mp.lo) >> 12}
		if mp.perms[1] != 'w' {
			ro = append(ro, r)
		}
		all = append(all, r)
	}
	huge := make([][2]uint64, 0, 2000)
	for i := range 2000 {
		huge = append(huge, [2]uint64{uint64(0x10000 + i<<24), 1 << 40})
	}
	cases := []struct {
		name string
		data []byte
		max  int  // most ranges kept; -1: any
		pop  bool // spares must populate pages
	}{
		{"outside every mapping", learnerMsg(1, [2]uint64{0x1000, 16}, [2]uint64{0x7fff_ffff_0000, 100}, [2]uint64{0xffff_ffff_ffff_f000, 4096}), 3, false},
		{"read-only and executable mappings", learnerMsg(1, ro...), -1, false},
		{"every mapping", learnerMsg(1, all...), -1, true},
		{"2000 huge ranges", learnerMsg(1, huge...), 1, false},
		{"misaligned and empty", learnerMsg(1, [2]uint64{0x1234, 1}, [2]uint64{0x2000, 0}), 0, false},
		{"count larger than the message", learnerMsg(1, [2]uint64{0x1000, 1})[:24], 0, false},
		{"not a learner's message", []byte("garbage that is not a learner's message!"), 0, false},
		{"too many ranges", learnerMsg(1, make([][2]uint64, 2001)...), 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hot, err := z.setHot(c.data)
			if err != nil {
				t.Fatal(err)
			}
			var pages uint64
			for _, r := range hot {
				pages += r[1]
			}
			if pages > 4096 || (c.max >= 0 && len(hot) > c.max) {
				t.Errorf("kept %d ranges, %d pages", len(hot), pages)
			}
			// Spares forked from now on populate this list: several events, each as cold.
			before := m.Stats.Get().Populated
			want := cold(t, s, stdin)
			for i := range 3 {
				got := forked(t, m, s, stdin)
				if got.code != want.code || got.stderr != want.stderr {
					t.Errorf("event %d: exit %d stderr %q; cold: %d %q", i, got.code, got.stderr, want.code, want.stderr)
				}
				compareProbe(t, got.stdout, want.stdout)
			}
			if populated := m.Stats.Get().Populated - before; c.pop && populated == 0 && kernelAtLeast(5, 14) {
				t.Errorf("nothing populated")
			}
			if p := m.ZygotePIDs(); len(p) != 1 || p[0] != zpid {
				t.Fatalf("zygote changed: %v", p)
			}
		})
	}
}

func kernelAtLeast(major, minor int) bool {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	var ma, mi int
	fmt.Sscanf(string(b), "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}

func hotPages(t *testing.T, z *zygote) (pages uint64) {
	t.Helper()
	hot, err := z.setHot(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range hot {
		pages += r[1]
	}
	return pages
}

// TestPrefaultListFollowsTheHooks: only a spare that populated nothing learns, so the list
// is what one recent hook wrote — it does not keep every page any hook ever wrote. After a
// hook that writes 12 MiB, the list is large; a new version of the small hook is learned
// on its next event and the list is small again.
func TestPrefaultListFollowsTheHooks(t *testing.T) {
	m, spec := setup(t)
	if !kernelAtLeast(5, 14) {
		t.Skip("SKIP (loud): MADV_POPULATE_WRITE needs Linux 5.14")
	}
	small, big := spec, spec
	small.Script, big.Script = "small.py", "big.py"
	os.WriteFile(filepath.Join(spec.Dir, "small.py"), []byte("import sys\nsys.stdout.write(sys.stdin.read())\n"), 0o644)
	os.WriteFile(filepath.Join(spec.Dir, "big.py"), []byte("import sys\nb = bytearray(12 << 20)\nb[::4096] = b'x' * (3 << 10)\nsys.stdout.write(sys.stdin.read())\n"), 0o644)
	run := func(s Spec) {
		if o := forked(t, m, s, []byte("hi")); o.code != 0 || o.stdout != "hi" {
			t.Fatalf("%s: %+v", s.Script, o)
		}
	}
	z := m.get(spec, false)
	run(small)
	run(small)
	p0 := hotPages(t, z)
	if p0 == 0 || p0 > 2048 {
		t.Fatalf("after the small hook: %d pages", p0)
	}
	run(big) // a new script: the next clean spare learns
	run(big)
	run(big)
	if p := hotPages(t, z); p < p0+1500 {
		t.Fatalf("after the 12 MiB hook: %d pages, before %d", p, p0)
	}
	os.WriteFile(filepath.Join(spec.Dir, "small.py"), []byte("import sys\nsys.stdout.write(sys.stdin.read())\n# v2\n"), 0o644)
	run(small)
	run(small)
	run(small)
	if p := hotPages(t, z); p > p0+512 {
		t.Errorf("after the small hook again: %d pages, first %d", p, p0)
	}
}

// TestLargeEventThenNext: an event larger than a socket buffer (a 600 KiB environment — six
// variables of 100 KiB, as exec allows at most 128 KiB in one; the framed stream transport
// has no packet limit) is forked like any other and answers as a
// cold run does, and the next event is forked as usual.
func TestLargeEventThenNext(t *testing.T) {
	m, spec := setup(t)
	s := spec
	s.Args = []string{"0"}
	forked(t, m, s, nil)
	big := s
	big.Env = append([]string{}, s.Env...)
	for i := range 6 {
		big.Env = append(big.Env, fmt.Sprintf("BIG%d=%s", i, strings.Repeat("x", 100<<10)))
	}
	want := cold(t, big, []byte("x"))
	got := forked(t, m, big, []byte("x"))
	if got != want {
		t.Fatalf("a 600 KiB environment: forked %+v, cold %+v", got, want)
	}
	for range 3 {
		want := cold(t, s, []byte("x"))
		got := forked(t, m, s, []byte("x"))
		if got.code != want.code || got.stderr != want.stderr {
			t.Fatalf("after the large event: %+v, cold %+v", got, want)
		}
	}
}

// FuzzHotList: any bytes as a learner's message. The zygote keeps at most 2,000 aligned
// ranges and 4,096 pages, stays up, and a child forked from a spare that populated the
// previous input's list still behaves (exit code, output).
func FuzzHotList(f *testing.F) {
	m, spec := setup(f)
	os.WriteFile(filepath.Join(spec.Dir, "echo.py"), []byte("import sys\nsys.stdout.write(sys.stdin.read())\nsys.exit(3)\n"), 0o644)
	spec.Script = "echo.py"
	forked(f, m, spec, nil)
	z := m.get(spec, false)
	var heap [2]uint64
	for _, mp := range mapsOfPid(f, m.ZygotePIDs()[0]) {
		if mp.name == "[heap]" {
			heap = [2]uint64{mp.lo, (mp.hi - mp.lo) >> 12}
		}
	}
	f.Add(learnerMsg(1, heap))
	f.Add(learnerMsg(1, [2]uint64{heap[0], 1}, [2]uint64{heap[0] + 8192, 3}))
	f.Add(learnerMsg(1, [2]uint64{0x1000, 1}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		hot, err := z.setHot(data)
		if err != nil {
			t.Fatalf("zygote: %v", err)
		}
		var pages uint64
		for _, r := range hot {
			if r[0]&0xfff != 0 || r[1] == 0 {
				t.Fatalf("kept a bad range %x", r)
			}
			pages += r[1]
		}
		if len(hot) > 2000 || pages > 4096 {
			t.Fatalf("kept %d ranges, %d pages", len(hot), pages)
		}
		if o := forked(t, m, spec, []byte("in")); o.code != 3 || o.stdout != "in" || o.stderr != "" {
			t.Fatalf("forked child: %+v", o)
		}
	})
}
