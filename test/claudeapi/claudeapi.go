// Package claudeapi is a loopback stand-in for the Anthropic Messages API,
// good enough to run the real Claude Code binary offline in -p mode
// (spec §12).
//
// A Server is driven by a script: a list of Turns. Every main-loop
// POST /v1/messages request consumes the next Turn and is answered with a
// Server-Sent-Events stream that either calls one tool (stop_reason
// "tool_use") or says a final text (stop_reason "end_turn"). When the script
// runs out the server answers "done." with end_turn, so a run that needs more
// model calls than scripted still terminates.
//
// Every request body is recorded, so a test can read exactly what the model
// was told: tool_result contents, is_error, and the text blocks in which
// Claude Code carries hook context (system reminders).
//
// Claude Code also makes side requests (a small-model call for titles or
// summaries, probes, token counts). A /v1/messages request without tools, or
// for a model whose name contains "haiku", is a side request: it is answered
// with plain text, recorded separately, and does not consume the script.
// Every other path is answered with an empty JSON object and logged.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package claudeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one scripted model response. If ToolName is set the model calls
// that tool with ToolInput (and, if Text is also set, says Text first);
// otherwise it answers Text and ends the turn.
type Turn struct {
	ToolName  string
	ToolInput map[string]any
	Text      string
	// Also are more tool calls in the same message (a batch), after the first.
	Also []Turn
	// Delay is the model's thinking time: the server waits this long before answering.
	// A real model takes seconds per turn; benchmarks use it to be realistic about the
	// idle time between tool calls.
	Delay time.Duration
	// Before, when set, runs before the server answers this turn, after the request for it
	// arrived — after every hook of the previous tool call has finished: a test's hook
	// into the middle of a session (stopping a daemon between two tool calls).
	Before func()
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string // URL path, without the query
	Query  string
	Body   json.RawMessage
	Side   bool // a /v1/messages side request (did not consume the script)
}

// Server is a running stand-in. URL is what ANTHROPIC_BASE_URL should be.
type Server struct {
	URL string

	// Logf, if set before the first request, receives one line per request
	// whose path is not a known Messages API path.
	Logf func(format string, args ...any)

	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu      sync.Mutex
	closed  bool // set by Close; Logf is not called after it
	script  []Turn
	next    int
	seq     int
	main    []json.RawMessage
	all     []Request
	unknown []string
}

// Start starts a server on 127.0.0.1:0 and closes it when tb's test ends.
func Start(tb testing.TB, script []Turn) *Server {
	tb.Helper()
	s, err := New(script)
	if err != nil {
		tb.Fatalf("claudeapi: %v", err)
	}
	s.Logf = tb.Logf
	tb.Cleanup(s.Close)
	return s
}

// New starts a server on 127.0.0.1:0. The caller must Close it.
func New(script []Turn) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		ln:     ln,
		done:   make(chan struct{}),
		script: append([]Turn(nil), script...),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_ = s.srv.Close()
	<-s.done
}

// Requests returns the bodies of the main-loop /v1/messages requests, in
// the order received.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.main...)
}

// AllRequests returns every request received (any path), in order.
func (s *Server) AllRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.all...)
}

// Unknown returns "METHOD /path" for each request to a path the server does
// not model.
func (s *Server) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

// Consumed reports how many script turns have been used.
func (s *Server) Consumed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// messagesRequest is the part of a Messages API request the server looks at.
type messagesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Tools  []json.RawMessage `json:"tools"`
}

// IsSideRequest reports whether a /v1/messages body is a side request
// (title, summary, quota probe) rather than a main-loop call.
func IsSideRequest(body []byte) bool {
	var m messagesRequest
	if err := json.Unmarshal(body, &m); err != nil {
		return true
	}
	return len(m.Tools) == 0 || strings.Contains(strings.ToLower(m.Model), "haiku")
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	if json.Valid(body) {
		req.Body = json.RawMessage(body)
	}

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, req, body)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.record(req, false)
		writeJSON(w, map[string]any{"input_tokens": 100})
	default:
		s.mu.Lock()
		s.all = append(s.all, req)
		s.unknown = append(s.unknown, r.Method+" "+r.URL.Path)
		logf := s.Logf
		if s.closed {
			logf = nil
		}
		s.mu.Unlock()
		if logf != nil {
			logf("claudeapi: unknown request %s %s", r.Method, r.URL.String())
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusOK)
			return
		}
		writeJSON(w, map[string]any{})
	}
}

func (s *Server) record(req Request, main bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, req)
	if main {
		s.main = append(s.main, req.Body)
	}
}

func (s *Server) messages(w http.ResponseWriter, req Request, body []byte) {
	var m messagesRequest
	_ = json.Unmarshal(body, &m)
	model := m.Model
	if model == "" {
		model = "claude-stand-in"
	}

	s.mu.Lock()
	s.seq++
	seq := s.seq
	var turn Turn
	if IsSideRequest(body) {
		req.Side = true
		turn = Turn{Text: "stand-in"}
	} else {
		s.main = append(s.main, req.Body)
		if s.next < len(s.script) {
			turn = s.script[s.next]
			s.next++
		} else {
			turn = Turn{Text: "done."}
		}
	}
	s.all = append(s.all, req)
	s.mu.Unlock()

	if turn.Before != nil {
		turn.Before()
	}
	if turn.Delay > 0 {
		time.Sleep(turn.Delay)
	}
	msg := Message(seq, model, turn)
	if !m.Stream {
		writeJSON(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", fmt.Sprintf("req_standin_%d", seq))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(SSE(msg))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// Message builds the complete (non-streamed) Messages API response for turn.
// seq makes the message and tool_use ids unique.
func Message(seq int, model string, turn Turn) map[string]any {
	var content []any
	if turn.Text != "" || turn.ToolName == "" {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	stop := "end_turn"
	if turn.ToolName != "" {
		input := turn.ToolInput
		if input == nil {
			input = map[string]any{}
		}
		content = append(content, map[string]any{
			"type":  "tool_use",
			"id":    fmt.Sprintf("toolu_standin%04d", seq),
			"name":  turn.ToolName,
			"input": input,
		})
		for i, also := range turn.Also {
			in := also.ToolInput
			if in == nil {
				in = map[string]any{}
			}
			content = append(content, map[string]any{
				"type":  "tool_use",
				"id":    fmt.Sprintf("toolu_standin%04d%d", seq, i+1),
				"name":  also.ToolName,
				"input": in,
			})
		}
		stop = "tool_use"
	}
	return map[string]any{
		"id":            fmt.Sprintf("msg_standin%04d", seq),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": 100, "output_tokens": 10},
	}
}

// SSE renders msg (as built by Message) as the event stream the Messages
// API sends for "stream": true.
func SSE(msg map[string]any) []byte {
	var b bytes.Buffer
	event := func(name string, data any) {
		j, _ := json.Marshal(data)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, j)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = map[string]any{"input_tokens": 100, "output_tokens": 1}
	event("message_start", map[string]any{"type": "message_start", "message": start})

	content, _ := msg["content"].([]any)
	for i, c := range content {
		block := c.(map[string]any)
		switch block["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(block["input"])
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
	return b.Bytes()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
