package httpfwd

import (
	"context"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The forwarder serves its owner first (issue 28, item 6; docs/http-forwarder.md,
// "Who may connect"). A loopback port is open to every local user, the token is the only
// secret, and connection slots are finite, so each accepted connection is classified
// before it may hold one:
//
//   - Where the OS names the peer's uid (Linux: sock_diag), a connection from another
//     user — not the daemon's uid, not root — is closed at once: it never holds a slot,
//     whatever it sends.
//   - A connection from the owner (or root) is trusted: it takes a slot of the owner's
//     pool (MaxConns) and has the usual read timeouts.
//   - A connection whose uid is unknown (another OS, or the peer left before the lookup)
//     is pending until a request on it carries the token. A pending connection must send
//     a complete request head within HeadTimeout of its accept, whatever net/http's own
//     deadlines say; a request without the token is answered and the connection closed.
//     Pending connections have a pool of their own (MaxPending): when it is full, the one
//     pending longest is closed to make room, so a flood of unauthenticated connections
//     can delay an owner's connection by at most MaxPending newer arrivals, never refuse
//     it. Once authenticated, the connection moves to the owner's pool.
type gate struct {
	net.Listener
	log        *zap.Logger
	owner      func(uid int) bool
	lookup     func(local, remote net.Addr) (int, bool)
	headTO     time.Duration
	maxTrusted int
	maxPending int

	mu      sync.Mutex
	trusted int
	pending []*gateConn // oldest first

	foreign, evicted, full          atomic.Uint64
	logForeign, logEvicted, logFull rateLog
}

// GateStats count what the gate refused since the forwarder started.
type GateStats struct {
	Foreign uint64 // connections from another uid, closed at accept
	Evicted uint64 // pending (unauthenticated) connections closed to make room
	Full    uint64 // connections refused because the owner's pool was full
}

func newGate(ln net.Listener, log *zap.Logger, maxTrusted, maxPending int, headTO time.Duration) *gate {
	me := os.Getuid()
	return &gate{Listener: ln, log: log, owner: func(uid int) bool { return uid == me || uid == 0 }, lookup: peerUID,
		headTO: headTO, maxTrusted: maxTrusted, maxPending: maxPending}
}

func (g *gate) stats() GateStats {
	return GateStats{Foreign: g.foreign.Load(), Evicted: g.evicted.Load(), Full: g.full.Load()}
}

// Accept returns the next connection allowed to hold a slot.
func (g *gate) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, known := g.lookup(c.LocalAddr(), c.RemoteAddr())
		if known && !g.owner(uid) {
			g.foreign.Add(1)
			g.logForeign.warn(g.log, "http forwarder: connection from another user refused", zap.Int("uid", uid), zap.String("remote", c.RemoteAddr().String()))
			c.Close()
			continue
		}
		gc := &gateConn{Conn: c, g: g, accepted: time.Now()}
		if known {
			if !g.admitTrusted(gc) {
				g.full.Add(1)
				g.logFull.warn(g.log, "http forwarder: connection refused: the owner's connections are at their limit", zap.Int("limit", g.maxTrusted))
				c.Close()
				continue
			}
			return gc, nil
		}
		gc.pending.Store(true)
		g.admitPending(gc)
		return gc, nil
	}
}

func (g *gate) admitTrusted(gc *gateConn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.trusted >= g.maxTrusted {
		return false
	}
	g.trusted++
	gc.slot = slotTrusted
	return true
}

func (g *gate) admitPending(gc *gateConn) {
	g.mu.Lock()
	var evict *gateConn
	if len(g.pending) >= g.maxPending {
		evict, g.pending = g.pending[0], g.pending[1:]
		evict.slot = slotNone
	}
	g.pending = append(g.pending, gc)
	gc.slot = slotPending
	g.mu.Unlock()
	if evict != nil {
		g.evicted.Add(1)
		g.logEvicted.warn(g.log, "http forwarder: unauthenticated connections at their limit; closed the oldest", zap.Int("limit", g.maxPending))
		evict.Conn.Close()
	}
}

// authenticate moves a connection whose request carried the token to the owner's pool;
// false when that pool is full.
func (g *gate) authenticate(gc *gateConn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc.slot != slotPending {
		return gc.slot == slotTrusted
	}
	if g.trusted >= g.maxTrusted {
		return false
	}
	g.removePendingLocked(gc)
	g.trusted++
	gc.slot = slotTrusted
	gc.pending.Store(false)
	return true
}

func (g *gate) removePendingLocked(gc *gateConn) {
	for i, p := range g.pending {
		if p == gc {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return
		}
	}
}

func (g *gate) release(gc *gateConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch gc.slot {
	case slotTrusted:
		g.trusted--
	case slotPending:
		g.removePendingLocked(gc)
	}
	gc.slot = slotNone
}

const (
	slotNone = iota
	slotPending
	slotTrusted
)

// gateConn is an accepted connection and the slot it holds. slot is guarded by the gate's
// mutex.
type gateConn struct {
	net.Conn
	g        *gate
	accepted time.Time
	slot     int
	pending  atomic.Bool // not yet authenticated, uid unknown
	once     sync.Once
}

// SetReadDeadline keeps a pending connection's head deadline: net/http sets its own read
// deadlines per request, and none of them may be later than HeadTimeout after the accept
// until a request on the connection has carried the token.
func (c *gateConn) SetReadDeadline(t time.Time) error {
	if c.pending.Load() {
		if limit := c.accepted.Add(c.g.headTO); t.IsZero() || t.After(limit) {
			t = limit
		}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *gateConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *gateConn) Close() error {
	c.once.Do(func() { c.g.release(c) })
	return c.Conn.Close()
}

type connKey struct{}

// connContext is http.Server.ConnContext: requests find their connection's gate state.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*gateConn); ok {
		return context.WithValue(ctx, connKey{}, gc)
	}
	return ctx
}

func connOf(ctx context.Context) *gateConn {
	gc, _ := ctx.Value(connKey{}).(*gateConn)
	return gc
}

// rateLog logs one warning per second at most, then says how many it held back: a
// neighbour's flood must not become a flood of hookd's log.
type rateLog struct {
	mu       sync.Mutex
	last     time.Time
	held     int
	interval time.Duration
}

func (r *rateLog) warn(log *zap.Logger, msg string, fields ...zap.Field) {
	r.mu.Lock()
	now := time.Now()
	iv := r.interval
	if iv == 0 {
		iv = time.Second
	}
	if !r.last.IsZero() && now.Sub(r.last) < iv {
		r.held++
		r.mu.Unlock()
		return
	}
	held := r.held
	r.last, r.held = now, 0
	r.mu.Unlock()
	if held > 0 {
		fields = append(fields, zap.Int("similar_not_logged", held))
	}
	log.Warn(msg, fields...)
}
