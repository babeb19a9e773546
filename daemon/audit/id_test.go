package audit

import (
	"strings"
	"testing"
)

// Decision IDs are ULIDs whose order is the order they were made in, even many in one
// millisecond: the log's order and the IDs' order agree.
func TestNewDecisionIDMonotonic(t *testing.T) {
	prev := NewDecisionID()
	for i := 0; i < 10000; i++ {
		id := NewDecisionID()
		if len(id) != 26 || strings.Trim(id, crockford) != "" {
			t.Fatalf("ID %q is not 26 Crockford base32 characters", id)
		}
		if id <= prev {
			t.Fatalf("ID %q made after %q does not sort after it", id, prev)
		}
		prev = id
	}
}
