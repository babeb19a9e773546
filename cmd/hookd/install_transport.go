package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/service"
	"github.com/hookd/hookd/configs/settings"
)

// TransportAuto is --transport auto, install claude-code's default: http where nothing is
// lost by it (autoTransport), else hookc.
const TransportAuto = "auto"

// autoTransport is --transport auto for one scope: http when hookd runs as the
// socket-activated service and the service's socket already holds the http forwarder's
// port — a stopped or crashed hookd is started again by the next event, which waits in
// the socket's backlog meanwhile, so the http forwarder loses nothing against hookc's
// fallback — and only for the scopes http may be installed in (user, local). Otherwise
// hookc, the default without a service manager. why says what decided.
func autoTransport(c *cli.Context, scope settings.Kind) (transport, why string) {
	if scope != settings.KindUser && scope != settings.KindLocal {
		return install.TransportHookc, ""
	}
	ep, err := install.LoadHTTPEndpoint(c.String("state-dir"))
	if err != nil || ep == nil {
		return install.TransportHookc, ""
	}
	m, d, err := serviceManager(c)
	if err != nil {
		return install.TransportHookc, ""
	}
	return serviceTransport(ep, d, m.Status())
}

// serviceTransport is autoTransport's decision from the endpoint, the service as hookd
// would install it now (d) and its status.
func serviceTransport(ep *install.HTTPEndpoint, d service.Description, st service.Status) (transport, why string) {
	switch {
	case d.HTTP != ep.Listen:
		return install.TransportHookc, ""
	case !st.Available || !st.Current():
		return install.TransportHookc, ""
	case st.Enabled != "enabled" && st.Enabled != "loaded":
		return install.TransportHookc, ""
	}
	return install.TransportHTTP, fmt.Sprintf("transport http: hookd runs as the %s service whose socket holds %s (a stopped hookd is started again by the next event; docs/http-forwarder.md)", st.Manager, ep.Listen)
}
