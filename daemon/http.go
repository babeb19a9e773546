package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
)

var httpClient = &http.Client{}

// runHTTP runs an http handler (spec §4.2): POST the event JSON; 2xx maps to exit 0 with
// the body as stdout, anything else to a non-blocking error. Header values interpolate
// $VAR / ${VAR} from the caller's environment, only for names the handler lists in
// allowedEnvVars (others become empty), as Claude Code does.
func runHTTP(ctx context.Context, h *settings.Handler, hc hookContext, capBytes int) events.RawOutput {
	start := time.Now()
	out := events.RawOutput{Kind: events.HTTP, Command: h.URL}
	if capBytes <= 0 {
		capBytes = runner.DefaultOutputCap
	}
	timeout := h.EffectiveTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, h.URL, bytes.NewReader(hc.payload))
	if err != nil {
		out.StartErr, out.ExitCode = err, -1
		return out
	}
	req.Header.Set("Content-Type", "application/json")
	allowed := map[string]bool{}
	for _, k := range h.AllowedEnvVars {
		allowed[k] = true
	}
	for k, v := range h.Headers {
		req.Header.Set(k, os.Expand(v, func(name string) string {
			if !allowed[name] {
				return ""
			}
			return runner.LookupEnv(hc.env, name)
		}))
	}
	resp, err := httpClient.Do(req)
	out.Duration = time.Since(start)
	if err != nil {
		switch {
		case cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
			out.TimedOut = true
		case ctx.Err() != nil:
			out.Cancelled = true
		default:
			out.StartErr = err
		}
		out.ExitCode = -1
		return out
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(capBytes)+1))
	if len(body) > capBytes {
		body, out.StdoutTruncated = body[:capBytes], true
	}
	out.HTTPStatus = resp.StatusCode
	if resp.StatusCode/100 == 2 {
		out.Stdout = body
	} else {
		out.ExitCode = 1
		out.Stderr = []byte(fmt.Sprintf("HTTP %d from %s: %s", resp.StatusCode, h.URL, strings.TrimSpace(string(body))))
	}
	out.Duration = time.Since(start)
	return out
}
