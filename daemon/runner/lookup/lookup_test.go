package lookup

import (
	"strconv"
	"testing"
	"time"
)

func TestLookupCacheBounded(t *testing.T) {
	t.Cleanup(func() {
		cache.Lock()
		clear(cache.m)
		cache.Unlock()
	})
	start := time.Now()
	store("first", entry{val: "/a", at: start.Add(-time.Second)})
	for i := range cacheMax + 10 {
		store("k"+strconv.Itoa(i), entry{val: "/b", at: start.Add(time.Duration(i))})
	}
	cache.Lock()
	n, kept := len(cache.m), cache.m["first"].val
	cache.Unlock()
	if n != cacheMax || kept != "" {
		t.Fatalf("%d answers kept (want %d), oldest kept: %v", n, cacheMax, kept != "")
	}
}
