package audit

import "testing"

// FuzzCheckpoints: whatever an auditor is handed as a "checkpoint file" (a SIEM export,
// a pasted note, garbage), splitting and opening it never panics, and nothing opens
// without a valid signature.
func FuzzCheckpoints(f *testing.F) {
	_, vkey, _ := GenerateKey("fuzz")
	f.Add([]byte("hookd/x/log\n3\nAAAA\ntime 2026-01-01T00:00:00Z\n\n— fuzz AAAA\n"))
	f.Add([]byte(`{"checkpoint":"o\n1\nAA==\n\n— fuzz abc\n"}`))
	f.Add([]byte("\n\n— \n— x y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, n := range SplitCheckpoints(data) {
			if cp, err := OpenCheckpoint(n, vkey); err == nil {
				t.Fatalf("opened a checkpoint nobody signed: %+v", cp)
			}
		}
	})
}
