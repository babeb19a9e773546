// Package testutil holds helpers shared by hookd's test packages (test, test/e2e,
// test/bench), which cannot import each other's _test.go files.
package testutil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookd/hookd/protocol"
)

// ErrExited is returned by WaitForDaemon when the daemon process ended before answering.
var ErrExited = errors.New("hookd exited during start-up")

// WaitForDaemon pings the daemon on socket until it answers, the process exits (exited
// is closed; nil means not watched), or timeout passes.
func WaitForDaemon(socket string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var err error
	for {
		var c *protocol.Client
		if c, err = protocol.Dial(context.Background(), socket); err == nil {
			_, err = c.Do(context.Background(), &protocol.Request{Op: protocol.OpPing}, nil)
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-exited:
			return ErrExited
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hookd did not answer within %v: %w", timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
