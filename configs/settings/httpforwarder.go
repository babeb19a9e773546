package settings

import (
	"net"
	"net/url"
)

// HTTPForwarderPath is the URL path of hookd's HTTP forwarder endpoint (docs/http-forwarder.md):
// `hookd install claude-code --transport http` writes http handlers that POST Claude Code's
// events to http://127.0.0.1:<port>/hookd/v1/claude-code.
const HTTPForwarderPath = "/hookd/v1/claude-code"

// IsHTTPForwarder reports whether an http handler's URL is hookd's own HTTP forwarder: a
// plain-http URL on a loopback IP whose path is HTTPForwarderPath. Like a hookc command
// (IsForwarder), hookd never runs such a handler — it would post the event to itself —
// and the installer treats it as its own forwarder.
func IsHTTPForwarder(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Path != HTTPForwarderPath {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
