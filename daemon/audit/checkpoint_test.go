package audit

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCheckpoints(t *testing.T) {
	skey, vkey, err := GenerateKey("test-admin")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kf := dir + "/signer.key"
	if err := os.WriteFile(kf, []byte(skey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, err := LoadSigner(kf)
	if err != nil {
		t.Fatal(err)
	}
	path := dir + "/audit/" + DefaultFile
	l, err := Open(Options{Path: path, MaxBytes: 8 << 10, Checkpoint: &CheckpointOptions{Signer: signer, Interval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st := l.Status()
	if st.Rotations == 0 || st.Checkpoints < 2 {
		t.Fatalf("rotations %d checkpoints %d: want a checkpoint before each rotation and one at close", st.Rotations, st.Checkpoints)
	}
	// Every rotated file ends with a checkpoint covering the record before it.
	rs, _ := Rotated(path)
	_, last, _ := lastLineOf(dir + "/audit/" + rs[0].Name)
	if !strings.Contains(string(last), `"kind":"checkpoint"`) {
		t.Fatalf("sealed file ends with %s", last)
	}
	data, err := os.ReadFile(CheckpointPath(path))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := OpenCheckpoint(data, vkey)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyLog(path)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
	if cp.Seq != rep.LastSeq-1 || cp.Signer != "test-admin" || !strings.HasPrefix(cp.Origin, "hookd/") || cp.Time.IsZero() {
		t.Fatalf("checkpoint %+v; log ends at %d", cp, rep.LastSeq)
	}
	if p, err := CheckCheckpoint(path, cp); err != nil || p != nil {
		t.Fatalf("intact log: %v %v", p, err)
	}
	// A note signed by another key is refused; so is a tampered body.
	_, vother, _ := GenerateKey("test-admin")
	if _, err := OpenCheckpoint(data, vother); err == nil {
		t.Fatal("checkpoint opened with a foreign key")
	}
	if _, err := OpenCheckpoint([]byte(strings.Replace(string(data), "\n"+itoa(cp.Seq)+"\n", "\n"+itoa(cp.Seq-5)+"\n", 1)), vkey); err == nil {
		t.Fatal("tampered checkpoint opened")
	}
	// The checkpoint also travels as a record: SplitCheckpoints finds it in JSON lines.
	cur, _ := os.ReadFile(path)
	if notes := SplitCheckpoints(cur); len(notes) == 0 {
		t.Fatal("no checkpoint found in the log's JSON lines")
	}

	// Cut the tail (the last 3 records): the checkpoint catches it.
	lines := readLines(t, path)
	var keep []byte
	for _, ln := range lines[:len(lines)-3] {
		keep = append(keep, ln...)
	}
	if err := os.WriteFile(path, keep, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := CheckCheckpoint(path, cp)
	if err != nil || p == nil || p.Kind != ProblemCheckpointAhead {
		t.Fatalf("tail cut: %+v %v", p, err)
	}
	// Rewrite a covered record (same length, different content): mismatch.
	lines = readLines(t, path)
	var rw []byte
	for i, ln := range lines {
		if i == len(lines)-1 {
			ln = []byte(strings.Replace(string(ln), `"allow"`, `"deny!"`, 1))
		}
		rw = append(rw, ln...)
	}
	os.WriteFile(path, rw, 0o600)
	older := &Checkpoint{Seq: cp.Seq - 3, Hash: "00", Signer: "x"}
	if p, _ := CheckCheckpoint(path, older); p == nil || p.Kind != ProblemCheckpointMismatch {
		t.Fatalf("rewrite: %+v", p)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
