// Reference renderer for sinter's Go-template tests: renders every template of a corpus with
// every conversation using Go's own text/template, set up as Ollama's template package sets it up
// (Option("missingkey=zero"), its FuncMap, {{ .Response }} appended, message collation, the
// Messages/legacy/fill-in-the-middle paths, and its template value types), and prints the results
// as JSON. scripts/record-go-template-references.sh runs it and stores the output.
//
// Usage: go run main.go TEMPLATE_DIR CONVERSATIONS_JSON > expected.json
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// The fixed clock of currentDate/yesterdayDate (the C++ test uses the same instant).
var now = time.Date(2024, 6, 15, 12, 0, 0, 0, time.UTC)

// ---- The api types the templates see (shapes of Ollama's api package) ----

type PropertyType []string

func (pt PropertyType) String() string {
	if len(pt) == 0 {
		return ""
	}
	if len(pt) == 1 {
		return pt[0]
	}
	return fmt.Sprintf("%v", []string(pt))
}

func (pt PropertyType) MarshalJSON() ([]byte, error) {
	if len(pt) == 1 {
		return json.Marshal(pt[0])
	}
	return json.Marshal([]string(pt))
}

func (pt *PropertyType) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*pt = []string{s}
		return nil
	}
	var a []string
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	*pt = a
	return nil
}

// ToolPropertiesMap keeps the JSON key order.
type ToolPropertiesMap struct {
	keys   []string
	values map[string]ToolProperty
}

func (m *ToolPropertiesMap) UnmarshalJSON(data []byte) error {
	keys, raw, err := orderedObject(data)
	if err != nil {
		return err
	}
	m.keys = nil
	m.values = map[string]ToolProperty{}
	for i, k := range keys {
		var p ToolProperty
		if err := json.Unmarshal(raw[i], &p); err != nil {
			return err
		}
		if _, seen := m.values[k]; !seen {
			m.keys = append(m.keys, k)
		}
		m.values[k] = p
	}
	return nil
}

func (m ToolPropertiesMap) MarshalJSON() ([]byte, error) {
	if m.values == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(m.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (m *ToolPropertiesMap) ToMap() map[string]ToolProperty {
	if m == nil || m.values == nil {
		return nil
	}
	out := make(map[string]ToolProperty, len(m.values))
	for k, v := range m.values {
		out[k] = v
	}
	return out
}

func orderedObject(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("expected an object")
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		values = append(values, raw)
	}
	return keys, values, nil
}

type ToolProperty struct {
	AnyOf       []ToolProperty     `json:"anyOf,omitempty"`
	Type        PropertyType       `json:"type,omitempty"`
	Items       any                `json:"items,omitempty"`
	Description string             `json:"description,omitempty"`
	Enum        []any              `json:"enum,omitempty"`
	Properties  *ToolPropertiesMap `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
}

func (tp ToolProperty) ToTypeScriptType() string {
	if len(tp.AnyOf) > 0 {
		var types []string
		for _, a := range tp.AnyOf {
			types = append(types, a.ToTypeScriptType())
		}
		return strings.Join(types, " | ")
	}
	if len(tp.Type) == 0 {
		return "any"
	}
	var types []string
	for _, t := range tp.Type {
		types = append(types, tsType(t))
	}
	return strings.Join(types, " | ")
}

func tsType(t string) string {
	switch t {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		return "any[]"
	case "object":
		return "Record<string, any>"
	case "null":
		return "null"
	}
	return "any"
}

type Tool struct {
	Type     string `json:"type"`
	Items    any    `json:"items,omitempty"`
	Function struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Parameters  struct {
			Type       string             `json:"type"`
			Defs       any                `json:"$defs,omitempty"`
			Items      any                `json:"items,omitempty"`
			Required   []string           `json:"required,omitempty"`
			Properties *ToolPropertiesMap `json:"properties"`
		} `json:"parameters"`
	} `json:"function"`
}

type ImageData []byte

type ToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type Message struct {
	Role       string      `json:"role"`
	Content    string      `json:"content"`
	Thinking   string      `json:"thinking,omitempty"`
	Images     []ImageData `json:"images,omitempty"`
	ToolCalls  []ToolCall  `json:"tool_calls,omitempty"`
	ToolName   string      `json:"tool_name,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

// ---- Ollama's template value types ----

type templateTools []templateTool

func (t templateTools) String() string { b, _ := json.Marshal(t); return string(b) }

type templateArgs map[string]any

func (t templateArgs) String() string {
	if t == nil {
		return "{}"
	}
	b, _ := json.Marshal(t)
	return string(b)
}

type templateProperties map[string]ToolProperty

func (t templateProperties) String() string {
	if t == nil {
		return "{}"
	}
	b, _ := json.Marshal(t)
	return string(b)
}

type templateTool struct {
	Type     string               `json:"type"`
	Items    any                  `json:"items,omitempty"`
	Function templateToolFunction `json:"function"`
}

func (t templateTool) String() string { b, _ := json.Marshal(t); return string(b) }

type templateToolFunction struct {
	Name        string                         `json:"name"`
	Description string                         `json:"description"`
	Parameters  templateToolFunctionParameters `json:"parameters"`
}

type templateToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties templateProperties `json:"properties"`
}

type templateToolCall struct {
	ID       string
	Function templateToolCallFunction
}

type templateToolCallFunction struct {
	Index     int
	Name      string
	Arguments templateArgs
}

type templateMessage struct {
	Role       string
	Content    string
	Thinking   string
	Images     []ImageData
	ToolCalls  []templateToolCall
	ToolName   string
	ToolCallID string
}

var funcs = template.FuncMap{
	"json": func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	},
	"currentDate":   func(args ...string) string { return now.Format("2006-01-02") },
	"yesterdayDate": func(args ...string) string { return now.AddDate(0, 0, -1).Format("2006-01-02") },
	"toTypeScriptType": func(v any) string {
		if p, ok := v.(ToolProperty); ok {
			return p.ToTypeScriptType()
		}
		if p, ok := v.(*ToolProperty); ok && p != nil {
			return p.ToTypeScriptType()
		}
		return "any"
	},
}

