package audit

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the record format version, written as "v". Readers accept records
// of this version and ignore fields they do not know; a change that removes or
// re-means a field bumps it.
const SchemaVersion = 1

// Record kinds.
const (
	KindDecision = "decision" // one answered event
	KindRepair   = "repair"   // recovery cut a torn tail or found records missing
	// KindCheckpoint carries a signed checkpoint of the chain up to the record before it.
	KindCheckpoint = "checkpoint"
)

// Final decision values (Record.Decision): the permission decision on tool events, else
// what the event's answer does.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
	DecisionAsk   = "ask"
	DecisionDefer = "defer"
	DecisionBlock = "block" // a hook blocked the action (exit 2, decision:"block", …)
	DecisionStop  = "stop"  // continue:false: the harness stops
	DecisionNone  = "none"  // nothing decided: the harness proceeds as without hooks
)

// Record is one line of the decision log. Field names are the JSON keys (snake_case);
// empty optional fields are left out. The chain fields (v, kind, time, seq, prev_hash)
// are present on every record.
type Record struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	V    int       `json:"v"`

	DecisionID    string `json:"decision_id,omitempty"`
	DaemonVersion string `json:"daemon_version,omitempty"`
	Event         string `json:"event,omitempty"`
	// Harness names the agent that sent the event (claude-code, codex, gemini) and
	// HarnessVersion its version when known; NativeEvent is the harness's own name for the
	// event when it differs from Event (Gemini's BeforeTool for PreToolUse).
	Harness        string  `json:"harness,omitempty"`
	HarnessVersion string  `json:"harness_version,omitempty"`
	NativeEvent    string  `json:"native_event,omitempty"`
	SessionID      string  `json:"session_id,omitempty"`
	ToolUseID      string  `json:"tool_use_id,omitempty"`
	ToolName       string  `json:"tool_name,omitempty"`
	Cwd            string  `json:"cwd,omitempty"`
	ProjectDir     string  `json:"project_dir,omitempty"`
	Caller         *Caller `json:"caller,omitempty"`
	// Revision is the settings revision: a hash over every settings file used.
	Revision string   `json:"revision,omitempty"`
	Sources  []Source `json:"sources,omitempty"`
	Mode     string   `json:"mode,omitempty"`
	// Hooks are the handlers that matched: those that ran, then those not run.
	Hooks []Hook `json:"hooks,omitempty"`

	// HookDecision is the hooks' merged permission decision (tool events), before rules.
	HookDecision string `json:"hook_decision,omitempty"`
	// Decision is the final answer (Decision* constants); DecisionSource says who made
	// it ("hook" or "rule") when known.
	Decision       string `json:"decision,omitempty"`
	DecisionSource string `json:"decision_source,omitempty"`
	// DecisionVia is "on_failure" when the deny or block is a failed hook turned into
	// one by its handler's "onFailure": "block", "on_timeout" when hookd's on_timeout:
	// deny did it; DecisionHook is that hook's id.
	DecisionVia  string `json:"decision_via,omitempty"`
	DecisionHook string `json:"decision_hook,omitempty"`
	Reason       string `json:"reason,omitempty"`
	// NotDelivered says why the answer never reached the caller when it did not: the
	// caller disconnected ("caller_disconnected"), or hookd stopped before the hooks
	// finished ("shutdown"). The hooks were cancelled; Decision is the fail-closed one.
	NotDelivered string `json:"not_delivered,omitempty"`
	// Fallback is set when the event was answered in-process, without the daemon: hookc
	// could not reach it and ran `hookd run` instead. It says why ("daemon unreachable:
	// …"); the decision is the same engine's, only slower and with nothing prewarmed.
	Fallback   string    `json:"fallback,omitempty"`
	RuleAnswer *Rule     `json:"rule_answer,omitempty"` // the permission rules' own answer
	Override   *Override `json:"override,omitempty"`
	ExitCode   int       `json:"exit_code"`
	// UpdatedInput is the merged updatedInput, masked and capped like Input.
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
	// AdditionalContextBytes are the sizes of the additionalContext strings passed on.
	AdditionalContextBytes []int `json:"additional_context_bytes,omitempty"`
	SystemMessages         int   `json:"system_messages,omitempty"`
	// Input is the event payload as received, after masking and capping.
	Input json.RawMessage `json:"input,omitempty"`
	// Masked lists the mask rules that changed this record ("tool_input.content:hash"),
	// and "cap" when a value was cut to max_field_bytes.
	Masked []string `json:"masked,omitempty"`

	Repair *Repair `json:"repair,omitempty"`
	// Checkpoint is a signed note (KindCheckpoint): the chain's seq and hash just
	// before this record, signed with the admin's Ed25519 key (checkpoint.go).
	Checkpoint string `json:"checkpoint,omitempty"`

	// The chain: this record's place in the log and the SHA-256 of the previous line.
	// They stay the last fields: the writer fills them in after the rest is encoded.
	Seq      uint64 `json:"seq"`
	PrevHash string `json:"prev_hash"`
}

