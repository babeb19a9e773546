package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// memSink records what it accepted and fails the first `fail` exports.
type memSink struct {
	mu       sync.Mutex
	fail     int
	calls    int
	got      []Entry
	perm     map[uint64]bool // seqs that make the batch a PermanentError
	rejected int
}

func (m *memSink) Export(_ context.Context, b []Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail > 0 {
		m.fail--
		return errors.New("collector down")
	}
	for _, e := range b {
		if m.perm[e.Record.Seq] {
			m.rejected++
			return &PermanentError{Rejected: 1, Err: errors.New("malformed")}
		}
	}
	for _, e := range b {
		line := append([]byte(nil), e.Line...)
		m.got = append(m.got, Entry{Record: e.Record, Line: line})
	}
	return nil
}

func (m *memSink) Close() error { return nil }

func (m *memSink) seqs() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []uint64
	for _, e := range m.got {
		out = append(out, e.Record.Seq)
	}
	return out
}

// waitFor polls cond until it holds. It has no deadline of its own — a slow machine only
// waits longer; the test binary's -timeout bounds a real hang — but every 30 s it says on
// stderr what it is still waiting for, with debugDump's state, so that a hang that ends in
// -timeout's stack dump shows it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	next := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(next) {
			fmt.Fprintf(os.Stderr, "%s: still waiting for %s: %s\n", t.Name(), what, debugDump())
			next = time.Now().Add(30 * time.Second)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// debugDump describes the state a waiting test is in (set by the test; only state read
// under locks, as the shipper runs meanwhile).
var debugDump = func() string { return "" }

func runShipper(t *testing.T, l *Log, sink Sink) (*Shipper, func()) {
	t.Helper()
	s, err := NewShipper(ShipperOptions{Name: "test", Path: l.Path(), Sink: sink, MaxBatch: 7,
		Linger: time.Millisecond, Poll: 10 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	l.AddShipper(s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, time.Second); close(done) }()
	return s, func() { cancel(); <-done }
}

// Every record reaches the sink exactly in chain order across rotations and failed
// exports, each line is the one on disk (its hash chains to the next record), and a
// restarted shipper resumes after its cursor.
func TestShipperDeliversInOrderAcrossRotationAndFailures(t *testing.T) {
	l := openLog(t, Options{MaxBytes: 4 << 10})
	sink := &memSink{fail: 3}
	_, stop := runShipper(t, l, sink)
	debugDump = func() string { return fmt.Sprintf("shipped %v status %+v", sink.seqs(), l.Exporters()) }
	defer func() { debugDump = func() string { return "" } }()
	const n = 60
	for i := 1; i <= n; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "60 records shipped", func() bool {
		return len(sink.seqs()) >= n
	})
	stop()
	if l.Status().Rotations == 0 {
		t.Fatal("the test meant to cross a rotation; none happened")
	}
	got := sink.seqs()
	for i, s := range got {
		if s != uint64(i+1) {
			t.Fatalf("record %d has seq %d: %v", i, s, got)
		}
	}
	for i := 1; i < len(sink.got); i++ {
		sum := sha256.Sum256(sink.got[i-1].Line)
		if sink.got[i].Record.PrevHash != hex.EncodeToString(sum[:]) {
			t.Fatalf("shipped line %d does not chain to line %d", i+1, i)
		}
	}
	if sink.calls <= 3 {
		t.Fatalf("sink called %d times; the three failures were not retried", sink.calls)
	}
	if c, err := exportedSeq(l.Path(), "test"); err != nil || c != n {
		t.Fatalf("cursor = %d, %v; want %d", c, err, n)
	}

	// Records appended while no shipper runs go out after the restart, nothing twice.
	for i := n + 1; i <= n+10; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	sink2 := &memSink{}
	_, stop2 := runShipper(t, l, sink2)
	waitFor(t, "10 more records shipped", func() bool { return len(sink2.seqs()) >= 10 })
	stop2()
	got = sink2.seqs()
	if len(got) != 10 || got[0] != n+1 || got[9] != n+10 {
		t.Fatalf("after restart shipped %v; want %d..%d", got, n+1, n+10)
	}
}

// A first start begins at the end of the existing log (the cursor is written at once),
// not with the whole history.
func TestShipperFirstStartBeginsAtTheEnd(t *testing.T) {
	l := openLog(t, Options{})
	for i := 1; i <= 5; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	sink := &memSink{}
	s, stop := runShipper(t, l, sink)
	defer stop()
	waitFor(t, "cursor at 5", func() bool { return s.Status().Cursor == 5 })
	if err := l.Append(context.Background(), decision(6)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "record 6 shipped", func() bool { return len(sink.seqs()) == 1 })
	if got := sink.seqs(); got[0] != 6 {
		t.Fatalf("shipped %v; want [6]", got)
	}
}

// A batch the destination refuses for good is counted and skipped, not retried forever.
func TestShipperSkipsPermanentRejections(t *testing.T) {
	l := openLog(t, Options{})
	sink := &memSink{perm: map[uint64]bool{1: true}}
	s, stop := runShipper(t, l, sink)
	defer stop()
	if err := l.Append(context.Background(), decision(1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "rejection counted", func() bool { return s.Status().Rejected == 1 })
	if err := l.Append(context.Background(), decision(2)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "record 2 shipped", func() bool { return s.Status().Cursor == 2 })
	if ex := l.Exporters(); len(ex) != 1 || ex[0].Rejected != 1 || ex[0].Cursor != 2 {
		t.Fatalf("status %+v", ex)
	}
}

// A shipper that opened the current file by name just as the writer rotated it away (so
// it holds a new, empty current file while the records after its cursor sit in the file
// just sealed) ships those records without waiting for the next decision to show the gap.
// Seen under load: a shipper idle at cursor 56 of 60, records 57–60 in the sealed file.
func TestShipperFindsRecordsSealedAsItOpened(t *testing.T) {
	l := openLog(t, Options{MaxBytes: 4 << 10})
	for i := 1; l.Status().Rotations < 2; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(l.Path()); err != nil || fi.Size() != 0 {
		t.Fatalf("want an empty current file after the rotation: %v %v", fi, err)
	}
	files, err := Files(l.Path())
	if err != nil || len(files) < 3 {
		t.Fatalf("files %v, %v", files, err)
	}
	sealed := files[len(files)-2]
	first, ok := firstSeq(sealed)
	if !ok {
		t.Fatalf("%s has no first record", sealed)
	}
	sink := &memSink{}
	s, err := NewShipper(ShipperOptions{Name: "test", Path: l.Path(), Sink: sink, MaxBatch: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if s.f != nil {
			s.f.Close()
		}
	}()
	// The race, set up: everything before the last sealed file is shipped, and the file
	// opened next is the current one, by name, after the rotation.
	s.at = first - 1
	if err := s.open(l.Path()); err != nil {
		t.Fatal(err)
	}
	batch, err := s.read(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, e := range batch {
		got = append(got, e.Record.Seq)
	}
	last := l.Status().Seq
	if len(got) == 0 || got[0] != first || got[len(got)-1] != last || uint64(len(got)) != last-first+1 {
		t.Fatalf("shipped %v, want %d..%d", got, first, last)
	}
	// Caught up on the empty current file, it stays there (no back and forth).
	if batch, err := s.read(nil); err != nil || len(batch) != 0 {
		t.Fatalf("after catching up: %d records, %v", len(batch), err)
	}
	if fi, err := os.Stat(l.Path()); err != nil || !os.SameFile(fi, s.fi) {
		t.Fatalf("the shipper left the current file: %v", err)
	}
}
