package atomicfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// entries lists a directory's names, so tests can tell that no temporary file is left.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteReplacesWithExactPerm(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprint("sync=", sync), func(t *testing.T) {
			// A umask that would strip bits from an os.Create'd file: perm is applied as given.
			old := syscall.Umask(0o077)
			defer syscall.Umask(old)
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := Write(path, []byte("new"), 0o644, sync); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Fatalf("content = %q, %v", got, err)
			}
			fi, _ := os.Stat(path)
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only settings.json", names)
			}
		})
	}
}

// A symlink at path is replaced, never written through: the file it points at (which may
// be anywhere, owned by anyone) keeps its bytes.
func TestWriteReplacesSymlinkNotTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "head.json")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "precious" {
		t.Errorf("symlink target rewritten: %q", got)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		t.Errorf("path is %v (%v), want a regular file", fi.Mode(), err)
	}
}

// The temporary file is created exclusively under a random name: a symlink planted at the
// name the old audit helper used (path + ".tmp") is neither followed nor truncated.
func TestWriteIgnoresPlantedTempLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "decisions.head")
	if err := os.Symlink(victim, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("head"), 0o600, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("planted link followed: victim now %q", got)
	}
	if got, _ := os.ReadFile(path); string(got) != "head" {
		t.Errorf("content = %q", got)
	}
}

// A failed write leaves path as it was and no temporary file behind.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// Rename over a non-empty directory fails after the temporary file was written.
	path := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("data"), 0o644, true); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "busy" {
		t.Errorf("directory holds %v after a failed write, want only busy", names)
	}
	// A missing directory is an error, not created.
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644, false); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

// Concurrent writers each leave a whole file: a reader never sees a mix or a short file.
func TestWriteConcurrentWritersWholeFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cursor")
	contents := [][]byte{bytes.Repeat([]byte("a"), 64<<10), bytes.Repeat([]byte("b"), 64<<10)}
	if err := Write(path, contents[0], 0o600, false); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := make(chan string, 1)
	wg.Add(1)
	go func() { // reader
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil || (!bytes.Equal(got, contents[0]) && !bytes.Equal(got, contents[1])) {
				select {
				case bad <- fmt.Sprintf("read %d bytes (%v)", len(got), err):
				default:
				}
				return
			}
		}
	}()
	var writers sync.WaitGroup
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			for i := 0; i < 50; i++ {
				if err := Write(path, contents[(w+i)%2], 0o600, false); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	select {
	case msg := <-bad:
		t.Fatalf("a reader saw a partial file: %s", msg)
	default:
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only cursor", names)
	}
}
