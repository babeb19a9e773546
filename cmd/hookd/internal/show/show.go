// Package show renders what hookd's commands print for people: the status and reload
// tables, the decision log's rows, one decision in full, a verification report and the
// log's statistics. Every time is printed by When (UTC, RFC 3339 with a Z: the zone of the
// decision records themselves; docs/configuration.md, "Conventions"). Machine-readable
// output (--json) is the commands' own: the wire or record JSON as it is.
package show

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// TimeLayout is the one layout of every time hookd prints.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Flush writes the table out.
func (t *Table) Flush() { t.tw.Flush() }

func u(n uint64) string { return strconv.FormatUint(n, 10) }
func i(n int) string    { return strconv.Itoa(n) }

// Table writes one section of `hookd status`: a title, a header row and rows, aligned.
type Table struct {
	tw *tabwriter.Writer
}

func NewTable(w io.Writer, title string, header ...string) *Table {
	fmt.Fprintf(w, "\n%s:\n", title)
	t := &Table{tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)}
	t.Row(header...)
	return t
}

func (t *Table) Row(cells ...string) {
	fmt.Fprintln(t.tw, "  "+strings.Join(cells, "\t"))
}

// clock is When(t), or "-" for a time that never was.
func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return When(t)
}

// When is how every command prints a time: UTC, RFC 3339 with milliseconds and a "Z",
// the zone of the decision log's own records (docs/configuration.md, "Conventions"), whatever the machine's zone.
func When(t time.Time) string { return t.UTC().Format(TimeLayout) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CountList is "allow 10, deny 2", largest first.
func CountList(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range m {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].v != kvs[j].v {
			return kvs[i].v > kvs[j].v
		}
		return kvs[i].k < kvs[j].k
	})
	var parts []string
	for _, x := range kvs {
		parts = append(parts, fmt.Sprintf("%s %d", Dash(x.k), x.v))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
