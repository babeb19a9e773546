package test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/daemon/audit"
)

// Signed checkpoints, attacked the way a user who controls the log directory would:
// cut the last records, delete the local checkpoint and rewrite the chain head so the
// directory is consistent again. Plain `verify` cannot tell; `verify --pubkey K
// --checkpoint <copy shipped earlier>` can.
func TestCheckpointCatchesTailCutWithRewrittenHead(t *testing.T) {
	e := NewEnv(t)
	key := filepath.Join(e.Root, "signer.key")
	kg := e.Hookd("", "audit", "keygen", "--name", "acme-sec", "--out", key)
	vkey := strings.TrimSpace(kg.Stdout)
	if kg.Code != 0 || !strings.HasPrefix(vkey, "acme-sec+") {
		t.Fatalf("keygen: %d %q %s", kg.Code, kg.Stdout, kg.Stderr)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signer key file: %v %v", fi, err)
	}
	writeHookdConfig(t, e, map[string]any{"audit": map[string]any{"checkpoint": map[string]any{"key_file": key, "interval_s": 3600}}})
	e.WriteSettings("user", preToolUse(cmdHook("exit 0")))
	e.Start()
	for i := 0; i < 10; i++ {
		e.Event(bashPayload(e, "ls"))
	}
	e.Stop() // closing writes the checkpoint
	path := e.auditFile()
	shipped := filepath.Join(e.Root, "siem-copy.txt")
	cp, err := os.ReadFile(audit.CheckpointPath(path))
	if err != nil {
		t.Fatalf("no checkpoint after close: %v", err)
	}
	os.WriteFile(shipped, cp, 0o600)
	if v := e.Hookd("", "audit", "verify", "--pubkey", vkey, "--checkpoint", shipped); v.Code != 0 || !strings.Contains(v.Stdout, "signed checkpoint: covers seq 10 (signed by acme-sec") {
		t.Fatalf("intact log: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}

	// The attack: drop the last 4 records (3 decisions and the checkpoint record),
	// remove the local checkpoint, and make the head agree with the shortened log.
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	keep := bytes.Join(lines[:len(lines)-4], nil)
	keep = append(bytes.TrimSuffix(keep, []byte("\n")), '\n')
	os.WriteFile(path, keep, 0o600)
	os.Remove(audit.CheckpointPath(path))
	lastLine := bytes.TrimSuffix(lines[len(lines)-5], []byte("\n"))
	sum := sha256.Sum256(lastLine)
	var head map[string]any
	hb, _ := os.ReadFile(audit.HeadPath(path))
	if err := json.Unmarshal(hb, &head); err != nil {
		t.Fatal(err)
	}
	head["seq"], head["hash"], head["count"] = len(lines)-4, hex.EncodeToString(sum[:]), len(lines)-4
	hb, _ = json.Marshal(head)
	os.WriteFile(audit.HeadPath(path), hb, 0o600)

	if v := e.Hookd("", "audit", "verify"); v.Code != 0 {
		t.Fatalf("the attack was meant to fool plain verify (it controls the head); got %d\n%s", v.Code, v.Stdout)
	}
	v := e.Hookd("", "audit", "verify", "--pubkey", vkey, "--checkpoint", shipped)
	if v.Code != 1 || !strings.Contains(v.Stdout, "records were removed from the end") {
		t.Fatalf("verify --pubkey after a tail cut: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	// A checkpoint signed with another key is refused outright.
	_, other, _ := audit.GenerateKey("acme-sec")
	if v := e.Hookd("", "audit", "verify", "--pubkey", other, "--checkpoint", shipped); v.Code != 1 || !strings.Contains(v.Stderr+v.Stdout, "signature") {
		t.Fatalf("foreign key: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
}

// writeHookdConfig writes hookd's own configuration file and points the daemon at it.
func writeHookdConfig(t *testing.T, e *Env, cfg map[string]any) {
	t.Helper()
	b, _ := json.MarshalIndent(cfg, "", "  ")
	e.Config = filepath.Join(e.Root, "hookd.json")
	if err := os.WriteFile(e.Config, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
