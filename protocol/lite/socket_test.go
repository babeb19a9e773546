//go:build unix

package lite

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const listenEnv = "HOOKD_LITE_TEST_LISTEN"

// TestMain is also the listener of TestCheckPeerRefusesAnotherUID: with listenEnv set,
// the test binary listens there, says it is ready, and waits for one connection.
func TestMain(m *testing.M) {
	if sock := os.Getenv(listenEnv); sock != "" {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock})
		}
		if err == nil {
			err = syscall.Listen(fd, 1)
		}
		if err == nil {
			err = os.WriteFile(sock+".ready", nil, 0o644)
		}
		if err != nil {
			os.Stderr.WriteString("listener: " + err.Error() + "\n")
			os.Exit(1)
		}
		c, _, _ := syscall.Accept(fd)
		var b [1]byte
		syscall.Read(c, b[:])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The per-OS parts of the socket layer (docs/platforms.md): on Linux this runs the
// SOCK_CLOEXEC and SO_PEERCRED files, on macOS (hosted CI) the ForkLock and
// LOCAL_PEERCRED ones.

func TestUnixSocketIsCloseOnExec(t *testing.T) {
	fd, err := UnixSocket()
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("socket fd %d has no FD_CLOEXEC (flags %#x): a hook would inherit it", fd, flags)
	}
	// And a child really does not get it: ls its open descriptors.
	if _, err := os.Stat("/dev/fd"); err == nil {
		out, err := exec.Command("/bin/sh", "-c", "ls /dev/fd/").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(string(out)) {
			if f == strconv.Itoa(fd) {
				t.Fatalf("a child inherited socket fd %d (its /dev/fd: %s)", fd, out)
			}
		}
	}
}

func TestPeerUIDOfSocketpair(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	uid, ok, err := peerUID(fds[0])
	if err != nil || !ok {
		t.Fatalf("peerUID: %d %v %v; want this process's uid", uid, ok, err)
	}
	if uid != os.Geteuid() {
		t.Fatalf("peerUID = %d, want %d", uid, os.Geteuid())
	}
}

// A listener of another uid is refused after connecting, before anything is sent. The
// listener is a real process of another uid (needs root, as the black-box socket tests).
func TestCheckPeerRefusesAnotherUID(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to run a listener as another uid (CI runs as root)")
		}
		t.Skip("LOUD SKIP: needs root to run a listener as another uid; CI runs this as root")
	}
	dir, err := os.MkdirTemp("", "hkp") // t.TempDir's parent is 0700: the other uid could not reach it
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	// The listener is this test binary, copied where the other uid can run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "listener")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), listenEnv+"="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 54321, Gid: 54321}}
	cmd.Stderr = os.Stderr
	if err := os.Chmod(dir, 0o777); err != nil { // the other uid binds in it; CheckPeer does not look at paths
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock + ".ready"); err == nil {
			break
		}
		if i > 2000 {
			t.Fatal("the other uid's listener did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fd, err := UnixSocket()
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	err = CheckPeer(sock, fd)
	if err == nil || !strings.Contains(err.Error(), "the listener runs as uid 54321") {
		t.Fatalf("CheckPeer = %v; want a refusal naming uid 54321", err)
	}
}
