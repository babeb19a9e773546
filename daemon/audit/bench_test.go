package audit

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkAppend is one goroutine appending (fsync never): the CPU cost of a record.
func BenchmarkAppend(b *testing.B) {
	for _, policy := range []string{FsyncNever, FsyncBatch} {
		b.Run(policy, func(b *testing.B) {
			l, err := Open(Options{Path: filepath.Join(b.TempDir(), DefaultFile), Fsync: policy})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := l.Append(context.Background(), decision(1)); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
