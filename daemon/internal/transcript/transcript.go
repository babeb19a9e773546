// Package transcript reads a harness's version from a session's transcript, since neither
// Codex nor Claude Code passes one in the payload or the hook's environment: Codex's first
// line is session_meta with payload.cli_version; Claude Code's message lines carry
// "version". Only the first 64 KiB are read, and only a found version is cached (at
// SessionStart the transcript may not exist yet). Internal to the daemon.
package transcript

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/hookd/hookd/protocol"
)

// Version reads the harness's version from the session's transcript named by payload's
// transcript_path, once per transcript.
func (c *Versions) Version(harnessName string, payload []byte) string {
	var p struct {
		Transcript string `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Transcript == "" || !filepath.IsAbs(p.Transcript) {
		return ""
	}
	key := harnessName + "\x00" + p.Transcript
	if v, ok := c.get(key); ok {
		return v
	}
	f, err := os.Open(p.Transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: 64 << 10}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 16<<10), 64<<10)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Version string `json:"version"`
			Payload struct {
				CLIVersion string `json:"cli_version"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		v := line.Version
		if harnessName == protocol.HarnessCodex {
			v = line.Payload.CLIVersion
		}
		if v != "" && len(v) < 64 {
			c.put(key, v)
			return v
		}
	}
	if lr.N == 0 { // the whole window was read without a version: later reads won't find one
		c.put(key, "")
	}
	return ""
}

// Versions maps transcript paths to versions, bounded: it is emptied when full. The zero
// value is ready.
type Versions struct {
	mu sync.Mutex
	m  map[string]string
}

const versionCacheMax = 4096

func (c *Versions) get(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *Versions) put(k, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= versionCacheMax {
		c.m = make(map[string]string)
	}
	c.m[k] = v
}
