// Package syslog ships hookd's decision records as RFC 5424 syslog messages over the
// local socket (unixgram, unix), UDP or TCP.
//
// It is an audit.Sink: the audit.Shipper reads the log, batches, retries and keeps the
// cursor. Each record becomes one message:
//
//	<PRI>1 TIMESTAMP HOSTNAME hookd PROCID decision [hookd@32473 seq="…" decision_id="…" event="…" tool="…" decision="…" …] BOM{json line}
//
// MSGID is the record kind (decision, repair, checkpoint). The structured-data element
// "hookd@32473" carries the fields a SIEM filters on (32473 is the private enterprise
// number RFC 5612 reserves for documentation; an organisation with its own number can
// rewrite it in its pipeline). MSG is the exact audit line, so its SHA-256 is the next
// record's prev_hash and the chain can be checked from the syslog copy. A message longer
// than MaxMessage keeps its header and structured data; the JSON is cut and the SD
// element says truncated="true".
//
// Delivery: unixgram and UDP give no acknowledgement, so a datagram the receiver drops
// is lost without notice (a send error — no listener on the socket — is retried).
// TCP uses octet-counting framing (RFC 6587 §3.4.1) and reconnects after an error,
// resending the whole batch: at-least-once, with seq and decision_id to de-duplicate.
package syslog

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookd/hookd/daemon/audit"
)

// Facilities by name (RFC 5424 §6.2.1).
var Facilities = map[string]int{
	"kern": 0, "user": 1, "mail": 2, "daemon": 3, "auth": 4, "syslog": 5, "lpr": 6, "news": 7,
	"uucp": 8, "cron": 9, "authpriv": 10, "ftp": 11, "ntp": 12, "security": 13, "console": 14,
	"local0": 16, "local1": 17, "local2": 18, "local3": 19, "local4": 20, "local5": 21, "local6": 22, "local7": 23,
}

// SDID is the structured-data element's ID.
const SDID = "hookd@32473"

// Config configures a Writer.
type Config struct {
	Network  string // unixgram (default), unix, udp, tcp
	Address  string // default /dev/log for the local networks
	Facility string // default auth
	AppName  string // default hookd
	Hostname string // default os.Hostname()
	// MaxMessage caps one message in bytes (default 8192).
	MaxMessage int
	// Timeout bounds one connect and one batch write (default 10 s).
	Timeout time.Duration
}

// Writer is the syslog audit.Sink.
type Writer struct {
	c        Config
	facility int
	conn     net.Conn
	buf      bytes.Buffer
}

// New validates c and returns a Writer; it connects on first use.
func New(c Config) (*Writer, error) {
	if c.Network == "" {
		c.Network = "unixgram"
	}
	switch c.Network {
	case "unixgram", "unix":
		if c.Address == "" {
			c.Address = "/dev/log"
		}
	case "udp", "tcp":
		if _, _, err := net.SplitHostPort(c.Address); err != nil {
			return nil, fmt.Errorf("syslog address %q: must be host:port for %s", c.Address, c.Network)
		}
	default:
		return nil, fmt.Errorf("syslog network %q: must be unixgram, unix, udp or tcp", c.Network)
	}
	if c.Facility == "" {
		c.Facility = "auth"
	}
	fac, ok := Facilities[c.Facility]
	if !ok {
		return nil, fmt.Errorf("syslog facility %q is not one of RFC 5424's names", c.Facility)
	}
	if c.AppName == "" {
		c.AppName = "hookd"
	}
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = 8192
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	return &Writer{c: c, facility: fac}, nil
}

// Close closes the connection.
func (w *Writer) Close() error {
	if w.conn == nil {
		return nil
	}
	err := w.conn.Close()
	w.conn = nil
	return err
}

