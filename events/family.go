package events

// NoApprove strips from one hook's interpretation what Claude Code 2.1.330 ignores from a
// hook that met a tool call only through another of the tool's names — a hook matching
// Bash that runs on the Monitor tool's shell command (2.1.314: "such hooks can block or
// ask, but not approve or rewrite those commands"). The binary drops its updatedInput,
// a permissionDecision allow ("permissionDecision=allow ignored: it matched only through
// another of the tool's names"), a PermissionRequest allow and its classifierContext;
// deny, ask, defer, blocks and contexts stand.
func NoApprove(in *Interpretation, why string) {
	if in.Permission == "allow" {
		in.Permission, in.PermissionReason = "", ""
		in.Warnings = append(in.Warnings, "permissionDecision allow ignored: "+why)
	}
	if len(in.UpdatedInput) > 0 {
		in.UpdatedInput = nil
		in.Warnings = append(in.Warnings, "updatedInput ignored: "+why)
	}
	if in.Specific != nil {
		delete(in.Specific, "updatedPermissions")
		delete(in.Specific, "classifierContext")
	}
}
