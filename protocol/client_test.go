package protocol

import (
	"bufio"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveOnce answers each request line on the first connection with the given lines.
func serveOnce(t *testing.T, answer func(req string) []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			for _, l := range answer(line) {
				if _, err := c.Write([]byte(l + "\n")); err != nil {
					return
				}
			}
		}
	}()
	return path
}

func TestClientsRoundTrip(t *testing.T) {
	for name, dial := range map[string]func(string) (*Client, error){
		"net":  func(p string) (*Client, error) { return Dial(context.Background(), p) },
		"sync": func(p string) (*Client, error) { return DialSync(p, 5*time.Second) },
	} {
		t.Run(name, func(t *testing.T) {
			path := serveOnce(t, func(req string) []string {
				if strings.Contains(req, `"op":"ping"`) {
					return []string{`{"type":"error","error":{"code":"bad_request","message":"nope"}}`}
				}
				return []string{`{"type":"message","kind":"started","hook":{"id":"h"}}`, `{"type":"result","result":{"decision_id":"D","exit_code":2}}`}
			})
			c, err := dial(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var kinds []string
			f, err := c.Do(context.Background(), &Request{EventText: `{"hook_event_name":"Stop"}`}, func(f *Frame) { kinds = append(kinds, string(f.Type)) })
			if err != nil || f.Result.DecisionID != "D" || f.Result.ExitCode != 2 {
				t.Fatalf("Do: %+v %v", f, err)
			}
			if strings.Join(kinds, ",") != "message,result" {
				t.Fatalf("frames %v", kinds)
			}
			// Same connection, an error frame.
			_, err = c.Do(context.Background(), &Request{Op: OpPing}, nil)
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != CodeBadRequest {
				t.Fatalf("error frame: %v", err)
			}
		})
	}
}

func TestDialUnreachable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.sock")
	if _, err := DialSync(path, time.Second); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("DialSync: %v", err)
	}
	if _, err := Dial(context.Background(), path); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Dial: %v", err)
	}
}

func TestDialSyncDeadline(t *testing.T) {
	// The server never answers (until the test ends): DoRaw can only return through the
	// deadline, so no wall-clock bound is needed.
	silent := make(chan struct{})
	path := serveOnce(t, func(string) []string { <-silent; return nil })
	t.Cleanup(func() { close(silent) })
	c, err := DialSync(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err = c.DoRaw(ctx, &Request{EventText: `{}`}, nil); err == nil {
		t.Fatal("DoRaw returned no error from a server that never answered")
	}
}
