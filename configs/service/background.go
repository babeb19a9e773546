package service

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/hookd/hookd/protocol/lite"
)

// Where no service manager runs for the user (a container, an SSH session without
// pam_systemd), `hookd setup` runs the daemon itself: Background starts it in a session of
// its own, detached from the terminal. Nothing restarts it; setup says so.

// Reachable reports whether a daemon answers on sock, a socket clients would trust.
func Reachable(sock string) bool {
	if lite.CheckSocket(sock) != nil {
		return false
	}
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// WaitReachable polls Reachable for up to d.
func WaitReachable(sock string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !Reachable(sock) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// Background starts exe with args (a `hookd … serve`) in a session of its own, its output
// appended to logPath, and waits until it answers on sock: its pid, or why it did not
// come up (with the log's tail when it exited).
func Background(exe string, args []string, logPath, sock string) (int, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for !Reachable(sock) {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("hookd serve exited (%v):\n%s", err, tail(logPath, 2000))
		case <-deadline:
			return pid, fmt.Errorf("hookd serve (pid %d) did not answer on %s within 30 s; see %s", pid, sock, logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return pid, nil
}

// tail is the last n bytes of path.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(-n, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
