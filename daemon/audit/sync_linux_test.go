package audit

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSyncPaired is what a commit group's syncs cost on this file system, fsync(2)
// against fdatasync(2), paired: each iteration writes to two files and syncs one with
// each call, the order alternating, and the medians are reported side by side (the
// ratio is what to read on a machine whose speed swings). "append" is the records'
// write (≈1 KiB appended; syncRecords uses fsync), "rewrite" the head's (its first
// 256 bytes rewritten in place; syncHead uses fdatasync).
//
//	go test -run '^$' -bench SyncPaired -benchtime 2000x ./daemon/audit/
func BenchmarkSyncPaired(b *testing.B) {
	b.Run("append", func(b *testing.B) { benchSyncPaired(b, false) })
	b.Run("rewrite", func(b *testing.B) { benchSyncPaired(b, true) })
}

func benchSyncPaired(b *testing.B, rewrite bool) {
	dir := b.TempDir()
	open := func(name string) *os.File {
		flag := os.O_CREATE | os.O_WRONLY | os.O_APPEND
		if rewrite {
			flag = os.O_CREATE | os.O_WRONLY
		}
		f, err := os.OpenFile(filepath.Join(dir, name), flag, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	fa, fb := open("fsync.jsonl"), open("fdatasync.jsonl")
	n := 1024
	if rewrite {
		n = 256
	}
	rec := make([]byte, n)
	for i := range rec {
		rec[i] = 'x'
	}
	rec[len(rec)-1] = '\n'
	sync := []func(*os.File) error{
		func(f *os.File) error { return f.Sync() },
		func(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) },
	}
	files := []*os.File{fa, fb}
	var took [2][]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2; k++ {
			j := (i + k) % 2
			start := time.Now()
			var err error
			if rewrite {
				_, err = files[j].WriteAt(rec, 0)
			} else {
				_, err = files[j].Write(rec)
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := sync[j](files[j]); err != nil {
				b.Fatal(err)
			}
			took[j] = append(took[j], time.Since(start))
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(med(took[0]), "µs-fsync-p50")
	b.ReportMetric(med(took[1]), "µs-fdatasync-p50")
	b.ReportMetric(med(took[1])/max(med(took[0]), 1), "fdatasync/fsync")
}
