package claudeapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Block is one content block of a request message, flattened for tests.
// For a tool_result, Text is its content (string content, or the text
// blocks of array content joined with "\n").
type Block struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	Name      string `json:"name,omitempty"`  // tool_use
	Input     any    `json:"input,omitempty"` // tool_use
}

// Msg is one message of a request, flattened for tests.
type Msg struct {
	Role   string  `json:"role"`
	Blocks []Block `json:"blocks"`
}

type rawMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Input     any             `json:"input"`
}

// Messages parses the messages of a Messages API request body.
func Messages(body json.RawMessage) ([]Msg, error) {
	var req struct {
		Messages []rawMsg `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("parse request: %w", err)
	}
	out := make([]Msg, 0, len(req.Messages))
	for _, m := range req.Messages {
		blocks, err := parseContent(m.Content)
		if err != nil {
			return nil, err
		}
		out = append(out, Msg{Role: m.Role, Blocks: blocks})
	}
	return out, nil
}

func parseContent(c json.RawMessage) ([]Block, error) {
	if len(c) == 0 {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(c, &s); err == nil {
		return []Block{{Type: "text", Text: s}}, nil
	}
	var raw []rawBlock
	if err := json.Unmarshal(c, &raw); err != nil {
		return nil, fmt.Errorf("parse content: %w", err)
	}
	out := make([]Block, 0, len(raw))
	for _, r := range raw {
		b := Block{Type: r.Type, Text: r.Text, ToolUseID: r.ToolUseID, IsError: r.IsError, Name: r.Name, Input: r.Input}
		if r.Type == "tool_result" {
			inner, err := parseContent(r.Content)
			if err != nil {
				return nil, err
			}
			var parts []string
			for _, ib := range inner {
				parts = append(parts, ib.Text)
			}
			b.Text = strings.Join(parts, "\n")
		}
		out = append(out, b)
	}
	return out, nil
}

// ToolResults returns every tool_result block in body, in order.
func ToolResults(body json.RawMessage) ([]Block, error) {
	msgs, err := Messages(body)
	if err != nil {
		return nil, err
	}
	var out []Block
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// UserTexts returns the text blocks of every user message in body, in order.
// Hook context (system reminders) arrives this way.
func UserTexts(body json.RawMessage) ([]string, error) {
	msgs, err := Messages(body)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out, nil
}
