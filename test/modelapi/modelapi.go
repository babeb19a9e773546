// Package modelapi is a loopback stand-in for two model APIs, good enough to run the real
// Codex CLI (OpenAI Responses API, streamed as server-sent events) and the real Gemini CLI
// (Gemini streamGenerateContent?alt=sse) offline, the way package claudeapi does for
// Claude Code.
//
// A Server is driven by a script of Turns. Every main-loop model request consumes the next
// Turn: the answer either calls the harness's shell tool with a command, or says a text and
// ends the turn. When the script runs out the server says "done." so a run that needs more
// model calls than scripted still ends. Every request body is recorded, so a test can read
// what the model was told (tool results carry the blocking reasons and hook context).
//
// Requests that are not main-loop calls (Gemini's side calls for routing or next-speaker
// checks send no tools; Codex's title/summary calls likewise) are answered with text and do
// not consume the script.
package modelapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Turn is one scripted model response: a shell command to run (Shell) or a final Text.
type Turn struct {
	Shell string
	Text  string
}

// Server is a running stand-in. URL is the base URL to configure in the harness.
type Server struct {
	URL string

	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu     sync.Mutex
	script []Turn
	next   int
	calls  int
	main   []string
	other  []string
}

// Start starts a server on 127.0.0.1:0 and closes it when tb's test ends.
func Start(tb testing.TB, script []Turn) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("modelapi: listen: %v", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, done: make(chan struct{}), script: append([]Turn(nil), script...)}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	tb.Cleanup(func() {
		_ = s.srv.Close()
		<-s.done
	})
	return s
}

// Requests returns the bodies of the main-loop requests, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.main...)
}

// Other returns "METHOD path" of every request that was not a main-loop call.
func (s *Server) Other() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.other...)
}

// Consumed reports how many script turns were used.
func (s *Server) Consumed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// AllText is every main-loop request body joined, for "did the model see X" checks.
func (s *Server) AllText() string { return strings.Join(s.Requests(), "\n") }

func (s *Server) take(body []byte) (Turn, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.main = append(s.main, string(body))
	s.calls++
	if s.next < len(s.script) {
		t := s.script[s.next]
		s.next++
		return t, s.calls
	}
	return Turn{Text: "done."}, s.calls
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		s.responses(w, body)
	case r.Method == http.MethodPost && strings.Contains(r.URL.Path, ":streamGenerateContent"):
		s.gemini(w, body, true)
	case r.Method == http.MethodPost && strings.Contains(r.URL.Path, ":generateContent"):
		s.gemini(w, body, false)
	case r.Method == http.MethodPost && strings.Contains(r.URL.Path, ":countTokens"):
		s.note(r)
		writeJSON(w, map[string]any{"totalTokens": 10})
	default:
		s.note(r)
		writeJSON(w, map[string]any{})
	}
}

func (s *Server) note(r *http.Request) {
	s.mu.Lock()
	s.other = append(s.other, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// responses answers a Responses API call (Codex) as an SSE stream. The shell tool is
// whichever function tool the request offers for running commands (exec_command in Codex
// 0.169, shell in older releases); its argument name follows the tool's schema.
func (s *Server) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Tools []struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			Parameters struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"parameters"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	if len(req.Tools) == 0 {
		s.mu.Lock()
		s.other = append(s.other, "POST /responses (no tools)")
		s.mu.Unlock()
		s.responsesStream(w, Turn{Text: "ok"}, 0)
		return
	}
	t, n := s.take(body)
	if t.Shell != "" {
		tool, arg := "", ""
		for _, tl := range req.Tools {
			if tl.Type != "function" {
				continue
			}
			if tl.Name == "exec_command" || tl.Name == "shell" || tl.Name == "shell_command" {
				tool = tl.Name
				for _, a := range []string{"cmd", "command"} {
					if _, ok := tl.Parameters.Properties[a]; ok {
						arg = a
						break
					}
				}
				break
			}
		}
		if tool == "" {
			t = Turn{Text: "modelapi: no shell tool offered"}
		} else {
			var args any = t.Shell
			if tool == "shell" { // the old tool takes argv
				args = []string{"bash", "-lc", t.Shell}
			}
			a, _ := json.Marshal(map[string]any{arg: args})
			s.responsesCall(w, tool, string(a), n)
			return
		}
	}
	s.responsesStream(w, t, n)
}

func (s *Server) responsesHead(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
}

func usage() map[string]any {
	return map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
}

func (s *Server) responsesCall(w http.ResponseWriter, tool, args string, n int) {
	id := fmt.Sprintf("resp_%d", n)
	s.responsesHead(w, id)
	item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
		"name": tool, "arguments": args, "status": "completed"}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "usage": usage()}})
}

func (s *Server) responsesStream(w http.ResponseWriter, t Turn, n int) {
	id := fmt.Sprintf("resp_%d", n)
	s.responsesHead(w, id)
	item := map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "usage": usage()}})
}

// gemini answers a generateContent call. Main-loop calls carry function declarations;
// Gemini CLI's side calls (routing, next-speaker checks, JSON-schema calls) do not, and
// get a short text (or, when a JSON response is asked for, an object).
func (s *Server) gemini(w http.ResponseWriter, body []byte, stream bool) {
	var req struct {
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &req)
	hasTools := false
	for _, t := range req.Tools {
		if len(t.FunctionDeclarations) > 0 {
			hasTools = true
		}
	}
	var part map[string]any
	if !hasTools {
		s.mu.Lock()
		s.other = append(s.other, "POST generateContent (side)")
		s.mu.Unlock()
		text := "ok"
		if req.GenerationConfig.ResponseMimeType == "application/json" {
			text = `{"reasoning":"stub","next_speaker":"user","model_choice":"flash"}`
		}
		part = map[string]any{"text": text}
	} else {
		t, _ := s.take(body)
		if t.Shell != "" {
			part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{"command": t.Shell}}}
		} else {
			part = map[string]any{"text": t.Text}
		}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-flash",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	sse(w, "", resp)
}
