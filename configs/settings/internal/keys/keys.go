// Package keys lists the settings keys Claude Code reads (top level, permissions) and its
// permission modes, for configs/settings' warnings. A leaf below configs/settings.
package keys

// TopLevel are the top-level keys Claude Code reads from a settings file.
//
// Why a list at all: Claude Code 2.1.330 ignores a whole settings file that has a top-level
// key it does not know — its hooks silently stop running (spec §12). hookd still loads such
// a file, but warns, so that a typo or a hookd-invented key in a Claude Code file is
// visible. The list is generous on purpose: a key missing here costs a false warning; a
// wrongly listed key costs nothing. Sources: the settings reference index (docs snapshot
// of the spec §0 list, and later), older docs for keys since deprecated but still
// accepted, and ~/.claude.json global-config keys that people put in settings.json.
var TopLevel = toSet(
	"$schema",
	// hooks and their governance
	"hooks", "disableAllHooks", "allowManagedHooksOnly", "allowedHttpHookUrls", "httpHookAllowedEnvVars",
	"strictPluginOnlyCustomization",
	// permissions
	"permissions", "allowManagedPermissionRulesOnly", "autoMode", "disableAutoMode",
	"skipAutoPermissionPrompt", "skipDangerousModePermissionPrompt", "useAutoModeDuringPlan",
	// authentication and providers
	"apiKeyHelper", "awsCredentialExport", "awsAuthRefresh", "gcpAuthRefresh", "otelHeadersHelper",
	"forceLoginMethod", "forceLoginOrgUUID", "forceLoginGatewayUrl", "gatewayInternalNetworks",
	// model and responses
	"model", "availableModels", "enforceAvailableModels", "advisorModel", "alwaysThinkingEnabled",
	"effortLevel", "maxEffortLevel", "modelSettings", "modelOverrides", "modelPicker", "modelPricing",
	"fallbackModel", "fastMode", "fastModePerSessionOptIn", "outputStyle", "language",
	"promptCacheTtl", "subagentPromptCacheTtl", "showThinkingSummaries", "switchModelsOnFlag", "ultracode",
	// environment, memory and context
	"env", "cleanupPeriodDays", "autoCompactEnabled", "autoCompactWindow", "autoMemoryDirectory",
	"autoMemoryEnabled", "autoDreamEnabled", "bashOutputMaxChars", "claudeMd", "claudeMdExcludes",
	"fileCheckpointingEnabled", "plansDirectory", "skillListingBudgetFraction", "skillListingMaxDescChars",
	"taskOutputMaxChars",
	// git and attribution
	"includeCoAuthoredBy", "includeGitInstructions", "attribution", "prUrlTemplate",
	// interface and terminal
	"statusLine", "subagentStatusLine", "fileSuggestion", "respectGitignore", "spinnerTipsEnabled",
	"spinnerTipsOverride", "spinnerVerbs", "theme", "verbose", "viewMode", "tui", "editorMode",
	"companyAnnouncements", "askUserQuestionTimeout", "autoContinueAtUsageLimit", "autoScrollEnabled",
	"axScreenReader", "bashEditDiffEnabled", "defaultShell", "dialogExpiry", "emojiCompletionEnabled",
	"footerLinksRegexes", "keybindingFlavor", "maxProseWidth", "prefersReducedMotion",
	"promptSuggestionEnabled", "respondToBashCommands", "showClearContextOnPlanAccept",
	"showTurnDuration", "spellcheck", "syntaxHighlightingDisabled", "terminalProgressBarEnabled",
	"terminalTitleFromRename", "timeFormat", "timeZone", "vimInsertModeRemaps", "voice", "voiceEnabled",
	"wheelScrollAccelerationEnabled", "preferredNotifChannel",
	// MCP
	"enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "allowedMcpServers",
	"deniedMcpServers", "allowManagedMcpServersOnly", "allowAllClaudeAiMcps", "managedMcpServers",
	"disableClaudeAiConnectors",
	// plugins and skills
	"enabledPlugins", "extraKnownMarketplaces", "strictKnownMarketplaces", "blockedMarketplaces",
	"allowedChannelPlugins", "channelsEnabled", "disableBundledSkills", "disableCommandPluginSources",
	"disableSkillShellExecution", "pluginConfigs", "pluginSuggestionMarketplaces", "pluginTrustMessage",
	"skillOverrides", "syncClaudeAiPlugins", "syncClaudeAiSkills",
	// agents, sessions and worktrees
	"agent", "crossSessionInbound", "disableAgentView", "isolatePeerMachines", "processWrapper",
	"teammateMode", "worktree",
	// hooks-adjacent automation
	"disableWorkflows", "enableWorkflows", "workflowKeywordTriggerEnabled", "workflowSizeGuideline",
	// remote, desktop and notifications
	"agentPushNotifEnabled", "awaySummaryEnabled", "disableArtifact", "enableArtifact",
	"disableDeepLinkRegistration", "disableDesktopLocalSessions", "disableRemoteControl",
	"inputNeededNotifEnabled", "remote", "remoteControlAtStartup", "sshConfigs", "sshHostAllowlist",
	// privacy and telemetry
	"desktopSessionCleanupPeriodDays", "feedbackDrafts", "feedbackSurveyRate", "skipWebFetchPreflight",
	// sandbox and tools
	"sandbox", "browserExternalPageTools", "disableBrowserExternalNavigation", "disableMobileSimulatorTools",
	// updates and versioning
	"autoUpdates", "autoUpdatesChannel", "minimumVersion", "requiredMinimumVersion", "requiredMaximumVersion",
	// enterprise and managed settings
	"disableSideloadFlags", "forceRemoteSettingsRefresh", "managedSourcesBehavior", "parentSettingsBehavior",
	"policyHelper", "wslInheritsWindowsSettings",
	// global-config keys (~/.claude.json) that also turn up in settings files
	"autoConnectIde", "autoInstallIdeExtension", "copyOnSelect", "diffTool", "externalEditorContext",
	"permissionExplainerEnabled", "teammateDefaultModel", "autoUpdaterStatus", "preferredNotifChannel",
	"messageIdleNotifThresholdMs",
)

// Permission are the keys of "permissions" (spec §8 and the settings reference).
var Permission = toSet(
	"allow", "ask", "deny", "additionalDirectories", "defaultMode", "disableBypassPermissionsMode",
	"disableAutoMode", "blockReadsOutsideWorkingDirectories",
)

// DefaultModes are the values of permissions.defaultMode (spec §8).
var DefaultModes = toSet("default", "manual", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")

func toSet(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
