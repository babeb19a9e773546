package osproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LookPath resolves an exec-form executable against the PATH of the hook's environment,
// not the daemon's: the hook must find what it would have found under the harness.
func LookPath(file string, env []string) (string, error) {
	if file == "" {
		return "", errors.New("empty command")
	}
	if strings.Contains(file, "/") {
		if err := executable(file); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		return file, nil
	}
	path := Getenv(env, "PATH")
	if env == nil {
		path = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in $PATH", file)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("is a directory")
	}
	if fi.Mode()&0o111 == 0 {
		return os.ErrPermission
	}
	return nil
}

// Getenv returns the value of key in env (KEY=value entries, the last one wins, as exec
// does), or "" when it is absent.
func Getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
