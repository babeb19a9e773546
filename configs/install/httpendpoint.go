package install

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/hookd/hookd/configs/atomicfile"
	"github.com/hookd/hookd/configs/settings"
)

// HTTPEndpointFile is the name, in hookd's state directory, of the file that says where
// hookd's HTTP forwarder listens and holds its secret token (docs/http-forwarder.md). It
// is the one source of both: `hookd install claude-code --transport http` creates it
// (0600) and writes the same address and token into the http handlers it installs;
// `hookd serve` listens where it says whenever it exists.
const HTTPEndpointFile = "http-forwarder.json"

// HTTPEndpoint is the content of HTTPEndpointFile.
type HTTPEndpoint struct {
	// Listen is a loopback address with its port: "127.0.0.1:21000".
	Listen string `json:"listen"`
	// Token is the per-user secret every request must carry ("Authorization: Bearer …"):
	// 32 random bytes, hex.
	Token string `json:"token"`
}

// URL is the URL Claude Code's http handlers post to.
func (e *HTTPEndpoint) URL() string { return "http://" + e.Listen + settings.HTTPForwarderPath }

// DefaultHTTPPort is the port for a user who does not choose one: 21000 + uid mod 10000,
// so that users of one machine do not all want the same port, below Linux's ephemeral
// range (32768–60999) so that no outgoing connection holds it by chance.
func DefaultHTTPPort() int { return 21000 + os.Getuid()%10000 }

// LoadHTTPEndpoint reads stateDir's HTTPEndpointFile; (nil, nil) when it does not exist.
// The file must be a regular file owned by this user that group and others cannot read
// (it holds the token): otherwise it is an error and not used.
func LoadHTTPEndpoint(stateDir string) (*HTTPEndpoint, error) {
	path := filepath.Join(stateDir, HTTPEndpointFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || st == nil || int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s: holds the http forwarder's token but is not a private file of this user (mode %v); chmod 600 it, or remove it and run `hookd install claude-code --transport http` again", path, fi.Mode().Perm())
	}
	var e HTTPEndpoint
	if err := json.NewDecoder(f).Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &e, nil
}

func (e *HTTPEndpoint) check() error {
	host, port, err := net.SplitHostPort(e.Listen)
	if err != nil {
		return fmt.Errorf("listen %q: %w", e.Listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen %q: must be a loopback IP (127.0.0.1)", e.Listen)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("listen %q: bad port", e.Listen)
	}
	if len(e.Token) < 32 {
		return errors.New("token missing or shorter than 32 characters")
	}
	return nil
}

// EnsureHTTPEndpoint returns stateDir's endpoint, creating it (a new random token,
// 127.0.0.1:port; port 0 means DefaultHTTPPort) when there is none. An existing endpoint
// keeps its token; a different port given here replaces its address.
func EnsureHTTPEndpoint(stateDir string, port int) (*HTTPEndpoint, error) {
	cur, err := LoadHTTPEndpoint(stateDir)
	if err != nil {
		return nil, err
	}
	want := cur
	if want == nil {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		if port == 0 {
			port = DefaultHTTPPort()
		}
		want = &HTTPEndpoint{Listen: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Token: hex.EncodeToString(b[:])}
	} else if port != 0 {
		c := *cur
		c.Listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		want = &c
	}
	if err := want.check(); err != nil {
		return nil, err
	}
	if cur != nil && *cur == *want {
		return cur, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	data, _ := json.MarshalIndent(want, "", "  ")
	if err := atomicfile.Write(filepath.Join(stateDir, HTTPEndpointFile), append(data, '\n'), 0o600, true); err != nil {
		return nil, err
	}
	return want, nil
}