// Caller is the process that sent the event (SO_PEERCRED).
type Caller struct {
	UID    int    `json:"uid"`
	PID    int    `json:"pid"`
	Client string `json:"client,omitempty"`
}

// Source is one settings file that contributed to the revision.
type Source struct {
	File   string `json:"file"`
	Source string `json:"source,omitempty"` // managed | user | project | local | flag
	Hash   string `json:"hash"`
}

// Hook is one matched handler and what it did.
type Hook struct {
	ID     string `json:"id"`
	Source string `json:"source,omitempty"`
	File   string `json:"file,omitempty"` // the settings file that defines it
	// Version is the plugin's version when Source is "plugin:<name>@<marketplace>".
	Version string `json:"version,omitempty"`
	Matcher string `json:"matcher,omitempty"`
	Type    string `json:"type,omitempty"`
	// Command is the command line (or URL); CommandSHA256 replaces it when the mask
	// rule "hooks.command" says hash.
	Command       string  `json:"command,omitempty"`
	CommandSHA256 string  `json:"command_sha256,omitempty"`
	Outcome       string  `json:"outcome"` // ok | blocked | error | timeout | cancelled | not_run
	ExitCode      *int    `json:"exit_code,omitempty"`
	DurationMS    float64 `json:"duration_ms"`
	Error         string  `json:"error,omitempty"`
	Decision      string  `json:"decision,omitempty"` // this hook's own permission answer, or "block"
	// Via is "on_failure" (onFailure: block) or "on_timeout" (hookd's on_timeout: deny)
	// when Decision is not the hook's answer but its failure (Error) turned into a block.
	Via    string  `json:"via,omitempty"`
	Stdout *Output `json:"stdout,omitempty"`
	Stderr *Output `json:"stderr,omitempty"`
}

// Output describes a hook's stdout or stderr without recording it.
type Output struct {
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256"`
	Truncated bool   `json:"truncated,omitempty"` // the runner's output cap cut it
}

// Rule names a permission rule and its settings file.
type Rule struct {
	Decision string `json:"decision,omitempty"`
	Rule     string `json:"rule,omitempty"`
	List     string `json:"list,omitempty"` // allow | ask | deny
	File     string `json:"file,omitempty"`
	Source   string `json:"source,omitempty"`
	// Command is the simple command a Bash deny/ask rule matched; Unresolved
	// says what hookd could not resolve when the rule matched by failing
	// closed ("command name is not a literal: `$x`").
	Command    string `json:"command,omitempty"`
	Unresolved string `json:"unresolved,omitempty"`
}

// Override records a permission rule that changed the hooks' decision.
type Override struct {
	HookDecision string `json:"hook_decision"`
	Final        string `json:"final"`
	Rule         string `json:"rule"`
	List         string `json:"list"`
	File         string `json:"file,omitempty"`
	Source       string `json:"source,omitempty"`
	// Command and Unresolved: as in Rule.
	Command    string `json:"command,omitempty"`
	Unresolved string `json:"unresolved,omitempty"`
}

// Repair reasons.
const (
	RepairTornTail       = "torn_tail"       // a partial last line was cut off
	RepairRecordsMissing = "records_missing" // records known to exist are gone
	// RepairHeadMissing: the log holds records but its head file was gone (deleted, or
	// the log was copied without it). Nothing vouches for the end of the chain before
	// this record, so Verify reports it as a failure, like records_missing.
	RepairHeadMissing = "head_missing"
)

// Repair describes what recovery changed.
type Repair struct {
	Reason string `json:"reason"`
	File   string `json:"file"`
	// Offset and DroppedBytes locate what was cut; DroppedSHA256 identifies it.
	Offset        int64  `json:"offset,omitempty"`
	DroppedBytes  int    `json:"dropped_bytes,omitempty"`
	DroppedSHA256 string `json:"dropped_sha256,omitempty"`
	// ExpectedSeq/ExpectedHash are what the head or the writer knew; FoundSeq is where
	// the log on disk ended.
	ExpectedSeq  uint64 `json:"expected_seq,omitempty"`
	ExpectedHash string `json:"expected_hash,omitempty"`
	FoundSeq     uint64 `json:"found_seq,omitempty"`
	Detail       string `json:"detail,omitempty"`
}
