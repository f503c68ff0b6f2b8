package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
)

// An attempt is one edit a model means: replace one line of a file it read with new text.
// Between its read and its edit, another conversation may have changed the file; the model's
// edit may carry one of the mistakes models make. Each attempt runs on a fresh file.
type attempt struct {
	file    string // the corpus file
	kind    string // the scenario (scenarios)
	target  int    // the line meant, 1-based, in what the model read
	id      int
	content []byte // what the model read
}

// scenarios are the situations an edit meets, in the order of the table.
var scenarios = []string{
	"fresh",         // nothing changed since the read
	"stale line",    // another conversation inserted lines above the target
	"changed below", // another conversation changed a line below: the target is where it was
	"line changed",  // another conversation changed the target line itself: any write loses its change
	"whitespace",    // the pattern's whitespace drifted (spaces for a tab, doubled or dropped spaces)
	"twice",         // the target's text is also on an earlier line: the later one is meant
}

// modes are the ways to address the line.
var modes = []string{"line", "pattern", "anchor", "hash+anchor"}

// outcomes are the columns of the table.
var outcomes = []string{"applied as meant", "refused, fix named", "refused, no fix named", "wrong, with a warning", "wrong, silently"}

// client talks to a running fileshed.
type client struct {
	url  string
	http *http.Client
}

// reply is a tool's envelope.
type reply struct {
	Success bool           `json:"success"`
	Data    map[string]any `json:"data"`
	Message string         `json:"message"`
	Error   string         `json:"error"`
	Hint    string         `json:"hint"`
	Details map[string]any `json:"details"`
}

func (c *client) call(tool string, args map[string]any) (reply, error) {
	body, _ := json.Marshal(args)
	resp, err := c.http.Post(c.url+"/"+tool, "application/json", bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		return reply{}, fmt.Errorf("%s: not an envelope: %.200s", tool, raw)
	}
	return r, nil
}

// lines splits text into lines with their terminators.
func lines(b []byte) []string {
	return strings.SplitAfter(string(b), "\n")[:bytes.Count(b, []byte("\n"))+boolInt(len(b) > 0 && b[len(b)-1] != '\n')]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// eolOf is a line's terminator.
func eolOf(l string) string {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l, "\n"):
		return "\n"
	}
	return ""
}