// Export writes one message per entry. On a write error the connection is dropped and
// the error returned: the shipper retries the whole batch on a fresh connection.
func (w *Writer) Export(ctx context.Context, batch []audit.Entry) error {
	if w.conn == nil {
		d := net.Dialer{Timeout: w.c.Timeout}
		conn, err := d.DialContext(ctx, w.c.Network, w.c.Address)
		if err != nil {
			return err
		}
		w.conn = conn
	}
	deadline := time.Now().Add(w.c.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = w.conn.SetWriteDeadline(deadline)
	stream := w.c.Network == "tcp" || w.c.Network == "unix"
	for _, e := range batch {
		msg := Format(e, w.facility, w.c.Hostname, w.c.AppName, os.Getpid(), w.c.MaxMessage)
		var err error
		if stream {
			// Octet counting: "LEN SP MSG" (RFC 6587 §3.4.1), so a newline inside a
			// message cannot split it.
			w.buf.Reset()
			w.buf.WriteString(strconv.Itoa(len(msg)))
			w.buf.WriteByte(' ')
			w.buf.Write(msg)
			_, err = w.conn.Write(w.buf.Bytes())
		} else {
			_, err = w.conn.Write(msg)
		}
		if err != nil {
			w.Close()
			return err
		}
	}
	return nil
}

// severity maps a record to a syslog severity: notice for ordinary answers, warning
// for deny/block/stop, error for repairs.
func severity(r *audit.Record) int {
	switch r.Kind {
	case audit.KindRepair:
		return 3
	case audit.KindDecision:
		switch r.Decision {
		case audit.DecisionDeny, audit.DecisionBlock, audit.DecisionStop:
			return 4
		}
	}
	return 5
}

// Format renders one record as an RFC 5424 message of at most max bytes.
func Format(e audit.Entry, facility int, hostname, app string, pid, max int) []byte {
	r := e.Record
	var b bytes.Buffer
	b.WriteString("<" + strconv.Itoa(facility*8+severity(r)) + ">1 ")
	ts := r.Time.UTC()
	if ts.IsZero() {
		ts = time.Now().UTC()
	}
	// RFC 5424 allows at most microsecond precision.
	b.WriteString(ts.Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z07:00"))
	b.WriteByte(' ')
	b.WriteString(header(hostname, 255))
	b.WriteByte(' ')
	b.WriteString(header(app, 48))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(pid))
	b.WriteByte(' ')
	b.WriteString(header(r.Kind, 32))
	b.WriteByte(' ')
	sd := func(truncated bool) []byte {
		var s bytes.Buffer
		s.WriteString("[" + SDID)
		param := func(k, v string) {
			if v == "" {
				return
			}
			s.WriteString(" " + k + `="`)
			s.WriteString(escapeParam(v))
			s.WriteByte('"')
		}
		param("seq", strconv.FormatUint(r.Seq, 10))
		param("decision_id", r.DecisionID)
		param("event", r.Event)
		param("tool", r.ToolName)
		param("decision", r.Decision)
		param("source", r.DecisionSource)
		param("session", r.SessionID)
		if c := r.Caller; c != nil {
			param("uid", strconv.Itoa(c.UID))
			param("harness", c.Client)
		}
		param("revision", r.Revision)
		if o := r.Override; o != nil {
			param("override_rule", o.Rule)
			param("override_command", capUTF8(o.Command, 256))
			param("override_unresolved", capUTF8(o.Unresolved, 256))
		}
		if len(r.Reason) > 0 {
			param("reason", capUTF8(r.Reason, 256))
		}
		param("prev_hash", r.PrevHash)
		if truncated {
			param("truncated", "true")
		}
		s.WriteByte(']')
		return s.Bytes()
	}
	head := b.Len()
	b.Write(sd(false))
	b.WriteString(" \xef\xbb\xbf") // BOM: MSG is UTF-8 (RFC 5424 §6.4)
	if b.Len()+len(e.Line) <= max {
		b.Write(e.Line)
		return b.Bytes()
	}
	b.Truncate(head)
	b.Write(sd(true))
	b.WriteString(" \xef\xbb\xbf")
	room := max - b.Len()
	if room > 0 {
		b.WriteString(capUTF8(string(e.Line), room))
	}
	return b.Bytes()
}

// header makes a PRINTUSASCII header field of at most n characters ("-" when empty).
func header(s string, n int) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c > 32 && c < 127 {
			b.WriteByte(c)
		}
		if b.Len() == n {
			break
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// escapeParam escapes a PARAM-VALUE: '"', '\' and ']' get a backslash (RFC 5424 §6.3.3).
func escapeParam(s string) string {
	if !strings.ContainsAny(s, "\"\\]") && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `]`, `\]`)
	return r.Replace(s)
}

// capUTF8 cuts s to at most n bytes without splitting a character.
func capUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
