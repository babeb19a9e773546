// Package clients remembers which clients send requests to the daemon, and at which
// version, so that `hookd status` and `hookd doctor` can show a hookc that is not the
// daemon's version — typically a package upgrade that replaced the binaries while the old
// daemon kept running, or a project whose forwarder points at another hookc.
//
// A client names itself in the request's options.client as "name/version"
// ("hookc/0.4.1", "my-harness/1.2"; protocol.Options.Client). The convention needs no new
// wire field: a daemon that predates it accepts the longer name as it is (requests are
// decoded strictly, so a new field would be refused by an old daemon), and a hookc that
// predates it sends "hookc", listed as of unknown version.
package clients

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Hookc is the client name of hookd's own forwarder, the one client whose version is
// expected to be the daemon's.
const Hookc = "hookc"

// MaxEntries bounds the clients remembered (any local process can name itself anything):
// past it, the one seen least recently is forgotten. MaxName bounds a name's bytes.
const (
	MaxEntries = 32
	MaxName    = 80
)

// Tracker counts requests per client name and version. Its zero value is ready; it is
// safe for concurrent use.
type Tracker struct {
	mu sync.Mutex
	m  map[string]*protocol.ClientStatus // by the client string as sent (clipped)
}

// Note records one request from client (options.client as sent) at now. An empty
// client — the raw protocol without a name — is not recorded.
func (t *Tracker) Note(client string, now time.Time) {
	if client == "" {
		return
	}
	if len(client) > MaxName {
		client = strings.ToValidUTF8(client[:MaxName], "")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.m[client]
	if c == nil {
		if t.m == nil {
			t.m = map[string]*protocol.ClientStatus{}
		}
		if len(t.m) >= MaxEntries {
			t.evict()
		}
		name, version := Split(client)
		c = &protocol.ClientStatus{Client: name, Version: version, FirstSeen: now}
		t.m[client] = c
	}
	c.Requests++
	c.LastSeen = now
}

// evict forgets the client seen least recently.
func (t *Tracker) evict() {
	var oldest string
	for k, c := range t.m {
		if oldest == "" || c.LastSeen.Before(t.m[oldest].LastSeen) {
			oldest = k
		}
	}
	delete(t.m, oldest)
}

// List returns the clients seen, most recent first, each hookc marked Skew when its
// version is not daemonVersion (or it did not say its version).
func (t *Tracker) List(daemonVersion string) []protocol.ClientStatus {
	t.mu.Lock()
	out := make([]protocol.ClientStatus, 0, len(t.m))
	for _, c := range t.m {
		out = append(out, *c)
	}
	t.mu.Unlock()
	for i := range out {
		out[i].Skew = out[i].Client == Hookc && out[i].Version != daemonVersion
	}
	// Most recent first; ties (one clock reading) by name and version, for a stable order.
	slices.SortFunc(out, func(a, b protocol.ClientStatus) int {
		if c := b.LastSeen.Compare(a.LastSeen); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Client, b.Client), strings.Compare(a.Version, b.Version))
	})
	return out
}

// Split cuts a client string at its last '/' into name and version: "hookc/0.4.1" →
// ("hookc", "0.4.1"); "hookc" → ("hookc", "").
func Split(client string) (name, version string) {
	if i := strings.LastIndexByte(client, '/'); i > 0 {
		return client[:i], client[i+1:]
	}
	return client, ""
}
