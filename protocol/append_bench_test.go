package protocol

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// appendStringUngrown is AppendString's loop before it reserved room for large strings,
// cut down to what the benchmark's ASCII input exercises (quotes and backslashes), to
// measure the two side by side.
func appendStringUngrown(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', c)
			i++
			start = i
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// BenchmarkAppendStringLarge encodes the event_text of a 6 MiB Write whose content
// is quote-heavy, as hookc does for every event (go test -run '^$' -bench
// AppendStringLarge ./protocol/).
func BenchmarkAppendStringLarge(b *testing.B) {
	payload := `{"hook_event_name":"PreToolUse","tool_input":{"content":"` +
		strings.Repeat(`x\"y\\z 0123456789abcdef\n`, 6<<20/26) + `"}}`
	for _, c := range []struct {
		name string
		f    func([]byte, string) []byte
	}{{"ungrown", appendStringUngrown}, {"grown", AppendString}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			for range b.N {
				_ = c.f(nil, payload)
			}
		})
	}
}
