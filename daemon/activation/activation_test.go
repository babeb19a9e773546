package activation

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func files(t *testing.T, lns ...interface{ File() (*os.File, error) }) []*os.File {
	t.Helper()
	var fs []*os.File
	for _, l := range lns {
		f, err := l.File()
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return fs
}

func TestFromFiles(t *testing.T) {
	dir := t.TempDir()
	u1, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "a.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer u1.Close()
	u2, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "b.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer u2.Close()
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()

	in, err := fromFiles("systemd", files(t, tcp, u1))
	if err != nil || in.Unix == nil || in.HTTP == nil || in.Manager != "systemd" ||
		in.Unix.Addr().String() != u1.Addr().String() || in.HTTP.Addr().String() != tcp.Addr().String() {
		t.Fatalf("%+v %v", in, err)
	}
	in.Close()
	for name, c := range map[string]struct {
		fs   []*os.File
		want string
	}{
		"two unix":  {files(t, u1, u2), "more than one Unix socket"},
		"two tcp":   {files(t, u1, tcp, tcp), "more than one TCP port"},
		"udp":       {files(t, u1, udp), "not a listening stream socket"},
		"tcp alone": {files(t, tcp), "no Unix socket"},
	} {
		if _, err := fromFiles("systemd", c.fs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// Without LISTEN_PID naming this process, nothing is inherited and the variables are gone.
func TestListenersNotActivated(t *testing.T) {
	t.Setenv("LISTEN_PID", "1")
	t.Setenv("LISTEN_FDS", "1")
	in, err := Listeners()
	if err != nil || in.Unix != nil || in.Manager != "" {
		t.Fatalf("%+v %v", in, err)
	}
	if os.Getenv("LISTEN_FDS") != "" {
		t.Fatal("LISTEN_FDS left in the environment hooks inherit")
	}
}
