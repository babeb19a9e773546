package conformance

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
)

// aliasAnchor is the start of the map of older tool names to current ones that the binary
// keeps right after its list of tool names: <list>=[…],<map>={Task:"Agent",…}.
var (
	toolListRE  = regexp.MustCompile(`=\[((?:"[A-Za-z_]+",)*"[A-Za-z_]+")\],[A-Za-z_$][\w$]*=\{(Task:"Agent"[^}]*)\}`)
	aliasPairRE = regexp.MustCompile(`^"?([A-Za-z_]+)"?:"([A-Za-z_]+)"$`)
)

// ExtractTools returns the tool names a Claude Code binary knows and the older names it
// maps to them ({"Task": "Agent", …}), from the list-and-map pair its JavaScript holds.
func ExtractTools(bin []byte) (tools []string, aliases map[string]string, err error) {
	i := bytes.Index(bin, []byte(`{Task:"Agent"`))
	if i < 0 {
		return nil, nil, errors.New(`no tool alias map ({Task:"Agent",…}) in the binary; its layout changed (update test/conformance/tools.go)`)
	}
	window := bin[max(0, i-4096):min(len(bin), i+1024)]
	m := toolListRE.FindSubmatch(window)
	if m == nil {
		return nil, nil, errors.New("no tool name list before the tool alias map; the binary's layout changed (update test/conformance/tools.go)")
	}
	tools = parseStringArray([]byte("[" + string(m[1]) + "]"))
	aliases = map[string]string{}
	for _, pair := range strings.Split(string(m[2]), ",") {
		p := aliasPairRE.FindStringSubmatch(pair)
		if p == nil {
			return nil, nil, errors.New("tool alias map entry " + pair + " not understood; the binary's layout changed")
		}
		aliases[p[1]] = p[2]
	}
	return tools, aliases, nil
}
