package rules

import (
	"net/url"
	"strings"
)

// domainPattern is a compiled WebFetch(domain:…) specifier (spec §8):
// case-insensitive; "*.example.com" matches subdomains at any depth but not
// the apex; a '*' elsewhere matches within one label (never across dots).
type domainPattern struct {
	any    bool        // domain:*
	suffix bool        // leading "*.": one or more extra labels
	labels []*starGlob // remaining labels, left to right
}

func compileDomain(spec string) (domainPattern, string) {
	var d domainPattern
	s := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(spec)), ".")
	if s == "" {
		return d, "empty domain"
	}
	if s == "*" {
		d.any = true
		return d, ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '*') {
			return d, "invalid character " + quoteByte(c) + " in domain (no scheme, port or path: domain:example.com)"
		}
	}
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		d.suffix = true
		s = rest
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" {
			return d, "empty label in domain"
		}
		if strings.Contains(l, "**") {
			return d, "'**' is not allowed in a domain"
		}
		d.labels = append(d.labels, compileStarGlob(l, false, false))
	}
	return d, ""
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return "(non-printable)"
	}
	return "'" + string(c) + "'"
}

// match reports whether host (already lowercased, no trailing dot) matches.
func (d *domainPattern) match(host string) bool {
	if d.any {
		return host != ""
	}
	// Walk labels from the right without allocating.
	n := len(d.labels)
	for i := n - 1; i >= 0; i-- {
		j := strings.LastIndexByte(host, '.')
		label := host[j+1:]
		if !d.labels[i].match(label) {
			return false
		}
		if j < 0 {
			host = ""
			if i > 0 {
				return false
			}
			return !d.suffix
		}
		host = host[:j]
	}
	// All pattern labels consumed; host has more labels left.
	return d.suffix && host != ""
}

// hostOf extracts the lowercased host of a WebFetch URL. ok is false when
// the URL cannot be parsed or has no host: deny/ask rules then fail closed.
func hostOf(raw string) (string, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", false
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if h == "" {
		return "", false
	}
	return h, true
}
