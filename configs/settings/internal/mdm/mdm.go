// Package mdm converts a macOS managed-preferences profile (an MDM plist) into the settings
// JSON Claude Code reads from it (configs/settings' MDM channel). Internal to settings.
package mdm

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"howett.net/plist"

	"github.com/hookd/hookd/configs/internal/readfile"
)

// maxMDMDepth bounds nesting in an MDM profile; settings are a few levels deep.
const maxMDMDepth = 64

// Decode converts a managed-preferences plist (XML, binary or OpenStep) into
// the settings JSON Claude Code reads from it: Claude Code runs `plutil -convert json`
// on the profile, so its top-level keys are settings keys. As with plutil, a top level
// that is not a dictionary, and date or data values (which JSON cannot hold), are
// errors — and an MDM profile Claude Code cannot read makes it refuse to start. Keys are
// written sorted; the result is at most readfile.MaxBytes.
//
// howett.net/plist does the parsing (binary plists, which macOS writes, are not worth
// hand-rolling); a panic inside it on malformed input becomes an error here.
func Decode(data []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("not a valid property list (%v)", r)
		}
	}()
	var v any
	if _, err := plist.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("not a valid property list: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("the top level is %s, not a dictionary of settings", plistKind(v))
	}
	w := &plistJSON{}
	if err := w.value(v, "", 0); err != nil {
		return nil, err
	}
	return w.b, nil
}

// plistJSON writes plist values as JSON, bounded in size and depth (a binary plist can
// refer to one object many times, which JSON spells out each time).
type plistJSON struct{ b []byte }

var errMDMTooLarge = fmt.Errorf("converted to JSON it is larger than %d bytes", readfile.MaxBytes)

func (w *plistJSON) value(v any, path string, depth int) error {
	if len(w.b) > readfile.MaxBytes {
		return errMDMTooLarge
	}
	if depth > maxMDMDepth {
		return fmt.Errorf("%s: nested deeper than %d levels", orTop(path), maxMDMDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.b = append(w.b, '{')
		for i, k := range keys {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.str(k)
			w.b = append(w.b, ':')
			if err := w.value(x[k], join(path, k), depth+1); err != nil {
				return err
			}
		}
		w.b = append(w.b, '}')
	case []any:
		w.b = append(w.b, '[')
		for i, e := range x {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if err := w.value(e, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		w.b = append(w.b, ']')
	case string:
		w.str(x)
	case bool:
		w.b = strconv.AppendBool(w.b, x)
	case uint64:
		w.b = strconv.AppendUint(w.b, x, 10)
	case int64:
		w.b = strconv.AppendInt(w.b, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: %v has no JSON form", orTop(path), x)
		}
		w.b = strconv.AppendFloat(w.b, x, 'g', -1, 64)
	default:
		return fmt.Errorf("%s: a %s value, which JSON cannot hold (plutil -convert json fails on it, and Claude Code refuses to start)", orTop(path), plistKind(v))
	}
	if len(w.b) > readfile.MaxBytes {
		return errMDMTooLarge
	}
	return nil
}

func (w *plistJSON) str(s string) {
	b, _ := json.Marshal(s) // a Go string always marshals (invalid UTF-8 becomes U+FFFD)
	w.b = append(w.b, b...)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// plistKind names a decoded plist value's type as Apple does.
func plistKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a dictionary"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case uint64, int64:
		return "an integer"
	case float64:
		return "a real"
	case []byte:
		return "data"
	case nil:
		return "nothing"
	}
	if _, ok := v.(interface{ Unix() int64 }); ok {
		return "date"
	}
	return fmt.Sprintf("%T", v)
}
