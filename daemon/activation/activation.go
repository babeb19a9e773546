// Package activation finds the listening sockets a service manager created for hookd
// (docs/service.md): systemd's socket activation (LISTEN_PID/LISTEN_FDS, read with
// go-systemd's activation package) and launchd's (launch_activate_socket, macOS). The
// manager holds the sockets while hookd is down — the first event starts hookd, and a
// crashed hookd's restart finds the connections that arrived meanwhile waiting in the
// backlog — and hands them over on each start.
//
// Only what the daemon can serve is accepted: at most one Unix stream socket (hookc's)
// and at most one TCP listener (the http forwarder's). The daemon applies the same trust
// checks to inherited sockets as to those it creates (daemon.Options.Listener).
package activation

import (
	"errors"
	"fmt"
	"net"
	"os"

	sdactivation "github.com/coreos/go-systemd/v22/activation"
)

// Inherited are the listeners a service manager passed.
type Inherited struct {
	Manager string            // "systemd" or "launchd"; "" when none were passed
	Unix    *net.UnixListener // the socket hookc and harnesses connect to
	HTTP    *net.TCPListener  // the http forwarder's port, when the service listens on one
}

// Listeners returns what the service manager passed this process, or a zero Inherited.
// systemd's variables are removed from the environment either way, so hooks never see
// them.
func Listeners() (Inherited, error) {
	files := sdactivation.Files(true)
	if len(files) > 0 {
		return fromFiles("systemd", files)
	}
	files, err := launchdFiles()
	if err != nil {
		return Inherited{}, fmt.Errorf("launchd sockets: %w", err)
	}
	if len(files) > 0 {
		return fromFiles("launchd", files)
	}
	return Inherited{}, nil
}

// fromFiles turns passed descriptors into listeners: one Unix stream socket, at most one
// TCP listener, nothing else.
func fromFiles(manager string, files []*os.File) (Inherited, error) {
	in := Inherited{Manager: manager}
	var errs []error
	for _, f := range files {
		ln, err := net.FileListener(f) // dups the descriptor
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s passed descriptor %q, which is not a listening stream socket: %w", manager, f.Name(), err))
			continue
		}
		switch l := ln.(type) {
		case *net.UnixListener:
			if in.Unix != nil {
				errs = append(errs, fmt.Errorf("%s passed more than one Unix socket (%s and %s); hookd serves one", manager, in.Unix.Addr(), l.Addr()))
				l.Close()
				continue
			}
			in.Unix = l
		case *net.TCPListener:
			if in.HTTP != nil {
				errs = append(errs, fmt.Errorf("%s passed more than one TCP port (%s and %s); hookd serves one http forwarder", manager, in.HTTP.Addr(), l.Addr()))
				l.Close()
				continue
			}
			in.HTTP = l
		default:
			errs = append(errs, fmt.Errorf("%s passed a %T (%s); hookd serves Unix and TCP stream sockets only", manager, ln, ln.Addr()))
			ln.Close()
		}
	}
	if in.Unix == nil && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s passed no Unix socket: the service's socket unit must listen on hookd's socket path", manager))
	}
	if err := errors.Join(errs...); err != nil {
		in.Close()
		return Inherited{}, err
	}
	return in, nil
}

// Close closes the listeners (this process's copies; the manager keeps its own).
func (in Inherited) Close() {
	if in.Unix != nil {
		in.Unix.Close()
	}
	if in.HTTP != nil {
		in.HTTP.Close()
	}
}
