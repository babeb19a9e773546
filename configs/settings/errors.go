package settings

import (
	"fmt"
	"strings"
)

// FileError is why a settings file is invalid. It names the file, the field path
// ("hooks.PreToolUse[0].hooks[1].timeout", "permissions.deny[3]") and, when known, the
// line and column of the offending value.
type FileError struct {
	File  string
	Field string
	Line  int // 1-based; 0 when unknown
	Col   int // 1-based, in characters; 0 when unknown
	Err   error
}

// Error formats as "path:line:col: field: message", leaving out what is unknown.
func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *FileError) Unwrap() error { return e.Err }

// Warning is something hookd skipped or ignored while loading a file that is otherwise
// valid. It names the file, the field and, when known, the line and column.
type Warning struct {
	File, Field, Message string
	Line, Col            int // 1-based; 0 when unknown
	// Level is LevelError for findings that may change what a hook does for safety and
	// that hookd cannot act on — a handler field it does not know (Claude Code may give
	// it a meaning hookd does not reproduce, as onFailure once was). The file still
	// loads and the hook still runs; validate, status and the load log say "error".
	Level string
}

// Warning levels.
const (
	LevelWarning = ""
	LevelError   = "error"
)

// IsError reports whether w is an error-level finding.
func (w Warning) IsError() bool { return w.Level == LevelError }

// String formats as "file:line:col: field: message", leaving out what is unknown.
func (w Warning) String() string {
	at := w.File
	if w.Line > 0 {
		at = fmt.Sprintf("%s:%d:%d", w.File, w.Line, w.Col)
	}
	if w.Field == "" {
		return at + ": " + w.Message
	}
	return at + ": " + w.Field + ": " + w.Message
}
