package events

import (
	"strconv"
	"strings"
	"unicode/utf16"
)

// PreCompact: plain stdout of a hook that exits 0 is compaction instructions. Claude Code
// 2.1.330 (executePreCompactHooks, read from the binary; delta 2.1.314) takes each
// successful, non-blocking hook's output, trimmed, cuts it at 10,000 characters (UTF-16
// code units, JavaScript's length) with a notice naming the hook, and joins the pieces
// with a blank line into the compaction's custom instructions, after the user's own
// `/compact <text>`. Its description: "Exit code 0 - stdout appended as custom compact
// instructions".

// compactCut is Claude Code's per-hook limit on PreCompact output (gPe = 1e4).
const compactCut = 10000

// compactMarkers are the two provenance markers Claude Code puts back in front of a cut
// text when the cut removed them (its Ah list), each on its own line.
var compactMarkers = []string{"<artifact-content-authored-by-others/>", "<remote-control-device-report/>"}

// compactPiece is one hook's contribution to the compaction instructions: its stdout
// trimmed as JavaScript trims, cut as Claude Code cuts. "" when there is nothing.
func compactPiece(command, stdout string) string {
	ve := jsTrim(stdout)
	if ve == "" {
		return ""
	}
	units := utf16.Encode([]rune(ve)) // invalid UTF-8 counts as U+FFFD, as the decoder makes it
	if len(units) <= compactCut {
		return ve
	}
	cut := units[:compactCut]
	if c := cut[len(cut)-1]; c >= 0xD800 && c <= 0xDBFF {
		cut = cut[:len(cut)-1] // never half a surrogate pair
	}
	kept := string(utf16.Decode(cut))
	var prefix strings.Builder
	for _, m := range compactMarkers {
		if strings.Contains(ve, m) && !strings.Contains(kept, m) {
			prefix.WriteString(m + "\n")
		}
	}
	return prefix.String() + kept + "\n\n[PreCompact hook [" + command + "] output cut: " +
		strconv.Itoa(len(units)) + " characters is over the " + strconv.Itoa(compactCut) + "-character limit]"
}

// jsTrim is String.prototype.trim: it removes WhiteSpace and LineTerminator code points,
// a set that differs from unicode.IsSpace (U+FEFF is one, U+0085 is not).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}
