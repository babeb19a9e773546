package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// CopyFiles copies the regular files directly in src into dst (created 0700), each 0600:
// a snapshot of a directory of state files — a decision log as a SIGKILL leaves it, say —
// that the process which wrote them can no longer touch.
func CopyFiles(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteAtomic writes path as editors save: the content to path+".tmp" (0644), then a
// rename over path, creating the directories on the way. A watcher sees one complete
// new file, never a half-written one.
func WriteAtomic(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
