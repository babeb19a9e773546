package events

import (
	"testing"

	"github.com/hookd/hookd/protocol"
)

// hookc derives its default timeout from protocol's copy of the default hook timeouts
// (it may import nothing else of hookd): it must agree with the catalogue.
func TestDefaultTimeoutsAgreeWithProtocol(t *testing.T) {
	for _, name := range Names() {
		ev, _ := Lookup(name)
		if got := protocol.DefaultHookTimeout(name); got != ev.DefaultTimeout {
			t.Errorf("%s: protocol.DefaultHookTimeout %v, catalogue %v", name, got, ev.DefaultTimeout)
		}
	}
}