// text is a line without its terminator.
func text(l string) string { return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r") }

// plan builds the attempts over the corpus, deterministically: per file and scenario, two
// targets drawn from a fixed seed among lines of at least 8 characters whose text is
// unique in the file.
func plan(corpus map[string][]byte, names []string, perScenario int) []attempt {
	rng := rand.New(rand.NewPCG(37, 2026))
	var out []attempt
	for _, name := range names {
		content := corpus[name]
		ls := lines(content)
		count := map[string]int{}
		for _, l := range ls {
			count[text(l)]++
		}
		var cands []int
		for i, l := range ls {
			if t := strings.TrimSpace(text(l)); len(t) >= 8 && count[text(l)] == 1 && i >= 3 && i < len(ls)-3 {
				cands = append(cands, i+1)
			}
		}
		if len(cands) == 0 {
			continue
		}
		for _, kind := range scenarios {
			for range perScenario {
				a := attempt{file: name, kind: kind, target: cands[rng.IntN(len(cands))], id: len(out), content: content}
				if kind == "twice" {
					// The same text on an earlier line, already there when the model read.
					l := ls[a.target-1]
					at := rng.IntN(a.target - 1)
					read := append(append(append([]string{}, ls[:at]...), text(l)+eolOf(ls[at])), ls[at:]...)
					a.content, a.target = []byte(strings.Join(read, "")), a.target+1
				}
				out = append(out, a)
			}
		}
	}
	return out
}

// other is what another conversation did to the file after the model's read, and where the
// target line is now (0: the target line itself was changed: the edit should not land).
func (a attempt) other() ([]byte, int) {
	ls := lines(a.content)
	eol := eolOf(ls[0])
	switch a.kind {
	case "stale line":
		ins := []string{"inserted by another conversation" + eol, "and a second line" + eol}
		now := append(append(append([]string{}, ls[:a.target-2]...), ins...), ls[a.target-2:]...)
		return []byte(strings.Join(now, "")), a.target + len(ins)
	case "changed below":
		now := append([]string{}, ls...)
		now[a.target] = text(now[a.target]) + " (changed)" + eolOf(now[a.target])
		return []byte(strings.Join(now, "")), a.target
	case "line changed":
		now := append([]string{}, ls...)
		now[a.target-1] = text(now[a.target-1]) + " (changed by another conversation)" + eolOf(now[a.target-1])
		return []byte(strings.Join(now, "")), 0
	}
	return a.content, a.target
}

// drift is the model's memory of a line with its whitespace changed.
func drift(t string) string {
	switch {
	case strings.Contains(t, "\t"):
		return strings.ReplaceAll(t, "\t", "    ")
	case strings.Contains(t, "  "):
		return strings.ReplaceAll(t, "  ", " ")
	case strings.Contains(t, " "):
		return strings.Replace(t, " ", "  ", 1)
	}
	return " " + t
}

// args is the edit the model sends in mode m, from what it read (the read's hash and
// anchors).
func (a attempt) args(m, path, hash, read string) map[string]any {
	args := map[string]any{"zone": "storage", "path": path, "position": "replace", "content": fmt.Sprintf("NEW-%d", a.id)}
	switch m {
	case "line":
		args["line"] = a.target
	case "pattern":
		t := text(lines(a.content)[a.target-1])
		if a.kind == "whitespace" {
			t = drift(t)
		}
		args["pattern"] = regexp.QuoteMeta(t)
		if strings.Contains(string(a.content), "\r\n") {
			args["pattern"], args["regex_flags"] = "^"+regexp.QuoteMeta(t)+"$", "m" // the line as a regex habit writes it
		}
	case "anchor", "hash+anchor":
		anchor, _, _ := strings.Cut(read, "|")
		args["anchor"] = anchor
		if m == "hash+anchor" {
			args["expected_hash"] = hash
		}
	}
	return args
}

// run plays attempt a in mode m and classifies the outcome.
func (c *client) run(a attempt, m string) (string, error) {
	path := fmt.Sprintf("edits/%d-%s-%s", a.id, strings.ReplaceAll(m, "+", "-"), strings.TrimSuffix(a.file, ".txt"))
	if r, err := c.call("shed_create_file", map[string]any{"zone": "storage", "path": path, "content": string(a.content)}); err != nil || !r.Success {
		return "", fmt.Errorf("create %s: %v %s %s", path, err, r.Error, r.Message)
	}
	// The model's read of the line it means (the whole file's hash comes with it).
	read, err := c.call("shed_read", map[string]any{"zone": "storage", "path": path, "anchors": true, "start_line": a.target, "end_line": a.target})
	if err != nil || !read.Success {
		return "", fmt.Errorf("read %s: %v %s", path, err, read.Message)
	}
	hash, _ := read.Data["hash"].(string)
	anchor, _ := read.Data["content"].(string)
	now, at := a.other()
	if !bytes.Equal(now, a.content) {
		if r, err := c.call("shed_create_file", map[string]any{"zone": "storage", "path": path, "content": string(now)}); err != nil || !r.Success {
			return "", fmt.Errorf("the other conversation's write: %v %s", err, r.Message)
		}
	}
	r, err := c.call("shed_patch_text", a.args(m, path, hash, anchor))
	if err != nil {
		return "", err
	}
	after, err := c.call("shed_read", map[string]any{"zone": "storage", "path": path})
	if err != nil || !after.Success {
		return "", fmt.Errorf("read back %s: %v", path, err)
	}
	got, _ := after.Data["content"].(string)
	if !r.Success {
		if got != string(now) {
			return "", fmt.Errorf("%s: refused (%s) yet the file changed", path, r.Error)
		}
		for _, k := range []string{"candidates", "nearest", "line_now", "current_hash"} {
			if _, ok := r.Details[k]; ok {
				return outcomes[1], nil
			}
		}
		return outcomes[2], nil
	}
	if at > 0 {
		ls := lines(now)
		ls[at-1] = fmt.Sprintf("NEW-%d", a.id) + eolOf(ls[at-1])
		if got == strings.Join(ls, "") {
			return outcomes[0], nil
		}
	}
	if strings.Contains(r.Message, "the pattern matches") {
		return outcomes[3], nil
	}
	return outcomes[4], nil
}
