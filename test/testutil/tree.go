package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TreeSnapshot is every entry under dir, by its path relative to dir: a directory's mode,
// a file's mode and bytes, a symbolic link's target. Two snapshots are equal when the tree
// is byte for byte the same ("~/.claude is left as it was").
func TreeSnapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "link " + target
		case d.IsDir():
			m[rel] = "dir " + fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