// ---- Ollama's Parse and Execute ----

type Template struct {
	*template.Template
}

func Parse(s string) (*Template, error) {
	tmpl, err := template.New("").Option("missingkey=zero").Funcs(funcs).Parse(s)
	if err != nil {
		return nil, err
	}
	t := &Template{tmpl}
	vars, err := t.Vars()
	if err != nil {
		return nil, err
	}
	if !contains(vars, "messages") && !contains(vars, "response") {
		tmpl.Tree.Root.Nodes = append(tmpl.Tree.Root.Nodes, &parse.ActionNode{
			NodeType: parse.NodeAction,
			Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{{
				NodeType: parse.NodeCommand,
				Args:     []parse.Node{&parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}},
			}}},
		})
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (t *Template) Vars() ([]string, error) {
	var vars []string
	for _, tt := range t.Templates() {
		for _, n := range tt.Root.Nodes {
			v, err := identifiers(n)
			if err != nil {
				return vars, err
			}
			vars = append(vars, v...)
		}
	}
	set := map[string]bool{}
	for _, n := range vars {
		set[strings.ToLower(n)] = true
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func identifiers(n parse.Node) ([]string, error) {
	switch n := n.(type) {
	case *parse.ListNode:
		var names []string
		for _, c := range n.Nodes {
			i, err := identifiers(c)
			if err != nil {
				return names, err
			}
			names = append(names, i...)
		}
		return names, nil
	case *parse.TemplateNode:
		if n.Pipe == nil {
			return nil, errors.New("undefined template specified")
		}
		return identifiers(n.Pipe)
	case *parse.ActionNode:
		return identifiers(n.Pipe)
	case *parse.BranchNode:
		names, err := identifiers(n.Pipe)
		if err != nil {
			return names, err
		}
		for _, l := range []*parse.ListNode{n.List, n.ElseList} {
			if l != nil {
				i, err := identifiers(l)
				if err != nil {
					return names, err
				}
				names = append(names, i...)
			}
		}
		return names, nil
	case *parse.IfNode:
		return identifiers(&n.BranchNode)
	case *parse.RangeNode:
		return identifiers(&n.BranchNode)
	case *parse.WithNode:
		return identifiers(&n.BranchNode)
	case *parse.PipeNode:
		var names []string
		for _, c := range n.Cmds {
			for _, a := range c.Args {
				i, err := identifiers(a)
				if err != nil {
					return names, err
				}
				names = append(names, i...)
			}
		}
		return names, nil
	case *parse.FieldNode:
		return n.Ident, nil
	case *parse.VariableNode:
		return n.Ident, nil
	}
	return nil, nil
}

type Values struct {
	Messages   []Message
	Tools      []Tool
	HasTools   bool
	Prompt     string
	Suffix     string
	Think      bool
	ThinkLevel string
	IsThinkSet bool
}

func (t *Template) Execute(w *bytes.Buffer, v Values) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	system, messages := collate(v.Messages)
	vars, err := t.Vars()
	if err != nil {
		return err
	}
	if v.Prompt != "" && v.Suffix != "" {
		return t.Template.Execute(w, map[string]any{
			"Prompt": v.Prompt, "Suffix": v.Suffix, "Response": "",
			"Think": v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
		})
	} else if contains(vars, "messages") {
		var tools templateTools
		if v.HasTools {
			tools = convertTools(v.Tools)
		}
		return t.Template.Execute(w, map[string]any{
			"System": system, "Messages": convertMessages(messages), "Tools": tools, "Response": "",
			"Think": v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
		})
	}
	system = ""
	var b bytes.Buffer
	var prompt, response string
	for _, m := range messages {
		execute := func() error {
			if err := t.Template.Execute(&b, map[string]any{
				"System": system, "Prompt": prompt, "Response": response,
				"Think": v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
			}); err != nil {
				return err
			}
			system, prompt, response = "", "", ""
			return nil
		}
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				if err := execute(); err != nil {
					return err
				}
			}
			system = m.Content
		case "user":
			if response != "" {
				if err := execute(); err != nil {
					return err
				}
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}
	var cut bool
	nodes := deleteNode(t.Template.Root.Copy(), func(n parse.Node) bool {
		if field, ok := n.(*parse.FieldNode); ok && contains(field.Ident, "Response") {
			cut = true
			return false
		}
		return cut
	})
	tree := parse.Tree{Root: nodes.(*parse.ListNode)}
	if err := template.Must(template.New("").AddParseTree("", &tree)).Execute(&b, map[string]any{
		"System": system, "Prompt": prompt, "Response": response,
		"Think": v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
	}); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

func collate(msgs []Message) (string, []*Message) {
	var system []string
	var collated []*Message
	for i := range msgs {
		if msgs[i].Role == "system" {
			system = append(system, msgs[i].Content)
		}
		if len(collated) > 0 && collated[len(collated)-1].Role == msgs[i].Role && msgs[i].Role != "tool" {
			collated[len(collated)-1].Content += "\n\n" + msgs[i].Content
		} else {
			collated = append(collated, &msgs[i])
		}
	}
	return strings.Join(system, "\n\n"), collated
}

func convertTools(tools []Tool) templateTools {
	result := make(templateTools, len(tools))
	for i, tool := range tools {
		p := tool.Function.Parameters
		result[i] = templateTool{
			Type: tool.Type, Items: tool.Items,
			Function: templateToolFunction{
				Name: tool.Function.Name, Description: tool.Function.Description,
				Parameters: templateToolFunctionParameters{
					Type: p.Type, Defs: p.Defs, Items: p.Items, Required: p.Required,
					Properties: templateProperties(p.Properties.ToMap()),
				},
			},
		}
	}
	return result
}

func convertMessages(messages []*Message) []*templateMessage {
	if messages == nil {
		return nil
	}
	result := make([]*templateMessage, len(messages))
	for i, msg := range messages {
		var calls []templateToolCall
		for _, tc := range msg.ToolCalls {
			var args map[string]any
			if len(tc.Function.Arguments) > 0 {
				if err := json.Unmarshal(tc.Function.Arguments, &args); err != nil {
					panic(err)
				}
			}
			calls = append(calls, templateToolCall{ID: tc.ID, Function: templateToolCallFunction{
				Index: tc.Function.Index, Name: tc.Function.Name, Arguments: templateArgs(args),
			}})
		}
		result[i] = &templateMessage{
			Role: msg.Role, Content: msg.Content, Thinking: msg.Thinking, Images: msg.Images,
			ToolCalls: calls, ToolName: msg.ToolName, ToolCallID: msg.ToolCallID,
		}
	}
	return result
}

func deleteNode(n parse.Node, fn func(parse.Node) bool) parse.Node {
	var walk func(n parse.Node) parse.Node
	walk = func(n parse.Node) parse.Node {
		if fn(n) {
			return nil
		}
		switch t := n.(type) {
		case *parse.ListNode:
			var nodes []parse.Node
			for _, c := range t.Nodes {
				if n := walk(c); n != nil {
					nodes = append(nodes, n)
				}
			}
			t.Nodes = nodes
			return t
		case *parse.IfNode:
			t.BranchNode = *walk(&t.BranchNode).(*parse.BranchNode)
		case *parse.WithNode:
			t.BranchNode = *walk(&t.BranchNode).(*parse.BranchNode)
		case *parse.RangeNode:
			t.BranchNode = *walk(&t.BranchNode).(*parse.BranchNode)
		case *parse.BranchNode:
			t.List = walk(t.List).(*parse.ListNode)
			if t.ElseList != nil {
				t.ElseList = walk(t.ElseList).(*parse.ListNode)
			}
		case *parse.ActionNode:
			n := walk(t.Pipe)
			if n == nil {
				return nil
			}
			t.Pipe = n.(*parse.PipeNode)
		case *parse.PipeNode:
			var commands []*parse.CommandNode
			for _, c := range t.Cmds {
				var args []parse.Node
				for _, a := range c.Args {
					if n := walk(a); n != nil {
						args = append(args, n)
					}
				}
				if len(args) == 0 {
					return nil
				}
				c.Args = args
				commands = append(commands, c)
			}
			if len(commands) == 0 {
				return nil
			}
			t.Cmds = commands
		}
		return n
	}
	return walk(n)
}

// ---- Driver ----

type conversation struct {
	Messages   []Message       `json:"messages"`
	Tools      json.RawMessage `json:"tools"`
	Prompt     string          `json:"prompt"`
	Suffix     string          `json:"suffix"`
	Think      bool            `json:"think"`
	ThinkLevel string          `json:"think_level"`
	IsThinkSet bool            `json:"is_think_set"`
}

type result struct {
	Template     string  `json:"template"`
	Conversation string  `json:"conversation"`
	OK           bool    `json:"ok"`
	Text         *string `json:"text,omitempty"`
	Error        *string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: main TEMPLATE_DIR CONVERSATIONS_JSON")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.gotmpl"))
	if err != nil {
		panic(err)
	}
	sort.Strings(files)
	raw, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	var conversations map[string]json.RawMessage
	if err := json.Unmarshal(raw, &conversations); err != nil {
		panic(err)
	}
	var names []string
	for name := range conversations {
		names = append(names, name)
	}
	sort.Strings(names)
	var results []result
	for _, file := range files {
		source, err := os.ReadFile(file)
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".gotmpl")
		tmpl, parseErr := Parse(string(source))
		for _, cname := range names {
			var c conversation
			if err := json.Unmarshal(conversations[cname], &c); err != nil {
				panic(fmt.Sprintf("%s: %v", cname, err))
			}
			for i := range c.Messages {
				c.Messages[i].Role = strings.ToLower(c.Messages[i].Role)
			}
			r := result{Template: name, Conversation: cname}
			if parseErr != nil {
				msg := parseErr.Error()
				r.Error = &msg
				results = append(results, r)
				continue
			}
			v := Values{Messages: c.Messages, Prompt: c.Prompt, Suffix: c.Suffix, Think: c.Think,
				ThinkLevel: c.ThinkLevel, IsThinkSet: c.IsThinkSet}
			if len(c.Tools) > 0 && string(c.Tools) != "null" {
				v.HasTools = true
				if err := json.Unmarshal(c.Tools, &v.Tools); err != nil {
					panic(fmt.Sprintf("%s tools: %v", cname, err))
				}
			}
			var b bytes.Buffer
			if err := tmpl.Execute(&b, v); err != nil {
				msg := err.Error()
				r.Error = &msg
			} else {
				text := b.String()
				r.OK = true
				r.Text = &text
			}
			results = append(results, r)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(results); err != nil {
		panic(err)
	}
}
